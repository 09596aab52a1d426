/** Where hack/install-helm.sh puts the real Helm 3 binary ($CAIRN_HELM overrides). */
import os from 'node:os';
import path from 'node:path';

export const HELM_BIN = process.env.CAIRN_HELM ?? path.join(os.homedir(), '.cache', 'cairn', 'helm', 'helm');
