/**
 * GlusterFS processes for tests, run the way Cairn's agents will run them:
 * glusterfsd per brick and a glusterfs FUSE client and self-heal daemon,
 * each from a generated volfile, no glusterd. Every process is started in
 * the foreground (-N) as a child, so stop() ends it for sure; mounts are
 * lazily unmounted.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pendingHeals, volumeIdXattr } from '../../agent/drivers/volume/gluster-brick.js';
import { answers, isMountPoint } from '../../agent/drivers/volume/gluster-mount.js';
import { brickVolfile, type GlusterLayout } from '../../controller/reconcilers/volume/volfiles.js';
import { eventually } from './eventually.js';

/** A gluster process started from a volfile. */
export interface GlusterProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Prepares a brick root as the agent will: the directory, .glusterfs for the index, and the volume id. */
export function prepareBrick(dir: string, volumeId: string): void {
  fs.mkdirSync(path.join(dir, '.glusterfs'), { recursive: true });
  try {
    execFileSync('setfattr', ['-n', 'trusted.glusterfs.volume-id', '-v', volumeIdXattr(volumeId), dir], { stdio: 'pipe' });
  } catch (err) {
    if (!String((err as { stderr?: Buffer }).stderr).includes('File exists')) throw err;
  }
}

/** Runs `program -N -f volfile [args]`, writing the volfile next to its log in `workDir`. */
export function startGluster(program: 'glusterfsd' | 'glusterfs', name: string, volfile: string, workDir: string, args: string[] = []): GlusterProcess {
  const file = path.join(workDir, `${name}.vol`);
  fs.writeFileSync(file, volfile);
  const child = spawn(program, ['-N', '-f', file, '-l', path.join(workDir, `${name}.log`), ...args], { stdio: 'ignore' });
  return {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** Mounts the client volfile at `mountPoint` and waits until the volume answers (AFR reports up only once it heard from all bricks). */
export async function mountVolume(volfile: string, mountPoint: string, workDir: string): Promise<GlusterProcess> {
  fs.mkdirSync(mountPoint, { recursive: true });
  const p = startGluster('glusterfs', 'client', volfile, workDir, ['--entry-timeout=0', '--attribute-timeout=0', mountPoint]);
  await eventually(`the FUSE mount at ${mountPoint}`, () => isMountPoint(mountPoint) && answers(mountPoint), 20_000, 100);
  return { child: p.child, stop: async () => (unmount(mountPoint), await p.stop()) };
}

/** Lazily unmounts `mountPoint` if it is mounted. */
export function unmount(mountPoint: string | undefined): void {
  if (mountPoint && isMountPoint(mountPoint)) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

/** The bricks of a layout run by hand, each started (and awaited listening) or stopped by index. */
export class BrickSet {
  private readonly running: (GlusterProcess | undefined)[] = [];
  constructor(
    private readonly layout: GlusterLayout,
    private readonly workDir: string,
  ) {}

  async start(i: number): Promise<void> {
    this.running[i] = startGluster('glusterfsd', `brick-${i}`, brickVolfile(this.layout, i), this.workDir);
    await eventually(`brick ${i} listening on ${this.layout.bricks[i]!.port}`, () => listening(this.layout.bricks[i]!.port), 15_000, 100);
  }

  async stop(i: number): Promise<void> {
    await this.running[i]?.stop();
    this.running[i] = undefined;
  }

  async stopAll(): Promise<void> {
    for (let i = 0; i < this.running.length; i++) await this.stop(i);
  }
}

/** Entries the brick's index lists as needing heal: the agent's own count. */
export { pendingHeals };


export { killGlusterUnder } from '../../hack/gluster-cleanup.js';
