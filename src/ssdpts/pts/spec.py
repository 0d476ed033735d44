"""A test, declared once: name, title, settings, what it needs, how it runs, its typed summary, its renderers.

Every test is a package under `ssdpts.pts` whose `__init__` defines `TEST = TestSpec(...)`; the registry
(`ssdpts.pts.registry`) finds it. Profiles are validated against `settings`, the runner refuses a target
or engine that lacks a capability in `needs`, and every output (text, JSON, CSV, HTML, compare, claimed)
reads the typed `summary` record.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from ..capabilities import Capability
from ..errors import SsdptsError
from ..records import from_data, to_data
from ..settings import Key, TestSettings, declarations

if TYPE_CHECKING:   # renderers receive the render kit's contexts (render/ sits below the tests; it never imports them)
    from ..clock import Clock
    from ..deviations import Deviation
    from ..render.context import CompareContext, SectionContext
    from .context import TestContext
    from .plan import TestPlan


class Summary:
    """Base of every test's typed summary (a dataclass). SCHEMA_VERSION rises when its shape changes."""

    SCHEMA_VERSION: ClassVar[int] = 1
    # the oldest stored version this record still reads (fields added since have defaults); None: only the current
    READS_SINCE_VERSION: ClassVar[int | None] = None

    def stopped_short(self) -> list["Deviation"]:
        """A `duration` deviation for each part of the test that stopped before its spec's stop (WSAT: 4× the
        capacity written or 24 h), with its figures; none by default. The verdict names them whatever the
        profile (conformance.py)."""
        return []


@dataclass(frozen=True)
class Headline:
    """A key figure of a test: what `list`, compare overviews and claimed-vs-measured tables quote."""

    key: str                 # stable identifier, e.g. "rnd4k_write_iops"
    label: str               # e.g. "RND 4K write IOPS (steady state)"
    value: float | None
    unit: str                # "IOPS", "MiB/s", "µs" ...
    steady: bool | None = None   # None: the figure is not a steady-state figure
    unreached: str = ""          # the state the figure stands for was not reached, and why ("not reached: WSAT
                                 # wrote 0.36 of 4 fills"); "": reached, or the figure names no state


@dataclass(frozen=True)
class Renderers:
    """How a test's typed summary is shown: the report section (`html`), `show` lines (`text`), the overlay of
    several runs (`compare`), each drive of a parallel run (`parts`), the key figures (`headline`). Each test's
    render.py declares one RENDERERS; a renderer left None gets the report's generic one."""

    html: Callable[["SectionContext"], Any]
    text: Callable[[Any, "Clock"], list[str]]     # the summary and the run's clock (clock.py)
    compare: Callable[["CompareContext"], Any] | None = None
    parts: Callable[["SectionContext"], Any] | None = None
    headline: Callable[[Any], list[Headline]] | None = None


@dataclass(frozen=True)
class Deferred:
    """A test's part named by where it lives (`module`, absolute, and `attribute`) and imported on first use:
    a stored run is read (list, show, check) without importing how its tests run or draw (bench/startup.py)."""

    module: str
    attribute: str

    def load(self) -> Any:
        return getattr(importlib.import_module(self.module), self.attribute)


def deferred(package: str) -> Callable[[str, str], Deferred]:
    """`part = deferred(__name__)`; then `part("run", "plan")` stands for `package.run.plan` until it is used."""
    return lambda module, attribute: Deferred(f"{package}.{module}", attribute)


@dataclass(frozen=True)
class TestSpec:
    """`summary`, `run`, `settings`, `renderers` and `plan` may be given as `Deferred`: each is imported the
    first time it is read, and is then the object itself (`plan` validates every test's settings without
    importing their summaries; `show` decodes the summaries of the run's tests only)."""

    name: str
    title: str
    kind: str                                   # "pts" | "study" | "endurance"
    summary: type                               # a dataclass subclassing Summary
    run: Callable[["TestContext"], Any]
    settings: type[TestSettings] = TestSettings   # its settings record: the common keys and its own
    needs: frozenset[Capability] = frozenset()
    renderers: Renderers | None = None
    plan: Callable[["TestContext"], "TestPlan"] | None = None   # what run() will do, without doing it
    order: int = 99                             # position in listings and reports within its kind
    description: str = ""

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if type(value) is Deferred:
            value = value.load()
            object.__setattr__(self, name, value)     # frozen to its users; resolved once here
        return value

    # the renderers by name (None when the test declares none: the report's generic ones apply)
    html = property(lambda self: self.renderers.html if self.renderers else None)
    text = property(lambda self: self.renderers.text if self.renderers else None)
    compare = property(lambda self: self.renderers.compare if self.renderers else None)
    parts = property(lambda self: self.renderers.parts if self.renderers else None)
    headline = property(lambda self: self.renderers.headline if self.renderers else None)

    @property
    def all_settings(self) -> dict[str, Key]:
        """Every profile key [tests.NAME] may hold for this test, as declared."""
        return declarations(self.settings)

    @property
    def schema(self) -> str:
        return f"ssdpts.{self.name}/{self.summary.SCHEMA_VERSION}"

    def encode(self, summary: Any) -> dict:
        """The summary as stored and exported: plain data with its schema name and version."""
        if not isinstance(summary, self.summary):
            raise TypeError(f"{self.name}: run() returned {type(summary).__name__}, not {self.summary.__name__}")
        return {"schema": self.schema, **to_data(summary)}

    def decode(self, data: dict | None) -> Any:
        """A stored summary as its typed record; None when the test stored none (not finished)."""
        if not data:
            return None
        schema = str(data.get("schema", ""))
        version = int(schema.rpartition("/")[2] or 0) if schema else 0
        oldest = self.summary.READS_SINCE_VERSION or self.summary.SCHEMA_VERSION
        if not oldest <= version <= self.summary.SCHEMA_VERSION:
            raise SsdptsError(f"the stored {self.name} summary has schema {schema or 'none'}, this ssdpts reads "
                              f"{self.schema}; use the ssdpts version that wrote the run")
        return from_data(self.summary, data)
