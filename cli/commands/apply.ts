/** `cairn apply` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `apply` verb. */
export function applyCommand(): Command {
  return clientCommand('apply');
}
