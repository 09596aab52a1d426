/**
 * One `cairn server` per data dir: its embedded etcd would otherwise block
 * on etcd's own file lock and the second server would hang without a word.
 * The lock is a pid file created exclusively; a file left by a process that
 * is gone is taken over.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Takes the lock on `dir` for this process, or throws naming the holder. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'server.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => fs.rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(file, 'utf8').trim());
      // A launcher may have recorded our own pid there (nohup … & echo $! > server.pid): that is us.
      if (holder === process.pid) return () => fs.rmSync(file, { force: true });
      if (alive(holder)) {
        throw new Error(`another cairn server (pid ${holder}) is using ${dir}; stop it first, or pass a different --data-dir`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}: ${file} keeps reappearing`);
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
