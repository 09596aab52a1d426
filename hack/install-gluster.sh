#!/usr/bin/env bash
# Makes sure GlusterFS's brick and client programs are on this machine
# (Debian's glusterfs-server and glusterfs-client), with `attr` for the
# brick roots' xattrs. Installs them with apt-get when running as root;
# otherwise prints the command to run and exits non-zero. glusterd is
# never started: Cairn's agents run the bricks from volfiles the
# controller generates (docs/volumes.md).
set -euo pipefail

gluster_ok() {
  command -v glusterfsd >/dev/null 2>&1 && command -v glusterfs >/dev/null 2>&1 && command -v setfattr >/dev/null 2>&1
}

if gluster_ok; then
  echo "gluster: $(glusterfsd --version | head -1) at $(command -v glusterfsd)"
  exit 0
fi

source "$(dirname "$0")/apt-install.sh"
apt_install GlusterFS glusterfs-server glusterfs-client attr
gluster_ok || { echo "GlusterFS was installed but glusterfsd, glusterfs or setfattr is still missing" >&2; exit 1; }
echo "gluster: $(glusterfsd --version | head -1) at $(command -v glusterfsd)"
