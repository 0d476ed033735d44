//! fio-compatible latency histogram (json+ "bins") and percentiles.

pub const PLAT_BITS: u32 = 6;
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
pub const PLAT_GROUPS: usize = 29;
pub const PLAT_NR: usize = PLAT_GROUPS * PLAT_VAL as usize;

/// fio `plat_val_to_idx`.
#[inline(always)]
pub fn val_to_idx(val: u64) -> usize {
    let msb = if val == 0 { 0 } else { 63 - val.leading_zeros() };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as u64) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    let idx = base + offset;
    if idx < (PLAT_NR - 1) as u64 { idx as usize } else { PLAT_NR - 1 }
}

/// fio `plat_idx_to_val`: representative value (bucket middle).
pub fn idx_to_val(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx as u64 >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + PLAT_BITS as u64);
    let k = idx as u64 % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// Per-direction statistics.
#[derive(Clone, Debug)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub min: u64,
    pub max: u64,
    pub sum: u128,
    pub sumsq: u128,
    pub bins: Vec<u64>,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats { ios: 0, bytes: 0, min: u64::MAX, max: 0, sum: 0, sumsq: 0, bins: vec![0; PLAT_NR] }
    }
}

impl DirStats {
    #[inline(always)]
    pub fn add(&mut self, lat: u64, bytes: u64) {
        self.ios += 1;
        self.bytes += bytes;
        if lat < self.min {
            self.min = lat;
        }
        if lat > self.max {
            self.max = lat;
        }
        self.sum += lat as u128;
        self.sumsq += (lat as u128) * (lat as u128);
        self.bins[val_to_idx(lat)] += 1;
    }

    pub fn mean(&self) -> f64 {
        if self.ios == 0 { 0.0 } else { self.sum as f64 / self.ios as f64 }
    }

    /// Sample standard deviation (fio uses n-1).
    pub fn stddev(&self) -> f64 {
        if self.ios < 2 {
            return 0.0;
        }
        let n = self.ios as f64;
        let mean = self.sum as f64 / n;
        let var = (self.sumsq as f64 - n * mean * mean) / (n - 1.0);
        if var > 0.0 { var.sqrt() } else { 0.0 }
    }

    /// fio `calc_clat_percentiles`: returns (percentile, value) in the order given.
    pub fn percentiles(&self, plist: &[f64]) -> Vec<(f64, u64)> {
        if self.ios == 0 || plist.is_empty() {
            return vec![];
        }
        let mut sorted: Vec<(usize, f64)> = plist.iter().copied().enumerate().collect();
        sorted.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
        let mut out = vec![0u64; plist.len()];
        let nr = self.ios as f64;
        let mut sum = 0u64;
        let mut j = 0;
        'outer: for i in 0..PLAT_NR {
            sum += self.bins[i];
            while sum as f64 >= sorted[j].1 / 100.0 * nr {
                out[sorted[j].0] = idx_to_val(i);
                j += 1;
                if j == sorted.len() {
                    break 'outer;
                }
            }
        }
        plist.iter().copied().zip(out).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn buckets_roundtrip() {
        for v in [0u64, 1, 63, 64, 127, 128, 129, 1000, 123456, 1 << 30, u64::MAX / 2] {
            let i = val_to_idx(v);
            let r = idx_to_val(i);
            if v < 128 {
                assert_eq!(r, v);
            } else if i < PLAT_NR - 1 {
                // representative within ~1/64 of the value
                assert!((r as f64 - v as f64).abs() <= v as f64 / 60.0, "{v} -> {i} -> {r}");
            }
        }
        // monotone
        let mut last = 0;
        for v in (0..10_000_000u64).step_by(997) {
            let i = val_to_idx(v);
            assert!(i >= last);
            last = i;
        }
    }
}
