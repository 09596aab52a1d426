/**
 * Preloaded into every Node.js process of a measured run (`node --import`, through NODE_OPTIONS, set
 * by suite-cpu.ts): at exit, appends the process's CPU seconds and command line to the file
 * CAIRN_PROCESS_CPU_LOG names. A process killed with SIGKILL writes nothing; suite-cpu.ts counts
 * it, with every process that is not Node.js, in what is left of the run's CPU.
 */
import fs from 'node:fs';

const log = process.env.CAIRN_PROCESS_CPU_LOG;
if (log) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    const line = `${((user + system) / 1e6).toFixed(3)}\t${process.argv.slice(1).join(' ').replace(/\s+/g, ' ').slice(0, 300)}\n`;
    try {
      fs.appendFileSync(log, line);
    } catch {
      // The measurement must never change the outcome of the process measured.
    }
  });
}
