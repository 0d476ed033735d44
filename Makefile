# Two commands do all set-up on a fresh Debian machine:
#   make demo   installs what is missing, then runs the quick suite on the embedded default target
#   make test   installs what is missing, then runs the whole test suite
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
RESULTS ?= results

.PHONY: setup system python demo test bench clean

setup: system python

# Debian packages: fio is the load generator; the rest read SMART, purge and make test devices.
system:
	@missing=""; \
	for c in fio:fio smartctl:smartmontools nvme:nvme-cli blkdiscard:util-linux losetup:util-linux \
	         flock:util-linux mkfs.ext4:e2fsprogs hdparm:hdparm sg_format:sg3-utils chromium:chromium \
	         ip:iproute2 ss:iproute2 pgrep:procps blkid:util-linux; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c##*:}"; \
	done; \
	if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$$HOME/.cargo/bin/cargo" ]; then missing="$$missing cargo rustc"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# The Python package (and its Rust simulator core, built by maturin) in editable mode.
python:
	@PATH="$$HOME/.cargo/bin:$$PATH" $(PIP) install -q -e '.[test]' 2>&1 | grep -v -e "Running pip as the 'root' user" -e "^$$" || true
	@$(PYTHON) -c "import ssdpts, ssdpts._sim" || { echo "ssdpts failed to install"; exit 1; }

demo: setup
	$(PYTHON) -m ssdpts run --results $(RESULTS)

test: setup
	PATH="$$HOME/.cargo/bin:$$PATH" cargo test -q --release --manifest-path sim/Cargo.toml
	PATH="$$HOME/.cargo/bin:$$PATH" $(PYTHON) -m pytest -q

bench: setup
	$(PYTHON) bench/overhead.py
	$(PYTHON) bench/gaps.py
	$(PYTHON) bench/sim.py
	$(PYTHON) bench/report.py
	$(PYTHON) bench/hosts.py

clean:
	rm -rf build dist sim/target .pytest_cache
