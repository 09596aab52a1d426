/**
 * Entry point of an operation worker: `node worker.js`, started by the
 * OperationRunner as the leader of its own process group and reused for
 * one operation after another. Reads WorkerRequests from stdin, one per
 * line; for each runs one driver verb and prints one WorkerResult line on
 * stdout; exits when stdin ends (the runner then sweeps its process group,
 * so whatever an operation left behind dies with the worker).
 * SIGTERM/SIGINT/SIGHUP abort the running operation's AbortSignal so the
 * driver can clean up (unlink a temp file, stop waiting) before the runner's
 * SIGKILL; the worker then exits after its result. When stdin ends with an
 * operation running (the agent was killed), that operation is aborted and
 * the worker kills its own group WIND_DOWN_MS later. Imports only the drivers
 * and Node built-ins, never the agent's heavier modules.
 */
import readline from 'node:readline';
import type { OperationContext, OperationLog } from '../drivers/driver.js';
import { driverFor } from '../drivers/registry.js';
import { classify, OperationError } from './errors.js';
import type { WorkerLogLine, WorkerRequest, WorkerResult } from './protocol.js';

function stderrLog(): OperationLog {
  const write = (level: WorkerLogLine['level']) => (message: string, meta?: Record<string, unknown>) => {
    process.stderr.write(`${JSON.stringify({ level, message, ...(meta ? { meta } : {}) })}\n`);
  };
  return { info: write('info'), warn: write('warn') };
}

async function execute(request: WorkerRequest, ctx: OperationContext): Promise<WorkerResult> {
  const driver = driverFor(request.item);
  if (request.verb === 'ensure') return { ok: true, observation: await driver.ensure(request.item, ctx) };
  if (request.verb === 'remove') {
    await driver.remove(request.item, ctx);
    return { ok: true };
  }
  throw new OperationError('InvalidSpec', `unknown verb ${String(request.verb)}`);
}

/** Runs one request; never throws (a failure is the result). */
async function serve(request: WorkerRequest, signal: AbortSignal): Promise<WorkerResult> {
  const ctx: OperationContext = { ...request.settings, now: Date.now, operationId: request.operationId, signal, log: stderrLog() };
  try {
    return await execute(request, ctx);
  } catch (err) {
    const failure = classify(err, { doing: `${request.verb} of ${request.item.metadata.namespace}/${request.item.metadata.name}`, node: request.settings.nodeName });
    return { ok: false, error: { reason: failure.reason, message: failure.message, ...(failure.hint ? { hint: failure.hint } : {}) } };
  }
}

function write(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

/** How long an aborted operation may take to wind down before the worker kills its own process group. */
const WIND_DOWN_MS = 5_000;

/**
 * Abandoned (the agent is gone), the worker ends within WIND_DOWN_MS whatever its driver does: the runner's
 * SIGKILL of the group, which bounds a stop on a signal by the agent's --shutdown-grace, is not coming, and
 * a driver that ignores the abort would run on without a deadline beside the new agent's run of the same
 * WorkItem. The group goes with it: whatever the operation started (instances run in their own groups).
 */
function endWithin(ms: number): void {
  setTimeout(() => {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      process.kill(process.pid, 'SIGKILL'); // not a group leader (started by hand)
    }
  }, ms);
}

async function main(): Promise<void> {
  let current: { operationId: string; abort: AbortController } | undefined;
  let terminated = false;
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      terminated = true;
      if (!current) process.exit(0);
      current.abort.abort(new OperationError('Cancelled', `operation ${current.operationId} was terminated by ${sig}`));
    });
  }
  // The agent's end of stdin closed: it is gone (killed, say), and a new agent may already be doing the same
  // work. What runs now is aborted, not finished behind its back (the loop below sees the end only between lines).
  process.stdin.once('end', () => {
    terminated = true;
    endWithin(WIND_DOWN_MS);
    current?.abort.abort(new OperationError('Cancelled', `operation ${current.operationId} was abandoned: the agent that asked for it is gone`));
  });
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    const request = JSON.parse(line) as WorkerRequest;
    current = { operationId: request.operationId, abort: new AbortController() };
    const result = await serve(request, current.abort.signal);
    current = undefined;
    await write(JSON.stringify(result));
    if (terminated) process.exit(0);
  }
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`worker crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(70);
});
