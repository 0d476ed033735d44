"""A run judged against a criteria file: each rule with its evidence and outcome, as text, JSON or JUnit XML."""

from __future__ import annotations

import os
import socket
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..conformance import Verdict
from ..errors import SsdptsError
from ..inputs import output_file
from ..runresult.model import RunResult
from .figures import BOOL, NotReached, Reading, Source, Unavailable
from .rules import Criteria, Rule, shown
from .units import unit

PASS, FAIL, NOT_AVAILABLE, NOT_REACHED = "pass", "fail", "not available", "not reached"
NOT_JUDGED = (NOT_AVAILABLE, NOT_REACHED)     # no value to judge: a FAIL when required, N/A when optional


@dataclass(frozen=True)
class Judgement:
    rule: Rule
    status: str                     # pass | fail | not available | not reached (measured, its state not reached)
    test: str
    value: float | bool | None      # the figure's value in its own unit
    unit: str                       # the figure's unit ("bool" for yes/no)
    where: str                      # phase/cell, or why the figure is not available
    rounds: str

    @property
    def ok(self) -> bool:
        return self.status == PASS or (self.status in NOT_JUDGED and self.rule.optional)

    @property
    def label(self) -> str:
        """PASS, FAIL, or N/A for an optional rule whose figure the run lacks or whose state it did not reach (a
        required one is a FAIL)."""
        return "N/A" if self.status in NOT_JUDGED and self.ok else "PASS" if self.ok else "FAIL"

    @property
    def evidence(self) -> str:
        if self.value is None:
            head = "not judged" if self.status == NOT_REACHED else "not available"
            return f"{head}: {self.where}" + (" (optional rule)" if self.rule.optional else "")
        converted = ""
        if self.rule.unit is not None and self.rule.unit.name != self.unit and not isinstance(self.value, bool):
            in_rule_unit = self.value * unit(self.unit, "figure").scale / self.rule.unit.scale
            converted = f" = {shown(in_rule_unit, self.rule.unit.name)}"
        return (f"{self.rule.path} = {shown(self.value, self.unit)}{converted} "
                f"({self.test}: {self.where}; {self.rounds})")


@dataclass(frozen=True)
class Outcome:
    run_id: str
    criteria: Criteria
    judgements: list[Judgement]

    @property
    def passed(self) -> bool:
        return all(j.ok for j in self.judgements)

    @property
    def failures(self) -> list[Judgement]:
        return [j for j in self.judgements if not j.ok]

    def lines(self) -> list[str]:
        held = len(self.judgements) - len(self.failures)
        out = [f"criteria {self.criteria.name}: {'PASS' if self.passed else 'FAIL'} ({held} of "
               f"{len(self.judgements)} rules hold) for run {self.run_id}"]
        for j in self.judgements:
            out.append(f"  {j.label:8} {j.rule.name}: {j.rule.text}")
            out.append(f"           {j.evidence}")
            out.append(f"           source: {j.rule.source}")
        return out

    def to_data(self) -> dict[str, Any]:
        return {"run": self.run_id, "criteria": {"name": self.criteria.name, "file": str(self.criteria.path),
                                                  "source": self.criteria.source},
                "passed": self.passed, "rules": [_judgement_data(j) for j in self.judgements]}


def _judgement_data(j: Judgement) -> dict[str, Any]:
    r = j.rule
    return {"name": r.name, "figure": r.path, "op": r.op, "threshold": r.threshold,
            "threshold_unit": None if r.unit is None else r.unit.name, "source": r.source, "optional": r.optional,
            "status": j.status, "ok": j.ok,
            "evidence": {"test": j.test, "value": j.value, "unit": None if j.unit == BOOL else j.unit,
                         "where": j.where, "rounds": j.rounds}}


def _judge(rule: Rule, run: RunResult, source: Source) -> Judgement:
    fig = rule.figure
    if fig.test == "run":
        reading: Reading | Unavailable = fig.read(source, rule.selectors)
    else:
        t = run.test(fig.test)
        if t is None or t.status != "completed" or t.summary is None:
            reason = (f"the run has no {fig.test} test" if t is None else
                      f"the {fig.test} test is {t.status}, no summary stored")
            return Judgement(rule, NOT_AVAILABLE, fig.test, None, fig.unit or "", reason, "")
        reading = fig.read(t.summary, rule.selectors)
    if isinstance(reading, Unavailable):
        return Judgement(rule, NOT_REACHED if isinstance(reading, NotReached) else NOT_AVAILABLE, fig.test, None,
                         fig.unit or "", reading.reason, "")
    figure_unit = fig.unit if fig.unit is not None else (reading.unit or "")
    threshold = rule.threshold if figure_unit == BOOL else rule.threshold_in(figure_unit, f"rule {rule.name!r}")
    holds = rule.holds(reading.value, threshold)
    return Judgement(rule, PASS if holds else FAIL, fig.test, reading.value, figure_unit, reading.where,
                     reading.rounds)


def judge(run: RunResult, criteria: Criteria, conformance: Verdict) -> Outcome:
    source = Source(run, conformance)
    return Outcome(run.id, criteria, [_judge(r, run, source) for r in criteria.rules])


def junit(outcomes: list[Outcome]) -> ET.ElementTree:
    """JUnit XML as CI systems read it: a testsuite per run, a testcase per rule, a failure with the evidence."""
    root = ET.Element("testsuites", name="ssdpts criteria", tests=str(sum(len(o.judgements) for o in outcomes)),
                      failures=str(sum(len(o.failures) for o in outcomes)), errors="0")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for o in outcomes:
        skipped = [j for j in o.judgements if j.ok and j.status in NOT_JUDGED]
        suite = ET.SubElement(root, "testsuite", name=f"{o.criteria.name} run {o.run_id}",
                              tests=str(len(o.judgements)), failures=str(len(o.failures)), errors="0",
                              skipped=str(len(skipped)), timestamp=stamp, hostname=socket.gethostname())
        props = ET.SubElement(suite, "properties")
        for k, v in (("run", o.run_id), ("criteria", str(o.criteria.path)), ("criteria_source", o.criteria.source)):
            ET.SubElement(props, "property", name=k, value=v)
        for j in o.judgements:
            case = ET.SubElement(suite, "testcase", name=j.rule.name, classname=f"ssdpts.{j.test}", time="0")
            text = f"{j.rule.text}\n{j.evidence}\nsource: {j.rule.source}"
            if not j.ok:
                ET.SubElement(case, "failure", message=f"{j.status}: {j.evidence}", type=j.status).text = text
            elif j.status in NOT_JUDGED:
                ET.SubElement(case, "skipped", message=j.evidence)
            else:
                ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(outcomes: list[Outcome], path: str | Path) -> None:
    """Written whole or not at all: a temp file beside the target, renamed over it."""
    p = output_file(path, "--junit")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
        with os.fdopen(fd, "wb") as f:
            junit(outcomes).write(f, encoding="utf-8", xml_declaration=True)
        os.replace(tmp, p)
        tmp = None
    except OSError as e:
        raise SsdptsError(f"--junit {p} cannot be written ({e.strerror}); give a writable path") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
