//! Simulated SSD core for ssdpts. The FTL model lives in this crate; the
//! `python` feature exposes it to Python as `ssdpts._sim`.
//!
//! * [`params`] — flat drive parameters (bytes, ns, counts)
//! * [`model`]  — page-mapped FTL, greedy GC, SLC cache, timing reservations
//! * [`engine`] — closed-loop fio-like job engine in simulated time
//! * [`stats`]  — fio json+ latency histogram and percentiles
//! * [`analytic`] — Lambert W and the greedy-GC write-amplification formula

pub mod analytic;
pub mod engine;
pub mod model;
pub mod params;
pub mod snapshot;
pub mod stats;

pub use engine::{run_job, JobResult, JobSpec, Rw};
pub use model::{Counters, Model, Pools};
pub use params::Params;

#[cfg(feature = "python")]
mod python;
