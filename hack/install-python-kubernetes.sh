#!/usr/bin/env bash
# Makes sure Debian's python3-kubernetes (the official Python client) is on
# this machine: the tests drive Cairn's API with it as a second client
# library, written by nobody on the project. Installs it with apt-get when
# running as root; otherwise prints the command to run and exits non-zero.
# Debian's interpreter, /usr/bin/python3, is the one that sees it (a pyenv
# python3 first on PATH does not).
set -euo pipefail

client_ok() {
  /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1
}

if client_ok; then
  echo "python kubernetes client: $(/usr/bin/python3 -c 'import kubernetes; print(kubernetes.__version__)')"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install "the Python Kubernetes client" python3-kubernetes
client_ok || { echo "python3-kubernetes was installed but 'import kubernetes' still fails" >&2; exit 1; }
echo "python kubernetes client: $(/usr/bin/python3 -c 'import kubernetes; print(kubernetes.__version__)')"
