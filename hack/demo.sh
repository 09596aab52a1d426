#!/usr/bin/env bash
# The local cluster demo.
#   hack/demo.sh [up]   install what is missing, start `cairn server` (with its
#                       controller; embedded etcd, free loopback port) and three
#                       agents (node-a, node-b, node-c) in the background, apply
#                       examples/ and show the instances running
#   hack/demo.sh down   stop everything `up` started, instances included
# State lives in .cairn/demo (delete it to start from scratch).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cairn/demo
pidfile=$dir/demo-server.pid

NODES="node-a node-b node-c"

stop_pid() { # pidfile what
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null || { rm -f "$1"; return 1; }
  local pid; pid=$(cat "$1")
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$1"
  echo "$2 (pid $pid) stopped"
}

down() {
  for n in $NODES; do stop_pid "$dir/agent-$n.pid" "cairn agent $n" || true; done
  # Instances outlive their agent by design; the demo's end is theirs too.
  for state in "$dir"/agents/*/instances/*/*/state.json; do
    [ -f "$state" ] || continue
    pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$state" | head -1)
    [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null || true
  done
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
  else
    echo "kubectl is not installed; the API is still there for any Kubernetes client" >&2
  fi
  for n in $NODES; do
    if [ -f "$dir/agent-$n.pid" ] && kill -0 "$(cat "$dir/agent-$n.pid")" 2>/dev/null; then continue; fi
    nohup node bin/cairn.js agent --kubeconfig "$KUBECONFIG" --cluster demo --node-name "$n" --data-dir "$dir/agents/$n" \
      --monitor-port 0 >"$dir/agent-$n.out" 2>"$dir/agent-$n.log" &
    echo $! >"$dir/agent-$n.pid"
  done
  if command -v kubectl >/dev/null; then
    echo "waiting for the instances to run..."
    kubectl wait --for=jsonpath='{.status.phase}'=Running instances --all -n demo --timeout=60s >/dev/null || true
    kubectl get nodes.cairn.dev,instances,volumes -n demo -o wide
  fi
  cat <<EOT

Use it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get instances -n demo -o wide -w
  kubectl get workitems -n demo -o wide
  cat $dir/agents/node-a/instances/demo/*/console.log   # what the instances print
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
