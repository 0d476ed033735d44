# Two commands do all set-up on a fresh Debian machine:
#   make demo   installs what is missing, then runs the quick suite on the embedded default target
#   make test   installs what is missing, then runs the whole test suite
# Python packages go into a project virtual environment (.venv), never into the user's global Python.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RESULTS ?= results
CARGO_PATH := PATH="$$HOME/.cargo/bin:$$PATH"
MATURIN := $(VENV)/bin/maturin
# the requirements of pyproject.toml's optional extras named after it, for pip (the package itself installed once)
EXTRA_REQS = $(PY) -c 'import sys, tomllib; x = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; print(*(r for e in sys.argv[1:] for r in x[e]))'

.PHONY: setup system system-test rust python docs-deps docs test-deps dist demo check test bench clean

setup: system rust python

# Debian packages a run uses (what `make demo` installs): fio is the load generator; the rest read SMART and
# NVMe identify, purge, check safety, make file systems for the studies and reach remote fio servers.
system:
	@missing=""; \
	for c in fio:fio smartctl:smartmontools nvme:nvme-cli blkdiscard:util-linux losetup:util-linux \
	         flock:util-linux mkfs.ext4:e2fsprogs hdparm:hdparm sg_format:sg3-utils sdparm:sdparm \
	         ip:iproute2 ss:iproute2 pgrep:procps blkid:util-linux; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c##*:}"; \
	done; \
	$(PYTHON) -c "import venv, ensurepip" 2>/dev/null || missing="$$missing python3-venv"; \
	command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Rust for the simulator core, at least sim/Cargo.toml's rust-version: Debian 12's rustc (1.63) cannot build it,
# so rustup's stable toolchain goes into ~/.cargo (the user's, not the system's) when none new enough is found.
rust:
	@need=$$(sed -n 's/^rust-version = "\([0-9.]*\)".*/\1/p' sim/Cargo.toml); \
	have=$$($(CARGO_PATH) rustc --version 2>/dev/null | awk '{print $$2}'); \
	if [ -z "$$have" ] || [ "$$(printf '%s\n%s\n' "$$need" "$$have" | sort -V | head -n1)" != "$$need" ]; then \
	  echo "installing Rust (rustup, stable, into ~/.cargo): found $${have:-none}, sim/ needs $$need or newer"; \
	  init=$$(mktemp); curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs -o $$init \
	    && sh $$init -y -q --profile minimal --no-modify-path; ok=$$?; rm -f $$init; \
	  [ $$ok = 0 ] || { echo "Rust $$need or newer is needed and rustup could not install it: install it (https://rustup.rs), then run make again"; exit 1; }; \
	fi

$(PY):
	$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip 2>&1 | grep -v -e "^$$" || true

# The Python package (and its Rust simulator core, built by maturin) in editable mode, inside .venv.
python: $(PY)
	@rm -f src/ssdpts/_sim.cpython-*.so  # left by builds before abi3: Python would load it before _sim.abi3.so
	@$(CARGO_PATH) $(PY) -m pip install -q -e '.[test]' 2>&1 | grep -v -e "^$$" || true
	@$(PY) -c "import ssdpts, ssdpts._sim" || { echo "ssdpts failed to install into $(VENV)"; exit 1; }

# The docs extra (MkDocs, its Material theme, mkdocs-click for the command reference, jsonschema for the published
# results schema) inside .venv: for make test and make docs only, so make demo installs no documentation tool.
docs-deps: python
	@$(PY) -c "import mkdocs, material, mkdocs_click, jsonschema" 2>/dev/null || $(PY) -m pip install -q $$($(EXTRA_REQS) docs)

# The documentation site from docs/ into build/site, strictly: a broken link or anchor, or a page missing from
# mkdocs.yml's nav, fails (tests/test_docs.py runs the same build in make test).
docs: docs-deps
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet


