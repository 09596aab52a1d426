/**
 * A long-running command's shutdown runs every step even when one fails (an
 * embedded etcd left running, a data dir left locked), logs the failure by
 * name instead of dying on an unhandled rejection, and exits 1 for it.
 */
import { expect } from 'chai';
import type { Logger } from 'winston';
import { shutDown } from '../../../cli/run/shut-down.js';

describe('shutDown', () => {
  const exits: number[] = [];
  const realExit = process.exit;
  beforeEach(() => {
    exits.length = 0;
    process.exit = ((code: number) => void exits.push(code)) as typeof process.exit;
  });
  afterEach(() => (process.exit = realExit));

  const logger = (errors: string[]) => ({ error: (m: string, meta: { error: string }) => errors.push(`${m}: ${meta.error}`) }) as unknown as Logger;

  it('runs every step after a failed one, logs the failure, and exits 1', async () => {
    const ran: string[] = [];
    const errors: string[] = [];
    await shutDown(logger(errors), [
      ['closing the API server', () => Promise.reject(new Error('socket hang up'))],
      ['stopping the embedded etcd', async () => void ran.push('etcd')],
      ['unlocking the data dir', () => void ran.push('unlock')],
    ]);
    expect(ran).to.deep.equal(['etcd', 'unlock']);
    expect(errors).to.deep.equal(['shutdown: closing the API server failed: socket hang up']);
    expect(exits).to.deep.equal([1]);
  });

  it('exits 0 when every step succeeded', async () => {
    await shutDown(logger([]), [['stopping the agent', async () => undefined]]);
    expect(exits).to.deep.equal([0]);
  });
});
