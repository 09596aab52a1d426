/** `cairn describe` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `describe` verb. */
export function describeCommand(): Command {
  return clientCommand('describe');
}
