"""Live metrics of a run in progress: OpenMetrics over HTTP (`--metrics-port`) and a node_exporter textfile
(`--metrics-textfile`), docs/metrics.md.

The run's `Progress` publishes each event's figures into a `LiveState` (a lock held for a dict update); the HTTP
server's thread and the textfile's writer thread format what was last published. Neither ever calls into the run,
so a slow or stuck scraper cannot slow or stop the measurement. Metric names carry their unit (OpenMetrics: base
units, `_seconds`, `_bytes`, `_celsius`, `_ratio`, counters `_total`).
"""

from __future__ import annotations

import errno
import math
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .errors import SsdptsError
from .metrics import metric_of, unit_of

OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
RUN_STATES = ("running", "completed", "partial", "interrupted", "failed")
TEXTFILE_EVERY_S = 1.0      # the textfile is rewritten at most this often (node_exporter reads it per scrape)

# a tracker's stored unit -> (metric family, factor to its base unit)
ROUND_FAMILIES = {"IOPS": ("ssdpts_round_iops", 1.0), "B/s": ("ssdpts_round_bytes_per_second", 1.0),
                  "ns": ("ssdpts_round_latency_seconds", 1e-9), "": ("ssdpts_round_value", 1.0)}
# trackers named by their unit rather than a cell metric (the endurance test's `mib_s`, `lat_mean_us`)
SUFFIX_FAMILIES = {"mib_s": ("ssdpts_round_bytes_per_second", 2.0**20),
                   "_us": ("ssdpts_round_latency_seconds", 1e-6)}


def round_family(label: str) -> tuple[str, float]:
    """The family a tracking value is shown in and the factor from its stored unit to the family's base unit."""
    stored = unit_of(label).stored
    if not stored:
        for suffix, family in SUFFIX_FAMILIES.items():
            if label.endswith(suffix):
                return family
    return ROUND_FAMILIES[stored]


@dataclass
class Family:
    """One metric family: name (without `_total`/`_info`), OpenMetrics type, unit, help and its samples."""
    name: str
    kind: str                 # gauge | counter | info | stateset
    help: str
    unit: str = ""
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float | None, **labels: str) -> None:
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            self.samples.append((labels, float(value)))


# Every family the exporter may show, with its help: what the dashboard and docs/metrics.md may name.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "ssdpts_run": ("info", "", "the run: id, target, profile, whether the drive is simulated"),
    "ssdpts_run_status": ("stateset", "", "the run's status"),
    "ssdpts_test": ("info", "", "the running (or last) test and its phase"),
    "ssdpts_test_index": ("gauge", "", "the running test's place in the run (1-based)"),
    "ssdpts_tests": ("gauge", "", "the run's number of tests"),
    "ssdpts_round": ("gauge", "", "the running round's number (0: preconditioning)"),
    "ssdpts_round_limit": ("gauge", "", "the phase's round limit (0: none)"),
    "ssdpts_round_progress_ratio": ("gauge", "ratio", "share of the running round's planned time elapsed"),
    "ssdpts_rounds": ("counter", "", "rounds completed by this process"),
    "ssdpts_last_round": ("gauge", "", "the number of the last completed round"),
    "ssdpts_steady_state_reached": ("gauge", "", "1 when the last completed round reached steady state"),
    "ssdpts_round_iops": ("gauge", "", "the last completed round's tracking values in IOPS"),
    "ssdpts_round_bytes_per_second": ("gauge", "", "the last completed round's tracking values in bytes/s"),
    "ssdpts_round_latency_seconds": ("gauge", "seconds", "the last completed round's tracking latencies"),
    "ssdpts_round_value": ("gauge", "", "the last completed round's other tracking values, in their own unit"),
    "ssdpts_device_idle_seconds": ("gauge", "seconds",
                                   "the device's idle before the last round, measured at the block layer"),
    "ssdpts_precondition_written_bytes": ("gauge", "bytes", "bytes written by the running preconditioning"),
    "ssdpts_precondition_size_bytes": ("gauge", "bytes", "bytes the running preconditioning writes"),
    "ssdpts_eta_seconds": ("gauge", "seconds",
                           "time left, from the plans' bounds (clock=simulated: simulated time)"),
    "ssdpts_temperature_celsius": ("gauge", "celsius", "the drive's temperature at the last health reading"),
    "ssdpts_drive_wear_ratio": ("gauge", "ratio", "the drive's percentage used / 100, last health reading"),
    "ssdpts_drive_available_spare_ratio": ("gauge", "ratio", "the drive's available spare / 100"),
    "ssdpts_drive_host_written_bytes": ("gauge", "bytes", "host bytes written as the drive counts them"),
    "ssdpts_drive_media_errors": ("gauge", "", "media errors as the drive counts them"),
    "ssdpts_drive_critical_warning": ("gauge", "", "the drive's critical warning bits (0: none)"),
    "ssdpts_health_timestamp_seconds": ("gauge", "seconds", "when the last health reading was taken"),
    "ssdpts_health_failures": ("counter", "", "failures health readings reported during this process"),
    "ssdpts_last_event_timestamp_seconds": ("gauge", "seconds", "when the run last published an event"),
}


