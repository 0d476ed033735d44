#![allow(dead_code)]
use ssdsim::{run_job, JobSpec, Model, Params, Rw};

pub const GIB: u64 = 1 << 30;

/// Small drive for WA tests: 4 dies, 1 MiB blocks -> 1024 pages per superblock, no SLC.
pub fn wa_params(op: f64, user_bytes: u64) -> Params {
    Params {
        user_capacity_bytes: user_bytes,
        op_percent: op,
        channels: 2,
        dies_per_channel: 2,
        block_bytes: 1 << 20,
        page_bytes: 16384,
        bits_per_cell: 2,
        native_program_unit_bytes: 65536,
        slc_program_unit_bytes: 32768,
        slc_static_bytes: 0,
        slc_dynamic_max_bytes: 0,
        idle_delay_ns: 1_000_000_000,
        ..Params::default()
    }
}

pub fn job(rw: Rw, bs: u64, qd: u32, io_size: u64) -> JobSpec {
    JobSpec { rw, bssplit: vec![(bs, 100)], iodepth: qd, io_size, ..JobSpec::default() }
}

pub fn fill_seq(m: &mut Model) {
    let cap = m.capacity_bytes();
    run_job(m, &JobSpec { size: cap, ..job(Rw::Write, 131072, 8, cap) }).unwrap();
}

/// Steady-state WA of uniform random 4K writes over [0, active) bytes.
pub fn measure_wa(m: &mut Model, offset: u64, active: u64, warm_x: f64, meas_x: f64, seed: u64) -> f64 {
    let w = (active as f64 * warm_x) as u64 / 4096 * 4096;
    let j = JobSpec { offset, size: active, seed, ..job(Rw::RandWrite, 4096, 32, w) };
    run_job(m, &j).unwrap();
    let c0 = m.counters();
    let w = (active as f64 * meas_x) as u64 / 4096 * 4096;
    let j = JobSpec { offset, size: active, seed: seed + 1, ..job(Rw::RandWrite, 4096, 32, w) };
    run_job(m, &j).unwrap();
    let c1 = m.counters();
    (c1.nand_write_bytes - c0.nand_write_bytes) as f64 / (c1.host_write_bytes - c0.host_write_bytes) as f64
}
