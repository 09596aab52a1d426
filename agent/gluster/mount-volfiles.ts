/**
 * What the agent's volfile server answers for a mount of `<cluster>/<volume>`:
 * the client volfile of the newest instance WorkItem on this node that
 * attaches that volume (the controller regenerates it when a brick moves),
 * else the last one served to the mount (its run dir's client.vol, written
 * when it was made and again on each newer graph). So a mount whose users'
 * WorkItems are gone or being deleted (their instances still stopping,
 * maybe writing) keeps the graph it runs: one made only at mount time
 * would take it back to bricks since replaced or raised, and the writes of
 * its last moments would miss, unblamed, the bricks the graph left out.
 */
import fs from 'node:fs';
import path from 'node:path';
import { glusterVolfile, type WorkItem } from '../../api/workitem.js';
import { mountRunDir } from '../drivers/volume/gluster-mount.js';

function resourceVersion(w: WorkItem): bigint {
  try {
    return BigInt(w.metadata.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}

/** The lookup for `startVolfileServer`, over the agent's WorkItems. */
export function mountVolfileLookup(items: () => readonly WorkItem[], dataDir: string): (key: string) => string | undefined {
  return (key) => {
    const [namespace, volumeName, ...rest] = key.split('/');
    if (!namespace || !volumeName || rest.length > 0) return undefined;
    let newest: { rv: bigint; volfile: string } | undefined;
    for (const w of items()) {
      if (w.metadata.namespace !== namespace || w.metadata.deletionTimestamp) continue;
      const volfile = glusterVolfile(w, volumeName);
      const rv = resourceVersion(w);
      if (volfile && (!newest || rv > newest.rv)) newest = { rv, volfile };
    }
    const file = mountedVolfile(dataDir, namespace, volumeName);
    if (!newest) return file && readVolfile(file);
    if (file) recordServed(file, newest.volfile);
    return newest.volfile;
  };
}

/** The mount's client.vol; undefined for a key that names no mount (mountRunDir refuses unsafe names). */
function mountedVolfile(dataDir: string, namespace: string, volumeName: string): string | undefined {
  try {
    return path.join(mountRunDir(dataDir, namespace, volumeName), 'client.vol');
  } catch {
    return undefined;
  }
}

function readVolfile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

// Replaced whole (a crash leaves the old graph or the new, never half), and only where the mount's run dir is:
// a mount gone (its last user detached) is not made to reappear.
function recordServed(file: string, volfile: string): void {
  if (readVolfile(file) === volfile || !fs.existsSync(path.dirname(file))) return;
  try {
    fs.writeFileSync(`${file}.tmp`, volfile);
    fs.renameSync(`${file}.tmp`, file);
  } catch {
    // The run dir went meanwhile (the last user detached): nothing to keep.
  }
}
