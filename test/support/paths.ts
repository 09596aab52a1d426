/** Paths of the checkout the tests run from. */
import path from 'node:path';
import { packagePath } from '../../api/package-files.js';

/** The repository root. */
export const ROOT = packagePath();
/** crds/ and examples/. */
export const CRD_DIR = path.join(ROOT, 'crds');
export const EXAMPLES_DIR = path.join(ROOT, 'examples');
export const CHARTS_DIR = path.join(ROOT, 'charts');
