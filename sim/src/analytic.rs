//! Closed-form reference values.

/// Principal branch W0 of the Lambert W function for x >= -1/e
/// (Halley iteration; accurate to ~1e-15).
pub fn lambert_w0(x: f64) -> f64 {
    let e_inv = (-1.0f64).exp();
    assert!(x >= -e_inv - 1e-15, "lambert_w0: x < -1/e");
    if x == 0.0 {
        return 0.0;
    }
    // initial guess: branch-point series near -1/e, log-based for large x
    let mut w = if x < -0.25 {
        let p = (2.0 * (1.0 + std::f64::consts::E * x)).max(0.0).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else if x < 3.0 {
        0.5 * (1.0 + x).ln().max(x * 0.5)
    } else {
        let l = x.ln();
        l - l.ln()
    };
    for _ in 0..100 {
        let ew = w.exp();
        let f = w * ew - x;
        let wp1 = w + 1.0;
        if wp1.abs() < 1e-300 {
            break;
        }
        let denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
        let dw = f / denom;
        w -= dw;
        if dw.abs() <= 1e-15 * (1.0 + w.abs()) {
            break;
        }
    }
    w
}

/// Write amplification of greedy GC under uniform random writes,
/// alpha = physical / logical = 1 + OP:
/// WA = alpha / (alpha + W0(-alpha * e^-alpha)).
pub fn greedy_wa(alpha: f64) -> f64 {
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn w0_identity() {
        for &x in &[-0.36787944117, -0.36, -0.3, -0.1, -1e-5, 1e-3, 0.5, 1.0, 2.0, 10.0, 1e3] {
            let w = lambert_w0(x);
            assert!((w * w.exp() - x).abs() < 1e-9 * (1.0 + x.abs()), "x={x} w={w}");
            assert!(w >= -1.0);
        }
        assert!((lambert_w0(1.0) - 0.5671432904097838).abs() < 1e-12);
    }
    #[test]
    fn wa_values() {
        // known reference points
        assert!((greedy_wa(1.07) - 7.817).abs() < 0.01, "{}", greedy_wa(1.07));
        assert!(greedy_wa(1.28) > 2.3 && greedy_wa(1.28) < 2.7);
        assert!(greedy_wa(3.0) < 1.1);
    }
}
