#!/bin/bash
# PID 1 of the test-bed guest (tests/vm/testbed.py): the host's root is mounted read-only over 9p.
# Writable tmpfs where tools write, an overlay on /etc (LVM archives), the drivers under test, then the agent.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# A repository under /tmp, /var/tmp or /run (a CI clone, say) would vanish under the tmpfs mounts below:
# keep it reachable at its own path.
repo="$(cd "$(dirname "$0")/../.." && pwd)"
case "$repo" in /tmp/*|/var/tmp/*|/run/*) mkdir -p /dev/.ssdpts-repo && mount --bind "$repo" /dev/.ssdpts-repo ;; esac
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/tmp
mkdir -p /dev/pts /dev/shm /run/lock /run/etc-upper /run/etc-work /run/ssdpts-xfer /tmp/home
if [ -d /dev/.ssdpts-repo ]; then mkdir -p "$repo" && mount --bind /dev/.ssdpts-repo "$repo"; fi
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
modprobe overlay && mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/etc-upper,workdir=/run/etc-work /etc
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=524288 "${ssdpts_xfer:-xfer}" /run/ssdpts-xfer
for m in nvme ahci sd_mod virtio_scsi loop dm_mod md_mod raid1 nbd; do modprobe "$m"; done
exec "$(dirname "$0")/agent.py" /run/ssdpts-xfer > /run/ssdpts-xfer/agent.log 2>&1
