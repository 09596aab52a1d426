/** Classification of operation failures into ErrorReason, message and hint. */
import { expect } from 'chai';
import { fallocateError } from '../../../agent/drivers/volume/fallocate.js';
import { classify, isRetryable, OperationError } from '../../../agent/operations/errors.js';

const errno = (code: string) => Object.assign(new Error(`${code}: something`), { code });
const ctx = { doing: 'creating replica data-0', node: 'n1', path: '/var/lib/cairn/volumes/c1/data-0.img' };

describe('operation errors', () => {
  it('maps errno codes to reasons with hints naming the path and node', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['ENOSPC', 'NoSpace', /free space on the filesystem of \/var\/lib\/cairn\/volumes\/c1\/data-0.img on node n1/],
      ['EDQUOT', 'NoSpace', /free space/],
      ['EACCES', 'PermissionDenied', /may not write .* check its ownership/],
      ['EROFS', 'PermissionDenied', /read-only/],
      ['ENOENT', 'NotFound', /does not exist on node n1/],
      ['ETIMEDOUT', 'Timeout', /spec.timeoutSeconds/],
      ['EIO', 'Unknown', /agent log on node n1/],
    ];
    for (const [code, reason, hint] of cases) {
      const e = classify(errno(code), ctx);
      expect(e.reason, code).to.equal(reason);
      expect(e.hint, code).to.match(hint);
      expect(e.message).to.equal(`creating replica data-0 on node n1 failed: ${code}: something`);
      expect(e.cause).to.be.instanceOf(Error);
    }
    expect(classify('a string', ctx).reason).to.equal('Unknown');
  });

  it('passes OperationErrors through and shapes them as lastError', () => {
    const e = new OperationError('InvalidSpec', 'bad size', 'fix it');
    expect(classify(e, ctx)).to.equal(e);
    expect(e.toWorkItemError('op-1', '2024-01-01T00:00:00Z')).to.deep.equal({ reason: 'InvalidSpec', message: 'bad size', hint: 'fix it', operationId: 'op-1', time: '2024-01-01T00:00:00Z' });
    expect(new OperationError('Unknown', 'x').toWorkItemError()).to.deep.equal({ reason: 'Unknown', message: 'x' });
  });

  it('tells permanent failures from retryable ones', () => {
    expect(['InvalidSpec', 'DriverUnavailable'].map((r) => isRetryable(r as 'InvalidSpec'))).to.deep.equal([false, false]);
    expect(['NoSpace', 'Timeout', 'CommandFailed', 'Unknown'].map((r) => isRetryable(r as 'NoSpace'))).to.deep.equal([true, true, true, true]);
  });

  it('reads the reason of a failed fallocate from its stderr', () => {
    const reasonOf = (stderr: string) => fallocateError(stderr, 1, null, 'n1').reason;
    expect(reasonOf('fallocate: fallocate failed: No space left on device')).to.equal('NoSpace');
    expect(reasonOf('fallocate: fallocate failed: Operation not supported')).to.equal('DriverUnavailable');
    expect(reasonOf('fallocate: fallocate failed: File too large')).to.equal('InvalidSpec');
    expect(reasonOf('fallocate: cannot open x: Permission denied')).to.equal('PermissionDenied');
    const other = fallocateError('weird', null, 'SIGKILL', 'n1');
    expect(other.reason).to.equal('CommandFailed');
    expect(other.message).to.equal('fallocate on node n1 failed (SIGKILL): weird');
  });
});
