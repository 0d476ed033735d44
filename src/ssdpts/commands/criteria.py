"""`ssdpts check RUN --criteria rules.toml [--junit out.xml]`: a run against a lab's acceptance rules."""

from __future__ import annotations

import json
from typing import Callable

import click

from ..conformance import check
from ..criteria import judge, load_criteria, write_junit
from ..runresult.model import load_run
from ..store import Store


def check_criteria(store_of: Callable[[], Store], run_id: str, criteria_path: str, as_json: bool, junit_path: str | None) -> int:
    """The exit status: 0 when every rule holds, 1 when any fails. The rules file is read and checked before
    the results (`store_of` opens them), so a bad file is refused (exit 2) with nothing read or written."""
    criteria = load_criteria(criteria_path)
    store: Store = store_of()
    run = load_run(store, run_id)
    outcome = judge(run, criteria, check(run, store))
    if junit_path:
        write_junit([outcome], junit_path)
    click.echo(json.dumps(outcome.to_data(), indent=2, ensure_ascii=False) if as_json else "\n".join(outcome.lines()))
    return 0 if outcome.passed else 1
