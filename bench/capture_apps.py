"""Captures the reference workloads that ship in src/ssdpts/workloads/ (docs/rwsw-workloads.md).

    python bench/capture_apps.py [pgbench|small-files ...] [--duration 120] [--step 10] [--out-dir DIR]

Each application runs on a fresh ext4 file system on a loop device of its own (tests/apps.py: backing file in
/dev/shm, always unmounted and detached afterwards) and `ssdpts capture` records that loop device's block I/O
while the application is busy (it starts before the capture and stops after it, so every step sees it working).
The file gets the recipe in `source.command` and `source.note`. Needs root and, for pgbench, PostgreSQL.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from apps import APPS, WORKLOAD_SUFFIX, WORKLOADS_DIR, capture_app  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("apps", nargs="*", default=list(APPS), help=f"which ({', '.join(APPS)}); all by default")
    ap.add_argument("--duration", type=int, default=120, help="seconds captured (default 120)")
    ap.add_argument("--step", type=int, default=10, help="seconds per time step (default 10)")
    ap.add_argument("--out-dir", type=Path, default=WORKLOADS_DIR)
    a = ap.parse_args()
    # kill (SIGTERM) ends it like Ctrl-C: the file systems, loop devices and PostgreSQL are removed on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    unknown = [n for n in a.apps if n not in APPS]
    if unknown:
        print(f"unknown application {unknown[0]!r}; choose from {', '.join(APPS)}", file=sys.stderr)
        return 2
    a.out_dir.mkdir(parents=True, exist_ok=True)
    for name in a.apps:
        out = a.out_dir / f"{name}{WORKLOAD_SUFFIX}"
        capture = capture_app(name, a.duration, a.step, out,
                              recipe=f"python bench/capture_apps.py {name} --duration {a.duration} --step {a.step}")
        top = ", ".join(f"{s.stream.label} {capture.share(s.stream):.0%}" for s in capture.top(5))
        print(f"{out}: {capture.ios} I/Os in {len(capture.steps)} steps, mean QD {capture.queue_depth.mean:.1f}; "
              f"top streams: {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
