"""A rules file (TOML), read once and checked whole before any run is read: every rule names a known figure,
an operator that fits it, a finite threshold in a unit of the figure's dimension, and where the number
comes from. Any mistake is one line naming the rule and the fix (exit 2)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import SsdptsError
from ..inputs import read_toml
from .figures import BOOL, Figure, resolve
from .units import Unit, convert, unit

WHAT = "criteria file"
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}
RULE_KEYS = {"name", "figure", "op", "threshold", "unit", "source", "optional"}
HEAD_KEYS = {"name", "description", "source"}


def shown(value: float | bool, unit_name: str) -> str:
    """A value as the rule and its evidence print it: true/false, or the number and its unit."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:,.6g}{' ' + unit_name if unit_name else ''}"


@dataclass(frozen=True)
class Rule:
    name: str
    figure: Figure
    selectors: dict[str, Any]
    path: str                       # the figure's path as the file wrote it
    op: str
    threshold: float | bool         # as the file wrote it, in `unit`
    unit: Unit | None               # None for a yes/no figure
    source: str                     # where the number comes from (a document and section, or the lab's choice)
    optional: bool = False          # a figure the run lacks passes instead of failing

    def holds(self, value: float | bool, threshold: float | bool) -> bool:
        """`value op threshold`, both in the figure's unit."""
        return OPERATORS[self.op](value, threshold)

    def threshold_in(self, figure_unit: str, where: str) -> float | bool:
        """The threshold in the figure's unit (a figure's value is never rounded to compare)."""
        if self.unit is None:
            return self.threshold
        return convert(float(self.threshold), self.unit, unit(figure_unit, where), where)

    @property
    def text(self) -> str:
        return f"{self.path} {self.op} {shown(self.threshold, self.unit.name if self.unit else '')}"


@dataclass(frozen=True)
class Criteria:
    """A whole rules file: its [criteria] head and every rule, in file order."""

    path: Path
    name: str
    source: str
    rules: list[Rule]


def _text(table: dict, key: str, where: str, required: bool = True) -> str:
    value = table.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise SsdptsError(f"{where}: '{key}' must be {'a non-empty' if required else 'a'} string")
    return value.strip()


def _rule(table: Any, index: int, p: Path) -> Rule:
    where = f"{WHAT} {p}: rule {index}"
    if not isinstance(table, dict):
        raise SsdptsError(f"{where} is not a table; write each rule as a [[rule]] table")
    if isinstance(table.get("name"), str) and table["name"].strip():
        where += f" ({table['name'].strip()})"
    unknown = sorted(set(table) - RULE_KEYS)
    if unknown:
        raise SsdptsError(f"{where}: unknown key {unknown[0]!r}; a rule has {', '.join(sorted(RULE_KEYS))}")
    for key in ("name", "figure", "op", "source"):
        if key not in table:
            raise SsdptsError(f"{where}: '{key}' is missing; every rule names its figure, operator, threshold "
                              "and source")
    name, path, op, source = (_text(table, k, where) for k in ("name", "figure", "op", "source"))
    figure, selectors = resolve(path, where)
    optional = table.get("optional", False)
    if not isinstance(optional, bool):
        raise SsdptsError(f"{where}: 'optional' must be true or false")
    if "threshold" not in table:
        raise SsdptsError(f"{where}: 'threshold' is missing")
    threshold = table["threshold"]
    if figure.unit == BOOL:
        if op != "==" or not isinstance(threshold, bool):
            raise SsdptsError(f"{where}: {path} is yes/no; write op = \"==\" and threshold = true (or false)")
        if "unit" in table:
            raise SsdptsError(f"{where}: {path} is yes/no and has no unit; remove 'unit'")
        return Rule(name, figure, selectors, path, op, threshold, None, source, optional)
    if op not in OPERATORS:
        raise SsdptsError(f"{where}: unknown op {op!r}; use one of {', '.join(OPERATORS)}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise SsdptsError(f"{where}: threshold must be a number, not {threshold!r}")
    if "unit" not in table and figure.unit:
        raise SsdptsError(f"{where}: 'unit' is missing; {path} is in {figure.unit}: write unit = \"{figure.unit}\" "
                          "(or another unit of the same kind)")
    rule_unit = unit(_text(table, "unit", where, required=False), where)
    if figure.unit is not None:
        convert(1.0, rule_unit, unit(figure.unit, where), where)    # refused now, not when a run is judged
    return Rule(name, figure, selectors, path, op, threshold, rule_unit, source, optional)


def load_criteria(path: str | Path) -> Criteria:
    p = Path(path)
    doc = read_toml(p, WHAT)
    head = doc.get("criteria", {})
    if not isinstance(head, dict):
        raise SsdptsError(f"{WHAT} {p}: [criteria] must be a table (name, description, source)")
    unknown = sorted(set(doc) - {"criteria", "rule"}) or sorted(set(head) - HEAD_KEYS)
    if unknown:
        raise SsdptsError(f"{WHAT} {p}: unknown key {unknown[0]!r}; the file has a [criteria] table "
                          f"({', '.join(sorted(HEAD_KEYS))}) and [[rule]] tables")
    rules = doc.get("rule", [])
    if not isinstance(rules, list) or not rules:
        raise SsdptsError(f"{WHAT} {p} has no rules; add [[rule]] tables (docs/criteria.md)")
    parsed = [_rule(t, i, p) for i, t in enumerate(rules, 1)]
    names = [r.name for r in parsed]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice:
        raise SsdptsError(f"{WHAT} {p}: two rules are named {twice!r}; give each rule its own name (CI reports "
                          "them by name)")
    return Criteria(p, _text(head, "name", f"{WHAT} {p}: [criteria]", required=False) or p.stem,
                    _text(head, "source", f"{WHAT} {p}: [criteria]", required=False), parsed)
