mod common;
use common::*;
use ssdsim::analytic::greedy_wa;
use ssdsim::Model;

#[test]
fn wa_uniform_random_matches_greedy_formula() {
    for &op in &[7.0, 12.5, 28.0, 50.0] {
        let mut m = Model::new(wa_params(op, 2 * GIB)).unwrap();
        assert!(m.ppsb >= 1000);
        fill_seq(&mut m);
        let cap = m.capacity_bytes();
        let t = std::time::Instant::now();
        let wa = measure_wa(&mut m, 0, cap, 4.0, 4.0, 42);
        let expect = greedy_wa(1.0 + op / 100.0);
        let err = (wa - expect) / expect;
        eprintln!("OP {op:5.1}%: WA sim {wa:.3} analytic {expect:.3} err {:+.2}% ({:?})", err * 100.0, t.elapsed());
        assert!(err.abs() < 0.03, "OP {op}: WA {wa} vs {expect}");
        m.check_invariants().unwrap();
    }
}
