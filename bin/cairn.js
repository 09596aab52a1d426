#!/usr/bin/env node
// The published entry point: the compiled CLI lives in dist/ (npm run build).
import v8 from 'node:v8';
// A larger young generation: the apiserver allocates many short-lived objects per request.
v8.setFlagsFromString('--max-semi-space-size=32');
await import('../dist/cli/main.js');
