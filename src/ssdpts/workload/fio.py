"""Render workloads to fio job text: the only place that knows fio option names for workloads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from .spec import Workload

if TYPE_CHECKING:
    from .ioengine import IoChoice


@dataclass
class FioJob:
    """A fio job file as data: [global] options and ordered job sections. Engines may add options."""

    global_options: dict[str, str] = field(default_factory=dict)
    sections: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def text(self) -> str:
        out = ["[global]"] + [_line(k, v) for k, v in self.global_options.items()]
        for name, opts in self.sections:
            out.append("")
            out.append(f"[{name}]")
            out += [_line(k, v) for k, v in opts.items()]
        return "\n".join(out) + "\n"


def _line(key: str, value) -> str:
    if value is None or value == "":
        return key
    text = str(value)
    if any(c in text for c in ";#\n"):
        # fio treats ';' and '#' as comment starts and has no quoting
        raise ValueError(f"fio option {key}={text!r} contains ';', '#' or a newline")
    return f"{key}={text}"


def filename_problem(path: str) -> str | None:
    """Why fio would not open exactly `path`, in words, or None. fio (3.x init.c/options.c/parse.c) cuts a job
    line at ';' or '#', strips blanks and control characters from its ends, expands `${VAR}` and the keywords
    `$pagesize`, `$mb_memory`, `$ncpus` anywhere in a value, and none of these can be escaped."""
    if any(c in path for c in ";#"):
        return "fio reads ';' and '#' as the start of a comment"
    if "$" in path:
        return "fio expands '$' in job files (${VAR} from the environment, $ncpus, ...)"
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return "it contains a control character (a newline, a tab, ...)"
    if path != path.strip():
        return "fio strips blanks from the ends of a file name"
    return None


def filename_value(path: str) -> str:
    """`path` as fio's `filename` option must spell it: fio splits the value into several files at ':', and
    '\\:' is its escape for a colon that belongs to the name (HOWTO, "filename"); a backslash anywhere else is
    read as itself."""
    problem = filename_problem(path)
    if problem:
        raise ValueError(f"fio cannot be given the file name {path!r}: {problem}")
    return path.replace(":", "\\:")


# What the drive is sent for each data pattern (docs/studies.md "Data patterns" has the measurements).
# `random` refills every buffer before each write: fio's default (buffers filled once, then
# `scramble_buffers` stamps the offset and the same timestamp into every 512-byte sector) repeats 16-byte
# words within each page, which a compressor finds and works on (zram: lzo 5x the CPU per write, -30 % IOPS)
# and leaves pages that differ from earlier writes by a few bytes only.
DATA_PATTERN_OPTIONS: dict[str, dict[str, str]] = {
    "random": {"refill_buffers": "1", "scramble_buffers": "0"},
    "compress50": {"refill_buffers": "1", "buffer_compress_percentage": "50", "buffer_compress_chunk": "4096"},
    "zero": {"zero_buffers": "1"},
}


def _pct(p: float) -> str:
    return f"{p:g}"


def iolog_names(section: str, threads: int) -> list[str]:
    """The iologs a trace cell's job section reads, one per thread (fio gives the files to the job's clones in
    order), in fio's working directory (the engine writes them there)."""
    return [f"{section}.iolog"] if threads == 1 else [f"{section}.{k}.iolog" for k in range(threads)]


def trace_options(w: Workload, section: str, filename: str) -> dict[str, str]:
    """A trace cell's fio options: its iolog replayed onto the target at the captured times (scaled); stops when
    the log is done (io_size: the trace's bytes) or at `runtime_s`, whichever comes first."""
    o = {"rw": "randrw", "read_iolog": ":".join(iolog_names(section, w.threads)), "replay_redirect": filename,
         "numjobs": str(w.threads), "iodepth": str(w.iodepth), "direct": "1" if w.direct else "0",
         "replay_time_scale": str(w.trace_rate_pct), "lat_percentiles": "1",
         "percentile_list": ":".join(_pct(p) for p in w.percentiles)}
    if w.runtime_s is not None:
        o["runtime"] = f"{int(round(w.runtime_s * 1000))}ms"
    return o


