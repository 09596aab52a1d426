#!/usr/bin/env bash
# Makes sure an etcd >= 3.4 binary is on this machine (Debian's etcd-server).
# Installs it with apt-get when running as root; otherwise prints the command
# to run and exits non-zero. The package's own service is never started:
# Cairn runs etcd itself, on ports it chooses.
set -euo pipefail

min_major=3 min_minor=4

etcd_ok() {
  command -v etcd >/dev/null 2>&1 || return 1
  local v
  v=$(etcd --version 2>/dev/null | sed -n 's/^etcd Version: \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$v" ] || return 1
  set -- $v
  [ "$1" -gt "$min_major" ] || { [ "$1" -eq "$min_major" ] && [ "$2" -ge "$min_minor" ]; }
}

if etcd_ok; then
  echo "etcd: $(etcd --version | head -1) at $(command -v etcd)"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install "etcd >= ${min_major}.${min_minor}" etcd-server etcd-client
etcd_ok || { echo "etcd was installed but 'etcd --version' is still below ${min_major}.${min_minor}" >&2; exit 1; }
echo "etcd: $(etcd --version | head -1) at $(command -v etcd)"
