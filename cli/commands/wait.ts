/** `cairn wait` (being written). */
import type { Command } from 'commander';
import { clientCommand } from '../client/context.js';

/** The `wait` verb. */
export function waitCommand(): Command {
  return clientCommand('wait');
}