def cell_options(w: Workload, capacity: int, align: int) -> dict[str, str]:
    """fio options for one workload cell (the job's own section)."""
    # a SEQ cell starts at its (each clone's) slice start: fio wraps a sequential job back to its `offset`,
    # so a cell started mid-slice would cycle over the slice's tail only (docs/coverage.md)
    offset, size, increment = w.clone_slices(capacity, align)
    o: dict[str, str] = {"rw": w.rw}
    if w.rw in ("randrw", "rw"):
        o["rwmixread"] = str(w.reads)
    if w.bssplit:
        # fio: "reads,writes" when the directions have their own splits
        o["bssplit"] = ",".join(":".join(f"{b}/{p}" for b, p in split)
                                for split in (w.bssplit, w.write_bssplit) if split)
        o["blockalign"] = str(w.align or w.min_bs)
    else:
        o["bs"] = str(w.bs)
        if w.align:
            o["blockalign"] = str(w.align)
    o["numjobs"] = str(w.threads)
    o["iodepth"] = str(w.iodepth)
    o["offset"] = str(offset)
    o["size"] = str(size)
    if increment:
        o["offset_increment"] = str(increment)
    if w.runtime_s is not None:
        if w.io_size is None:
            o["time_based"] = "1"      # loop over the range for the whole runtime
        o["runtime"] = f"{int(round(w.runtime_s * 1000))}ms"   # with io_size: a cap, whichever comes first
    if w.io_size is not None:
        o["io_size"] = str(int(w.io_size))
    if w.ramp_s:
        o["ramp_time"] = f"{int(round(w.ramp_s * 1000))}ms"
    o["direct"] = "1" if w.direct else "0"
    if w.sync == "dsync":
        o["sync"] = "dsync"
    elif w.sync == "sync":
        o["sync"] = "1"        # O_SYNC; every fio release reads 1 so (the word "sync" needs fio >= 3.24)
    if w.overwrite:
        o["overwrite"] = "1"
    if w.random:
        # SNIA: random I/O without a random map (the map changes write amplification),
        # a 64-bit generator (>= 48 bits of LBA), and no repeated sequence unless seeded.
        o["norandommap"] = "1"
        o["randrepeat"] = "0"
        o["random_generator"] = "tausworthe64"
        if w.seed is not None:
            o["randseed"] = str(w.seed)
        if w.distribution != "random":
            o["random_distribution"] = w.distribution
        if w.random_pct != (100, 100):
            o["percentage_random"] = ",".join(str(p) for p in w.random_pct)
    o.update(DATA_PATTERN_OPTIONS[w.data_pattern])
    if w.thinktime_us:
        o["thinktime"] = f"{w.thinktime_us}us"
        if w.thinktime_iotime_s:
            o["thinktime_iotime"] = f"{int(round(w.thinktime_iotime_s * 1000))}ms"
    if w.verify:
        o.update(verify=w.verify, do_verify="1", verify_fatal="0")
    if w.continue_on_error:
        o["continue_on_error"] = "all"
    o["lat_percentiles"] = "1"
    o["percentile_list"] = ":".join(_pct(p) for p in w.percentiles)
    if w.log_interval_ms:
        o["log_avg_msec"] = str(w.log_interval_ms)
        o["write_iops_log"] = w.name
        o["write_lat_log"] = w.name        # latency per interval beside IOPS (engines/fiolog.py reads both)
        o["log_unix_epoch"] = "1"
    return o


