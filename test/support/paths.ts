/** Paths of the checkout the tests run from (tests run from dist/test/...). */
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);

/** The repository root. */
export const ROOT = path.resolve(here, '..', '..', '..');
/** crds/ and examples/. */
export const CRD_DIR = path.join(ROOT, 'crds');
export const EXAMPLES_DIR = path.join(ROOT, 'examples');
export const CHARTS_DIR = path.join(ROOT, 'charts');
