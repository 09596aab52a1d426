#!/usr/bin/env node
// The published entry point: the CLI, bundled into dist/bundle/ by npm run build (hack/bundle.ts).
import v8 from 'node:v8';
// The API server allocates many short-lived objects per request: a larger young generation pays off.
// The controller holds large, long-lived caches: V8's size-optimised mode collects garbage sooner, which
// keeps its resident memory near its live data (hack/bench/controller-bench.ts: peak RSS 380 → 180 MiB
// with 5,000 instances, for about 30 % more CPU). The agent keeps a small young generation.
const command = process.argv[2] ?? '';
if (['server', 'apiserver'].includes(command)) v8.setFlagsFromString('--max-semi-space-size=32');
else if (command === 'controller') v8.setFlagsFromString('--max-semi-space-size=4 --optimize-for-size');
else if (command === 'agent') v8.setFlagsFromString('--max-semi-space-size=4');
await import('../dist/bundle/main.js');
