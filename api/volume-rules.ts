/**
 * The rules of a Volume's spec that its schema cannot state, checked at
 * admission (apiserver/validation/kind-rules.ts) and by the CLI before it
 * sends a change; kube would write them as x-kubernetes-validations. On an
 * update, a rule whose fields did not change is not checked again
 * (ratcheting, as kube does), so an object stored under older rules can
 * still be labelled, finalized and deleted.
 */
import { glusterOptionProblems } from './gluster-options.js';
import type { VolumeSpec } from './volume.js';

/** One broken rule: the field path under spec and what to do. */
export interface SpecProblem {
  field: string;
  message: string;
}

type Rule = { fields: (keyof VolumeSpec)[]; check(spec: VolumeSpec, old: VolumeSpec | undefined): SpecProblem[] };

const driverOf = (spec: VolumeSpec) => spec.driver ?? 'gluster';

const RULES: Rule[] = [
  {
    fields: ['driver', 'replicas'],
    check: (spec) => {
      const replicas = spec.replicas ?? 1;
      if (driverOf(spec) === 'file' && replicas > 1) {
        return [{ field: 'spec.replicas', message: `driver file keeps one unreplicated copy on one node, so it takes replicas 1, not ${replicas}; for replicated data use driver gluster (the default), which keeps the replicas identical` }];
      }
      if (replicas > 3) return [{ field: 'spec.replicas', message: `a gluster volume has 1 to 3 replicas (one GlusterFS replica set), not ${replicas}; 3 keeps the data writable with a node down` }];
      return [];
    },
  },
  {
    fields: ['driver', 'replicas', 'arbiter'],
    check: (spec) => (spec.arbiter && (driverOf(spec) !== 'gluster' || (spec.replicas ?? 1) !== 3) ? [{ field: 'spec.arbiter', message: 'an arbiter is the third brick of a gluster volume with replicas 3; set replicas 3 and driver gluster, or remove arbiter' }] : []),
  },
  {
    fields: ['arbiter'],
    check: (spec, old) => (old && !!old.arbiter !== !!spec.arbiter ? [{ field: 'spec.arbiter', message: `spec.arbiter is set at creation and cannot change (it is ${!!old.arbiter}): its brick holds no file data to turn into a full replica, nor the reverse; create a new volume and copy the data` }] : []),
  },
  {
    fields: ['driver'],
    check: (spec, old) => (old && driverOf(old) !== driverOf(spec) ? [{ field: 'spec.driver', message: `spec.driver cannot change (it is ${driverOf(old)}): the replicas' data is kept in that driver's format; create a new volume and copy the data` }] : []),
  },
  {
    fields: ['driver', 'state'],
    check: (spec) => (spec.state === 'Stopped' && driverOf(spec) !== 'gluster' ? [{ field: 'spec.state', message: 'only a gluster volume can be Stopped (its bricks stop); a file volume has no process to stop' }] : []),
  },
  {
    fields: ['driver', 'replicas', 'options'],
    check: (spec) => (driverOf(spec) === 'gluster' && spec.options ? glusterOptionProblems(spec.options, spec.replicas ?? 1).map((p) => ({ field: `spec.options[${p.key}]`, message: p.message })) : []),
  },
];

/** Every rule `spec` breaks; with `old` (an update), only the rules whose fields changed. */
export function volumeSpecProblems(spec: VolumeSpec, old?: VolumeSpec): SpecProblem[] {
  const changed = (f: keyof VolumeSpec) => !old || JSON.stringify(old[f]) !== JSON.stringify(spec[f]);
  return RULES.filter((r) => r.fields.some(changed)).flatMap((r) => r.check(spec, old));
}
