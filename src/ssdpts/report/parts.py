"""Per-drive results of runs on several drives at once (target kind "set"), and partial-run notices.

A parallel run stores the aggregate of every cell and each drive's own result in `parts` (window
summaries: `cells[name]["parts"][label]`). The test renderers call the helpers here to add per-drive
tables and plots after their aggregate ones; every helper returns an empty Markup when the data has no
parts, so single-drive reports are unchanged.
"""

from __future__ import annotations

from typing import Sequence

from markupsafe import Markup, escape

from ..units import bs_label
from .toolkit import Cell, bs_mix_matrix, mix_label, safe_name


# ---------------------------------------------------------------------------------------------
# drives of a run

def member_label(m: dict) -> str:
    """How results name a member: the path, prefixed by 'host:port' when remote (Target.label_id)."""
    return f"{m['host']}:{m.get('path')}" if m.get("host") else str(m.get("path") or m.get("spec"))


def members(run: dict) -> list[dict]:
    t = run.get("target") or {}
    if t.get("kind") != "set":
        return []
    return list((t.get("info") or {}).get("members") or [])


def member_labels(run: dict) -> list[str]:
    return [member_label(m) for m in members(run)]


def _gb(n: float) -> str:
    return f"{n / 1e9:,.2f} GB ({n / 2**30:,.2f} GiB)"


def member_rows(run: dict) -> list[tuple[str, str]]:
    """(\"Drive N\", \"label: model, capacity, transport, serial/firmware\") for the Device Under Test block."""
    out = []
    for i, m in enumerate(members(run), start=1):
        info = m.get("info") or {}
        model = (info.get("model") or "").strip() or "model unknown"
        bits = [model, _gb(m.get("size_bytes") or info.get("size_bytes") or 0),
                str(info.get("transport") or m.get("kind") or "–")]
        if info.get("serial") or info.get("firmware"):
            bits.append(f"S/N {info.get('serial') or '–'}, FW {info.get('firmware') or '–'}")
        out.append((f"Drive {i}", f"{member_label(m)} — " + ", ".join(bits)))
    return out


def ordered_labels(run: dict, found: Sequence[str]) -> list[str]:
    """The part labels seen in the data, in the run's member order (unknown ones last, sorted)."""
    found = set(found)
    first = [x for x in member_labels(run) if x in found]
    return first + sorted(found - set(first))


def cell_part_labels(run: dict, cells: dict) -> list[str]:
    return ordered_labels(run, {p for c in (cells or {}).values() for p in (c.get("parts") or {})})


def part_cells(cells: dict, label: str) -> dict[str, dict]:
    """One drive's window summary, shaped like the aggregate's (workload copied from the aggregate)."""
    out = {}
    for name, c in (cells or {}).items():
        p = (c.get("parts") or {}).get(label)
        if p is not None:
            out[name] = {"workload": c.get("workload") or {}, **p}
    return out


def _key(label: str) -> str:
    return safe_name(label)


def _intro(labels: Sequence[str]) -> Markup:
    return Markup(f'<p class="note">Run on {len(labels)} drives at once, in lock-step: the tables above are the '
                  f'aggregate (IOPS and bandwidth summed, latency from the merged histograms); below, each drive '
                  f'on its own ({escape(", ".join(labels))}).</p>')


# ---------------------------------------------------------------------------------------------
# IOPS

