#!/usr/bin/env bash
# The local cluster demo.
#   hack/demo.sh [up]   install what is missing, start `cairn server` in the
#                       background (embedded etcd, free loopback port), apply
#                       examples/ and show what is there
#   hack/demo.sh down   stop everything `up` started
# State lives in .cairn/demo (delete it to start from scratch).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cairn/demo
pidfile=$dir/server.pid

down() {
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    echo "cairn server (pid $pid) stopped; its data stays in $dir"
  else
    echo "no demo server is running"
  fi
  rm -f "$pidfile"
}

up() {
  bash hack/install-etcd.sh
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund
  fi
  npm run --silent build
  mkdir -p "$dir"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "the demo server is already running (pid $(cat "$pidfile")); 'hack/demo.sh down' stops it"
  else
    rm -f "$dir/server.out"
    nohup node bin/cairn.js server --data-dir "$dir" --port 0 >"$dir/server.out" 2>"$dir/server.log" &
    echo $! >"$pidfile"
    for _ in $(seq 1 300); do grep -q 'listening at' "$dir/server.out" 2>/dev/null && break; sleep 0.1; done
    grep -q 'listening at' "$dir/server.out" || { echo "cairn server did not start; see $dir/server.log" >&2; tail -20 "$dir/server.log" >&2; down; exit 1; }
  fi
  export KUBECONFIG=$PWD/$dir/admin.kubeconfig
  url=$(sed -n 's/.*listening at \(\S*\).*/\1/p' "$dir/server.out")
  echo "Cairn API server: $url"
  if command -v kubectl >/dev/null; then
    kubectl apply -f examples/
    kubectl get cairn -A
  else
    echo "kubectl is not installed; the API is still there for any Kubernetes client" >&2
  fi
  cat <<EOT

Use it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get instances -n demo -o wide
  kubectl get cairn -A
  kubectl explain instance.spec
Stop it:
  hack/demo.sh down
EOT
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: hack/demo.sh [up|down]" >&2; exit 2 ;;
esac
