mod common;
use common::*;
use ssdsim::analytic::greedy_wa;
use ssdsim::{run_job, JobSpec, Model, Params, Rw};

#[test]
fn sequential_overwrite_wa_is_exactly_one() {
    let mut m = Model::new(wa_params(7.0, GIB / 2)).unwrap();
    fill_seq(&mut m);
    let c0 = m.counters();
    for _ in 0..3 {
        fill_seq(&mut m);
    }
    let c1 = m.counters();
    assert_eq!(c1.nand_write_bytes - c0.nand_write_bytes, c1.host_write_bytes - c0.host_write_bytes);
    assert_eq!(c1.gc_moved_bytes, 0);
    m.check_invariants().unwrap();
}

/// Random writes confined to an active range, and random writes after TRIM:
/// WA follows the greedy formula with alpha = (physical - cold live data) / hot data.
#[test]
fn effective_op_from_active_range_and_trim() {
    let op = 7.0;
    let user = GIB;
    let phys = |m: &Model| m.user_pages as f64 * (1.0 + op / 100.0);
    // (a) purge, then random writes over the first 60% only (never-written rest)
    let mut m = Model::new(wa_params(op, user)).unwrap();
    let cap = m.capacity_bytes();
    let active = cap / 10 * 6 / 4096 * 4096;
    run_job(&mut m, &JobSpec { size: active, ..job(Rw::Write, 131072, 8, active) }).unwrap();
    let wa = measure_wa(&mut m, 0, active, 3.0, 3.0, 5);
    let alpha = phys(&m) / (active / 4096) as f64;
    let e = greedy_wa(alpha);
    eprintln!("active 60%: WA {wa:.3} analytic {e:.3} (alpha {alpha:.3})");
    assert!((wa / e - 1.0).abs() < 0.03);
    // (b) full drive, then random writes over 60%: the other 40% is cold live data
    let mut m = Model::new(wa_params(op, user)).unwrap();
    fill_seq(&mut m);
    let wa = measure_wa(&mut m, 0, active, 4.0, 3.0, 6);
    let cold = (cap - active) as f64 / 4096.0;
    let alpha = (phys(&m) - cold) / (active / 4096) as f64;
    let e = greedy_wa(alpha);
    eprintln!("cold 40%: WA {wa:.3} analytic {e:.3} (alpha {alpha:.3})");
    assert!((wa / e - 1.0).abs() < 0.03);
    // (c) full drive, TRIM the last 50%, random writes over the first 50%
    let mut m = Model::new(wa_params(op, user)).unwrap();
    fill_seq(&mut m);
    measure_wa(&mut m, 0, cap, 1.0, 0.01, 7);
    let half = cap / 2;
    m.trim(half, cap - half);
    assert_eq!(m.counters().live_bytes, half);
    let wa = measure_wa(&mut m, 0, half, 3.0, 3.0, 8);
    let alpha = phys(&m) / (half / 4096) as f64;
    let e = greedy_wa(alpha);
    eprintln!("trim 50%: WA {wa:.3} analytic {e:.3} (alpha {alpha:.3})");
    assert!((wa / e - 1.0).abs() < 0.03);
    m.check_invariants().unwrap();
}

/// Closed-form throughput of the timing model for a fresh drive.
fn closed_form_write_iops(p: &Params, bs: u64, slc: bool) -> f64 {
    let dies = (p.channels * p.dies_per_channel) as f64;
    let (unit, tprog) = if slc {
        (p.slc_program_unit_bytes as f64, p.t_prog_slc_ns as f64)
    } else {
        (p.native_program_unit_bytes as f64, p.t_prog_ns as f64)
    };
    let pages = (bs as f64 / 4096.0).ceil();
    let nand = dies * unit / 4096.0 / tprog * 1e9 / pages;
    let chan = p.channels as f64 * 1e9 / ((4096 * 1000 / p.channel_mb_s) as f64 * pages);
    let ctrl = if p.ctrl_cmd_ns > 0 { 1e9 / p.ctrl_cmd_ns as f64 } else { f64::INFINITY };
    let link = 1e9 / (bs * 1000 / p.link_mb_s) as f64;
    nand.min(chan).min(ctrl).min(link)
}

