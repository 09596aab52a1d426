/** `cairn get` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `get` verb. */
export function getCommand(): Command {
  return clientCommand('get');
}
