/**
 * Entry point of an operation worker: `node worker.js`, started by the
 * OperationRunner as the leader of its own process group. Reads one
 * WorkerRequest from stdin, runs one driver verb, prints one WorkerResult
 * on stdout and exits. SIGTERM/SIGINT/SIGHUP abort the operation's
 * AbortSignal so the driver can clean up (unlink a temp file, stop waiting)
 * before the runner's SIGKILL. Imports only the drivers and Node built-ins,
 * never the agent's heavier modules, because one starts per operation.
 */
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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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

async function main(): Promise<void> {
  const request = JSON.parse(await readStdin()) as WorkerRequest;
  const controller = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(sig, () => controller.abort(new OperationError('Cancelled', `operation ${request.operationId} was terminated by ${sig}`)));
  }
  const ctx: OperationContext = { ...request.settings, now: Date.now, operationId: request.operationId, signal: controller.signal, log: stderrLog() };
  let result: WorkerResult;
  try {
    result = await execute(request, ctx);
  } catch (err) {
    const failure = classify(err, { doing: `${request.verb} of ${request.item.metadata.namespace}/${request.item.metadata.name}`, node: request.settings.nodeName });
    result = { ok: false, error: { reason: failure.reason, message: failure.message, ...(failure.hint ? { hint: failure.hint } : {}) } };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`worker crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(70);
});