#[test]
fn fresh_drive_iops_match_closed_form() {
    // native (no SLC) random write, SLC random write, random read of mapped data
    let pn = Params { user_capacity_bytes: 4 * GIB, slc_static_bytes: 0, slc_dynamic_max_bytes: 0, ..Params::default() };
    let mut m = Model::new(pn.clone()).unwrap();
    let r = run_job(&mut m, &JobSpec { runtime_ns: 500_000_000, numjobs: 4, ..job(Rw::RandWrite, 4096, 64, 0) }).unwrap();
    let iops = r.write.ios as f64 / (r.runtime_ns as f64 / 1e9);
    let cf = closed_form_write_iops(&pn, 4096, false);
    eprintln!("native randwrite: {iops:.0} vs closed form {cf:.0}");
    assert!((iops / cf - 1.0).abs() < 0.02);

    let ps = Params { user_capacity_bytes: 4 * GIB, ..Params::default() };
    let mut m = Model::new(ps.clone()).unwrap();
    let r = run_job(&mut m, &JobSpec { runtime_ns: 200_000_000, numjobs: 4, ..job(Rw::RandWrite, 4096, 64, 0) }).unwrap();
    let iops = r.write.ios as f64 / (r.runtime_ns as f64 / 1e9);
    let cf = closed_form_write_iops(&ps, 4096, true);
    eprintln!("SLC randwrite: {iops:.0} vs closed form {cf:.0}");
    assert!((iops / cf - 1.0).abs() < 0.02);

    let mut m = Model::new(pn.clone()).unwrap();
    fill_seq(&mut m);
    m.idle(1_000_000_000);
    // random die selection in a closed loop idles dies with probability ~(D-1)/(N+D-1):
    // use N = 2048 outstanding reads so the die-limited bound applies
    let r = run_job(&mut m, &JobSpec { runtime_ns: 300_000_000, numjobs: 32, ..job(Rw::RandRead, 4096, 64, 0) }).unwrap();
    let iops = r.read.ios as f64 / (r.runtime_ns as f64 / 1e9);
    let dies = (pn.channels * pn.dies_per_channel) as f64;
    let cf = (dies * 1e9 / pn.t_read_ns as f64).min(1e9 / pn.ctrl_cmd_ns as f64);
    eprintln!("randread: {iops:.0} vs closed form {cf:.0}");
    assert!((iops / cf - 1.0).abs() < 0.02);

    // QD1 latency = fixed costs (write: ctrl + link + overhead; buffered)
    let mut m = Model::new(pn.clone()).unwrap();
    let r = run_job(&mut m, &JobSpec { io_size: 4096 * 1000, ..job(Rw::RandWrite, 4096, 1, 0) }).unwrap();
    let lat = pn.ctrl_cmd_ns + 4096 * 1000 / pn.link_mb_s + pn.host_overhead_ns;
    assert_eq!(r.write.min, lat);
    assert!((r.write.mean() - lat as f64).abs() < 1.0);
}

#[test]
fn determinism_and_snapshot() {
    let p = Params { user_capacity_bytes: GIB, ..Params::default() };
    let run = |m: &mut Model| {
        let r1 = run_job(m, &JobSpec { runtime_ns: 300_000_000, numjobs: 2, seed: 9, ..job(Rw::RandRw, 4096, 16, 0) }).unwrap();
        m.idle(500_000_000);
        let r2 = run_job(m, &JobSpec { bssplit: vec![(4096, 50), (65536, 50)], io_size: 200 << 20, ..job(Rw::RandWrite, 4096, 8, 0) }).unwrap();
        (r1.write.bins.clone(), r1.read.sum, r2.write.sum, r2.write.sumsq, r2.runtime_ns, m.counters())
    };
    let mut a = Model::new(p.clone()).unwrap();
    let mut b = Model::new(p.clone()).unwrap();
    fill_seq(&mut a);
    fill_seq(&mut b);
    let snap = ssdsim::snapshot::snapshot(&a);
    let mut c = ssdsim::snapshot::restore(&snap).unwrap();
    let ra = run(&mut a);
    let rb = run(&mut b);
    let rc = run(&mut c);
    assert_eq!(ra, rb);
    assert_eq!(ra, rc);
    assert_eq!(ssdsim::snapshot::snapshot(&a), ssdsim::snapshot::snapshot(&c));
    c.check_invariants().unwrap();
}

#[test]
fn params_without_the_newer_keys_keep_the_old_behaviour() {
    let mut m = Params::default().to_map();
    for k in ssdsim::params::OPTIONAL {
        assert!(m.remove(*k).is_some(), "{k} is not a parameter");
    }
    assert_eq!(Params::from_map(&m).unwrap(), Params::default());
    m.remove("t_prog_ns");
    assert!(Params::from_map(&m).unwrap_err().contains("missing parameter 't_prog_ns'"));
}

/// A purge returns the drive to the state of a new one (wear, lifetime counters and the clock aside), with
/// hot/cold separation, SLC, jitter and read retry on, and the same job then gives the same result.
#[test]
fn purge_restores_the_fresh_performance_state() {
    let p = Params {
        hot_cold: 1,
        slc_static_bytes: 4 << 20,
        slc_dynamic_max_bytes: 16 << 20,
        t_jitter_percent: 8.0,
        read_retry_percent: 1.0,
        ..wa_params(7.0, GIB / 4)
    };
    let probe = |m: &mut Model| {
        let cap = m.capacity_bytes();
        let j = JobSpec { size: cap, seed: 7, runtime_ns: 2_000_000_000, ..job(Rw::RandRw, 4096, 8, 0) };
        run_job(m, &j).unwrap()
    };
    let mut fresh = Model::new(p.clone()).unwrap();
    let mut used = Model::new(p).unwrap();
    let cap = used.capacity_bytes();
    run_job(&mut used, &JobSpec { size: cap, seed: 3, ..job(Rw::RandWrite, 65536, 4, cap * 2) }).unwrap();
    used.idle(300_000_000);
    used.purge();
    fresh.purge();
    used.check_invariants().unwrap();
    assert!(used.counters().erase_count_total > 0 && used.counters().idle_ns > 0);
    let (u, f) = (ssdsim::snapshot::performance_state(&used), ssdsim::snapshot::performance_state(&fresh));
    let first_difference = u.iter().zip(&f).position(|(a, b)| a != b);
    assert!(u.len() == f.len() && first_difference.is_none(), "states differ at byte {first_difference:?} of {}", u.len());
    let (a, b) = (probe(&mut fresh), probe(&mut used));
    assert_eq!((a.read.ios, a.write.ios, a.write.bytes), (b.read.ios, b.write.ios, b.write.bytes));
}
