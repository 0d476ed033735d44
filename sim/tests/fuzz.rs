//! proptest fuzz: random sequences of write/trim/read/idle/purge on a tiny
//! drive; the full invariant check runs after every operation (debug builds
//! check inside the model too).
use proptest::prelude::*;
use ssdsim::{Model, Params};

#[derive(Debug, Clone)]
enum Op {
    Write(u64, u64),
    Read(u64, u64),
    Trim(u64, u64),
    Idle(u64),
    Purge,
}

fn tiny(static_slc: bool, dyn_slc: bool, thr: u32, hot_cold: bool) -> Params {
    Params {
        user_capacity_bytes: 16 << 20, // 4096 pages
        op_percent: 12.0,
        channels: 2,
        dies_per_channel: 2,
        block_bytes: 96 << 10, // 24 pages/die, 96 pages per superblock
        page_bytes: if hot_cold { 4096 } else { 8192 },
        bits_per_cell: 3,
        native_program_unit_bytes: 24576,
        slc_program_unit_bytes: 8192,
        slc_static_bytes: if static_slc { 256 << 10 } else { 0 },
        slc_dynamic_max_bytes: if dyn_slc { 2 << 20 } else { 0 },
        slc_dynamic_fraction: 0.3,
        gc_threshold_blocks: thr,
        hot_cold: hot_cold as u32,
        planes: 1 + hot_cold as u32,
        suspend: 1,
        t_jitter_percent: 10.0,
        read_retry_percent: 5.0,
        idle_gc_mb_s: if hot_cold { 50 } else { 0 },
        idle_delay_ns: 1_000_000,
        idle_free_target_percent: 30.0,
        write_buffer_bytes: 64 << 10,
        ..Params::default()
    }
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let cap = 16u64 << 20;
    prop_oneof![
        8 => (0..cap / 512, 1u64..64).prop_map(move |(o, n)| { let o = o * 512; Op::Write(o, (n * 512).min(cap - o)) }),
        3 => (0..cap / 4096, 1u64..300).prop_map(move |(o, n)| { let o = o * 4096; Op::Write(o, (n * 4096).min(cap - o)) }),
        2 => (0..cap / 4096, 1u64..32).prop_map(move |(o, n)| { let o = o * 4096; Op::Read(o, (n * 4096).min(cap - o)) }),
        2 => (0..cap / 512, 1u64..4000).prop_map(move |(o, n)| { let o = o * 512; Op::Trim(o, (n * 512).min(cap - o)) }),
        1 => (0u64..500).prop_map(|ms| Op::Idle(ms * 1_000_000)),
        1 => Just(Op::Purge),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn invariants_hold(ops in prop::collection::vec(op_strategy(), 1..400),
                       st in any::<bool>(), dy in any::<bool>(), thr in 2u32..5, hc in any::<bool>()) {
        let mut m = Model::new(tiny(st, dy, thr, hc)).unwrap();
        let mut host_w = 0u64;
        for op in &ops {
            let t = m.clock;
            match *op {
                Op::Write(o, n) => { let c = m.write_io(t, o, n); prop_assert!(c > t); host_w += n; m.clock = c; }
                Op::Read(o, n) => { let c = m.read_io(t, o, n); prop_assert!(c > t); m.clock = c; }
                Op::Trim(o, n) => m.trim(o, n),
                Op::Idle(ns) => m.idle(ns),
                Op::Purge => m.purge(),
            }
            if let Err(e) = m.check_invariants() { prop_assert!(false, "after {:?}: {}", op, e); }
            let c = m.counters();
            prop_assert_eq!(c.host_write_bytes, host_w);
            prop_assert!(c.nand_write_bytes >= c.gc_moved_bytes);
            prop_assert!(c.live_bytes <= m.capacity_bytes());
            prop_assert!(c.free_blocks <= c.total_blocks);
        }
        // snapshot round trip preserves everything
        let snap = ssdsim::snapshot::snapshot(&m);
        let m2 = ssdsim::snapshot::restore(&snap).unwrap();
        prop_assert_eq!(ssdsim::snapshot::snapshot(&m2), snap);
    }
}
