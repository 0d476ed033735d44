"""The drives of a run on several drives at once (target kind "set"): names, header rows, part labels.

A parallel run stores the aggregate of every cell and each drive's own result in `parts`; each test's
`parts` renderer uses these helpers to add per-drive tables after its aggregate ones.
"""

from __future__ import annotations

from typing import Iterable

from markupsafe import Markup, escape

from ..targets.record import TargetRecord
from .toolkit import safe_name


def members(run: dict) -> list[TargetRecord]:
    t = run["target"]
    return list(t.members) if t.kind == "set" else []


def member_labels(run: dict) -> list[str]:
    return [m.label_id for m in members(run)]


def _gb(n: float) -> str:
    return f"{n / 1e9:,.2f} GB ({n / 2**30:,.2f} GiB)"


def member_rows(run: dict) -> list[tuple[str, str]]:
    """("Drive N", "label: model, capacity, transport, serial/firmware") for the Device Under Test block."""
    out = []
    for i, m in enumerate(members(run), start=1):
        model = (m.model or "").strip() or "model unknown"
        bits = [model, _gb(m.size_bytes or m.info.get("size_bytes") or 0), str(m.transport or m.kind or "–")]
        if m.serial or m.firmware:
            bits.append(f"S/N {m.serial or '–'}, FW {m.firmware or '–'}")
        out.append((f"Drive {i}", f"{m.label_id} — " + ", ".join(bits)))
    return out


def ordered_part_labels(run: dict, found: Iterable[str]) -> list[str]:
    """The part labels seen in the data, in the run's member order (unknown ones last, sorted)."""
    found = set(found)
    first = [x for x in member_labels(run) if x in found]
    return first + sorted(found - set(first))


def part_key(label: str) -> str:
    return safe_name(label)


def drives_intro(labels: list[str]) -> Markup:
    return Markup(f'<p class="note">Run on {len(labels)} drives at once, in lock-step: the tables above are the '
                  f'aggregate (IOPS and bandwidth summed, latency from the merged histograms); below, each drive '
                  f'on its own ({escape(", ".join(labels))}).</p>')
