/**
 * The decisions of the process driver as one pure function: given the
 * WorkItem's instance spec, the recorded state and what /proc says, which
 * runtime state the instance is in and what ensure() must do next. observe()
 * reports the plan, ensure() carries it out, and unit tests check it with an
 * injected clock. Level-triggered: the plan depends only on the current
 * desired and observed state, never on what happened before.
 */
import type { RestartPolicy } from '../../../api/instance.js';
import type { InstanceRuntimeState, WorkItemInstanceSpec } from '../../../api/workitem.js';
import type { DriverAction } from '../driver.js';
import type { ExitRecord, ProcessState } from './state.js';
import { decideRestart } from './restart-policy.js';

/** What the plan looks at. */
export interface PlanInput {
  spec: Pick<WorkItemInstanceSpec, 'runState' | 'restartPolicy' | 'restartToken'>;
  /** Hash of the parts of the spec a running process was started with. */
  specHash: string;
  state: ProcessState | undefined;
  /** Whether state.pid is alive and is the process state describes. */
  running: boolean;
  /** The exit status the shim wrote, when the process ended and the agent has not recorded it yet. */
  observedExitCode?: number | undefined;
  /** Its gluster mounts on this node (gluster-mount.ts mountHealth): one lost its client, or was mounted again since. */
  mounts?: { lost: boolean; remountedAt?: number | undefined };
  now: number;
}

/** The instance's runtime state and ensure()'s next step. */
export interface Plan {
  state: InstanceRuntimeState;
  action?: DriverAction;
  /** For action restart: the backoff count to store. */
  backoffCount?: number;
  requeueAfterMs?: number;
  message: string;
}

/** Default restartPolicy of an Instance. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = 'Always';

function describeExit(exit: { code?: number | undefined; signal?: string | undefined }): string {
  if (exit.code === undefined) return 'exited (status unknown)';
  const signal = exit.signal ? ` (${exit.signal})` : '';
  return `exited with status ${exit.code}${signal}`;
}

function planRunning(input: PlanInput, state: ProcessState): Plan {
  if (input.spec.runState === 'Stopped') return { state: 'Running', action: 'stop', message: 'runState is Stopped: stopping' };
  if (state.restartToken !== input.spec.restartToken) return { state: 'Running', action: 'restart', backoffCount: 0, message: 'restart requested (restartToken changed)' };
  if (state.specHash !== input.specHash) return { state: 'Running', action: 'restart', backoffCount: 0, message: 'spec changed: restarting to apply it' };
  // Its working directory and open files are on the dead mount: only a new run sees the new one.
  if (input.mounts?.lost || (input.mounts?.remountedAt ?? 0) > state.startedAt) {
    return { state: 'Running', action: 'restart', backoffCount: 0, message: 'the glusterfs client of a volume it uses died: restarting on a new mount' };
  }
  return { state: 'Running', message: `running as pid ${state.pid}` };
}

function planExited(input: PlanInput, state: ProcessState, exit: ExitRecord): Plan {
  if (state.restartToken !== input.spec.restartToken || state.specHash !== input.specHash) {
    return { state: 'Exited', action: 'restart', backoffCount: 0, message: `${describeExit(exit)}; spec or restartToken changed: restarting` };
  }
  const policy = input.spec.restartPolicy ?? DEFAULT_RESTART_POLICY;
  const decision = decideRestart({ policy, exitCode: exit.code, backoffCount: state.backoffCount, startedAt: state.startedAt, exitedAt: exit.at, now: input.now });
  if (decision.kind === 'none') return { state: 'Exited', message: `${describeExit(exit)}; restartPolicy ${policy} does not restart it` };
  if (decision.kind === 'wait') {
    const waitMs = decision.untilMs - input.now;
    return { state: 'BackOff', requeueAfterMs: waitMs, message: `${describeExit(exit)}; restarting in ${Math.ceil(waitMs / 1000)} s (backoff)` };
  }
  return { state: 'Exited', action: 'restart', backoffCount: decision.backoffCount, message: `${describeExit(exit)}; restarting (restartPolicy ${policy})` };
}

/** The runtime state of an instance and what ensure() must do about it. */
export function planInstance(input: PlanInput): Plan {
  const { state } = input;
  const wantRunning = input.spec.runState === 'Running';
  if (!state) return wantRunning ? { state: 'Pending', action: 'start', message: 'not started yet' } : { state: 'Stopped', message: 'stopped' };
  if (input.running) return planRunning(input, state);
  if (state.stopped) return wantRunning ? { state: 'Stopped', action: 'start', message: 'runState is Running: starting' } : { state: 'Stopped', message: 'stopped' };
  if (!state.exit) return { state: 'Exited', action: 'recordExit', message: describeExit({ code: input.observedExitCode }) };
  if (!wantRunning) return { state: 'Stopped', action: 'stop', message: `${describeExit(state.exit)}; runState is Stopped` };
  return planExited(input, state, state.exit);
}
