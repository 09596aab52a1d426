#!/usr/bin/env node
// The published entry point: the compiled CLI lives in dist/ (npm run build).
import v8 from 'node:v8';
// The API server allocates many short-lived objects per request: a larger young generation pays off.
// The controller and the agent hold long-lived caches: a small young generation keeps their resident memory low.
const command = process.argv[2] ?? '';
if (['server', 'apiserver'].includes(command)) v8.setFlagsFromString('--max-semi-space-size=32');
else if (['controller', 'agent'].includes(command)) v8.setFlagsFromString('--max-semi-space-size=4');
await import('../dist/cli/main.js');
