/** `cairn diff` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `diff` verb. */
export function diffCommand(): Command {
  return clientCommand('diff');
}
