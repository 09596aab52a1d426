/** `cairn failures` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `failures` verb. */
export function failuresCommand(): Command {
  return clientCommand('failures');
}
