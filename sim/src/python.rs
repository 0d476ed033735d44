//! PyO3 bindings: `ssdpts._sim.SimDrive`.

use crate::engine::{run_job, JobResult, JobSpec, Rw};
use crate::model::{Counters, Model};
use crate::params::Params;
use crate::stats::{idx_to_val, DirStats, PLAT_NR};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyString};
use std::collections::BTreeMap;

/// Parameter keys that carry metadata (strings) and are ignored by the model.
const META_KEYS: &[&str] = &["name", "description", "source", "scale", "base"];

const JOB_KEYS: &[&str] = &[
    "name", "rw", "rwmixread", "bs", "bssplit", "numjobs", "iodepth", "offset", "size", "offset_increment", "runtime_ns",
    "io_size", "zones", "thinktime_ns", "thinktime_iotime_ns", "seed", "log_interval_ns", "percentiles",
];

fn verr<E: std::fmt::Display>(e: E) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn num_u64(v: &Bound<'_, PyAny>, key: &str) -> PyResult<u64> {
    if let Ok(i) = v.extract::<u64>() {
        return Ok(i);
    }
    if let Ok(f) = v.extract::<f64>() {
        if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 {
            return Ok(f as u64);
        }
    }
    Err(verr(format!("job key '{key}' must be a non-negative integer, got {v}")))
}

fn pairs(v: &Bound<'_, PyAny>, key: &str) -> PyResult<Vec<(f64, f64)>> {
    let mut out = vec![];
    let it = v.iter().map_err(|_| verr(format!("job key '{key}' must be a list of [a, b] pairs")))?;
    for item in it {
        let item = item?;
        let t: Vec<f64> = item
            .extract()
            .map_err(|_| verr(format!("job key '{key}' must be a list of [a, b] number pairs, got {item}")))?;
        if t.len() != 2 {
            return Err(verr(format!("job key '{key}' entries must have 2 numbers, got {item}")));
        }
        out.push((t[0], t[1]));
    }
    Ok(out)
}

fn parse_job(d: &Bound<'_, PyDict>) -> PyResult<JobSpec> {
    let mut j = JobSpec::default();
    let mut have_bs = false;
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| verr("job keys must be strings"))?;
        if v.is_none() {
            continue;
        }
        match key.as_str() {
            "name" => j.name = v.str()?.to_string(),
            "rw" => {
                let s: String = v.extract().map_err(|_| verr("job key 'rw' must be a string"))?;
                j.rw = Rw::parse(&s).ok_or_else(|| {
                    verr(format!("job key 'rw' = '{s}' not one of read|write|randread|randwrite|randrw|rw"))
                })?;
            }
            "rwmixread" => j.rwmixread = num_u64(&v, &key)? as u32,
            "bs" => {
                j.bssplit = vec![(num_u64(&v, &key)?, 100)];
                have_bs = true;
            }
            "bssplit" => {
                let p = pairs(&v, &key)?;
                if !p.is_empty() {
                    j.bssplit = p.iter().map(|&(a, b)| (a as u64, b as u32)).collect();
                    if p.iter().any(|&(a, b)| a.fract() != 0.0 || b.fract() != 0.0 || a < 0.0 || b < 0.0) {
                        return Err(verr("job key 'bssplit' entries must be [bytes, pct] integers"));
                    }
                    have_bs = true;
                }
            }
            "numjobs" => j.numjobs = num_u64(&v, &key)? as u32,
            "iodepth" => j.iodepth = num_u64(&v, &key)? as u32,
            "offset" => j.offset = num_u64(&v, &key)?,
            "size" => j.size = num_u64(&v, &key)?,
            "offset_increment" => j.offset_increment = num_u64(&v, &key)?,
            "runtime_ns" => j.runtime_ns = num_u64(&v, &key)?,
            "io_size" => j.io_size = num_u64(&v, &key)?,
            "zones" => j.zones = pairs(&v, &key)?,
            "thinktime_ns" => j.thinktime_ns = num_u64(&v, &key)?,
            "thinktime_iotime_ns" => j.thinktime_iotime_ns = num_u64(&v, &key)?,
            "seed" => j.seed = num_u64(&v, &key)?,
            "log_interval_ns" => j.log_interval_ns = num_u64(&v, &key)?,
            "percentiles" => {
                j.percentiles = v.extract().map_err(|_| verr("job key 'percentiles' must be a list of numbers"))?
            }
            _ => {
                return Err(verr(format!("unknown job key '{key}' (allowed: {})", JOB_KEYS.join(", "))));
            }
        }
    }
    if !have_bs {
        return Err(verr("job needs 'bs' or 'bssplit'"));
    }
    if !d.contains("rw")? {
        return Err(verr("job needs 'rw'"));
    }
    Ok(j)
}

