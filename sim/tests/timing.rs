//! Service-time mechanisms: page-type read times, jitter and read retry
//! (tails come from the model), multi-plane reads, program/erase suspend,
//! and the rate bound of idle GC. Every run is deterministic (fixed seeds);
//! the bounds below are derived from the parameters, not from a previous run.
mod common;
use common::*;
use ssdsim::stats::DirStats;
use ssdsim::{run_job, JobSpec, Model, Params, Rw};

const US: u64 = 1000;

/// 1 GiB TLC drive, 16 KiB plane pages, no SLC cache: reads hit native pages.
fn tlc(planes: u32) -> Params {
    Params {
        user_capacity_bytes: GIB,
        channels: 4,
        dies_per_channel: 2,
        block_bytes: 3 << 20,
        page_bytes: 16384,
        planes,
        bits_per_cell: 3,
        native_program_unit_bytes: 16384 * 3 * 2, // 2 planes' worth (also valid for 1 plane)
        slc_program_unit_bytes: 32768,
        t_read_ns: 50 * US,
        t_read_step_ns: 15 * US, // lower 50, middle 65, upper 80 µs
        slc_static_bytes: 0,
        slc_dynamic_max_bytes: 0,
        idle_delay_ns: 1_000_000_000_000,
        ..Params::default()
    }
}

/// Fixed part of a 4 KiB QD1 read: controller + channel transfer + host
/// overhead (the link transfer overlaps the NAND read).
fn fixed_read_ns(p: &Params) -> u64 {
    p.ctrl_cmd_ns + 4096 * 1000 / p.channel_mb_s + p.host_overhead_ns
}

fn qd1_reads(m: &mut Model, n: u64, seed: u64) -> DirStats {
    let j = JobSpec { seed, ..job(Rw::RandRead, 4096, 1, n * 4096) };
    run_job(m, &j).unwrap().read
}

fn pct(s: &DirStats, p: f64) -> u64 {
    s.percentiles(&[p])[0].1
}

#[test]
fn page_types_give_three_read_times() {
    // no jitter, no retry: an idle QD1 read takes exactly fixed + tR(type)
    let p = tlc(2);
    let mut m = Model::new(p.clone()).unwrap();
    fill_seq(&mut m);
    m.idle(1_000_000_000);
    let s = qd1_reads(&mut m, 30_000, 7);
    let fixed = fixed_read_ns(&p);
    let mut mass = [0u64; 3];
    for (i, &c) in s.bins.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let v = ssdsim::stats::idx_to_val(i);
        let k = (0..3).find(|&k| {
            let t = fixed + p.t_read_ns + k * p.t_read_step_ns;
            (v as f64 - t as f64).abs() <= t as f64 / 60.0 // one fio bucket
        });
        mass[k.unwrap_or_else(|| panic!("latency {v} ns is none of the three page-type times")) as usize] += c;
    }
    for k in 0..3 {
        let share = mass[k as usize] as f64 / s.ios as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.02, "page type {k}: share {share:.3}");
    }
}

#[test]
fn qd1_read_tail_comes_from_jitter_and_read_retry() {
    let p = Params { t_jitter_percent: 10.0, read_retry_percent: 1.0, read_retry_max: 3, ..tlc(2) };
    let mut m = Model::new(p.clone()).unwrap();
    fill_seq(&mut m);
    m.idle(1_000_000_000);
    let s = qd1_reads(&mut m, 200_000, 11);
    let fixed = fixed_read_ns(&p) as f64;
    let (lo, hi) = (p.t_read_ns as f64 * 0.9, (p.t_read_ns + 2 * p.t_read_step_ns) as f64 * 1.1);
    let (p50, p99, p999, p99999) = (pct(&s, 50.0), pct(&s, 99.0), pct(&s, 99.9), pct(&s, 99.999));
    eprintln!("QD1 read p50 {p50} p99 {p99} p99.9 {p999} p99.999 {p99999} max {} retries {}", s.max,
        m.counters().read_retry_count);
    // the bulk: one sense of some page type, within the jitter band (+1 fio bucket)
    assert!(p50 as f64 >= (fixed + lo) * 0.985 && p50 as f64 <= (fixed + hi) * 1.016);
    // 1 % of reads retry: p99 is at the edge of the bulk, p99.9 is a retried read
    assert!(p999 as f64 >= (fixed + 2.0 * lo) * 0.985, "p99.9 {p999} is not a retried read");
    assert!(p99999 as f64 >= (fixed + 3.0 * lo) * 0.985 && s.max as f64 <= (fixed + 4.0 * hi) * 1.016);
    assert!(p99 < p999 && p999 < p99999, "tail percentiles must differ");
    // ~1 % of the reads were retried (binomial, n = 200k: 3 sigma ~ 0.07 %)
    let share = m.counters().read_retry_count as f64 / s.ios as f64;
    assert!((share - 0.01).abs() < 0.0015, "retry share {share}");
}

