/** Reading metav1.Condition lists. Pure. */
import type { Condition } from '../../../api/types';

interface WithConditions {
  status?: { conditions?: Condition[] };
}

/** The condition of `type`, if the object reports it. */
export function findCondition(o: WithConditions, type: string): Condition | undefined {
  return o.status?.conditions?.find((c) => c.type === type);
}

/** Whether the object's `type` condition is True. */
export function isTrue(o: WithConditions, type: string): boolean {
  return findCondition(o, type)?.status === 'True';
}
