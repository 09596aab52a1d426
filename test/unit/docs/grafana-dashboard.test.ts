/** docs/grafana/cairn-dashboard.json queries only metrics that Cairn's processes export — pure. */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { AgentMetrics } from '../../../agent/metrics.js';
import { ApiServerMetrics } from '../../../apiserver/metrics.js';
import { ROOT } from '../../support/paths.js';

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

/** Every metric a process of Cairn exports: the apiserver's, and an agent's (which includes the controller runtime's). */
async function exported(): Promise<Set<string>> {
  const registries = [new ApiServerMetrics(() => 0).registry, new AgentMetrics(() => []).registry];
  const names = (await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).flat().map((m) => m.name);
  return new Set(names);
}

describe('the Grafana dashboard', () => {
  it('queries only metrics Cairn exports (histograms by their _bucket, _count and _sum)', async () => {
    const known = await exported();
    const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/grafana/cairn-dashboard.json'), 'utf8')) as { panels: Panel[] };
    const unknown: string[] = [];
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets ?? []) {
        for (const name of expr.match(/\b(?:apiserver|etcd|cairn)_[a-z0-9_]+/g) ?? []) {
          if (!known.has(name) && !known.has(name.replace(/_(bucket|count|sum)$/, ''))) unknown.push(`${panel.title}: ${name}`);
        }
      }
    }
    expect(unknown).to.deep.equal([]);
    expect(dashboard.panels.filter((p) => p.targets).length).to.be.at.least(10);
  });
});
