#!/usr/bin/env bash
# The local cluster demo.
#   hack/demo.sh [up]   install what is missing, start `cairn server` (with its
#                       controller; embedded etcd, free loopback port) and three
#                       agents (node-a, node-b, node-c) in the background, apply
#                       examples/ with `cairn apply` and show `cairn status
#                       --watch` until everything is Ready. Run it again to
#                       restart whatever of the demo is not running.
#   hack/demo.sh down   stop everything `up` started, instances included
# State lives in .cairn/demo (delete it to start from scratch).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cairn/demo
pidfile=$dir/demo-server.pid

NODES="node-a node-b node-c"

cairn() { node bin/cairn.js "$@"; }

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
  # GlusterFS bricks, self-heal daemons and mounts outlive their agent too.
  local agents="$PWD/$dir/agents/"
  for pid in $(pgrep -f "gluster.*$agents" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  awk -v a="$agents" 'index($2, a) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
  stop_pid "$pidfile" "cairn server" && echo "its data stays in $dir" || echo "no demo server is running"
  # A server killed before it could stop its etcd leaves it behind (the pid checked to still be etcd's).
  if [ -f "$dir/etcd.pid" ] && { tr '\0' ' ' <"/proc/$(cat "$dir/etcd.pid")/cmdline"; } 2>/dev/null | grep -q etcd; then
    stop_pid "$dir/etcd.pid" "its etcd" || true
  fi
}

up() {
  bash hack/install-etcd.sh
  bash hack/install-gluster.sh   # the demo's Volume is driver gluster; glusterd is never started
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund
  fi
  npm run --silent build
  mkdir -p "$dir"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "the demo server is already running (pid $(cat "$pidfile")); 'hack/demo.sh down' stops it"
  else
    rm -f "$dir/server.out"
    nohup node bin/cairn.js server --data-dir "$dir" --port 0 --kubeconfig-namespace demo >"$dir/server.out" 2>"$dir/server.log" &
    echo $! >"$pidfile"
    for _ in $(seq 1 300); do grep -q 'listening at' "$dir/server.out" 2>/dev/null && break; sleep 0.1; done
    grep -q 'listening at' "$dir/server.out" || { echo "cairn server did not start; see $dir/server.log" >&2; tail -20 "$dir/server.log" >&2; down; exit 1; }
  fi
  export KUBECONFIG=$PWD/$dir/admin.kubeconfig
  url=$(sed -n 's/.*listening at \(\S*\).*/\1/p' "$dir/server.out")
  echo "Cairn API server: $url"
  cairn apply -f examples/00-cluster.yaml   # the Cluster is the namespace the agents register in
  for n in $NODES; do
    if [ -f "$dir/agent-$n.pid" ] && kill -0 "$(cat "$dir/agent-$n.pid")" 2>/dev/null; then continue; fi
    # Each agent joins with a one-use join token and then holds only its own node's credential, never the admin token
    # (a restarted agent keeps using the credential in its data dir while it is valid and leaves the token unused).
    # The token goes in CAIRN_JOIN_TOKEN, not on the command line, where ps would show it.
    CAIRN_JOIN_TOKEN=$(cairn token create --cluster demo --ttl 10m 2>/dev/null) \
      nohup node bin/cairn.js agent --server "$url" --certificate-authority "$PWD/$dir/pki/ca.crt" \
      --cluster demo --node-name "$n" --data-dir "$PWD/$dir/agents/$n" --monitor-port 0 >"$dir/agent-$n.out" 2>"$dir/agent-$n.log" &
    echo $! >"$dir/agent-$n.pid"
  done
  # Instances spread over the nodes only if the nodes are there when the scheduler places them.
  for _ in $(seq 1 60); do
    [ "$(cairn get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" -ge 3 ] && break
    sleep 0.5
  done
  cairn apply -f examples/
  # A VM too: the test guest (Debian's cloud kernel + a busybox initramfs), as the Cluster's qemu defaults.
  if guest=$(bash hack/build-test-guest.sh --print-dir); then
    . "$guest/guest.env"
    # The guest as the example Cluster's qemu defaults, applied as a field manager of their own: a later
    # cairn apply -f examples/ (manager "cairn", which leaves them out) keeps them, and cairn diff finds none.
    KERNEL=$KERNEL INITRD=$INITRD CMDLINE=$CMDLINE node -e "
      const qemu = { kernel: process.env.KERNEL, initrd: process.env.INITRD, cmdline: process.env.CMDLINE };
      process.stdout.write(JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'demo' }, spec: { driverDefaults: { qemu } } }));" |
      cairn apply --field-manager cairn-demo-guest -f - >/dev/null
    cairn apply -f examples/qemu/
  else
    echo "skipping the VM: the test guest could not be built (see above)" >&2
  fi
  cairn status --watch --until-converged --timeout 2m || echo "not converged yet: 'cairn failures' says why" >&2
  token=$(sed -n 's/^ *token: *//p' "$KUBECONFIG" | head -1)
  cat <<EOT

The demo cluster runs. Its dashboard (log in with the token below):
  $url/ui/
  token: $token
  (the server's certificate is signed by the demo's own CA, $PWD/$dir/pki/ca.crt: accept it in the browser or import it)
Its kubeconfig's namespace is the Cluster "demo":
  export KUBECONFIG=$KUBECONFIG
  alias cairn="node $PWD/bin/cairn.js"
  cairn get instances -o wide            # or -w to follow changes
  cairn status --watch                   # the cluster at a glance (Ctrl-C ends it)
  cairn describe instance writer
  cairn migrate instance vm --to NODE --wait     # live-migrate the VM to another node (no reboot: see cairn logs instance vm)
  kill -9 \$(cat $PWD/$dir/agent-node-a.pid)   # a machine fails: watch its instances move
  cairn drain node-b --wait               # empty a node; 'cairn uncordon node-b' ends it
  cairn failures                          # what is failing, and how to fix it
  kubectl get cairn                       # stock kubectl works too
  cairn logs instance writer -f           # what an instance prints, read on its node through the agent's tunnel
  cairn console instance vm               # the VM's serial console (Ctrl-] leaves)
  cat $PWD/$dir/agents/*/mounts/demo/data/stamps.log    # what writer wrote, the same through every node's mount
Run 'npm run demo' again to restart what is not running. Stop everything:
  hack/demo.sh down
EOT
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: hack/demo.sh [up|down]" >&2; exit 2 ;;
esac