# maturin, the build backend pyproject.toml names (and its version range), inside .venv.
$(MATURIN): $(PY)
	$(PY) -m pip install -q $$($(PY) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')

# An sdist and an abi3 wheel (any CPython >= 3.11, the Rust simulator inside) in dist/, and in dist/wheelhouse
# the wheel's dependencies as published on PyPI (and pip, which pipx installs into its shared venv), so a lab host
# without Rust or internet can install it (README "Install"). The wheel is rebuilt every time (cargo's incremental build makes that seconds); the wheelhouse only
# when pyproject.toml changes.
dist: system $(MATURIN)
	rm -f dist/ssdpts-*
	$(CARGO_PATH) $(MATURIN) sdist --out dist
	$(CARGO_PATH) $(MATURIN) build --release --out dist --interpreter $(PY)
	[ dist/wheelhouse/.complete -nt pyproject.toml ] || { $(PY) -m pip download -q -d dist/wheelhouse dist/ssdpts-*.whl pip \
	  && rm -f dist/wheelhouse/ssdpts-* && touch dist/wheelhouse/.complete; }

# For the test suite only (not `make demo`): Chromium looks at the HTML report, QEMU with the Debian kernel and a
# static busybox boot the test bed (docs/testing.md), fdisk/mdadm/lvm2/dmsetup/nbd-client/mkswap build the devices
# the safety tests must refuse, and PostgreSQL's pgbench is the application tests/test_apps_capture.py captures
# (~13 s, 19 MB; Debian's package also sets up a default cluster). Prometheus scrapes a run's live metrics
# (tests/test_live_metrics.py runs its binary on a loopback port, never the system service the package enables);
# chromium-driver drives Chromium through the results site (tests/test_site_browser.py).
system-test: system
	@missing=""; \
	for c in chromium:chromium qemu-system-x86_64:qemu-system-x86 sfdisk:fdisk mdadm:mdadm lvm:lvm2 \
	         dmsetup:dmsetup nbd-client:nbd-client mkswap:util-linux file:file prometheus:prometheus \
	         promtool:prometheus chromedriver:chromium-driver; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c##*:}"; \
	done; \
	ls /boot/vmlinuz-* >/dev/null 2>&1 || missing="$$missing linux-image-amd64"; \
	file -L /bin/busybox 2>/dev/null | grep -q "statically linked" || missing="$$missing busybox-static"; \
	ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || missing="$$missing postgresql postgresql-contrib"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the test suite:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Python packages only the test suite uses, not `make demo`: pyproject.toml's docs extra (above), the shared
# store's driver (`postgres`: docs/shared-store.md) and the WebDriver client the results site's browser test drives
# Chromium with (`browser-test`). Their requirements only: the package itself is installed once, by `python`.
test-deps: docs-deps
	@$(PY) -c "import psycopg, selenium" 2>/dev/null || $(PY) -m pip install -q $$($(EXTRA_REQS) postgres browser-test)

demo: setup
	$(PY) -m ssdpts run --results $(RESULTS)

# The inner loop after each edit, under 3 minutes here (about 1.5 min at rest on 2 cores): units, parsers, settings,
# layering and timing rules, steady-state maths, the simulator's paths and its truth API, plans, criteria and the
# synthetic report. Real fio, QEMU and the studies are left to `make test`, which runs these too. Set-up only when
# the package is not importable yet (a `make check` right after a clone installs first).
CHECK = tests/test_fiojson.py tests/test_fio_versions.py tests/test_layering.py tests/test_timing.py tests/test_settings.py \
	tests/test_steady.py tests/test_profiles.py tests/test_plan_hypothetical.py tests/test_criteria.py \
	tests/test_workload.py tests/test_analyze_workload.py tests/test_slc_analysis.py tests/sim/test_simdrive.py \
	tests/sim/test_presets.py tests/oracle/test_truth_api.py tests/health/test_projection.py \
	tests/health/test_erase_increments.py tests/report/test_report_synthetic.py tests/test_startup.py \
	tests/test_engine_interface.py tests/test_defaults_once.py tests/test_passthrough.py tests/test_stream_slices.py \
	tests/test_stored_records.py tests/health/test_drive_corpus.py
check:
	@$(PY) -c "import ssdpts, ssdpts._sim" 2>/dev/null || $(MAKE) setup
	$(PY) -m pytest -q -p no:cacheprovider $(CHECK)

# Two groups wait on the clock or on an emulated machine and run beside the rest of the suite, each in a pytest
# process of its own (all must pass; their output follows the suite's): tests/vm boots one QEMU guest (TCG) for
# all its files (~11 min here); tests/test_real_shape.py spends ~4.5 min waiting on one-minute fio cells,
# tests/test_resume_truth.py a real 60 s pause, tests/test_trace_stimulus.py and tests/oracle (the simulator
# against its own truth, every test in two orders) a few minutes more. None shares devices (each makes its own
# loop devices, zram devices and network namespaces) with the rest. Tests never rely on a quiet machine.
# The rest runs in SUITE_WORKERS processes (pytest-xdist), each test file whole in one of them (its module
# fixtures made once): most of the suite waits on fio cells and simulated runs, so two processes on two cores
# take about half the time; a file's tests keep their order.
# The Rust tests build in the test profile (opt-level 1, debug assertions on: the model's invariant checks run),
# in half the time of a second fat-LTO release build; the Python suite tests the release build.
# dist: tests/test_dist.py installs the wheel into a fresh venv without Rust.
BESIDE_VM = tests/vm
BESIDE_CLOCK = tests/test_real_shape.py tests/test_resume_truth.py tests/test_trace_stimulus.py tests/oracle
BESIDE = $(BESIDE_VM) $(BESIDE_CLOCK)
SUITE_WORKERS = 2
test: setup system-test test-deps dist
	$(CARGO_PATH) cargo test -q --manifest-path sim/Cargo.toml
	@vmlog=$$(mktemp); clocklog=$$(mktemp); \
	$(CARGO_PATH) $(PY) -m pytest -q -rs -p no:cacheprovider $(BESIDE_VM) >$$vmlog 2>&1 & vm=$$!; \
	$(CARGO_PATH) $(PY) -m pytest -q -rs -p no:cacheprovider $(BESIDE_CLOCK) >$$clocklog 2>&1 & clock=$$!; \
	trap 'kill $$vm $$clock 2>/dev/null; rm -f $$vmlog $$clocklog' EXIT INT TERM; \
	echo "$(PY) -m pytest -q -rs -n $(SUITE_WORKERS) --dist loadfile $(BESIDE:%=--ignore=%)  ($(BESIDE_VM) and $(BESIDE_CLOCK) run beside it)"; \
	$(CARGO_PATH) $(PY) -m pytest -q -rs -p no:cacheprovider -n $(SUITE_WORKERS) --dist loadfile --durations=15 --cpu-per-file=15 \
		$(BESIDE:%=--ignore=%); rest=$$?; \
	wait $$vm; vms=$$?; wait $$clock; clocks=$$?; \
	echo "--- $(BESIDE_VM), run beside the suite:"; cat $$vmlog; \
	echo "--- $(BESIDE_CLOCK), run beside the suite:"; cat $$clocklog; \
	[ $$rest = 0 ] && [ $$vms = 0 ] && [ $$clocks = 0 ]

bench: setup
	$(PY) bench/overhead.py
	$(PY) bench/gaps.py
	$(PY) bench/sim.py
	$(PY) bench/report.py
	$(PY) bench/hosts.py
	$(PY) bench/startup.py

clean:
	rm -rf build dist sim/target .pytest_cache $(VENV)
