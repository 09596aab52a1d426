/**
 * The colour family of a phase, state or condition status, so every status
 * pill in the dashboard uses one palette: good (running, ready, done),
 * busy (on its way), bad (failed, lost), idle (stopped as asked), unknown. Pure.
 */
export type Tone = 'good' | 'busy' | 'bad' | 'idle' | 'unknown';

const TONES: Record<string, Tone> = {
  Running: 'good', Ready: 'good', Done: 'good', Completed: 'good', True: 'good', Started: 'good', Normal: 'good',
  Pending: 'busy', Scheduled: 'busy', Starting: 'busy', Creating: 'busy', Migrating: 'busy', Stopping: 'busy',
  Draining: 'busy', Resizing: 'busy', Queued: 'busy', InProgress: 'busy', Deleting: 'busy',
  PreparingTarget: 'busy', MirroringStorage: 'busy', Transferring: 'busy', SwitchingOver: 'busy',
  Failed: 'bad', NotReady: 'bad', Unreachable: 'bad', Lost: 'bad', Degraded: 'bad', False: 'bad', Warning: 'bad',
  Stopped: 'idle', Drained: 'idle',
};

/** The tone of a phase or status word; `unknown` for anything not listed (including Unknown). */
export function toneOf(word: string | undefined): Tone {
  return (word !== undefined && TONES[word]) || 'unknown';
}