fn counters_dict<'py>(py: Python<'py>, c: &Counters) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("host_write_bytes", c.host_write_bytes)?;
    d.set_item("host_read_bytes", c.host_read_bytes)?;
    d.set_item("nand_write_bytes", c.nand_write_bytes)?;
    d.set_item("waf", c.waf)?;
    d.set_item("erase_count_total", c.erase_count_total)?;
    d.set_item("erase_count_avg", c.erase_count_avg)?;
    d.set_item("erase_count_max", c.erase_count_max)?;
    d.set_item("wear_percent", c.wear_percent)?;
    d.set_item("free_blocks", c.free_blocks)?;
    d.set_item("total_blocks", c.total_blocks)?;
    d.set_item("slc_used_bytes", c.slc_used_bytes)?;
    d.set_item("slc_capacity_bytes", c.slc_capacity_bytes)?;
    d.set_item("clock_ns", c.clock_ns)?;
    d.set_item("power_on_ns", c.power_on_ns)?;
    d.set_item("live_bytes", c.live_bytes)?;
    d.set_item("gc_moved_bytes", c.gc_moved_bytes)?;
    d.set_item("suspend_count", c.suspend_count)?;
    d.set_item("read_retry_count", c.read_retry_count)?;
    d.set_item("free_native_blocks", c.free_native_blocks)?;
    d.set_item("idle_ns", c.idle_ns)?;
    Ok(d)
}

fn dir_dict<'py>(py: Python<'py>, s: &DirStats, runtime_ns: u64, plist: &[f64]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    let secs = runtime_ns as f64 / 1e9;
    d.set_item("io_bytes", s.bytes)?;
    d.set_item("bw_bytes", if secs > 0.0 { (s.bytes as f64 / secs) as u64 } else { 0 })?;
    d.set_item("iops", if secs > 0.0 { s.ios as f64 / secs } else { 0.0 })?;
    d.set_item("runtime", runtime_ns / 1_000_000)?;
    d.set_item("total_ios", s.ios)?;
    let lat = PyDict::new_bound(py);
    lat.set_item("min", if s.ios > 0 { s.min } else { 0 })?;
    lat.set_item("max", s.max)?;
    lat.set_item("mean", s.mean())?;
    lat.set_item("stddev", s.stddev())?;
    lat.set_item("N", s.ios)?;
    let pct = PyDict::new_bound(py);
    for (p, v) in s.percentiles(plist) {
        pct.set_item(format!("{p:.6}"), v)?;
    }
    lat.set_item("percentile", pct)?;
    let bins = PyDict::new_bound(py);
    for i in 0..PLAT_NR {
        if s.bins[i] > 0 {
            bins.set_item(idx_to_val(i).to_string(), s.bins[i])?;
        }
    }
    lat.set_item("bins", bins)?;
    d.set_item("lat_ns", lat)?;
    Ok(d)
}

/// The LBAs the job touched (engine.rs `Coverage`), in bytes: its range, the distinct bytes touched, the
/// lowest offset and highest end, and the granule the bitmap counted in.
fn coverage_dict<'py>(py: Python<'py>, r: &JobResult) -> PyResult<Bound<'py, PyDict>> {
    let c = &r.coverage;
    let d = PyDict::new_bound(py);
    d.set_item("range_offset", c.start)?;
    d.set_item("range_bytes", c.len)?;
    d.set_item("touched_bytes", c.touched_bytes())?;
    d.set_item("lowest", if c.highest_end > 0 { c.lowest } else { 0 })?;
    d.set_item("highest_end", c.highest_end)?;
    d.set_item("granule", c.granule)?;
    Ok(d)
}

