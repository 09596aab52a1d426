#!/usr/bin/env bash
# Makes sure Debian's chromium is on this machine: the dashboard's browser
# tests drive it headless through playwright-core (an npm package that
# downloads no browser). Installs it with apt-get when running as root;
# otherwise prints the command to run and exits non-zero.
set -euo pipefail

if command -v chromium >/dev/null; then
  echo "chromium: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install "Chromium (for the dashboard's browser tests)" chromium
command -v chromium >/dev/null || { echo "chromium was installed but is not on PATH" >&2; exit 1; }
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