def exposed_names(family: str) -> list[str]:
    """The sample names a family shows (what a PromQL query names): `_total` for counters, `_info` for info."""
    kind = FAMILIES[family][0]
    return [family + {"counter": "_total", "info": "_info"}.get(kind, "")]


class LiveState:
    """What the run's progress events last published; `families()` formats it at the time asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._v: dict = {"status": "running", "tracking": {}, "rounds": 0, "health_failures": 0}

    def publish(self, **values) -> None:
        with self._lock:
            self._v.update(values, event_at=time.time())

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._v[key] = self._v.get(key, 0) + n

    def snapshot(self) -> dict:
        with self._lock:
            return dict(self._v)

    def families(self) -> list[Family]:
        v = self.snapshot()
        fam = {name: Family(name, kind, help_, unit) for name, (kind, unit, help_) in FAMILIES.items()}
        if "run_id" in v:
            fam["ssdpts_run"].add(1, run_id=v["run_id"], target=v.get("target", ""), profile=v.get("profile", ""),
                                  simulated="true" if v.get("simulated") else "false")
        for state in RUN_STATES:
            fam["ssdpts_run_status"].add(1 if v["status"] == state else 0, ssdpts_run_status=state)
        if v.get("test"):
            fam["ssdpts_test"].add(1, test=v["test"], title=v.get("title", ""), phase=v.get("phase", ""))
        fam["ssdpts_test_index"].add(v.get("test_index"))
        fam["ssdpts_tests"].add(v.get("tests"))
        fam["ssdpts_round"].add(v.get("round"))
        fam["ssdpts_round_limit"].add(v.get("round_limit"))
        if v.get("round_seconds") and v.get("round_started_at"):
            fam["ssdpts_round_progress_ratio"].add(min((time.time() - v["round_started_at"]) / v["round_seconds"], 1.0))
        fam["ssdpts_rounds"].add(v["rounds"])
        fam["ssdpts_last_round"].add(v.get("last_round"))
        if "reached" in v:
            fam["ssdpts_steady_state_reached"].add(1 if v["reached"] else 0)
        for label, value in v["tracking"].items():
            name, factor = round_family(label)
            fam[name].add(value * factor, test=v.get("last_round_test", ""), phase=v.get("last_round_phase", ""),
                          tracker=label, metric=metric_of(label))
        idle = v.get("device_idle_ms")
        fam["ssdpts_device_idle_seconds"].add(None if idle is None else idle / 1000)
        fam["ssdpts_precondition_written_bytes"].add(v.get("pc_done"))
        fam["ssdpts_precondition_size_bytes"].add(v.get("pc_total") or None)
        self._eta(v, fam["ssdpts_eta_seconds"])
        h = v.get("health") or {}
        fam["ssdpts_temperature_celsius"].add(h.get("temperature_c"))
        fam["ssdpts_drive_wear_ratio"].add(None if h.get("percentage_used") is None else h["percentage_used"] / 100)
        spare = h.get("available_spare")
        fam["ssdpts_drive_available_spare_ratio"].add(None if spare is None else spare / 100)
        fam["ssdpts_drive_host_written_bytes"].add(h.get("host_written_bytes"))
        fam["ssdpts_drive_media_errors"].add(h.get("media_errors"))
        fam["ssdpts_drive_critical_warning"].add(h.get("critical_warning"))
        fam["ssdpts_health_timestamp_seconds"].add(h.get("timestamp"))
        fam["ssdpts_health_failures"].add(v["health_failures"])
        fam["ssdpts_last_event_timestamp_seconds"].add(v.get("event_at"))
        return list(fam.values())

    @staticmethod
    def _eta(v: dict, family: Family) -> None:
        """The ETAs as the last event computed them; on the wall clock, less the time since that event (a
        simulated drive's ETA is simulated time: shown as computed)."""
        eta = v.get("eta")
        if not eta:
            return
        simulated = bool(v.get("simulated"))
        since = 0.0 if simulated else time.time() - v["eta_at"]
        clock = "simulated" if simulated else "wall"
        for scope, bound, seconds in eta:
            if seconds is not None:
                family.add(max(seconds - since, 0.0), scope=scope, bound=bound, clock=clock)


def _value(x: float) -> str:
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    esc = (f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34)).replace(chr(10), chr(92) + "n")}"'
           for k, v in labels.items())
    return "{" + ",".join(esc) + "}"