def iops_parts(ctx, summary: dict) -> Markup:
    """Per drive: the BS × mix IOPS table; grouped bars of the tracked cells, one bar per drive."""
    from . import plots

    cells = summary.get("cells") or {}
    labels = cell_part_labels(ctx.run, cells)
    if not labels:
        return Markup("")
    html = [Markup("<h3>IOPS per drive (measurement-window average)</h3>"), _intro(labels)]
    for label in labels:
        sizes, mixes, by = bs_mix_matrix(part_cells(cells, label))
        rows = [[bs_label(bs)] + [by[(bs, m)][1]["iops"] if (bs, m) in by else None for m in mixes] for bs in sizes]
        html.append(ctx.table(f"drive-{_key(label)}", ["Block size"] + [mix_label(m) for m in mixes], rows,
                              caption=f"IOPS (read + write) of {label}, R/W mix columns, block size rows"))
    tracked = [k for k in ((summary.get("steady") or {}).get("trackers") or {}) if " @" not in k]
    names = [k.rpartition(" ")[0] for k in tracked if k.rpartition(" ")[0] in cells] or list(cells)[-1:]
    if names:
        fig = ctx.figure()
        series = {label: [((cells[n].get("parts") or {}).get(label) or {}).get("iops") for n in names]
                  for label in labels}
        plots.bar_plot(fig, names, series, "cell", "IOPS (read + write)")
        html.append(ctx.plot(fig, "drives-tracked", "IOPS of the tracked cells, one bar per drive",
                             "Measurement-window averages of each drive on its own."))
    rows = []
    for label in labels:
        for name, c in part_cells(cells, label).items():
            rows.append([name, label, c["iops"], c["read_iops"], c["write_iops"], c["read_mib_s"] + c["write_mib_s"],
                         c.get("lat_mean_us"), c.get("lat_max_us")])
    tab = ctx.table("drive-cells", ["Cell", "Drive", "IOPS", "Read IOPS", "Write IOPS", "MiB/s", "Mean latency (µs)",
                                    "Max latency (µs)"], rows, caption="Every cell of every drive, measurement-window averages")
    html.append(Markup(f"<details><summary>All cells per drive ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(html)


# ---------------------------------------------------------------------------------------------
# run status: partial runs (failed drives) and retries

def _headline(test: str, s: dict) -> list[tuple[str, str]]:
    """A few numbers of a (retry) summary, whatever the test."""
    from .toolkit import fmt_num

    out: list[tuple[str, str]] = []
    if s.get("table_iops"):
        for mix, row in s["table_iops"].items():
            for bs, v in row.items():
                out.append((f"IOPS {bs} {mix}", fmt_num(v)))
    elif s.get("block_sizes"):
        for bs, r in s["block_sizes"].items():
            out.append((f"SEQ {bs} read / write MiB/s", f"{fmt_num(r.get('read_mib_s'))} / {fmt_num(r.get('write_mib_s'))}"))
    elif s.get("points"):
        pts = {p["name"]: p for p in s["points"]}
        for k, n in (s.get("operating_points") or {}).items():
            if n in pts:
                out.append((f"{k} point {n}", f"{fmt_num(pts[n]['iops'])} IOPS, {fmt_num(pts[n]['lat_mean_us'])} µs mean"))
    elif s.get("cells"):
        for n, c in s["cells"].items():
            out.append((n, f"{fmt_num(c.get('iops'))} IOPS, {fmt_num(c.get('lat_mean_us'))} µs mean, "
                           f"{fmt_num(c.get('lat_max_us'))} µs max"))
    steady = s.get("steady") or {}
    if steady:
        out.append(("Steady state", "reached" if steady.get("reached") else "NOT reached"))
    return out or [("Summary", ", ".join(sorted(s)) or "empty")]


def failures(store, run: dict) -> tuple[list[tuple[str, str, str, bool]], list[tuple[str, str, dict]]]:
    """([(test, drive, reason, retried)], [(test, retry key, retry data)]) of a run, in test order."""
    failed, retries = [], []
    for t in store.tests(run["id"]):
        for s in store.steps(run["id"], t["name"]):
            if s["kind"] == "retry" or (s["key"].startswith("retry") and s["key"][5:].isdigit()):
                retries.append((t["name"], s["key"], s["data"] or {}))
        step = store.step(run["id"], t["name"], "failed-targets")
        if step:
            for label, reason in (step.get("targets") or {}).items():
                failed.append((t["name"], label, str(reason), bool(step.get("retried"))))
    retries.sort(key=lambda x: (x[0], int(x[1][5:]) if x[1][5:].isdigit() else 0))
    return failed, retries


def run_notice(store, run: dict, art) -> Markup:
    """The header block: a partial run's failed drives (plainly) and the retried results."""
    failed, retries = failures(store, run)
    if run.get("status") != "partial" and not failed and not retries:
        return Markup("")
    html = []
    open_ = [f for f in failed if not f[3]]
    if run.get("status") == "partial" or open_:
        drives = sorted({f[1] for f in open_}) or sorted({f[1] for f in failed})
        html.append(Markup(
            f'<p class="ss bad run-partial"><strong>Run status: PARTIAL</strong> — '
            f'{len(drives)} drive{"s" if len(drives) != 1 else ""} failed: <strong>{escape(", ".join(drives) or "see below")}'
            f'</strong>. Results of the affected tests lack these drives from the moment they dropped out; '
            f'<code>ssdpts resume {escape(run["id"])}</code> retries them.</p>'))
    if failed:
        html.append(art.table("run-failed-targets", ["Test", "Drive", "Reason", "Retried"],
                              [[t, d, r, Cell(done, "yes" if done else "no", "ok" if done else "bad")]
                               for t, d, r, done in failed],
                              caption="Drives that dropped out, per test"))
    for test, key, data in retries:
        still = data.get("failed") or {}
        html.append(Markup(f'<p class="note">Retry <strong>{escape(key)}</strong> of {escape(test)} on '
                           f'{escape(", ".join(data.get("targets") or []))}: '
                           f'{"failed again: " + escape("; ".join(f"{k} ({v})" for k, v in still.items())) if still else "completed"}'
                           f'; rounds stored under phase {escape(key)}/.</p>'))
        rows = [[k, Cell(None, v)] for k, v in _headline(test, data.get("summary") or {})]
        html.append(art.table(f"run-{test}-{key}", ["Result", "Value"], rows,
                              caption=f"{test} {key}: results of the retried drives"))
    return Markup('<section class="test" id="run-status"><h2>Run status</h2>') + Markup("").join(html) + Markup("</section>")
