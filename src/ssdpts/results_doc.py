"""The machine-readable results document (`ssdpts show --json`, docs/results.md) and its text rendering."""

from __future__ import annotations

import time

from . import pts
from .store import DeviceIdleSummary, Store, device_idle_summary

SCHEMA = "ssdpts.results/1"


def results_document(store: Store, run_id: str) -> dict:
    run = store.run(run_id)
    tests = []
    for t in store.tests(run["id"]):
        rounds, records = [], []
        for kind in ("precondition", "round"):
            for r in store.rounds(run["id"], t["name"], kind=kind, with_cells=False):
                records.append(r)
                rounds.append({"phase": r.phase, "kind": r.kind, "round": r.round, "started": r.started,
                               "ended": r.ended, "idle_gap_before_ms": r.gap_before_ms,
                               "device_idle_before_ms": r.device_idle_before.ms if r.device_idle_before else None,
                               "device_idle_inside_ms": [d.ms for d in r.device_idle_inside],
                               "tracking": r.tracking, "engine": r.engine, "command": r.command})
        module = pts.TESTS.get(t["name"])
        tests.append({"name": t["name"], "title": module.TITLE if module else t["name"], "status": t["status"],
                      "started": t["started"], "ended": t["ended"], "summary": t["summary"], "rounds": rounds,
                      "device_idle": device_idle_summary(records).to_dict(),
                      "steps": [dict(key=s["key"], kind=s["kind"], at=s["at"], data=s["data"])
                                for s in store.steps(run["id"], t["name"])]})
    return {
        "schema": SCHEMA,
        "run": {k: run[k] for k in ("id", "status", "message", "created", "updated", "target_spec", "profile_name",
                                    "tests", "options", "engine")},
        "host": run["host"],
        "target": {k: v for k, v in run["target"].items() if k != "drive"},
        "profile": run["profile"],
        "tests": tests,
    }


def _steady_lines(steady: dict, indent: str = "  ") -> list[str]:
    out = []
    state = "reached" if steady.get("reached") else "NOT REACHED"
    w = steady.get("window_rounds") or []
    out.append(f"{indent}steady state {state} after {steady.get('rounds')} rounds"
               + (f" (window rounds {w[0]}-{w[-1]})" if w else ""))
    for label, s in steady.get("trackers", {}).items():
        if s.get("average") is None:
            out.append(f"{indent}  {label}: {s.get('reason')}")
            continue
        out.append(f"{indent}  {label}: avg {s['average']:.6g}, range {s['range_measured']:.4g} "
                   f"(≤ {s['range_allowed']:.4g}), slope excursion {s['slope_excursion_measured']:.4g} "
                   f"(≤ {s['slope_excursion_allowed']:.4g}), fit y = {s['fit_formula']}")
    return out


