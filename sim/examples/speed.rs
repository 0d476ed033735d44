//! Quick in-crate speed check (the authoritative bench is bench/sim.py):
//! steady-state 4 KiB random write on the 16 GiB client geometry, SLC off.
use ssdsim::{run_job, JobSpec, Model, Params, Rw};

/// CPU time of this thread (the machine is shared: wall time is noisy).
fn cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let gib: u64 = 1 << 30;
    let p = Params { user_capacity_bytes: std::env::var("GIB").map(|v| v.parse::<u64>().unwrap()).unwrap_or(16) * gib, slc_static_bytes: 0, slc_dynamic_max_bytes: 0, ..Params::default() };
    let mut m = Model::new(p).unwrap();
    let cap = m.capacity_bytes();
    let j = |rw, bs, qd, nj, io, seed| JobSpec { rw, bssplit: vec![(bs, 100)], iodepth: qd, numjobs: nj, io_size: io, seed, ..JobSpec::default() };
    run_job(&mut m, &j(Rw::Write, 131072, 8, 1, cap, 1)).unwrap();
    run_job(&mut m, &j(Rw::RandWrite, 4096, 32, 4, cap / 2, 2)).unwrap();
    println!("{}", thp());
    let nmeas: u64 = std::env::var("MEAS").map(|v| v.parse().unwrap()).unwrap_or(5);
    for i in 0..nmeas {
        let c0 = m.counters();
        let t = cpu_s();
        let r = run_job(&mut m, &j(Rw::RandWrite, 4096, 32, 4, cap / 16, 100 + i)).unwrap();
        let el = cpu_s() - t;
        let c1 = m.counters();
        let wa = (c1.nand_write_bytes - c0.nand_write_bytes) as f64 / (c1.host_write_bytes - c0.host_write_bytes) as f64;
        println!("steady randwrite {:.2} M/s  (sim {:.0} IOPS, WA {:.2})", r.write.ios as f64 / el / 1e6,
            r.write.ios as f64 / (r.runtime_ns as f64 / 1e9), wa);
    }
    let t = cpu_s();
    let r = run_job(&mut m, &j(Rw::RandRead, 4096, 32, 4, cap / 16, 7)).unwrap();
    println!("randread {:.2} M/s (sim {:.0} IOPS)", r.read.ios as f64 / (cpu_s() - t) / 1e6,
        r.read.ios as f64 / (r.runtime_ns as f64 / 1e9));
}
#[allow(dead_code)]
fn thp() -> String {
    std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default().lines().filter(|l| l.contains("AnonHuge") || l.starts_with("Rss")).collect::<Vec<_>>().join("; ")
}
