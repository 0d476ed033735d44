//! Non-uniform writes (zoned 80/20) with and without hot/cold separation,
//! checked against the per-pool greedy model of Desnoyers' hot/cold
//! analysis ("Analytic modeling of SSD write performance", SYSTOR 2012,
//! section on hot and cold data): with hot and cold data kept in separate
//! block pools, each pool is a uniform-random pool of its own, so
//!     WA = sum_i r_i * WA_greedy(alpha_i)
//! where r_i is the share of host writes going to pool i and alpha_i its
//! physical pages over its live pages. The test measures r_i and alpha_i in
//! the simulation (global greedy victim selection decides the split) and
//! compares the measured WA with the model. The model is a lower bound for
//! the simulation: its pools are uniform, the simulated ones are not quite
//! (the classifier sends ~4 % of hot writes to the cold pool, so the cold
//! pool keeps a little hot data). Stated bounds: model <= WA <= 1.2 x model;
//! separated WA below mixed; not below the model's optimal spare split.
mod common;
use common::*;
use ssdsim::analytic::greedy_wa;
use ssdsim::{run_job, JobSpec, Model, Params, Pools, Rw};

const OP: f64 = 12.5;

fn zoned(m: &mut Model, x_cap: f64, seed: u64) -> (f64, Pools, Pools) {
    let cap = m.capacity_bytes();
    let io = (cap as f64 * x_cap) as u64 / 4096 * 4096;
    let j = JobSpec { zones: vec![(80.0, 20.0), (20.0, 80.0)], seed, ..job(Rw::RandWrite, 4096, 32, io) };
    let c0 = m.counters();
    let p0 = m.pools();
    run_job(m, &j).unwrap();
    let c1 = m.counters();
    let wa = (c1.nand_write_bytes - c0.nand_write_bytes) as f64 / (c1.host_write_bytes - c0.host_write_bytes) as f64;
    (wa, p0, m.pools())
}

fn drive(hot_cold: u32) -> Model {
    let mut m = Model::new(Params { hot_cold, ..wa_params(OP, 2 * GIB) }).unwrap();
    fill_seq(&mut m);
    m
}

/// Minimum of r*WA(a_h) + (1-r)*WA(a_c) over spare splits with f*a_h + (1-f)*a_c = alpha.
fn optimal_split_wa(r: f64, f: f64, alpha: f64) -> f64 {
    let mut best = f64::MAX;
    for i in 1..2000 {
        let a_h = 1.0 + (alpha - 1.0) / f * i as f64 / 2000.0;
        let a_c = (alpha - f * a_h) / (1.0 - f);
        if a_c <= 1.0 {
            break;
        }
        best = best.min(r * greedy_wa(a_h) + (1.0 - r) * greedy_wa(a_c));
    }
    best
}

#[test]
fn hot_cold_separation_matches_per_pool_greedy_model() {
    // mixed (no separation)
    let mut m = drive(0);
    zoned(&mut m, 4.0, 1);
    let (wa_mixed, _, _) = zoned(&mut m, 4.0, 2);
    m.check_invariants().unwrap();

    // separated
    let mut m = drive(1);
    zoned(&mut m, 4.0, 1);
    let (wa_sep, p0, p1) = zoned(&mut m, 4.0, 2);
    m.check_invariants().unwrap();
    let r = (p1.hot_writes - p0.hot_writes) as f64 / (p1.host_pages - p0.host_pages) as f64;
    // each pool's physical pages, with the free blocks shared in proportion to the writes
    let a_h = (p1.hot_physical_pages as f64 + r * p1.free_pages as f64) / p1.hot_live_pages as f64;
    let a_c = (p1.cold_physical_pages as f64 + (1.0 - r) * p1.free_pages as f64) / p1.cold_live_pages as f64;
    let model = r * greedy_wa(a_h) + (1.0 - r) * greedy_wa(a_c);
    let live = (p1.hot_live_pages + p1.cold_live_pages) as f64;
    let f = p1.hot_live_pages as f64 / live;
    let alpha = (p1.hot_physical_pages + p1.cold_physical_pages + p1.free_pages) as f64 / live;
    let opt = optimal_split_wa(r, f, alpha);
    let uniform = greedy_wa(alpha);
    eprintln!(
        "80/20: mixed WA {wa_mixed:.3}; separated WA {wa_sep:.3}, model {model:.3} (r {r:.3}, f {f:.3}, \
         alpha_hot {a_h:.3}, alpha_cold {a_c:.3}); optimal split {opt:.3}; uniform at alpha {alpha:.3}: {uniform:.3}"
    );
    assert!(wa_sep >= model * 0.99 && wa_sep <= model * 1.2, "separated WA {wa_sep} vs per-pool model {model}");
    // the classifier (last two rewrite intervals < 1 capacity of writes) sends a hot page (rewritten every
    // 0.25 capacity on average) to the hot pool with probability (1 - e^-4)^2, a cold one (every 4) with
    // (1 - e^-1/4)^2: r = 0.8 (1 - e^-4)^2 + 0.2 (1 - e^-0.25)^2 = 0.781
    let r_expect = 0.8 * (1.0 - (-4.0f64).exp()).powi(2) + 0.2 * (1.0 - (-0.25f64).exp()).powi(2);
    assert!((r - r_expect).abs() < 0.01, "hot share {r} vs {r_expect}");
    assert!(wa_sep < wa_mixed, "separation must lower WA: {wa_sep} vs mixed {wa_mixed}");
    // greedy on mixed hot/cold data does worse than on uniform data at the same spare
    assert!(wa_mixed > greedy_wa(1.0 + OP / 100.0));
    assert!(wa_sep >= opt * 0.98, "cannot beat the optimal split: {wa_sep} vs {opt}");
}

#[test]
fn zoned_writes_split_as_asked() {
    // fresh drive: 20 000 random 4 KiB writes, 80 % to the first 20 % of the LBAs; the distinct
    // pages written in each zone follow from the split: N (1 - e^(-w/N)) per zone
    let mut m = Model::new(wa_params(OP, 2 * GIB)).unwrap();
    let cap = m.capacity_bytes();
    let w = 20_000u64;
    let j = JobSpec { zones: vec![(80.0, 20.0), (20.0, 80.0)], ..job(Rw::RandWrite, 4096, 1, w * 4096) };
    run_job(&mut m, &j).unwrap();
    let live = m.counters().live_bytes / 4096;
    m.trim(cap / 5 / 4096 * 4096, cap - cap / 5 / 4096 * 4096);
    let hot = m.counters().live_bytes / 4096;
    let n_hot = (cap / 5 / 4096) as f64;
    let n_cold = (cap / 4096) as f64 - n_hot;
    let e_hot = n_hot * (1.0 - (-(0.8 * w as f64) / n_hot).exp());
    let e_cold = n_cold * (1.0 - (-(0.2 * w as f64) / n_cold).exp());
    eprintln!("distinct pages: hot {hot} (expected {e_hot:.0}), cold {} (expected {e_cold:.0})", live - hot);
    // binomial spread of 20 000 draws: 3 sigma ~ 1 %
    assert!((hot as f64 / e_hot - 1.0).abs() < 0.02 && ((live - hot) as f64 / e_cold - 1.0).abs() < 0.04);
}
