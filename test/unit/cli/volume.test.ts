/** `cairn volume`: the spec patch each verb sends, and the option table of `get` — pure. */
import { expect } from 'chai';
import { optionTable, specPatch } from '../../../cli/run/volume.js';

describe('cairn volume', () => {
  it('set sends the options as a merge patch; reset sends null per key, or for all of them', () => {
    expect(specPatch('set', ['network.ping-timeout=10', 'cluster.quorum-type=fixed'], {})).to.deep.equal({ options: { 'network.ping-timeout': '10', 'cluster.quorum-type': 'fixed' } });
    expect(specPatch('reset', ['network.ping-timeout'], {})).to.deep.equal({ options: { 'network.ping-timeout': null } });
    expect(specPatch('reset', [], { all: true })).to.deep.equal({ options: null });
  });

  it('start, stop and expand set spec.state and spec.size', () => {
    expect(specPatch('start', [], {})).to.deep.equal({ state: 'Started' });
    expect(specPatch('stop', [], {})).to.deep.equal({ state: 'Stopped' });
    expect(specPatch('expand', [], { size: '20Gi' })).to.deep.equal({ size: '20Gi' });
  });

  it('refuses what the server would refuse less helpfully, with a hint', () => {
    expect(() => specPatch('set', ['network.ping-timeout'], {})).to.throw(/is not KEY=VALUE/);
    expect(() => specPatch('set', ['no.such=1'], {})).to.throw(/unsupported option "no.such"/);
    expect(() => specPatch('reset', [], {})).to.throw(/name the options to reset, or --all/);
    expect(() => specPatch('reset', ['network.ping-timeout'], { all: true })).to.throw(/not both/);
    expect(() => specPatch('expand', [], { size: 'big' })).to.throw(/--size big is not a size/);
  });

  it('get shows each option with its value and whether it is set or the default', () => {
    const volume = { metadata: { name: 'data' }, spec: { options: { 'network.ping-timeout': '10' } } };
    const lines = optionTable(volume, []).trimEnd().split('\n');
    expect(lines[0]).to.match(/^OPTION\s+VALUE\s+SOURCE$/);
    expect(lines).to.have.length(10);
    expect(lines.find((l) => l.startsWith('network.ping-timeout'))).to.match(/10\s+set$/);
    expect(optionTable(volume, ['cluster.quorum-type']).trimEnd().split('\n')[1]).to.match(/^cluster\.quorum-type\s+auto\s+default$/);
  });
});
