#!/usr/bin/env bash
# Makes sure Debian's faketime (libfaketime) is on this machine: the chaos
# suite runs two agents with their wall clock an hour off, to show fencing
# needs no synchronised clocks (docs/fencing.md). Also the iproute2 and
# util-linux tools it makes its network hosts with (ip netns, nsenter).
set -euo pipefail

source "$(dirname "$0")/apt-install.sh"
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || apt_install "libfaketime (for the chaos suite's clock skew)" faketime
command -v ip >/dev/null || apt_install "ip (for the chaos suite's network hosts)" iproute2
command -v nsenter >/dev/null || apt_install "nsenter (for the chaos suite's network hosts)" util-linux
