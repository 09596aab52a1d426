/** A `cairn` command that keeps running (logs -f, console): its output as it arrives, input, and a stop. */
import { spawn } from 'node:child_process';
import { CAIRN_BIN } from '../../hack/cairn-process.js';

/** A running cairn command. */
export interface StreamingCli {
  stdout(): string;
  stderr(): string;
  write(text: string): void;
  /** Resolves with the exit code once it exited. */
  exited: Promise<number | null>;
  /** SIGINT, then SIGKILL after a second; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `cairn args...` with its stdin open. */
export function spawnCairn(args: string[]): StreamingCli {
  const child = spawn(process.execPath, [CAIRN_BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    stdout: () => out,
    stderr: () => err,
    write: (text) => void child.stdin.write(text),
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 1000);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}
