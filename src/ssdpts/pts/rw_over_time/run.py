"""Random write over time (reviewers' study, seed 001): how fast does each block size fall, and to what?

For every block size (2 ... 128 KiB by default): purge, then random writes for the profile's duration
as one continuous job, throughput stored per interval (seed: 240 min per size, 1 min samples).
"""

from __future__ import annotations

from ..units import bs_label, parse_duration, parse_size
from .common import TestContext

NAME = "rw-over-time"
TITLE = "Random Write over Time, per Block Size"

DEFAULT_SIZES = ["2k", "4k", "8k", "16k", "32k", "64k", "128k"]


def phase_of(bs: int) -> str:
    return f"bs={bs_label(bs)}"


def run(ctx: TestContext) -> dict:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings.get("block_sizes", DEFAULT_SIZES)])
    for n in notes:
        ctx.note(n)
    duration = parse_duration(ctx.settings.get("duration", "4h"))
    interval = parse_duration(ctx.settings.get("interval", "1m"))
    out, purges = {}, {}
    for bs in sizes:
        phase = phase_of(bs)
        purges[bs_label(bs)] = ctx.purge(phase)
        done = ctx.store.rounds(ctx.run_id, ctx.test, phase, with_cells=False)
        elapsed = done[-1].tracking["end_s"] if done else 0.0
        if duration - elapsed > interval / 2:
            cell = ctx.cell(f"rnd_{bs_label(bs)}_write", "randwrite", bs, 0, runtime_s=duration - elapsed)
            clock = {"t": elapsed, "bytes": done[-1].tracking["written_bytes"] if done else 0}

            def track(phase_, round_no, res, st, clock=clock):
                secs = res.runtime_ms / 1000
                start = clock["t"]
                clock["t"] += secs
                clock["bytes"] += res.write.bytes
                return {"mb_s": res.write.bytes / secs / 1e6 if secs > 0 else 0.0,
                        "mib_s": res.write.bytes / secs / 2**20 if secs > 0 else 0.0, "iops": res.iops,
                        "start_s": start, "end_s": clock["t"], "written_bytes": clock["bytes"],
                        "lat_mean_us": res.lat_mean_ns / 1000}

            ctx.progress.round_started(ctx.test, phase, len(done) + 1, 0, duration - elapsed,
                                       f"random {bs_label(bs)} writes")
            ctx.stream([phase], [cell], interval, track)
        series = [r.tracking for r in ctx.store.rounds(ctx.run_id, ctx.test, phase, with_cells=False)]
        mbs = [s["mb_s"] for s in series]
        tail = mbs[-max(1, len(mbs) // 10):]
        out[bs_label(bs)] = {
            "block_size": bs, "intervals": len(series),
            "first_mb_s": mbs[0] if mbs else 0.0, "final_mb_s": sum(tail) / len(tail) if tail else 0.0,
            "min_mb_s": min(mbs) if mbs else 0.0, "max_mb_s": max(mbs) if mbs else 0.0,
            "written_bytes": series[-1]["written_bytes"] if series else 0,
            "fills": (series[-1]["written_bytes"] if series else 0) / ctx.target.size_bytes,
            "series": [{"t_s": s["end_s"], "mb_s": s["mb_s"], "iops": s["iops"]} for s in series],
        }
    return {"purge": purges, "notes": notes, "duration_s": duration, "interval_s": interval,
            "block_sizes": out,
            "units": {"mb_s": "MB/s (10^6 bytes/s)", "t_s": "seconds since the purge (end of each interval)",
                      "final_mb_s": "mean of the last 10 % of intervals", "fills": "drive capacities written"}}


# --- report ------------------------------------------------------------------------------------

def report_section(ctx) -> str:
    """MB/s vs time, one line per block size; a table of first / final / min MB/s."""
    from markupsafe import Markup, escape

    from ..report import plots

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", [])]
    data = s.get("block_sizes", {})
    if not data:
        return Markup("").join(html)
    scale, unit = (60.0, "min") if s.get("duration_s", 0) >= 600 else (1.0, "s")
    series = {f"RND {k} W": ([p["t_s"] / scale for p in v["series"]], [p["mb_s"] for p in v["series"]])
              for k, v in data.items() if v["series"]}
    fig = ctx.figure()
    plots.series_plot(fig, series, f"time ({unit})", "MB/s", logy=True)
    html.append(ctx.plot(fig, "mb-vs-time", "random write MB/s vs time, one line per block size",
                         "Each block size starts from a purged drive; MB/s = 10^6 bytes/s."))
    rows = [[k, v["first_mb_s"], v["final_mb_s"], v["min_mb_s"], v["fills"], v["intervals"]] for k, v in data.items()]
    html.append(ctx.table("table", ["Block size", "First interval MB/s", "Final MB/s (last 10 %)", "Min MB/s",
                                    "Drive fills written", "Intervals"], rows,
                          caption="Random write throughput from FOB to the end of the run"))
    return Markup("").join(html)
