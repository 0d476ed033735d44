"""Live metrics (docs/metrics.md) against a real Prometheus (Debian's `prometheus`, run here on a loopback port
with its own config and storage, never the system service): it scrapes a simulated run and answers, through its
HTTP API, the run's last round, which must equal the round the results database stored. Also: node_exporter's
text format as `promtool check metrics` reads it, a port in use, and the Grafana dashboard's queries."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from ssdpts.runresult.model import load_run
from ssdpts.store import Store

pytestmark = [pytest.mark.no_end_report, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "docs" / "examples" / "grafana-ssdpts.json"
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
needs_prometheus = pytest.mark.skipif(PROMETHEUS is None or PROMTOOL is None,
                                      reason="Debian's prometheus package is not installed (make system-test)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ssdpts(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def query(base: str, promql: str) -> list[dict]:
    doc = get_json(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


@pytest.fixture(scope="module")
def scraped_run(tmp_path_factory):
    """A quick simulated run exposing --metrics-port, scraped every 0.25 s by a real Prometheus; the run's
    exposition as served while it lingered; Prometheus's address; the results directory and run id."""
    tmp = tmp_path_factory.mktemp("prom")
    port, prom_port = free_port(), free_port()
    (tmp / "prometheus.yml").write_text(
        "global: {scrape_interval: 250ms, scrape_timeout: 200ms}\n"
        f"scrape_configs:\n  - job_name: ssdpts\n    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n")
    prom = subprocess.Popen([PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"))
    base = f"http://127.0.0.1:{prom_port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/-/ready", timeout=2).read()
                break
            except OSError:
                assert prom.poll() is None and time.monotonic() < deadline, (tmp / "prometheus.log").read_text()
                time.sleep(0.2)
        # Prometheus hands a new target to its scrape loop some seconds after it is ready (target discovery): the
        # run starts once a scrape of its port was tried, or a quick run on a fast machine is over before the first
        while not any(not t.get("lastScrape", "0001-").startswith("0001-") for t in json.loads(
                urllib.request.urlopen(f"{base}/api/v1/targets", timeout=5).read())["data"]["activeTargets"]):
            assert prom.poll() is None and time.monotonic() < deadline, (tmp / "prometheus.log").read_text()
            time.sleep(0.2)
        results = tmp / "results"
        run = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", "sim:client", "--profile", "quick",
                                "--tests", "iops", "--results", str(results), "-q", "--metrics-port", str(port),
                                "--metrics-linger", "4s", "--metrics-textfile", str(tmp / "ssdpts.prom")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        # the exposition as served once the run has ended (its final state, while it lingers)
        served, deadline = "", time.monotonic() + 300
        while run.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text, content_type = r.read().decode(), r.headers["Content-Type"]
                if 'ssdpts_run_status{ssdpts_run_status="completed"} 1' in text:
                    served = text
            except OSError:
                pass
            time.sleep(0.3)
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0, err
        assert served, "the final state was not served while the run lingered"
        assert content_type.startswith("application/openmetrics-text")
        time.sleep(1)     # Prometheus commits its last scrape
        yield base, served, results, out.split()[-1], tmp / "ssdpts.prom"
    finally:
        prom.terminate()
        prom.wait(timeout=30)


@needs_prometheus
def test_prometheus_answers_the_stored_last_round(scraped_run):
    base, _, results, run_id, _ = scraped_run
    run = load_run(Store.in_dir(results), run_id)
    rounds = [r for t in run.tests if t.name == "iops" for r in t.rounds if r.kind == "round"]
    last = max(rounds, key=lambda r: r.round)
    # Prometheus drops a target's series (staleness) once it stops answering: ask for the last value it scraped
    got = {s["metric"]["tracker"]: float(s["value"][1])
           for s in query(base, f'last_over_time(ssdpts_round_iops{{test="iops"}}[10m])')}
    assert got == {k: float(v) for k, v in last.tracking.items()}, (got, last.tracking)
    assert [float(s["value"][1]) for s in query(base, "last_over_time(ssdpts_last_round[10m])")] == [last.round]
    assert [float(s["value"][1]) for s in query(base, "last_over_time(ssdpts_rounds_total[10m])")] == [len(rounds)]
    done = query(base, 'last_over_time(ssdpts_run_status{ssdpts_run_status="completed"}[10m])')
    assert [float(s["value"][1]) for s in done] == [1.0] and run.status == "completed"
    info = query(base, "last_over_time(ssdpts_run_info[10m])")
    assert [s["metric"]["run_id"] for s in info] == [run.id]
    assert info[0]["metric"]["simulated"] == "true"


@needs_prometheus
def test_textfile_is_what_node_exporter_reads(scraped_run):
    """`promtool check metrics` lints the text format node_exporter's textfile collector parses."""
    *_, textfile = scraped_run
    text = textfile.read_text()
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert 'ssdpts_run_status{ssdpts_run_status="completed"} 1' in text
    assert not list(textfile.parent.glob(".ssdpts.prom.*.tmp"))       # the temporary file was renamed


@needs_prometheus
def test_dashboard_queries_only_exposed_metrics(scraped_run):
    """Every metric the Grafana dashboard queries is declared in the exposition the run served."""
    _, served, *_ = scraped_run
    declared = set()
    for m in re.finditer(r"^# TYPE (\S+) (\S+)$", served, re.M):
        declared.add(m[1] + {"counter": "_total", "info": "_info"}.get(m[2], ""))
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    queried = {n for e in exprs for n in re.findall(r"\bssdpts_[a-z_]+", e)}
    assert queried and queried <= declared, sorted(queried - declared)
    assert served.endswith("# EOF\n")


def test_port_in_use_refused_before_the_run(tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        r = ssdpts("run", "sim:client", "--profile", "quick", "--tests", "iops", "--results", str(tmp_path / "r"),
                   "-q", "--metrics-port", str(port))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port} is in use" in lines[0], r.stderr
    assert not (tmp_path / "r" / "ssdpts.db").exists() or not Store.in_dir(tmp_path / "r").runs()
