/**
 * The qemu instance driver: the process supervision with a qemu runtime
 * (runtime.ts), plus the steps of a live migration (migration.ts).
 */
import type { Driver } from '../driver.js';
import { supervised } from '../process/driver.js';
import { ensureVm, observeVm } from './migration.js';
import { qemuRuntime } from './runtime.js';

/** The qemu instance driver. */
export const qemuDriver: Driver = { name: 'qemu', observe: observeVm, ensure: ensureVm, remove: (item, ctx) => supervised.remove(qemuRuntime, item, ctx) };
