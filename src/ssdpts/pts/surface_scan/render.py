"""Surface-scan renderers: MiB/s by LBA region with the slow threshold, slow regions and errors, text, headline."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render import plots
from ...render.context import SectionContext
from ...render.toolkit import notes_html
from ..spec import Headline, Renderers
from .summary import ScanRegion, SurfaceScanSummary

GIB = 2**30
HEADERS = ["Region", "Start (GiB)", "Size (GiB)", "MiB/s", "Read-back MiB/s", "Max latency (ms)", "Errors", "Slow"]


def _row(r: ScanRegion) -> list:
    return [r.index, r.start_bytes / GIB, r.size_bytes / GIB, r.mib_s, r.verify_mib_s, r.lat_max_ms, r.errors,
            "slow" if r.slow else ""]


def verdict(s: SurfaceScanSummary) -> str:
    what = (f"written and verified (fio verify={s.verify})" if s.data_verified else
            "written, NOT read back or verified" if s.mode == "write-verify" else "read")
    slow = len(s.slow_regions)
    return (f"{s.scanned_bytes / GIB:,.2f} GiB {what} in {len(s.regions)} regions: {s.errors} I/O errors, "
            f"{slow} slow region{'s' if slow != 1 else ''} (below {s.slow_threshold * 100:.0f} % of the median "
            + (f"{s.median_mib_s:,.0f} MiB/s)" if s.median_mib_s is not None else "– MiB/s)"))


def html(ctx: SectionContext) -> Markup:
    s: SurfaceScanSummary = ctx.summary
    out = notes_html(s.notes)
    out.append(Markup(f"<p><b>{escape(verdict(s))}</b></p>"))
    if s.regions:
        fig = ctx.figure()
        x = [(r.start_bytes + r.size_bytes / 2) / GIB for r in s.regions]
        series = {"MiB/s per region": (x, [r.mib_s for r in s.regions])}
        styles = {"MiB/s per region": {"marker": None}}
        slow = [(xi, r.mib_s) for xi, r in zip(x, s.regions) if r.slow]
        if slow:
            series["slow region"] = ([a for a, _ in slow], [b for _, b in slow])
            styles["slow region"] = {"linestyle": "none", "marker": "o", "color": "#d62728"}
        if s.median_mib_s is not None:
            label = f"slow threshold ({s.slow_threshold * 100:.0f} % of the median)"
            series[label] = ([x[0], x[-1]], [s.slow_threshold * s.median_mib_s] * 2)
            styles[label] = {"linestyle": "--", "marker": None, "color": "#7f7f7f"}
        plots.series_plot(fig, series, "LBA region (GiB from the start of the target)", "MiB/s", styles=styles,
                          ylim0=True)
        out.append(ctx.plot(fig, "mib-by-region", "MiB/s by LBA region",
                            "One point per region (its middle); red: regions below the slow threshold."))
    out.append(ctx.table("slow-regions", HEADERS, [_row(r) for r in s.slow_regions + [
        r for r in s.regions if r.errors and not r.slow]], caption="Slow regions and regions with errors"))
    tab = ctx.table("regions", HEADERS, [_row(r) for r in s.regions], caption="Every region")
    out.append(Markup(f"<details><summary>Regions ({len(s.regions)})</summary>{tab}</details>"))
    return Markup("").join(out)


def text(s: SurfaceScanSummary, clock: Clock) -> list[str]:
    lines = [f"  {verdict(s)}"]
    for r in s.slow_regions + [r for r in s.regions if r.errors and not r.slow]:
        lines.append(f"  region {r.index} at {r.start_bytes / GIB:,.2f} GiB: {r.mib_s:,.1f} MiB/s, "
                     f"max {r.lat_max_ms:,.2f} ms, {r.errors} errors{' (slow)' if r.slow else ''}")
    return lines


def headline(s: SurfaceScanSummary) -> list[Headline]:
    return [Headline("scan_errors", "I/O errors in the surface scan", s.errors, ""),
            Headline("scan_slow_regions", "slow regions in the surface scan", len(s.slow_regions), ""),
            Headline("scan_min_mib_s", "slowest region of the surface scan", s.min_mib_s, "MiB/s")]


RENDERERS = Renderers(html=html, text=text, headline=headline)
