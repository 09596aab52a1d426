/**
 * The web dashboard's files at /ui/, open to all: the page itself asks for
 * a bearer token and sends it with every API request, so nothing here needs
 * a user. Vite names built assets by content hash, so they are cached for a
 * year; index.html is revalidated every time, so a new build shows at once.
 * Any other path under /ui/ is the page (its router reads the hash).
 */
import fs from 'node:fs';
import path from 'node:path';
import compression from 'compression';
import express, { type Express } from 'express';
import { packagePath } from '../../api/package-files.js';

/** Where `npm run build` puts the dashboard (vite build --config ui/vite.config.ts). */
export const DASHBOARD_DIR = packagePath('dist', 'ui');

/** Serves the dashboard from `dir` under /ui/. */
export function serveDashboard(app: Express, dir = DASHBOARD_DIR): void {
  const index = path.join(dir, 'index.html');
  // express matches /ui/ here too (routing is not strict): only the bare path is redirected.
  app.get('/ui', (req, res, next) => (req.originalUrl.split('?')[0] === '/ui' ? res.redirect(301, '/ui/') : next()));
  app.use('/ui', compression());
  app.use('/ui/assets', express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false, index: false }));
  app.get('/ui/{*rest}', (_req, res) => {
    if (!fs.existsSync(index)) return void res.status(404).type('text/plain').send('the dashboard is not built: run npm run build (it runs vite build --config ui/vite.config.ts)');
    res.setHeader('Cache-Control', 'no-cache');
    // Only its own files and the API; xterm adds a style element, the favicon is a data: URI.
    res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'");
    res.sendFile(index);
  });
}
