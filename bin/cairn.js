#!/usr/bin/env node
// The published entry point: the compiled CLI lives in dist/ (npm run build).
import '../dist/cli/main.js';