def render_text(doc: dict) -> str:
    run = doc["run"]
    lines = [f"run {run['id']} — {run['status']}" + (f": {run['message']}" if run["message"] else ""),
             f"  target  {run['target_spec']} ({doc['target'].get('info', {}).get('model') or doc['target']['kind']}, "
             f"{doc['target']['size_bytes'] / 2**30:.2f} GiB)",
             f"  profile {run['profile_name']}   engine {run['engine']}   host {doc['host'].get('hostname')} "
             f"({doc['host'].get('fio_version')})",
             f"  started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(run['created']))}"]
    for t in doc["tests"]:
        lines.append("")
        lines.append(f"{t['title']} [{t['status']}]")
        s = t["summary"]
        if not s:
            done = [r for r in t["rounds"] if r["kind"] == "round"]
            lines.append(f"  {len(done)} rounds stored so far")
            continue
        if "purge" in s:
            p = s["purge"]
            lines.append(f"  purge: {p['method']}{'' if p['snia_purge'] else ' (not a SNIA purge)'}")
        if "steady" in s:
            lines += _steady_lines(s["steady"])
        if "device_idle" in t:
            lines.append("  " + DeviceIdleSummary(**t["device_idle"]).text())
        for n in s.get("notes", []):
            lines.append(f"  note: {n}")
        if "table_iops" in s:
            table = s["table_iops"]
            sizes = list(next(iter(table.values())).keys())
            lines.append("  IOPS (read + write), measurement-window average")
            lines.append("  " + f"{'R/W mix':>8}" + "".join(f"{b:>11}" for b in sizes))
            for mix, row in table.items():
                lines.append("  " + f"{mix:>8}" + "".join(f"{row[b]:>11,.0f}" for b in sizes))
        parts = sorted({p for c in (s.get("cells") or {}).values() for p in c.get("parts", {})})
        if parts:   # several drives at once: the aggregate above, each drive here
            lines.append(f"  per drive ({len(parts)} in lock-step; IOPS, mean latency µs):")
            for name, c in s["cells"].items():
                per = "  ".join(f"{p}: {c['parts'][p]['iops']:,.0f} / {c['parts'][p]['lat_mean_us']:.1f}"
                                for p in parts if p in c["parts"])
                lines.append(f"    {name:18} {per}")
        if "block_sizes" in s:
            lines.append(f"  {'block':>7} {'read MiB/s':>11} {'write MiB/s':>12} {'read MB/s':>10} {'write MB/s':>11}")
            for bs, r in s["block_sizes"].items():
                lines.append(f"  {bs:>7} {r['read_mib_s']:>11.1f} {r['write_mib_s']:>12.1f} {r['read_mb_s']:>10.1f} "
                             f"{r['write_mb_s']:>11.1f}")
                lines += _steady_lines(r["steady"], "    ")
        if "workloads" in s:   # wsat
            for name, w in s["workloads"].items():
                lines.append(f"  {name}: {w['rounds']} rounds, {w['tgbw_gb']:.2f} GB written ({w['fills']:.2f} fills), "
                             f"stopped: {w['stop_reason']}")
                lines.append(f"    fresh {w['fresh_iops']:,.0f} IOPS -> final {w['final_iops']:,.0f} IOPS")
        if "wait_states" in s:  # hir
            lines.append(f"  preconditioning: steady state {'reached' if s['preconditioning']['reached'] else 'NOT REACHED'}"
                         f" after {s['preconditioning']['rounds']} rounds")
            lines.append(f"  {'idle':>6} {'burst IOPS after idle':>22} {'continuous IOPS':>16} {'ratio':>6}")
            for label, w in s["wait_states"].items():
                lines.append(f"  {label:>6} {w['ab_iops_mean']:>22,.0f} {w['c_iops_mean']:>16,.0f} "
                             f"{(w['recovery_ratio'] or 0):>6.2f}")
        if "groups" in s:  # xsr
            for g, v in s["groups"].items():
                lines.append(f"  {g}: {v['mib_s_mean']:.1f} MiB/s mean over {v['intervals']} intervals, "
                             f"mean latency {v['lat_mean_us']:.0f} µs")
            rec = f"{s['recovery_s']:.1f} s into group 3" if s["recovered"] else "not recovered"
            lines.append(f"  recovery to the group-1 average ({s['group1_average_mib_s']:.1f} MiB/s): {rec}")
        if "points" in s:  # dirth, cbw
            ops = s["operating_points"]
            lines.append(f"  {'TC':>3} {'QD':>4} {'IOPS':>11} {'mean µs':>9} {'max µs':>9}  point")
            for p in s["points"]:
                mark = ", ".join(k for k, v in ops.items() if v == p["name"])
                lines.append(f"  {p['tc']:>3} {p['qd']:>4} {p['iops']:>11,.0f} {p['lat_mean_us']:>9.1f} "
                             f"{p['lat_max_us']:>9.1f}  {mark}")
        module = pts.TESTS.get(t["name"])
        if module is not None and hasattr(module, "text_lines"):   # tests that describe themselves
            lines += module.text_lines(s)
        if t["name"] == "latency" and "cells" in s:
            lines.append(f"  {'cell':18} {'mean µs':>9} {'max µs':>9} {'p99':>9} {'p99.9':>9} {'p99.99':>9} {'p99.999':>9}")
            for name, c in s["cells"].items():
                lat = c.get("write_lat") if c["workload"].get("read_pct") == 0 else c.get("read_lat")
                lat = lat or c.get("read_lat") or c.get("write_lat") or {}
                lines.append(f"  {name:18} {c['lat_mean_us']:>9.1f} {c['lat_max_us']:>9.1f} "
                             + " ".join(f"{lat.get(k, 0):>9.1f}" for k in ("p99_us", "p99.9_us", "p99.99_us", "p99.999_us")))
    return "\n".join(lines)
