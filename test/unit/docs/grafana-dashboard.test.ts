/** docs/grafana/cairn-dashboard.json queries only metrics and labels Cairn's processes export (histograms by their _bucket, _count and _sum): pure. */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { AgentMetrics } from '../../../agent/metrics.js';
import { ApiServerMetrics } from '../../../apiserver/metrics.js';
import { ROOT } from '../../support/paths.js';

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
}

describe('docs/grafana/cairn-dashboard.json', () => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'grafana', 'cairn-dashboard.json'), 'utf8')) as { panels: Panel[] };
  const exported = new Map<string, Set<string>>();
  before(async () => {
    // AgentMetrics extends the controller's RuntimeMetrics, so it holds both.
    for (const registry of [new ApiServerMetrics(() => 0).registry, new AgentMetrics(() => []).registry]) {
      for (const m of await registry.getMetricsAsJSON()) {
        const labels = new Set(m.values.flatMap((v) => Object.keys(v.labels)));
        const declared = (registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] })?.labelNames ?? [];
        exported.set(m.name, new Set([...labels, ...declared]));
      }
    }
  });

  it('has panels with queries', () => {
    expect(dashboard.panels.filter((p) => p.type === 'timeseries').length).to.be.greaterThan(10);
  });

  it('queries only exported metrics, grouped by labels they carry', () => {
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets ?? []) {
        const names = [...expr.matchAll(/\b((?:apiserver|etcd|cairn)_[a-z0-9_]+)/g)].map((m) => m[1]!).map((n) => (exported.has(n) ? n : n.replace(/_(bucket|count|sum)$/, '')));
        expect(names, `${panel.title}: ${expr}`).to.not.be.empty;
        for (const name of names) {
          expect(exported.has(name), `${panel.title}: ${name} is not exported`).to.equal(true);
          for (const by of [...expr.matchAll(/by \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()))) {
            if (['instance', 'le'].includes(by)) continue;
            if (names.every((n) => !exported.get(n)!.has(by))) expect.fail(`${panel.title}: no metric of "${expr}" has the label ${by}`);
          }
        }
      }
    }
  });
});
