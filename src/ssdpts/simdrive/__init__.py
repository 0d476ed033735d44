"""Simulated SSD: presets, parameter loader/validator, NBD server.

The model itself is the Rust extension ``ssdpts._sim`` (crate ``sim/``)::

    from ssdpts.simdrive import load_params
    from ssdpts._sim import SimDrive
    d = SimDrive(load_params("client"))

``load_params(spec)`` accepts a preset name (``client``, ``enterprise``,
``sata-mlc``; a ``sim:`` prefix is allowed) or the path of a user TOML file.
A user TOML may set ``base = "<preset>"`` and override only some keys;
without ``base`` every key is required. See docs/simulator.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..inputs import read_toml

__all__ = ["load_params", "list_presets", "preset_path", "SCHEMA", "open_drive"]

PRESET_DIR = Path(__file__).parent / "presets"

GIB = 1 << 30
MIB = 1 << 20
KIB = 1 << 10


@dataclass(frozen=True)
class Key:
    section: str
    name: str
    target: str  # key of the flat dict passed to SimDrive
    integer: bool
    lo: float
    hi: float
    unit: str
    doc: str
    convert: Callable[[float, float], float]  # (value, scale) -> target value
    choices: tuple = ()
    default: float | None = None  # optional key: value when a complete TOML leaves it out

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.name}"


def _mul(f: float, scaled: bool = False, to_int: bool = True):
    def conv(v: float, scale: float) -> float:
        x = v * f * (scale if scaled else 1.0)
        return int(round(x)) if to_int else float(x)

    return conv


def _cap(v: float, scale: float) -> int:
    return int(v * scale * GIB) // 4096 * 4096


SCHEMA: tuple[Key, ...] = (
    Key("capacity", "user_gib", "user_capacity_bytes", False, 0.001, 16384, "GiB",
        "user (exported) capacity at scale 1; multiplied by `scale`", _cap),
    Key("capacity", "logical_block_size", "logical_block_size", True, 512, 4096, "bytes",
        "reported logical block size", _mul(1), (512, 4096)),
    Key("capacity", "op_percent", "op_percent", False, 0.5, 400, "%",
        "effective spare NAND as % of user capacity (GC reserve blocks are added on top)",
        _mul(1, to_int=False)),
    Key("geometry", "channels", "channels", True, 1, 64, "count", "NAND channels", _mul(1)),
    Key("geometry", "dies_per_channel", "dies_per_channel", True, 1, 64, "count",
        "dies per channel; a superblock has one erase block per die", _mul(1)),
    Key("geometry", "block_kib", "block_bytes", True, 16, 1 << 20, "KiB",
        "erase block per die in native (TLC/MLC) mode", _mul(KIB)),
    Key("geometry", "page_kib", "page_bytes", True, 4, 1024, "KiB",
        "NAND page (read unit) per plane; multiple of 4", _mul(KIB)),
    Key("geometry", "planes", "planes", True, 1, 16, "count",
        "planes per die: reads on different planes overlap; a program unit spans all planes "
        "(program units are multiples of page_kib x planes)", _mul(1), default=1),
    Key("geometry", "bits_per_cell", "bits_per_cell", True, 1, 4, "bits",
        "native bits per cell; an SLC-mode block holds block/bits_per_cell", _mul(1)),
    Key("geometry", "program_unit_kib", "native_program_unit_bytes", True, 4, 4096, "KiB",
        "data per native program operation per die", _mul(KIB)),
    Key("geometry", "slc_program_unit_kib", "slc_program_unit_bytes", True, 4, 4096, "KiB",
        "data per SLC program operation per die", _mul(KIB)),
    Key("timing", "t_read_us", "t_read_ns", False, 0, 100_000, "µs", "native page read time tR",
        _mul(1000)),
    Key("timing", "t_read_slc_us", "t_read_slc_ns", False, 0, 100_000, "µs", "SLC-mode page read time",
        _mul(1000)),
    Key("timing", "t_read_step_us", "t_read_step_ns", False, 0, 100_000, "µs",
        "extra native read time per page type (lower tR, middle tR+step, upper tR+2 step)", _mul(1000),
        default=0),
    Key("timing", "jitter_percent", "t_jitter_percent", False, 0, 50, "%",
        "every tR/tPROG/tBERS is drawn uniformly within +- this % of its nominal value",
        _mul(1, to_int=False), default=0),
    Key("timing", "read_retry_percent", "read_retry_percent", False, 0, 100, "%",
        "share of NAND reads that need read retry", _mul(1, to_int=False), default=0),
    Key("timing", "read_retry_max", "read_retry_max", True, 1, 64, "senses",
        "a retried read repeats the sense 1..=this many extra times (uniform)", _mul(1), default=3),
    Key("timing", "suspend", "suspend", True, 0, 1, "0/1",
        "1: host reads suspend the program/erase in progress on their die; 0: they queue behind it",
        _mul(1), (0, 1), default=0),
    Key("timing", "t_suspend_us", "t_suspend_ns", False, 0, 100_000, "µs",
        "cost of one suspend + resume (added to the read and to the suspended operation)", _mul(1000),
        default=20),
    Key("timing", "t_prog_us", "t_prog_ns", False, 0.001, 100_000, "µs",
        "native program time per program unit tPROG", _mul(1000)),
    Key("timing", "t_prog_slc_us", "t_prog_slc_ns", False, 0.001, 100_000, "µs",
        "SLC program time per SLC program unit", _mul(1000)),
    Key("timing", "t_erase_us", "t_erase_ns", False, 0, 1_000_000, "µs", "block erase time tBERS",
        _mul(1000)),
    Key("timing", "channel_mb_s", "channel_mb_s", False, 1, 1_000_000, "MB/s",
        "NAND bus bandwidth per channel (1 MB = 1e6 B)", _mul(1)),
    Key("timing", "link_mb_s", "link_mb_s", False, 1, 1_000_000, "MB/s",
        "host link bandwidth (PCIe/SATA payload)", _mul(1)),
    Key("timing", "ctrl_cmd_ns", "ctrl_cmd_ns", False, 0, 100_000_000, "ns",
        "controller service time per command (serial: caps IOPS at 1e9/ctrl_cmd_ns)", _mul(1)),
    Key("timing", "ctrl_write_ns", "ctrl_write_cmd_ns", False, 0, 100_000_000, "ns",
        "controller service time per write command (serial: caps write IOPS); 0 = ctrl_cmd_ns", _mul(1),
        default=0),
    Key("timing", "host_overhead_us", "host_overhead_ns", False, 0, 100_000, "µs",
        "fixed latency added to every command", _mul(1000)),
    Key("timing", "write_overhead_us", "write_overhead_ns", False, 0, 100_000, "µs",
        "extra fixed latency of every write (buffer commit; not a throughput limit)", _mul(1000), default=0),
    Key("timing", "write_buffer_kib", "write_buffer_bytes", True, 0, 16 << 20, "KiB",
        "write buffer; host writes complete when buffered unless NAND is backlogged", _mul(KIB)),
    Key("slc_cache", "static_mib", "slc_static_bytes", False, 0, 1 << 22, "MiB",
        "static SLC cache (dedicated extra blocks; x scale; rounded up to superblocks)",
        _mul(MIB, scaled=True)),
    Key("slc_cache", "dynamic_max_mib", "slc_dynamic_max_bytes", False, 0, 1 << 22, "MiB",
        "maximum dynamic SLC cache (native blocks used in SLC mode; x scale)",
        _mul(MIB, scaled=True)),
    Key("slc_cache", "dynamic_fraction", "slc_dynamic_fraction", False, 0, 1, "fraction",
        "dynamic SLC is limited to this fraction of the free (unmapped) user space",
        _mul(1, to_int=False)),
    Key("gc", "threshold_blocks", "gc_threshold_blocks", True, 2, 100_000, "superblocks",
        "foreground GC keeps at least this many free superblocks", _mul(1)),
    Key("gc", "idle_delay_ms", "idle_delay_ns", False, 0, 1e9, "ms",
        "host idle time before background GC / SLC folding starts", _mul(1_000_000)),
    Key("gc", "idle_free_target_percent", "idle_free_target_percent", False, 0, 100, "%",
        "idle GC runs until this % of native-pool superblocks is free", _mul(1, to_int=False)),
    Key("gc", "hot_cold", "hot_cold", True, 0, 1, "0/1",
        "1: hot/cold separation (data rewritten twice within one capacity of writes goes to its own blocks, "
        "also when GC moves it)", _mul(1), (0, 1), default=0),
    Key("gc", "idle_gc_mb_s", "idle_gc_mb_s", True, 0, 1_000_000, "MB/s",
        "rate bound of idle GC / folding (NAND page moves); 0 = as fast as the dies allow", _mul(1),
        default=0),
    Key("endurance", "rated_pe_cycles", "rated_pe_cycles", True, 1, 1_000_000, "cycles",
        "rated P/E cycles (wear_percent = avg erase count / this)", _mul(1)),
)

_BY_SECTION: dict[str, dict[str, Key]] = {}
for _k in SCHEMA:
    _BY_SECTION.setdefault(_k.section, {})[_k.name] = _k
TOP_KEYS = ("name", "description", "scale", "base")


def list_presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def preset_path(name: str) -> Path:
    name = name.removeprefix("sim:")
    p = PRESET_DIR / f"{name}.toml"
    if not p.is_file():
        raise ValueError(f"unknown simulator preset {name!r} (allowed: {', '.join(list_presets())})")
    return p


def _err(src: str, key: str, msg: str) -> ValueError:
    return ValueError(f"{src}: key '{key}' {msg}")


def _read_toml(path: Path) -> dict:
    return read_toml(path, "simulator preset")


def _check_structure(doc: dict, src: str, *, complete: bool) -> None:
    for k, v in doc.items():
        if k in TOP_KEYS:
            continue
        if k not in _BY_SECTION:
            allowed = ", ".join(list(TOP_KEYS) + [f"[{s}]" for s in _BY_SECTION])
            raise _err(src, k, f"is not a known key or section (allowed: {allowed})")
        if not isinstance(v, dict):
            raise _err(src, k, "must be a table [section]")
        for kk in v:
            if kk not in _BY_SECTION[k]:
                allowed = ", ".join(_BY_SECTION[k])
                raise _err(src, f"{k}.{kk}", f"is unknown (allowed in [{k}]: {allowed})")
    if complete:
        for key in SCHEMA:
            if key.default is None and key.name not in doc.get(key.section, {}):
                raise _err(src, key.dotted, f"is missing ({key.unit}: {key.doc}); "
                                            "or set base = \"<preset>\" to inherit")


def _merge(base: dict, over: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for k, v in over.items():
        if isinstance(v, dict):
            out.setdefault(k, {}).update(v)
        else:
            out[k] = v
    return out


def _check_value(key: Key, v: Any, src: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _err(src, key.dotted, f"must be a number ({key.unit}) in [{key.lo:g}, {key.hi:g}], got {v!r}")
    if key.integer and float(v) != int(v):
        raise _err(src, key.dotted, f"must be an integer ({key.unit}) in [{key.lo:g}, {key.hi:g}], got {v!r}")
    if key.choices and v not in key.choices:
        raise _err(src, key.dotted, f"must be one of {', '.join(map(str, key.choices))}, got {v!r}")
    if not (key.lo <= v <= key.hi):
        raise _err(src, key.dotted, f"must be in [{key.lo:g}, {key.hi:g}] {key.unit}, got {v!r}")
    return v


def load_params(spec: str | Path, *, scale: float | None = None,
                overrides: Mapping[str, Any] | None = None) -> dict:
    """Load and validate a simulator preset or user TOML.

    ``spec``: preset name (``client``, ``sim:client``) or a path to a TOML
    file. ``scale`` overrides the file's ``scale``; ``overrides`` maps dotted
    keys (``"slc_cache.static_mib"``) to values. Returns the flat dict for
    ``SimDrive(...)`` (bytes / ns) plus ``name``, ``description``, ``source``
    and ``scale``. Raises ``ValueError`` with a one-line message on bad input.
    """
    spec_s = str(spec)
    if spec_s.endswith(".toml") or "/" in spec_s or Path(spec_s).is_file():
        path = Path(spec_s)
        src = str(path)
        doc = _read_toml(path)
        base_name = doc.get("base")
        if base_name is not None:
            if not isinstance(base_name, str):
                raise _err(src, "base", f"must be a preset name (allowed: {', '.join(list_presets())})")
            if base_name.removeprefix("sim:") not in list_presets():
                raise _err(src, "base", f"= {base_name!r} is not a preset "
                                        f"(allowed: {', '.join(list_presets())})")
            _check_structure(doc, src, complete=False)
            base_doc = _read_toml(preset_path(base_name))
            doc = _merge(base_doc, {k: v for k, v in doc.items() if k != "base"})
        _check_structure(doc, src, complete=True)
    else:
        path = preset_path(spec_s)
        src = str(path)
        doc = _read_toml(path)
        _check_structure(doc, src, complete=True)

    if overrides:
        for dotted, v in overrides.items():
            sec, _, name = dotted.partition(".")
            if sec not in _BY_SECTION or name not in _BY_SECTION[sec]:
                allowed = ", ".join(k.dotted for k in SCHEMA)
                raise _err("overrides", dotted, f"is unknown (allowed: {allowed})")
            doc.setdefault(sec, {})[name] = v

    sc = doc.get("scale", 1.0) if scale is None else scale
    if isinstance(sc, bool) or not isinstance(sc, (int, float)) or not (0 < sc <= 1024):
        raise _err(src, "scale", f"must be a number in (0, 1024], got {sc!r}")
    for k in ("name", "description"):
        if k in doc and not isinstance(doc[k], str):
            raise _err(src, k, "must be a string")

    out: dict[str, Any] = {
        "name": doc.get("name", Path(src).stem),
        "description": doc.get("description", ""),
        "source": src,
        "scale": float(sc),
    }
    raw: dict[str, float] = {}
    for key in SCHEMA:
        v = _check_value(key, doc.get(key.section, {}).get(key.name, key.default), src)
        raw[key.dotted] = v
        out[key.target] = key.convert(v, float(sc))

    # cross-field checks (same rules as the Rust Params::validate)
    def need(cond: bool, dotted: str, msg: str) -> None:
        if not cond:
            raise _err(src, dotted, msg)

    page = raw["geometry.page_kib"]
    need(page % 4 == 0, "geometry.page_kib", f"must be a multiple of 4 KiB, got {page:g}")
    plane_unit = page * raw["geometry.planes"]
    for k in ("geometry.program_unit_kib", "geometry.slc_program_unit_kib"):
        need(raw[k] % plane_unit == 0, k,
             f"must be a multiple of geometry.page_kib x geometry.planes ({plane_unit:g}), got {raw[k]:g}")
    blk = raw["geometry.block_kib"]
    need(blk % 4 == 0, "geometry.block_kib", f"must be a multiple of 4 KiB, got {blk:g}")
    pu = raw["geometry.program_unit_kib"]
    need(blk % pu == 0, "geometry.block_kib", f"must be a multiple of geometry.program_unit_kib ({pu:g}), got {blk:g}")
    bits = raw["geometry.bits_per_cell"]
    spu = raw["geometry.slc_program_unit_kib"]
    need(blk % bits == 0 and (blk // bits) % spu == 0, "geometry.block_kib",
         f"/ bits_per_cell ({blk:g}/{bits:g}) must be a multiple of geometry.slc_program_unit_kib ({spu:g})")
    dies = raw["geometry.channels"] * raw["geometry.dies_per_channel"]
    sb_bytes = blk * KIB * dies
    need(out["user_capacity_bytes"] >= 2 * sb_bytes, "capacity.user_gib",
         f"x scale gives {out['user_capacity_bytes']} bytes, need at least 2 superblocks ({2 * sb_bytes} bytes)")
    pages_total = (out["user_capacity_bytes"] * (1 + raw["capacity.op_percent"] / 100) + out["slc_static_bytes"]
                   * bits) / 4096
    need(pages_total < 2**31, "capacity.user_gib", "drive too large (needs < 2^31 physical 4 KiB pages)")
    return out


def open_drive(spec: str | Path = "client", **kw):
    """Convenience: ``SimDrive(load_params(spec, **kw))``."""
    from ssdpts._sim import SimDrive

    return SimDrive(load_params(spec, **kw))