fn result_dict<'py>(py: Python<'py>, r: &JobResult, c: &Counters) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("jobname", &r.name)?;
    d.set_item("job_runtime", r.runtime_ns / 1_000_000)?;
    d.set_item("job_runtime_ns", r.runtime_ns)?;
    d.set_item("job_start_ns", r.start_ns)?;
    d.set_item("usr_cpu", 0.0)?;
    d.set_item("sys_cpu", 0.0)?;
    d.set_item("read", dir_dict(py, &r.read, r.runtime_ns, &r.percentiles)?)?;
    d.set_item("write", dir_dict(py, &r.write, r.runtime_ns, &r.percentiles)?)?;
    d.set_item("sim", counters_dict(py, c)?)?;
    let iv = PyList::empty_bound(py);
    for i in &r.intervals {
        let e = PyDict::new_bound(py);
        e.set_item("t_ns", i.t_ns)?;
        e.set_item("read_ios", i.read_ios)?;
        e.set_item("write_ios", i.write_ios)?;
        e.set_item("read_bytes", i.read_bytes)?;
        e.set_item("write_bytes", i.write_bytes)?;
        e.set_item("lat_mean_ns", i.lat_mean())?;
        e.set_item("lat_max_ns", i.lat_max)?;
        iv.append(e)?;
    }
    d.set_item("intervals", iv)?;
    d.set_item("coverage", coverage_dict(py, r)?)?;
    Ok(d)
}

/// A simulated SSD. `SimDrive(params)` with params from
/// `ssdpts.simdrive.load_params()`.
#[pyclass(module = "ssdpts._sim")]
pub struct SimDrive {
    m: Model,
}

#[pymethods]
impl SimDrive {
    #[new]
    fn new(params: &Bound<'_, PyDict>) -> PyResult<Self> {
        let mut map = BTreeMap::new();
        for (k, v) in params.iter() {
            let key: String = k.extract().map_err(|_| verr("parameter keys must be strings"))?;
            if META_KEYS.contains(&key.as_str()) {
                continue;
            }
            if v.is_instance_of::<PyString>() {
                return Err(verr(format!("parameter '{key}' must be a number, got {v}")));
            }
            let f: f64 = v.extract().map_err(|_| verr(format!("parameter '{key}' must be a number, got {v}")))?;
            map.insert(key, f);
        }
        let p = Params::from_map(&map).map_err(verr)?;
        Ok(SimDrive { m: Model::new(p).map_err(verr)? })
    }

