/** Runs a program to completion for a test, collecting its output; a hung one is killed after a timeout. And kills one. */
import { spawn, type ChildProcess } from 'node:child_process';

/** The outcome of one run. */
export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one run. */
export interface ProcessRunOptions {
  stdin?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Runs `program args...`, feeding `stdin`; never throws on a non-zero exit (a signal gives 128). */
export function runProcess(program: string, args: string[], opts: ProcessRunOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** SIGKILLs a child and resolves once it has exited (at once if it already had: its 'exit' has been and gone). */
export async function killAndWait(child: ChildProcess): Promise<void> {
  const gone = new Promise((res) => (child.exitCode !== null || child.signalCode !== null ? res(null) : child.once('exit', res)));
  child.kill('SIGKILL');
  await gone;
}
