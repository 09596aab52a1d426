/**
 * Which driver serves a WorkItem. The only place that knows the list, so the
 * agent process and the operation worker cannot disagree. Pure.
 */
import type { WorkItem } from '../../api/workitem.js';
import { OperationError } from '../operations/errors.js';
import type { Driver } from './driver.js';
import { fileDriver } from './volume/file.js';
import { glusterBrickDriver } from './volume/gluster-brick.js';
import { processDriver } from './process/driver.js';
import { qemuDriver } from './qemu/driver.js';

/** The driver for `item`; DriverUnavailable for drivers this agent does not have. */
export function driverFor(item: WorkItem): Driver {
  if (item.spec.type === 'VolumeReplica') {
    const driver = item.spec.volumeReplica?.driver ?? 'file';
    if (driver === 'file') return fileDriver;
    if (driver === 'gluster') return glusterBrickDriver;
    throw new OperationError('DriverUnavailable', `volume driver ${driver} is not available on node ${item.spec.nodeName}`, 'use driver file or gluster');
  }
  const driver = item.spec.instance?.driver;
  if (driver === 'process') return processDriver;
  if (driver === 'qemu') return qemuDriver;
  throw new OperationError('DriverUnavailable', `instance driver ${driver ?? '(none)'} is not available on node ${item.spec.nodeName}`, 'use driver process or qemu');
}
