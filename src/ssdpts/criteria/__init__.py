"""Acceptance criteria (`ssdpts check RUN --criteria rules.toml`): a lab's thresholds on typed summary figures,
each judged with its evidence; text, JSON and JUnit XML for CI. docs/criteria.md describes the file."""

from .figures import FIGURES, Figure
from .judge import Outcome, judge, write_junit
from .rules import Criteria, Rule, load_criteria

__all__ = ["FIGURES", "Criteria", "Figure", "Outcome", "Rule", "judge", "load_criteria", "write_junit"]
