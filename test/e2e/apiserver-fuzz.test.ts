/**
 * Issue 17: a fuzz run in `npm test` over every endpoint, method, content
 * type and query parameter, the hostile shapes of the issue among the
 * bodies, against `cairn apiserver` as its own process. No request may get
 * a 5xx, have its connection reset or go unanswered, and the server's event
 * loop may never block for a second. The requests are fixed by the seed
 * (CAIRN_FUZZ_SEED overrides it); `npm run fuzz` is the long run.
 */
import { expect } from 'chai';
import { describeFindings, runFuzz } from '../../hack/fuzz/runner.js';
import { startFuzzTarget, type FuzzTarget } from '../../hack/fuzz/target.js';

const CONCURRENCY = 8;
const REQUESTS = 12_000;
const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 17);

describe('apiserver fuzz (issue 17)', function () {
  this.timeout(240_000);
  let target: FuzzTarget | undefined;
  after(async () => target?.stop());

  it(`answers ${REQUESTS} generated requests (seed ${SEED}) without a 5xx, a reset or a blocked event loop`, async () => {
    target = await startFuzzTarget(CONCURRENCY);
    const report = await runFuzz(target.api, { count: REQUESTS, concurrency: CONCURRENCY, seed: SEED });
    const findings = describeFindings(report);
    expect(findings, `${findings.join('\n')}\nserver log:\n${target.logs().slice(-2000)}`).to.deep.equal([]);
    expect(report.loopUnmeasured, 'scrape windows without an event-loop delay').to.equal(0);
    expect(report.loopMaxMs, 'longest event-loop delay (ms)').to.be.above(0).and.below(1000);
    // Most requests must get past authentication, methods and content types to the handlers behind them.
    const bounced = ['401', '405', '415'].reduce((n, code) => n + (report.byStatus[code] ?? 0), 0);
    expect(report.sent - bounced - report.unsendable).to.be.above(REQUESTS / 2);
  });
});
