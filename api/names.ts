/**
 * Names Cairn's processes agree on without asking each other: annotations,
 * lease names and environment variables. Kept here so the controller, the
 * agent and the CLI cannot drift apart.
 */

/** Namespace of control-plane objects such as the controller's leader Lease. */
export const SYSTEM_NAMESPACE = 'cairn-system';

/** Name of the controller's leader-election Lease in SYSTEM_NAMESPACE. */
export const CONTROLLER_LEASE_NAME = 'cairn-controller';

/** Annotation on an Instance whose new value asks for one restart (like kubectl rollout restart). */
export const RESTARTED_AT_ANNOTATION = 'cairn.dev/restartedAt';

/** Name of a node's heartbeat Lease in its cluster's namespace. */
export function nodeLeaseName(nodeName: string): string {
  return `node-${nodeName}`;
}

/** Name of an instance's fencing Lease in its cluster's namespace. */
export function instanceLeaseName(instanceName: string): string {
  return `instance-${instanceName}`;
}

/** Environment variable holding the replica path of a volume attachment, e.g. data → CAIRN_VOLUME_DATA. */
export function volumeEnvName(attachmentName: string): string {
  return `CAIRN_VOLUME_${attachmentName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
