/** The rules of a Volume's spec beyond its schema, and the gluster options they check — pure. */
import { expect } from 'chai';
import { effectiveGlusterOptions, GLUSTER_OPTIONS, glusterOptionProblems } from '../../../api/gluster-options.js';
import { volumeSpecProblems } from '../../../api/volume-rules.js';
import type { VolumeSpec } from '../../../api/volume.js';

const fields = (spec: VolumeSpec, old?: VolumeSpec) => volumeSpecProblems(spec, old).map((p) => p.field);

describe('volumeSpecProblems', () => {
  it('accepts the defaults and every gluster shape from 1 to 3 replicas', () => {
    for (const replicas of [undefined, 1, 2, 3]) expect(fields({ size: '1Gi', replicas })).to.deep.equal([]);
    expect(fields({ size: '1Gi', replicas: 3, arbiter: true, state: 'Stopped', options: { 'cluster.quorum-type': 'fixed', 'cluster.quorum-count': '2' } })).to.deep.equal([]);
    expect(fields({ size: '1Gi', driver: 'file', replicas: 1 })).to.deep.equal([]);
  });

  it('refuses replicas > 1 for driver file, saying why and what to use instead', () => {
    const [problem] = volumeSpecProblems({ size: '1Gi', driver: 'file', replicas: 2 });
    expect(problem?.field).to.equal('spec.replicas');
    expect(problem?.message).to.match(/unreplicated/).and.match(/driver gluster/);
  });

  it('refuses more than 3 gluster replicas, an arbiter outside gluster replica 3, and Stopped for file', () => {
    expect(fields({ size: '1Gi', replicas: 4 })).to.deep.equal(['spec.replicas']);
    expect(fields({ size: '1Gi', replicas: 2, arbiter: true })).to.deep.equal(['spec.arbiter']);
    expect(fields({ size: '1Gi', driver: 'file', arbiter: true })).to.deep.equal(['spec.arbiter']);
    expect(fields({ size: '1Gi', driver: 'file', state: 'Stopped' })).to.deep.equal(['spec.state']);
  });

  it('refuses a change of driver or arbiter on update', () => {
    expect(fields({ size: '1Gi', driver: 'file' }, { size: '1Gi' })).to.deep.equal(['spec.driver']);
    expect(fields({ size: '1Gi', replicas: 3, arbiter: true }, { size: '1Gi', replicas: 3 })).to.deep.equal(['spec.arbiter']);
    expect(fields({ size: '2Gi', replicas: 3, arbiter: true }, { size: '1Gi', replicas: 3, arbiter: true })).to.deep.equal([]);
  });

  it('ratchets: an update that leaves a broken rule\'s fields alone passes, one that touches them does not', () => {
    const legacy: VolumeSpec = { size: '1Gi', driver: 'file', replicas: 2 };
    expect(fields({ ...legacy, size: '2Gi' }, legacy)).to.deep.equal([]);
    expect(fields({ ...legacy, replicas: 3 }, legacy)).to.deep.equal(['spec.replicas']);
  });

  it('names each bad option by its key', () => {
    expect(fields({ size: '1Gi', options: { 'cluster.quorum-type': 'most', 'no.such': 'x', 'network.ping-timeout': '10' } })).to.deep.equal(['spec.options[cluster.quorum-type]', 'spec.options[no.such]']);
  });
});

describe('gluster options', () => {
  it('accepts each option\'s valid values and refuses others with what it accepts', () => {
    const good: Record<string, string[]> = {
      'cluster.quorum-type': ['auto', 'fixed', 'none'],
      'cluster.quorum-count': ['1', '3'],
      'cluster.favorite-child-policy': ['none', 'mtime', 'majority'],
      'cluster.data-self-heal-algorithm': ['full', 'diff'],
      'cluster.heal-timeout': ['5', '86400'],
      'network.ping-timeout': ['1', '1013'],
      'performance.write-behind': ['on', 'off'],
      'performance.write-behind-window-size': ['512KB', '4MB', '1GB'],
      'diagnostics.client-log-level': ['INFO', 'DEBUG'],
    };
    expect(Object.keys(good)).to.have.members(Object.keys(GLUSTER_OPTIONS));
    // The quorum pair goes together: fixed with its count, a count under fixed.
    const withPair = (key: string, v: string) => (key === 'cluster.quorum-count' || v === 'fixed' ? { 'cluster.quorum-type': 'fixed', 'cluster.quorum-count': '2', [key]: v } : { [key]: v });
    for (const [key, values] of Object.entries(good)) for (const v of values) expect(glusterOptionProblems(withPair(key, v), 3), `${key}=${v}`).to.deep.equal([]);
    const bad: [string, string][] = [['cluster.quorum-count', '0'], ['cluster.heal-timeout', '4'], ['network.ping-timeout', '1e3'], ['performance.write-behind', 'yes'], ['performance.write-behind-window-size', '2GB'], ['performance.write-behind-window-size', '1TB'], ['diagnostics.client-log-level', 'info']];
    for (const [key, v] of bad) expect(glusterOptionProblems({ [key]: v }, 3)[0]?.message, `${key}=${v}`).to.include(GLUSTER_OPTIONS[key]!.accepts);
  });

  it('refuses quorum-type fixed without a count (GlusterFS would turn quorum off) and a count without fixed (ignored)', () => {
    expect(glusterOptionProblems({ 'cluster.quorum-type': 'fixed' }, 3)).to.deep.equal([{ key: 'cluster.quorum-type', message: 'cluster.quorum-type fixed needs cluster.quorum-count (the bricks a write needs); without it GlusterFS turns quorum off' }]);
    expect(glusterOptionProblems({ 'cluster.quorum-count': '2' }, 3)[0]).to.include({ key: 'cluster.quorum-count' });
    expect(glusterOptionProblems({ 'cluster.quorum-type': 'auto', 'cluster.quorum-count': '2' }, 3)[0]?.message).to.include('GlusterFS ignores it under auto');
  });

  it('refuses a quorum-count above the brick count, and lists the supported keys for an unknown one', () => {
    expect(glusterOptionProblems({ 'cluster.quorum-type': 'fixed', 'cluster.quorum-count': '3' }, 2)[0]?.message).to.match(/more than the volume's 2 bricks/);
    expect(glusterOptionProblems({ 'performance.cache-size': '1GB' }, 3)[0]?.message).to.include('network.ping-timeout');
  });

  it('shows every option with its value or its default', () => {
    const all = effectiveGlusterOptions({ 'network.ping-timeout': '10' });
    expect(all['network.ping-timeout']).to.equal('10');
    expect(all['cluster.quorum-type']).to.equal('auto');
    expect(Object.keys(all)).to.have.length(Object.keys(GLUSTER_OPTIONS).length);
  });
});