    /// User capacity in bytes.
    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.m.capacity_bytes()
    }

    /// Current simulated time (ns since power-on).
    #[getter]
    fn clock_ns(&self) -> u64 {
        self.m.clock
    }

    #[getter]
    fn logical_block_size(&self) -> u32 {
        self.m.p.logical_block_size
    }

    /// The numeric model parameters.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (k, v) in self.m.p.to_map() {
            let isint = Params::KEYS.iter().any(|e| e.0 == k && e.3);
            if isint {
                d.set_item(k, v as u64)?;
            } else {
                d.set_item(k, PyFloat::new_bound(py, v))?;
            }
        }
        Ok(d)
    }

    /// Derived geometry (superblocks, pages per superblock, ...).
    fn geometry<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.m;
        let d = PyDict::new_bound(py);
        d.set_item("dies", m.dies)?;
        d.set_item("pages_per_superblock", m.ppsb)?;
        d.set_item("slc_pages_per_superblock", m.slc_ppsb)?;
        d.set_item("native_superblocks", m.n_nat)?;
        d.set_item("static_slc_superblocks", m.n_static)?;
        d.set_item("dynamic_slc_max_superblocks", m.dyn_max_blocks)?;
        d.set_item("user_pages", m.user_pages)?;
        d.set_item("physical_bytes", m.n_blocks as u64 * m.ppsb as u64 * 4096)?;
        d.set_item("data_pages_effective", (m.user_pages as f64 * (1.0 + m.p.op_percent / 100.0)) as u64)?;
        Ok(d)
    }

    /// Run one job (all clones concurrently) from the drive's current clock.
    fn run_job<'py>(&mut self, py: Python<'py>, job: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let spec = parse_job(job)?;
        let m = &mut self.m;
        let r = py.allow_threads(|| run_job(m, &spec)).map_err(verr)?;
        let c = self.m.counters();
        result_dict(py, &r, &c)
    }

    /// Advance the clock with no host I/O (idle GC / SLC folding may run).
    fn idle(&mut self, py: Python<'_>, seconds: f64) -> PyResult<()> {
        if !(seconds >= 0.0) || !seconds.is_finite() {
            return Err(verr(format!("idle seconds must be >= 0, got {seconds}")));
        }
        let m = &mut self.m;
        py.allow_threads(|| m.idle((seconds * 1e9).round() as u64));
        Ok(())
    }

    /// Fresh-out-of-box state (mapping cleared, all blocks erased).
    fn purge(&mut self) {
        self.m.purge();
    }

    /// Unmap the 4 KiB pages fully inside [offset, offset+length).
    fn trim(&mut self, offset: u64, length: u64) -> PyResult<()> {
        if offset.saturating_add(length) > self.m.capacity_bytes() {
            return Err(verr("trim range beyond capacity"));
        }
        self.m.trim(offset, length);
        Ok(())
    }

    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters_dict(py, &self.m.counters())
    }

    /// Submit a single I/O at simulated time `at_ns` (>= the clock; used by
    /// the NBD server). op: "read" | "write" | "trim" | "flush". Returns the
    /// completion time in ns. The clock moves to max(clock, at_ns).
    fn submit(&mut self, op: &str, offset: u64, length: u64, at_ns: u64) -> PyResult<u64> {
        let m = &mut self.m;
        if offset.saturating_add(length) > m.capacity_bytes() {
            return Err(verr("I/O beyond capacity"));
        }
        let t = at_ns.max(m.clock);
        m.clock = t;
        Ok(match op {
            "read" if length > 0 => m.read_io(t, offset, length),
            "write" if length > 0 => m.write_io(t, offset, length),
            "read" | "write" => t,
            "trim" => {
                m.trim(offset, length);
                t + m.p.ctrl_cmd_ns + m.p.host_overhead_ns
            }
            "flush" => t.max(m.busy_until()),
            _ => return Err(verr(format!("op '{op}' not one of read|write|trim|flush"))),
        })
    }

    fn check_invariants(&self) -> PyResult<()> {
        self.m.check_invariants().map_err(verr)
    }

    fn snapshot<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new_bound(py, &crate::snapshot::snapshot(&self.m))
    }

    /// The snapshot of what determines future performance (wear, lifetime counters and the clock
    /// left out): equal for a new drive and a purged one of the same parameters.
    fn performance_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new_bound(py, &crate::snapshot::performance_state(&self.m))
    }

    /// Hot/cold pools and host-page counts since the purge (`Model::pools`), and the unwritten pages of
    /// the native pool (free blocks and open-block tails).
    fn pools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.m.pools();
        let d = PyDict::new_bound(py);
        d.set_item("hot_physical_pages", p.hot_physical_pages)?;
        d.set_item("hot_live_pages", p.hot_live_pages)?;
        d.set_item("cold_physical_pages", p.cold_physical_pages)?;
        d.set_item("cold_live_pages", p.cold_live_pages)?;
        d.set_item("free_pages", p.free_pages)?;
        d.set_item("host_pages", p.host_pages)?;
        d.set_item("hot_writes", p.hot_writes)?;
        d.set_item("empty_pages", self.m.empty_pages())?;
        Ok(d)
    }

    #[staticmethod]
    fn restore(blob: &[u8]) -> PyResult<SimDrive> {
        Ok(SimDrive { m: crate::snapshot::restore(blob).map_err(verr)? })
    }

    fn __repr__(&self) -> String {
        format!(
            "SimDrive(capacity={} B, superblocks={}, clock={} ns)",
            self.m.capacity_bytes(),
            self.m.n_blocks,
            self.m.clock
        )
    }
}

/// Lambert W0 and the greedy-GC write amplification (for tests / docs).
#[pyfunction]
fn greedy_wa(alpha: f64) -> f64 {
    crate::analytic::greedy_wa(alpha)
}

#[pyfunction]
fn lambert_w0(x: f64) -> PyResult<f64> {
    if x < -(-1.0f64).exp() - 1e-15 {
        return Err(verr("lambert_w0: x < -1/e"));
    }
    Ok(crate::analytic::lambert_w0(x))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SimDrive>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_wa, m)?)?;
    m.add_function(wrap_pyfunction!(lambert_w0, m)?)?;
    let keys = PyList::empty_bound(m.py());
    for (k, lo, hi, isint, doc) in Params::KEYS {
        keys.append((k, lo, hi, isint, doc))?;
    }
    m.add("PARAM_KEYS", keys)?;
    Ok(())
}
