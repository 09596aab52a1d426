/** `cairn delete` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `delete` verb. */
export function deleteCommand(): Command {
  return clientCommand('delete');
}
