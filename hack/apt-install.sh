# Sourced by the install-*.sh scripts: apt_install WHAT PACKAGE...
# Installs Debian packages as root, with a policy-rc.d that keeps their
# services (etcd on :2379, glusterd) from starting: Cairn runs what it
# needs itself. Not root: prints the command to run and exits 1.
apt_install() {
  local what=$1
  shift
  local cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $*"
  if [ "$(id -u)" -ne 0 ]; then
    echo "$what is missing. Install it as root with:" >&2
    echo "  sudo sh -c '$cmd'" >&2
    exit 1
  fi
  echo "$what is missing: installing Debian's $*" >&2
  local policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
