/** `cairn status` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `status` verb. */
export function statusCommand(): Command {
  return clientCommand('status');
}
