#!/usr/bin/env bash
# Builds the tiny test guest the qemu demo, tests and benchmark boot: Debian's
# cloud kernel plus an initramfs of busybox-static whose init
#   - prints "CAIRN-GUEST-READY uptime=<s>" on the serial console once booted
#     (the readiness marker),
#   - then prints "CAIRN-HEARTBEAT seq=<n> uptime=<s>" every 0.2 s, so a test
#     can tell a guest that kept running (uptime increasing) from one that
#     rebooted,
#   - and, when a virtio disk is attached (/dev/vda), writes a boot record to
#     its first sector, a 1 MiB pattern at offset 1 MiB, and each heartbeat
#     to its second sector, so a test can find on a node's replica what the
#     guest wrote; before that it prints what the second sector held
#     (CAIRN-DISK-FOUND), so a VM started again shows what it kept;
#   - reads lines typed on the serial console and answers each with
#     "CAIRN-ECHO <line>", so a test can prove a console session is interactive.
# Installs qemu-system-x86, qemu-utils, linux-image-cloud-amd64 and
# busybox-static from Debian's packages when missing (as root). Nothing is
# downloaded from anywhere else. Idempotent: an up-to-date guest is reused.
#
# Usage: hack/build-test-guest.sh [--print-dir]
#   Output directory: $CAIRN_GUEST_DIR, default ${XDG_CACHE_HOME:-~/.cache}/cairn/test-guest,
#   holding vmlinuz, initrd.img and guest.env (KERNEL=, INITRD=, CMDLINE=, MARKER=; shell syntax, quoted).
set -euo pipefail

out=${CAIRN_GUEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/test-guest}
packages=(qemu-system-x86 qemu-utils linux-image-cloud-amd64 busybox-static cpio)
# Bump when the init script changes, so cached guests are rebuilt.
guest_version=6

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${missing[*]}. Install them as root with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "installing Debian packages: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

kernel=$(ls -1 /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || { echo "no /boot/vmlinuz-*-cloud-amd64 after installing linux-image-cloud-amd64" >&2; exit 1; }
kver=${kernel#/boot/vmlinuz-}
stamp="$guest_version $kver $(stat -c %Y /bin/busybox)"

if [ -f "$out/guest.env" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  [ "${1:-}" = "--print-dir" ] && echo "$out"
  exit 0
fi

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,lib/modules}
cp /bin/busybox "$root/bin/busybox"
# virtio-blk is a module in Debian's cloud kernel; load order follows modinfo's dependencies.
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
  f=$(modinfo -k "$kver" -F filename "$m")
  case "$f" in
    *.ko) cp "$f" "$root/lib/modules/$m.ko" ;;
    *.ko.xz) xz -dc "$f" >"$root/lib/modules/$m.ko" ;;
    *) echo "cannot find kernel module $m for $kver" >&2; exit 1 ;;
  esac
done

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
  insmod /lib/modules/$m.ko 2>/dev/null
done
uptime() { cut -d' ' -f1 /proc/uptime; }
# virtio-blk probes asynchronously: when a virtio block device (id 0x0002) exists, wait for /dev/vda.
if grep -qs 0x0002 /sys/bus/virtio/devices/*/device; then
  i=0; while [ ! -b /dev/vda ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
fi
boot=$(uptime)
if [ -b /dev/vda ]; then
  # What the last run left in its heartbeat sector: a VM failed over shows it kept its disk.
  echo "CAIRN-DISK-FOUND $(dd if=/dev/vda bs=512 skip=1 count=1 2>/dev/null | tr -d '\000' | head -n1)"
  printf 'CAIRN-DISK boot uptime=%s\n' "$boot" | dd of=/dev/vda bs=512 conv=sync,fsync 2>/dev/null
  yes "cairn-test-pattern-$boot" | head -c 1048576 | dd of=/dev/vda bs=1M seek=1 conv=fsync 2>/dev/null
  echo "CAIRN-DISK-WRITTEN uptime=$(uptime)"
fi
echo "CAIRN-GUEST-READY uptime=$(uptime)"
# The console is interactive: every typed line is answered (the tty echoes keystrokes too).
(while read -r line; do echo "CAIRN-ECHO $line"; done) </dev/console >/dev/console 2>&1 &
n=0
while :; do
  n=$((n+1))
  up=$(uptime)
  echo "CAIRN-HEARTBEAT seq=$n uptime=$up"
  [ -b /dev/vda ] && printf 'CAIRN-DISK seq=%d uptime=%s\n' "$n" "$up" | dd of=/dev/vda bs=512 seek=1 conv=sync,fsync 2>/dev/null
  sleep 0.2
done
INIT
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.img"
cp "$kernel" "$work/vmlinuz"
cat >"$work/guest.env" <<EOF
KERNEL="$out/vmlinuz"
INITRD="$out/initrd.img"
CMDLINE="console=ttyS0 quiet panic=-1"
MARKER="CAIRN-GUEST-READY"
EOF
for f in vmlinuz initrd.img guest.env; do mv -f "$work/$f" "$out/$f"; done
echo "$stamp" >"$out/.stamp"
echo "built the test guest in $out (kernel $kver)" >&2
[ "${1:-}" = "--print-dir" ] && echo "$out"
exit 0