def openmetrics(families: list[Family]) -> str:
    """The OpenMetrics 1.0 text exposition (ends with `# EOF`)."""
    lines = []
    for f in families:
        lines.append(f"# TYPE {f.name} {f.kind}")
        if f.unit:
            lines.append(f"# UNIT {f.name} {f.unit}")
        lines.append(f"# HELP {f.name} {f.help}")
        suffix = {"counter": "_total", "info": "_info"}.get(f.kind, "")
        lines += [f"{f.name}{suffix}{_labels(lab)} {_value(x)}" for lab, x in f.samples]
    return "\n".join(lines) + "\n# EOF\n"


def prometheus_text(families: list[Family]) -> str:
    """The Prometheus text format 0.0.4 of the same samples, for node_exporter's textfile collector (its parser
    knows no `info`, `stateset`, `# UNIT` or `# EOF`): info and stateset become gauges, counters keep `_total`."""
    lines = []
    for f in families:
        if not f.samples:      # node_exporter's lint wants no TYPE without a sample
            continue
        suffix = {"counter": "_total", "info": "_info"}.get(f.kind, "")
        kind = "counter" if f.kind == "counter" else "gauge"
        lines.append(f"# HELP {f.name}{suffix} {f.help}")
        lines.append(f"# TYPE {f.name}{suffix} {kind}")
        lines += [f"{f.name}{suffix}{_labels(lab)} {_value(x)}" for lab, x in f.samples]
    return "\n".join(lines) + "\n"


class _Handler(BaseHTTPRequestHandler):
    state: LiveState

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?", 1)[0] not in ("/metrics", "/"):
            self.send_error(404, "ssdpts serves /metrics")
            return
        body = openmetrics(self.server.state.families()).encode()   # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", OPENMETRICS_TYPE)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:   # a scrape is not the run's news
        pass


class LiveMetrics:
    """The run's live metrics: its state, the HTTP server bound at once (a port in use fails before anything
    runs) and the textfile writer; `close(linger)` serves the final state `linger` seconds more."""

    def __init__(self, port: int | None = None, address: str = "127.0.0.1", textfile: Path | None = None):
        self.state = LiveState()
        self._server: ThreadingHTTPServer | None = None
        self._textfile = textfile
        self._wake = threading.Event()
        self._write_lock = threading.Lock()
        self._stop = False
        self._threads: list[threading.Thread] = []
        if textfile is not None:
            _check_textfile(textfile)
        if port is not None:
            try:
                self._server = ThreadingHTTPServer((address, port), _Handler)
            except OSError as e:
                why = "is in use" if e.errno == errno.EADDRINUSE else f"cannot be bound ({e.strerror})"
                raise SsdptsError(f"--metrics-port {port}: {address}:{port} {why}; choose another port "
                                  "(or stop what holds it)") from None
            self._server.daemon_threads = True
            self._server.state = self.state      # type: ignore[attr-defined]
            self._threads.append(threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                                  name="ssdpts-metrics", daemon=True))
        if textfile is not None:
            self._threads.append(threading.Thread(target=self._write_loop, name="ssdpts-metrics-textfile",
                                                  daemon=True))
        for t in self._threads:
            t.start()

    @property
    def port(self) -> int | None:
        return self._server.server_address[1] if self._server is not None else None

    def publish(self, **values) -> None:
        self.state.publish(**values)
        self._wake.set()

    def count(self, key: str, n: int = 1) -> None:
        self.state.count(key, n)
        self._wake.set()

    def _write_loop(self) -> None:
        while not self._stop:
            self._wake.wait()
            self._wake.clear()
            self._write_textfile()
            time.sleep(TEXTFILE_EVERY_S)

    def _write_textfile(self) -> None:
        """Atomically: a temporary file beside it, renamed over it (a reader sees the old or the new, whole)."""
        assert self._textfile is not None
        tmp = self._textfile.with_name(f".{self._textfile.name}.{os.getpid()}.tmp")
        with self._write_lock:
            self._replace(tmp)

    def _replace(self, tmp: Path) -> None:
        assert self._textfile is not None
        try:
            tmp.write_text(prometheus_text(self.state.families()))
            os.replace(tmp, self._textfile)
        except OSError:       # the file is for watching: never stop a run for it
            tmp.unlink(missing_ok=True)

    def close(self, linger: float = 0.0) -> None:
        if linger > 0 and self._server is not None:
            time.sleep(linger)
        self._stop = True
        if self._textfile is not None:
            self._write_textfile()            # the final state, whatever the writer's pace
            self._wake.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _check_textfile(path: Path) -> None:
    d = path.parent
    if not d.is_dir():
        raise SsdptsError(f"--metrics-textfile {path}: {d} is not a directory; give a file in node_exporter's "
                          "--collector.textfile.directory")
    if not path.name.endswith(".prom"):
        raise SsdptsError(f"--metrics-textfile {path}: node_exporter reads only *.prom files; name it *.prom")
    if not os.access(d, os.W_OK):
        raise SsdptsError(f"--metrics-textfile {path}: {d} is not writable; choose a writable directory")