#[test]
fn planes_multiply_random_read_iops() {
    // saturated random reads: IOPS ~ dies * planes / mean tR (closed queueing
    // network with 256 outstanding reads on 8 or 16 planes: > 90 % busy)
    let mut iops = vec![];
    for planes in [1u32, 2] {
        let p = Params { t_read_step_ns: 0, ctrl_cmd_ns: 100, link_mb_s: 100_000, channel_mb_s: 100_000, ..tlc(planes) };
        let mut m = Model::new(p.clone()).unwrap();
        fill_seq(&mut m);
        m.idle(1_000_000_000);
        let r = run_job(&mut m, &JobSpec { numjobs: 8, ..job(Rw::RandRead, 4096, 32, 400_000 * 4096) }).unwrap();
        let got = r.read.ios as f64 / (r.runtime_ns as f64 / 1e9);
        let cap = (8 * planes) as f64 / (p.t_read_ns as f64 / 1e9);
        eprintln!("planes {planes}: {got:.0} IOPS, closed form {cap:.0}");
        assert!(got <= cap * 1.001 && got >= cap * 0.90, "planes {planes}: {got} vs {cap}");
        iops.push(got);
    }
    assert!(iops[1] / iops[0] > 1.9);
}

/// Read latency percentiles under a 70/30 random mix on a full TLC drive.
fn mixed_read_tail(suspend: u32) -> (u64, u64, u64) {
    let p = Params { suspend, t_suspend_ns: 20 * US, ..tlc(2) };
    let mut m = Model::new(p).unwrap();
    fill_seq(&mut m);
    let j = JobSpec { rwmixread: 70, numjobs: 4, seed: 5, ..job(Rw::RandRw, 4096, 8, GIB / 2) };
    let r = run_job(&mut m, &j).unwrap();
    (pct(&r.read, 50.0), pct(&r.read, 99.9), m.counters().suspend_count)
}

#[test]
fn suspend_lowers_read_tail_under_mixed_load() {
    let (p50_off, p999_off, n_off) = mixed_read_tail(0);
    let (p50_on, p999_on, n_on) = mixed_read_tail(1);
    eprintln!("read p50/p99.9 without suspend {p50_off}/{p999_off}, with {p50_on}/{p999_on} ({n_on} suspends)");
    assert_eq!(n_off, 0);
    assert!(n_on > 0);
    // without suspend a read can wait for a whole tPROG (1.5 ms) or tBERS
    // (3.5 ms) backlog; with it, for tR + t_suspend per queued read
    assert!(p999_off > p999_on * 2, "suspend must cut p99.9 at least in half");
    assert!(p999_off >= Params::default().t_prog_ns);
    assert!(p50_on <= p50_off);
}

#[test]
fn idle_gc_rate_is_bounded_and_recovery_grows_with_idle_time() {
    let rate = 100; // MB/s
    let p = Params { idle_delay_ns: 50_000_000, idle_gc_mb_s: rate, idle_free_target_percent: 100.0, ..wa_params(7.0, GIB) };
    let mut m = Model::new(p).unwrap();
    fill_seq(&mut m);
    let cap = m.capacity_bytes();
    run_job(&mut m, &JobSpec { seed: 3, ..job(Rw::RandWrite, 4096, 32, cap) }).unwrap();
    let mut moved = vec![];
    for idle_s in [1u64, 2] {
        let mut mm = m.clone();
        let c0 = mm.counters();
        mm.idle(idle_s * 1_000_000_000);
        let c1 = mm.counters();
        let mv = c1.gc_moved_bytes - c0.gc_moved_bytes;
        let bound = rate as f64 * 1e6 * (idle_s as f64 - 0.05);
        eprintln!("idle {idle_s} s: moved {:.1} MB (bound {:.1} MB), free blocks {} -> {}", mv as f64 / 1e6, bound / 1e6,
            c0.free_blocks, c1.free_blocks);
        // paced at the rate: never above it (+ one 32-page chunk), and close to it while there is work
        assert!(mv as f64 <= bound + 32.0 * 4096.0 && mv as f64 >= 0.95 * bound);
        assert!(c1.free_blocks > c0.free_blocks);
        moved.push(mv);
    }
    let ratio = moved[1] as f64 / moved[0] as f64;
    assert!((ratio - 1.95 / 0.95).abs() < 0.05, "2 s idle moves {ratio:.3}x the 1 s idle work");
}
