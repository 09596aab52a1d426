/**
 * What the agent's volfile server answers for a mount of `<cluster>/<volume>`:
 * the client volfile of the newest instance WorkItem on this node that
 * attaches that volume (the controller regenerates it when a brick moves),
 * else the one the mount was made with (its run dir's client.vol), so a
 * mount whose users' WorkItems are gone still gets its own graph back.
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
    return newest?.volfile ?? readMountedVolfile(dataDir, namespace, volumeName);
  };
}

/** The volfile the mount was made with; undefined for a key that names no mount (mountRunDir refuses unsafe names). */
function readMountedVolfile(dataDir: string, namespace: string, volumeName: string): string | undefined {
  try {
    return fs.readFileSync(path.join(mountRunDir(dataDir, namespace, volumeName), 'client.vol'), 'utf8');
  } catch {
    return undefined;
  }
}
