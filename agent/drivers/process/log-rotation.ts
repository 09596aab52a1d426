/**
 * Rotation of instance logs by copy-truncate: the instance holds console.log
 * open in append mode and is never signalled, so the agent copies the file
 * to console.log.1 (shifting older copies up to `keep`) and truncates it;
 * the instance's next write lands at the new end. Lines written between the
 * copy and the truncate are lost, the known price of copy-truncate. The
 * agent calls rotateInstanceLogs() on a timer, in its own process: one
 * stat() per instance when nothing needs rotating.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LOG_FILE } from './state.js';

/** When to rotate and how many old copies to keep. */
export interface LogRotationOptions {
  /** Rotate a log larger than this. Default 10 MiB. */
  maxBytes?: number;
  /** Old copies kept (console.log.1 … .N). Default 3. */
  keep?: number;
}

/** Default LogRotationOptions.maxBytes. */
export const DEFAULT_LOG_MAX_BYTES = 10 * 2 ** 20;
/** Default LogRotationOptions.keep. */
export const DEFAULT_LOG_KEEP = 3;

async function exists(file: string): Promise<boolean> {
  return fs.promises.access(file).then(
    () => true,
    () => false,
  );
}

/** Rotates `file` when it is larger than maxBytes; returns whether it did. */
export async function rotateLog(file: string, options: LogRotationOptions = {}): Promise<boolean> {
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_MAX_BYTES;
  const keep = Math.max(1, options.keep ?? DEFAULT_LOG_KEEP);
  const st = await fs.promises.stat(file).catch(() => undefined);
  if (!st || st.size <= maxBytes) return false;
  for (let i = keep - 1; i >= 1; i--) {
    if (await exists(`${file}.${i}`)) await fs.promises.rename(`${file}.${i}`, `${file}.${i + 1}`);
  }
  await fs.promises.copyFile(file, `${file}.1`);
  await fs.promises.truncate(file, 0);
  await fs.promises.writeFile(rotatedMarker(file), `${Date.now()}\n`);
  return true;
}

/** Beside a log: when it was last rotated (epoch ms), so a reader knows the run's offset in it is gone. */
function rotatedMarker(file: string): string {
  return `${file}.rotated`;
}

/** When `file` was last rotated (epoch ms); undefined when never. */
export function lastRotated(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(rotatedMarker(file), 'utf8');
  } catch {
    return undefined;
  }
  const at = Number(text.trim());
  return Number.isFinite(at) && at > 0 ? at : undefined;
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

/** Rotates every instance log under `<dataDir>/instances` that has grown past maxBytes; returns the rotated paths. */
export async function rotateInstanceLogs(dataDir: string, options: LogRotationOptions = {}): Promise<string[]> {
  const rotated: string[] = [];
  for (const cluster of await subdirs(path.join(dataDir, 'instances'))) {
    for (const instance of await subdirs(cluster)) {
      const file = path.join(instance, LOG_FILE);
      if (await rotateLog(file, options)) rotated.push(file);
    }
  }
  return rotated;
}
