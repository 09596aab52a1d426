#!/usr/bin/env node
// The published entry point: the compiled CLI lives in dist/ (npm run build).
import v8 from 'node:v8';
// A larger young generation for the API server, which allocates many short-lived objects per request;
// the controller and agent keep V8's default, so their resident memory stays small.
if (['server', 'apiserver'].includes(process.argv[2] ?? '')) v8.setFlagsFromString('--max-semi-space-size=32');
await import('../dist/cli/main.js');
