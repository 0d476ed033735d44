"""The run-status block of a report: a partial run's failed drives and the results of their retries."""

from __future__ import annotations

from markupsafe import Markup, escape

from ..pts.registry import find
from ..render.toolkit import Artifacts, Cell, fmt_num


def _headline_rows(test: str, summary: dict) -> list[tuple[str, str]]:
    """The test's headline figures of a retry's stored summary."""
    spec = find(test)
    if spec is None or spec.headline is None or not summary:
        return [("Summary", "stored; see 'ssdpts show --json'")]
    rows = [(h.label, f"{fmt_num(h.value)} {h.unit}") for h in spec.headline(spec.decode(summary))]
    return rows or [("Summary", "no headline figures")]


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


def drive_failure_block(store, run: dict) -> list[Markup]:
    """Each drive that failed I/O, first thing in the report: fio's error and the kernel's lines."""
    html = []
    for f in store.drive_failures(run["id"]):
        kernel = "\n".join(f.kernel_log) or "(the kernel logged nothing in the round's window)"
        html.append(Markup(f'<p class="ss bad drive-failed"><strong>DRIVE FAILED</strong> — {escape(f.line())}. '
                           f'fio: <code>{escape(f.message)}</code>. Rounds completed before it are kept below; '
                           f'fio\'s job file and stderr: <code>{escape(f.evidence_dir)}</code>.</p>'
                           f'<pre class="kernel-log">{escape(kernel)}</pre>'))
    return html


def run_notice(store, run: dict, art: Artifacts) -> Markup:
    """The header block: drives that failed I/O, a partial run's failed drives (plainly) and the retried
    results."""
    failed, retries = failures(store, run)
    html = drive_failure_block(store, run)
    if run.get("status") != "partial" and not failed and not retries:
        return (Markup('<section class="test" id="run-status"><h2>Run status</h2>') + Markup("").join(html)
                + Markup("</section>")) if html else Markup("")
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
        rows = [[k, Cell(None, v)] for k, v in _headline_rows(test, data.get("summary") or {})]
        html.append(art.table(f"run-{test}-{key}", ["Result", "Value"], rows,
                              caption=f"{test} {key}: results of the retried drives"))
    return Markup('<section class="test" id="run-status"><h2>Run status</h2>') + Markup("").join(html) + Markup("</section>")
