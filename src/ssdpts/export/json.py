"""The machine-readable results document (`ssdpts show --json`, `ssdpts export --format json`; docs/results.md)
and the tidy table as JSON Lines (`--format tidy-json`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ..conformance import Verdict
from ..records import to_data
from ..runresult.model import RunResult
from ..runresult.simulated import simulated_review
from .exporter import out_file
from .tidy import tidy_records

SCHEMA = "ssdpts.results/3"   # 3: units of steady-state trackers and of round tracking values


def document(run: RunResult, verdict: Verdict) -> dict:
    tests = []
    for t in run.tests:
        summary = t.spec.encode(t.summary) if t.spec is not None and t.summary is not None else None
        tests.append({"name": t.name, "title": t.title, "status": t.status, "started": t.started, "ended": t.ended,
                      "summary": summary, "rounds": to_data(t.rounds), "steps": to_data(t.steps),
                      "device_idle": to_data(t.device_idle), "coverage": to_data(t.coverage),
                      "stimulus": t.stimulus.to_data() if t.stimulus is not None else None})
    return {
        "schema": SCHEMA,
        "run": {"id": run.id, "status": run.status, "message": run.message, "created": run.created,
                "updated": run.updated, "target_spec": run.target_spec, "profile_name": run.profile_name,
                "tests": run.tests_requested, "options": run.options.to_json(), "engine": run.engine,
                "clock": {"name": run.clock.name, "simulated": run.clock.simulated, "note": run.clock.note}},
        "simulated_review": to_data(simulated_review(run.target)),
        "host": run.host.to_json(),
        "target": run.target.to_json(),
        "profile": run.profile,
        "conformance": {"conformant": verdict.conformant, "spec": verdict.spec,
                        "deviations": [{"test": f.test, **f.deviation.to_dict()} for f in verdict.findings],
                        "drive_failures": [f.to_dict() for f in verdict.drive_failures], "notes": verdict.notes},
        "tests": tests,
    }


class JsonDocument:
    """`--format json`: the results document of docs/results.md, RUN_ID.json."""

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        path = out_file(out_dir, f"{run.id}.json")
        path.write_text(json.dumps(document(run, verdict), indent=1, default=str))
        return [path]


class TidyJsonLines:
    """`--format tidy-json`: the tidy table (export/tidy.py) as JSON Lines, one object per record."""

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        records = tidy_records(run)
        path = out_file(out_dir, f"{run.id}.tidy.jsonl")
        with open(path, "w") as f:
            for r in records:
                f.write(json.dumps(dataclasses.asdict(r), ensure_ascii=False) + "\n")
        return [path]
