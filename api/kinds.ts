/** Every Cairn kind's object type, by kind name. */
import type { Cluster } from './cluster.js';
import type { Instance } from './instance.js';
import type { Node } from './node.js';
import type { Volume } from './volume.js';
import type { WorkItem } from './workitem.js';

/** Map from kind name to its object type. */
export interface KindMap {
  Cluster: Cluster;
  Node: Node;
  Instance: Instance;
  Volume: Volume;
  WorkItem: WorkItem;
}
