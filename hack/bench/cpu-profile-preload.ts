/**
 * Preloaded into the apiserver by `apiserver-bench --cpu-prof <dir>` through
 * NODE_OPTIONS=--import (Node 20 refuses --cpu-prof there): records a V8 CPU
 * profile and writes `<dir>/apiserver-<pid>.cpuprofile` when the process exits.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.CAIRN_BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // An in-thread session answers synchronously, so this works inside 'exit'.
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `apiserver-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
