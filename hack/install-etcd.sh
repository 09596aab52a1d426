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

install_cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server etcd-client"
if [ "$(id -u)" -ne 0 ]; then
  echo "etcd >= ${min_major}.${min_minor} is missing. Install it as root with:" >&2
  echo "  sudo sh -c '$install_cmd'" >&2
  exit 1
fi

echo "etcd >= ${min_major}.${min_minor} is missing: installing Debian's etcd-server" >&2
# A policy-rc.d that says "no" keeps the package from starting its own etcd on :2379.
policy=/usr/sbin/policy-rc.d
had_policy=0
[ -e "$policy" ] && had_policy=1
if [ "$had_policy" -eq 0 ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client >/dev/null
etcd_ok || { echo "etcd was installed but 'etcd --version' is still below ${min_major}.${min_minor}" >&2; exit 1; }
echo "etcd: $(etcd --version | head -1) at $(command -v etcd)"
