"""Safety on a real kernel: partitions, mounts, swap, md, LVM and device-mapper over a SATA disk are refused
before a byte is written (the drive's SHA-256 is the same after the refused run)."""

from __future__ import annotations

import pytest

# Each scenario: shell that builds it on DISK (P1, P2 = partitions), the target ssdpts is asked to write,
# and the shell that takes it down again. All run in one guest process.
SAFETY = r"""
import hashlib, json, subprocess, sys, time
from pathlib import Path
from ssdpts.runner import lifecycle
from ssdpts.errors import SsdptsError
disk = sys.argv[1]
p1, p2 = disk + "1", disk + "2"
SCENARIOS = {
    "gpt-no-consent": ("", disk, "", False),
    "mounted-partition": (f"mkfs.ext4 -q -F {p1} && mkdir -p /tmp/mnt && mount {p1} /tmp/mnt", disk,
                          "umount /tmp/mnt", True),
    "mounted-partition-itself": (f"mount {p1} /tmp/mnt", p1, "umount /tmp/mnt", True),
    "active-swap": (f"mkswap -q {p2} && swapon {p2}", disk, f"swapoff {p2}", True),
    "md-member": (f"mdadm --create /dev/md9 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 "
                  f"--assume-clean {p1} {p2}", disk, f"mdadm --stop /dev/md9 && mdadm --zero-superblock {p1} {p2}", True),
    "lvm-member": (f"pvcreate -qq -ff -y {p1} && vgcreate -qq tbvg {p1} && lvcreate -qq -L 8M -n lv tbvg", p1,
                   f"vgremove -qq -f tbvg && pvremove -qq {p1}", True),
    "dm-over-drive": (f"dmsetup create tblinear --table \"0 $(blockdev --getsz {disk}) linear {disk} 0\"", disk,
                      "dmsetup remove tblinear", True),
}
def sh(cmd):
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"{cmd!r} failed: {p.stderr.strip()}")
def sha():
    return hashlib.sha256(Path(disk).read_bytes()).hexdigest()
sh(f"sfdisk -q {disk} <<'EOT'\nlabel: gpt\nsize=12MiB\nsize=12MiB\nEOT")
sh(f"blockdev --rereadpt {disk}")
out = {}
for name, (setup, target, teardown, consent) in SCENARIOS.items():
    t0 = time.monotonic()
    if setup:
        sh(setup)
    holders = {Path(d).name: sorted(h.name for h in Path(f"/sys/class/block/{Path(d).name}/holders").iterdir())
               for d in (disk, p1)}
    before = sha()
    try:
        lifecycle.start(target, results_dir=Path("/tmp/safety-results"), profile_name="tests/profiles/tiny.toml",
                     tests=["iops"], size=None, destroy_data=consent, purge_method="auto", quiet=True)
        refusal = None
    except SsdptsError as e:
        refusal = str(e)
    out[name] = {"refusal": refusal, "unchanged": sha() == before, "holders": holders,
                 "runs_created": Path("/tmp/safety-results/ssdpts.db").exists(), "seconds": time.monotonic() - t0}
    if teardown:
        sh(teardown)
print(json.dumps(out))
"""

EXPECTED = {
    "gpt-no-consent": "holds a gpt partition table; add --destroy-data",
    "mounted-partition": "is mounted at /tmp/mnt (partition {name}1)",
    "mounted-partition-itself": "is mounted at /tmp/mnt",
    "active-swap": "{disk}2 is active swap",
    "md-member": "is in use by md9",
    "lvm-member": "is in use by dm-",
    "dm-over-drive": "is in use by dm-",
}


@pytest.fixture(scope="module")
def safety(vm) -> dict:
    out = vm.py(SAFETY, vm.disk("spare"), timeout=600)
    print("safety scenario seconds in the guest: " + ", ".join(f"{k} {v['seconds']:.1f}" for k, v in out.items()))
    return out


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_refused_and_unchanged(vm, safety, scenario):
    disk = vm.disk("spare")
    r = safety[scenario]
    expected = EXPECTED[scenario].format(disk=disk, name=disk.rsplit("/", 1)[1])
    assert r["refusal"] and expected in r["refusal"], r
    assert r["unchanged"] is True
    assert r["runs_created"] is False                     # refused before a run (or a results database) existed


def test_holders_are_real(vm, safety):
    disk, part = vm.disk("spare").rsplit("/", 1)[1], vm.disk("spare").rsplit("/", 1)[1] + "1"
    assert safety["md-member"]["holders"][part] == ["md9"]
    assert safety["lvm-member"]["holders"][part][0].startswith("dm-")
    assert safety["dm-over-drive"]["holders"][disk][0].startswith("dm-")