def cell_sections(w: Workload, capacity: int, align: int, flow_id: int) -> list[tuple[str, dict[str, str]]]:
    """A cell's job sections: one, or one per JobMix of a several-job cell. Its jobs' flow weights count among
    themselves only (flow group `flow_id`): fio joins every job of a process to its flow group when it reads
    the job file, so a later cell's waiting jobs in the same group would hold this cell's jobs back for good."""
    out = []
    for mix, job in zip(w.jobs or (None,), w.fio_jobs()):
        if job.trace:
            out.append((job.name, trace_options(job, job.name, "")))      # render_on names the target
            continue
        o = cell_options(job, capacity, align)
        if mix is not None and mix.flow:
            o["flow_id"] = str(flow_id)
            o["flow"] = str(mix.flow)
        if mix is not None and mix.rate_iops:
            o["rate_iops"] = str(mix.rate_iops)    # a single block size per job: fio paces bytes at its min bs
        out.append((job.name, o))
    return out


def render(cells: Sequence[Workload], filename: str, capacity: int, align: int = 4096,
           ioengine: str = "libaio", threads: bool = True) -> FioJob:
    """A job file running `cells` one after another on `filename` (engines decide how they are chained).
    `threads`: fio's jobs are threads of one process (they start faster); False forks a process per job."""
    g = {
        "ioengine": ioengine,
        "filename": filename_value(filename) if filename else "",
        "group_reporting": "1",
        "thread": "1" if threads else "0",
        "disk_util": "0",
        "allow_mounted_write": "0",
        "invalidate": "0",
    }
    job = FioJob(global_options=g)
    for k, w in enumerate(cells):
        job.sections += cell_sections(w, capacity, align, flow_id=k + 1)
    return job


def render_chosen(cells: Sequence[Workload], targets: Sequence, io: IoChoice) -> FioJob:
    """`render_on` with the run's I/O engine choice (ioengine.py `IoChoice`): its engine, its jobs as threads or
    processes, and its options (io_uring's, io_uring_cmd's cmd_type). What an engine running fio job files renders."""
    job = render_on(cells, targets, io.ioengine, io.threads)
    job.global_options.update(io.job_options())
    return job


def render_on(cells: Sequence[Workload], targets: Sequence, ioengine: str, threads: bool = True) -> FioJob:
    """Like `render`, for several targets at once: one job per (cell, target), named `cell@index`."""
    if len(targets) == 1:
        t = targets[0]
        job = render(list(cells), t.fio_filename, t.size_bytes, t.logical_block_size, ioengine,
                     threads)
        job.global_options.update(_no_file_for_a_device(t))
        for name, opts in job.sections:
            opts.update(_passthrough_options(t), **_redirect(opts, name, t))
        return job
    job = render([], "", 0, 4096, ioengine, threads)
    del job.global_options["filename"]
    for k, w in enumerate(cells):
        for i, t in enumerate(targets):
            for name, opts in cell_sections(w, t.size_bytes, t.logical_block_size, flow_id=k * len(targets) + i + 1):
                opts = {"filename": filename_value(t.fio_filename), **_no_file_for_a_device(t), **opts,
                        **_passthrough_options(t)}
                job.sections.append((f"{name}@{i}", {**opts, **_redirect(opts, f"{name}@{i}", t)}))
    return job


def _redirect(opts: dict[str, str], section: str, target) -> dict[str, str]:
    """A trace cell's iolog (one per section: the engine writes each for its target) sent to the target."""
    if "read_iolog" not in opts:
        return {}
    return {"read_iolog": ":".join(iolog_names(section, int(opts["numjobs"]))), "replay_redirect": target.fio_filename}


def _passthrough_options(target) -> dict[str, str]:
    """An NVMe generic character device cannot be opened O_DIRECT (fio: "destination does not support O_DIRECT")
    and needs no such flag: io_uring_cmd's NVMe commands never pass through the page cache."""
    return {"direct": "0"} if getattr(target, "passthrough", None) else {}


def _no_file_for_a_device(target) -> dict[str, str]:
    """A block device's node gone (the drive pulled out, udev removed it): fio would create a regular file of that
    name in /dev (RAM) and write the cell's bytes into it. Refused: fio fails at open, the drive's failure."""
    return {"allow_file_create": "0"} if getattr(target, "kind", "") == "block" else {}
