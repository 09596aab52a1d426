import { describe, expect, it } from 'vitest';
import { detailHref, parseRoute } from './route';

describe('parseRoute', () => {
  it('parses every page', () => {
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('#/')).toEqual({ page: 'overview' });
    expect(parseRoute('#/failures')).toEqual({ page: 'failures' });
    expect(parseRoute('#/instances')).toEqual({ page: 'list', resource: 'instances' });
    expect(parseRoute('#/nodes/demo/node-a')).toEqual({ page: 'node', namespace: 'demo', name: 'node-a' });
    expect(parseRoute('#/instances/demo/web')).toEqual({ page: 'instance', namespace: 'demo', name: 'web', tab: 'overview' });
    expect(parseRoute('#/instances/demo/web/console')).toEqual({ page: 'instance', namespace: 'demo', name: 'web', tab: 'console' });
    expect(parseRoute('#/volumes/demo/data')).toEqual({ page: 'volume', namespace: 'demo', name: 'data' });
  });

  it('rejects unknown paths', () => {
    expect(parseRoute('#/instances/demo').page).toBe('not-found');
    expect(parseRoute('#/instances/demo/web/shell').page).toBe('not-found');
    expect(parseRoute('#/nodes/demo/a/logs').page).toBe('not-found');
    expect(parseRoute('#/pods').page).toBe('not-found');
    expect(parseRoute('#/instances/demo/%E0').page).toBe('not-found');
  });

  it('round-trips through detailHref', () => {
    expect(detailHref('instances', 'demo', 'web', 'logs')).toBe('#/instances/demo/web/logs');
    expect(parseRoute(detailHref('volumes', 'demo', 'data'))).toEqual({ page: 'volume', namespace: 'demo', name: 'data' });
  });
});
