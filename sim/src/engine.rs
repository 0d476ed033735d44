//! Closed-loop, fio-like job engine in simulated time.

use crate::model::Model;
use crate::stats::DirStats;

/// xoshiro256** seeded by splitmix64.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng { s: [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)] }
    }
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
    /// Uniform in [0, n) (Lemire multiply-high; negligible bias for n << 2^64).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    SeqRw,
}

impl Rw {
    pub fn parse(s: &str) -> Option<Rw> {
        Some(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            "rw" | "readwrite" => Rw::SeqRw,
            _ => return None,
        })
    }
    fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }
}

pub const DEFAULT_SEED: u64 = 0x5eed_55d9_7501_0001;

#[derive(Clone, Debug)]
pub struct JobSpec {
    pub name: String,
    pub rw: Rw,
    pub rwmixread: u32,
    /// (block size bytes, percent)
    pub bssplit: Vec<(u64, u32)>,
    pub numjobs: u32,
    pub iodepth: u32,
    pub offset: u64,
    /// 0 = to the end of the device; with `offset_increment`, each clone's own slice
    pub size: u64,
    /// clone c streams over [offset + c * offset_increment, + size) (fio offset_increment)
    pub offset_increment: u64,
    pub runtime_ns: u64,
    pub io_size: u64,
    /// (pct of I/O, pct of range)
    pub zones: Vec<(f64, f64)>,
    pub thinktime_ns: u64,
    pub thinktime_iotime_ns: u64,
    pub seed: u64,
    pub log_interval_ns: u64,
    pub percentiles: Vec<f64>,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: String::new(),
            rw: Rw::RandWrite,
            rwmixread: 50,
            bssplit: vec![(4096, 100)],
            numjobs: 1,
            iodepth: 1,
            offset: 0,
            size: 0,
            offset_increment: 0,
            runtime_ns: 0,
            io_size: 0,
            zones: vec![],
            thinktime_ns: 0,
            thinktime_iotime_ns: 0,
            seed: DEFAULT_SEED,
            log_interval_ns: 0,
            percentiles: vec![99.0, 99.9, 99.99, 99.999],
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interval {
    pub t_ns: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub lat_sum: u128,
    pub lat_max: u64,
}

impl Interval {
    pub fn lat_mean(&self) -> f64 {
        let n = self.read_ios + self.write_ios;
        if n == 0 { 0.0 } else { self.lat_sum as f64 / n as f64 }
    }
}

#[derive(Clone, Debug)]
pub struct JobResult {
    pub name: String,
    pub start_ns: u64,
    pub runtime_ns: u64,
    pub read: DirStats,
    pub write: DirStats,
    pub intervals: Vec<Interval>,
    pub percentiles: Vec<f64>,
    pub coverage: Coverage,
}

/// The LBAs a job touched, one bit per granule of its whole range (all clones' slices): the granule is the
/// largest unit every I/O's offset and length are multiples of, coarsened only when the range would need
/// more than MAX_COVERAGE_BITS (a partly touched granule then counts whole; `granule` says so).
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub start: u64,
    pub len: u64,
    pub granule: u64,
    shift: u32,
    bits: Vec<u64>,
    pub lowest: u64,
    pub highest_end: u64,
}

pub const MAX_COVERAGE_BITS: u64 = 1 << 28; // 32 MiB of bitmap at most

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Coverage {
    pub fn new(start: u64, len: u64, unit: u64) -> Coverage {
        // a power of two dividing `unit` (its lowest set bit), so marking shifts instead of dividing
        let mut shift = unit.max(1).trailing_zeros();
        while len >> shift > MAX_COVERAGE_BITS {
            shift += 1;
        }
        let granule = 1u64 << shift;
        let nbits = (len + granule - 1) >> shift;
        Coverage { start, len, granule, shift, bits: vec![0; ((nbits + 63) / 64) as usize], lowest: u64::MAX, highest_end: 0 }
    }
    #[inline(always)]
    pub fn mark(&mut self, off: u64, bs: u64) {
        self.lowest = self.lowest.min(off);
        self.highest_end = self.highest_end.max(off + bs);
        let mut i = (off - self.start) >> self.shift;
        let b = (off + bs - self.start + self.granule - 1) >> self.shift;
        if b == i + 1 {
            self.bits[(i >> 6) as usize] |= 1u64 << (i & 63);
            return;
        }
        while i < b {
            let lo = i & 63;
            let n = (64 - lo).min(b - i);
            let mask = if n == 64 { !0u64 } else { ((1u64 << n) - 1) << lo };
            self.bits[(i >> 6) as usize] |= mask;
            i += n;
        }
    }
    /// Prefetch the bitmap word of an I/O generated ahead (random jobs: the word is a cache miss otherwise).
    #[inline(always)]
    pub fn prefetch(&self, off: u64) {
        let w = ((off - self.start) >> self.shift >> 6) as usize;
        if w < self.bits.len() {
            crate::model::prefetch_w(&self.bits[w]);
        }
    }
    /// Bytes of the range touched at least once (whole granules).
    pub fn touched_bytes(&self) -> u64 {
        let n: u64 = self.bits.iter().map(|w| w.count_ones() as u64).sum();
        (n * self.granule).min(self.len)
    }
}

/// The job's pending events, one at most per I/O slot (its completion or the end of its think
/// time), in a tournament tree: leaf `slot` holds the slot's event key (u64::MAX for none) and
/// every inner node the smaller of its children, so the root is the next event. Changing a slot's
/// event recomputes its path (one branch-free min a level), where a binary heap's sift compares
/// twice a level and branches. Keys are distinct, so the order of events is the same as with any
/// other priority queue.
struct EventTree {
    /// leaves at [n, 2n) (n a power of two >= the slot count); node i has children 2i and 2i + 1
    t: Vec<u64>,
    n: usize,
}

impl EventTree {
    fn new(slots: usize) -> EventTree {
        let n = slots.next_power_of_two().max(2);
        EventTree { t: vec![u64::MAX; 2 * n], n }
    }
    /// The next event's key (None when no slot has one).
    #[inline(always)]
    fn next(&self) -> Option<u64> {
        let k = self.t[1];
        if k == u64::MAX { None } else { Some(k) }
    }
    /// Set (u64::MAX: clear) the event of `slot`.
    #[inline(always)]
    fn set(&mut self, slot: usize, key: u64) {
        let mut i = self.n + slot;
        assert!(i < self.t.len());
        let t = self.t.as_mut_ptr();
        // SAFETY: i < 2n = t.len() (checked), and every index on the path from it to the root is smaller
        unsafe {
            *t.add(i) = key;
            let mut m = key;
            while i > 1 {
                m = m.min(*t.add(i ^ 1));
                i >>= 1;
                *t.add(i) = m;
            }
        }
    }
}

struct CloneState {
    rng: Rng,
    start: u64,
    end: u64,
    seq_pos: u64,
    issued: u64,
    inflight: u32,
    period_start: u64,
    thinking: bool,
    stopped: bool,
}


impl JobSpec {
    pub fn validate(&self, capacity: u64) -> Result<(), String> {
        if self.bssplit.is_empty() {
            return Err("bs/bssplit must not be empty".into());
        }
        let tot: u32 = self.bssplit.iter().map(|x| x.1).sum();
        if tot != 100 {
            return Err(format!("bssplit percentages sum to {tot}, must be 100"));
        }
        for &(bs, _) in &self.bssplit {
            if bs == 0 || bs % 512 != 0 {
                return Err(format!("block size {bs} must be a positive multiple of 512"));
            }
        }
        if self.rwmixread > 100 {
            return Err(format!("rwmixread {} must be in 0..100", self.rwmixread));
        }
        if self.numjobs == 0 || self.iodepth == 0 || (self.numjobs as u64) * (self.iodepth as u64) >= (1 << 24) {
            return Err("numjobs and iodepth must be >= 1 (and numjobs*iodepth < 2^24)".into());
        }
        if self.runtime_ns == 0 && self.io_size == 0 {
            return Err("at least one of runtime_ns and io_size must be non-zero".into());
        }
        if self.offset % 512 != 0 || self.offset >= capacity {
            return Err(format!("offset {} must be a multiple of 512 below capacity {capacity}", self.offset));
        }
        let size = if self.size == 0 { capacity - self.offset } else { self.size };
        if self.offset_increment % 512 != 0 {
            return Err(format!("offset_increment {} must be a multiple of 512", self.offset_increment));
        }
        let last = self.offset + self.offset_increment * (self.numjobs as u64 - 1) + size;
        if last > capacity {
            return Err(format!("offset+size {last} (of the last clone) exceeds capacity {capacity}"));
        }
        let maxbs = self.bssplit.iter().map(|x| x.0).max().unwrap();
        if maxbs > size {
            return Err(format!("block size {maxbs} larger than region size {size}"));
        }
        if !self.zones.is_empty() {
            let a: f64 = self.zones.iter().map(|z| z.0).sum();
            let b: f64 = self.zones.iter().map(|z| z.1).sum();
            if (a - 100.0).abs() > 1e-6 || b > 100.0 + 1e-6 || self.zones.iter().any(|z| z.0 < 0.0 || z.1 <= 0.0) {
                return Err("zones: pct_of_io must sum to 100 and pct_of_range be > 0 with sum <= 100".into());
            }
        }
        for &p in &self.percentiles {
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("percentile {p} must be in (0, 100]"));
            }
        }
        Ok(())
    }
}

/// Run one job (all clones concurrently) from the model's current clock.
pub fn run_job(model: &mut Model, job: &JobSpec) -> Result<JobResult, String> {
    let cap = model.capacity_bytes();
    job.validate(cap)?;
    let start = job.offset;
    let size = if job.size == 0 { cap - job.offset } else { job.size };
    let end = start + size;
    let align = job.bssplit.iter().map(|x| x.0).min().unwrap();
    let fixed_bs = if job.bssplit.len() == 1 { job.bssplit[0].0 } else { 0 };
    let mut bs_cum: Vec<(u32, u64)> = vec![];
    {
        let mut c = 0;
        for &(bs, p) in &job.bssplit {
            c += p;
            bs_cum.push((c, bs));
        }
    }
    // zones: (cum pct_of_io * 2^32 / 100, zone start, zone slots)
    let mut zones: Vec<(u64, u64, u64)> = vec![];
    {
        let mut cum = 0.0;
        let mut zs = start;
        for &(pio, prange) in &job.zones {
            cum += pio;
            // zone boundaries on the block grid (as fio's block-based zones): an
            // unaligned boundary would make every I/O of the next zone straddle
            // two 4 KiB pages
            let zlen = ((size as f64) * prange / 100.0) as u64 / align * align;
            let zend = (zs + zlen).min(end);
            zones.push((((cum / 100.0) * 4294967296.0) as u64, zs, zend - zs));
            zs = zend;
        }
        if let Some(l) = zones.last_mut() {
            l.0 = u64::MAX;
        }
    }
    let rand = job.rw.random();
    // random offsets of a fixed block size: slots in the region (no division per I/O)
    let n_fixed = if fixed_bs != 0 { (size - fixed_bs) / align + 1 } else { 0 };
    let t0 = model.clock;
    let nclones = job.numjobs as usize;
    let inc = job.offset_increment;
    let mut unit = job.bssplit.iter().fold(gcd(start, inc), |g, x| gcd(g, x.0));
    if unit == 0 {
        unit = align;
    }
    let mut coverage = Coverage::new(start, inc * (nclones as u64 - 1) + size, unit);
    let qd = job.iodepth as usize;
    let nslots = nclones * qd;
    let mut clones: Vec<CloneState> = (0..nclones)
        .map(|c| CloneState {
            rng: Rng::new(job.seed ^ (c as u64).wrapping_mul(0x9e3779b97f4a7c15).wrapping_add(c as u64)),
            start: start + inc * c as u64,
            end: start + inc * c as u64 + size,
            seq_pos: start + inc * c as u64,
            issued: 0,
            inflight: 0,
            period_start: t0,
            thinking: false,
            stopped: false,
        })
        .collect();
    // the clone of each I/O slot (a table: a division per event costs more)
    let clone_of: Vec<u32> = (0..nslots).map(|s| (s / qd) as u32).collect();
    let mut sub_t = vec![0u64; nslots];
    let mut sub_bytes = vec![0u64; nslots];
    let mut sub_read = vec![false; nslots];
    // Event keys are u64: (time - t0) << key_bits | resume flag | slot, so the
    // heap compares one machine word (time ties are broken by slot, as before).
    let slot_bits = 64 - (nslots as u64).leading_zeros();
    let key_bits = slot_bits + 1;
    let resume_flag = 1u64 << slot_bits;
    let slot_mask = resume_flag - 1;
    let max_rel = (1u64 << (64 - key_bits)) - 1;
    let mut too_long = false;
    macro_rules! key {
        ($t:expr, $slot:expr, $flag:expr) => {{
            let rel = $t - t0;
            if rel > max_rel {
                too_long = true;
            }
            (rel.min(max_rel) << key_bits) | $flag | $slot as u64
        }};
    }
    let mut events = EventTree::new(nslots);
    let mut rd = DirStats::default();
    let mut wr = DirStats::default();
    let li = job.log_interval_ns;
    let mut intervals: Vec<Interval> = vec![];
    let mut cur = Interval::default();
    let mut cur_idx = 0u64;
    let t_stop = if job.runtime_ns > 0 { t0.saturating_add(job.runtime_ns) } else { u64::MAX };
    let io_size = if job.io_size > 0 { job.io_size } else { u64::MAX };
    let mut inflight = 0u64;
    let mut last_t = t0;
    let mut end_t = t0;
    let think = job.thinktime_ns;
    let iotime = job.thinktime_iotime_ns;

    // generate the next I/O of clone `c`: (offset, bs, is_read)
    macro_rules! gen {
        ($c:expr) => {{
            let c: &mut CloneState = $c;
            let bs = if fixed_bs != 0 {
                fixed_bs
            } else {
                let r = c.rng.below(100) as u32;
                let mut b = bs_cum[bs_cum.len() - 1].1;
                for &(cp, bsv) in &bs_cum {
                    if r < cp {
                        b = bsv;
                        break;
                    }
                }
                b
            };
            let off = if rand {
                if zones.is_empty() {
                    let n = if fixed_bs != 0 { n_fixed } else { (size - bs) / align + 1 };
                    c.start + c.rng.below(n) * align
                } else {
                    let r = c.rng.next_u64() >> 32;
                    let mut zi = zones.len() - 1;
                    for (i, z) in zones.iter().enumerate() {
                        if r < z.0 {
                            zi = i;
                            break;
                        }
                    }
                    let (_, zs, zl) = zones[zi];
                    let zl = zl.max(bs).min(end - zs);
                    let n = (zl - bs) / align + 1;
                    c.start - start + zs + c.rng.below(n) * align
                }
            } else {
                if c.seq_pos + bs > c.end {
                    c.seq_pos = c.start; // fio wraps to the clone's offset
                }
                let o = c.seq_pos;
                c.seq_pos += bs;
                o
            };
            let is_read = match job.rw {
                Rw::Read | Rw::RandRead => true,
                Rw::Write | Rw::RandWrite => false,
                _ => c.rng.below(100) < job.rwmixread as u64,
            };
            (off, bs, is_read)
        }};
    }

    // Random jobs pre-generate two I/Os per slot so that their mapping
    // entries can be prefetched (performance only; the sequence of I/Os
    // is still a deterministic function of the seed).
    let mut la0: Vec<(u64, u64, bool)> = vec![(0, 0, false); if rand { nslots } else { 0 }];
    let mut la1: Vec<(u64, u64, bool)> = vec![(0, 0, false); if rand { nslots } else { 0 }];
    if rand {
        for slot in 0..nslots {
            la0[slot] = gen!(&mut clones[slot / qd]);
            la1[slot] = gen!(&mut clones[slot / qd]);
            model.prefetch_map(la0[slot].0);
            model.prefetch_map(la1[slot].0);
        }
    }

    // submit one I/O on `slot` at time t; evaluates to its completion event
    // (None if the clone stops)
    macro_rules! submit {
        ($slot:expr, $t:expr) => {{
            let slot: usize = $slot;
            let t: u64 = $t;
            let ci = clone_of[slot] as usize;
            if clones[ci].stopped || t >= t_stop || clones[ci].issued >= io_size {
                clones[ci].stopped = true;
                None
            } else {
                let (off, bs, is_read) = if rand {
                    let io = la0[slot];
                    la0[slot] = la1[slot];
                    model.prefetch_rmap(la0[slot].0);
                    la1[slot] = gen!(&mut clones[ci]);
                    model.prefetch_map(la1[slot].0);
                    coverage.prefetch(la1[slot].0);
                    io
                } else {
                    gen!(&mut clones[ci])
                };
                let c = &mut clones[ci];
                c.issued += bs;
                c.inflight += 1;
                coverage.mark(off, bs);
                let done = if is_read { model.read_io(t, off, bs) } else { model.write_io(t, off, bs) };
                sub_t[slot] = t;
                sub_bytes[slot] = bs;
                sub_read[slot] = is_read;
                inflight += 1;
                Some(key!(done, slot, 0))
            }
        }};
    }

    for slot in 0..nslots {
        if let Some(k) = submit!(slot, t0) {
            events.set(slot, k);
        }
    }
    // a handled event is replaced by the slot's next one (or cleared)
    while let Some(k) = events.next() {
        let t = t0 + (k >> key_bits);
        let key = k & (resume_flag | slot_mask);
        if inflight == 0 && t > last_t {
            model.background(last_t, t);
        }
        if t > last_t {
            last_t = t;
        }
        let slot = (key & slot_mask) as usize;
        let ci = clone_of[slot] as usize;
        if key & resume_flag != 0 {
            clones[ci].period_start = clones[ci].period_start.max(t);
            let nk = submit!(slot, t);
            events.set(slot, nk.unwrap_or(u64::MAX));
            continue;
        }
        // completion
        inflight -= 1;
        clones[ci].inflight -= 1;
        let lat = t - sub_t[slot];
        let bytes = sub_bytes[slot];
        if sub_read[slot] {
            rd.add(lat, bytes);
        } else {
            wr.add(lat, bytes);
        }
        end_t = t;
        if li > 0 {
            let idx = (t - t0) / li;
            while idx > cur_idx {
                cur.t_ns = (cur_idx + 1) * li;
                intervals.push(std::mem::take(&mut cur));
                cur_idx += 1;
            }
            if sub_read[slot] {
                cur.read_ios += 1;
                cur.read_bytes += bytes;
            } else {
                cur.write_ios += 1;
                cur.write_bytes += bytes;
            }
            cur.lat_sum += lat as u128;
            cur.lat_max = cur.lat_max.max(lat);
        }
        let c = &mut clones[ci];
        if c.stopped {
            events.set(slot, u64::MAX);
            continue;
        }
        if think > 0 {
            events.set(slot, u64::MAX);
            let c = &mut clones[ci];
            if iotime == 0 {
                // think after every I/O of this slot
                let tr = t + think;
                if tr < t_stop {
                    events.set(slot, key!(tr, slot, resume_flag));
                } else {
                    c.stopped = true;
                }
                continue;
            }
            if !c.thinking && t - c.period_start >= iotime {
                c.thinking = true;
            }
            if c.thinking {
                if c.inflight == 0 {
                    c.thinking = false;
                    let tr = t + think;
                    c.period_start = tr;
                    if tr < t_stop {
                        for k in 0..qd {
                            events.set(ci * qd + k, key!(tr, ci * qd + k, resume_flag));
                        }
                    } else {
                        c.stopped = true;
                    }
                }
                continue;
            }
            if let Some(nk) = submit!(slot, t) {
                events.set(slot, nk);
            }
            continue;
        }
        let nk = submit!(slot, t);
        events.set(slot, nk.unwrap_or(u64::MAX));
    }
    if li > 0 && (cur.read_ios + cur.write_ios > 0 || intervals.is_empty()) {
        cur.t_ns = (end_t - t0).max(1).min((cur_idx + 1) * li);
        intervals.push(cur);
    }
    if too_long {
        return Err(format!(
            "job ran longer than the event queue can represent ({} s of simulated time with {nslots} I/O slots); \
             split it into shorter jobs",
            max_rel / 1_000_000_000
        ));
    }
    model.clock = model.clock.max(end_t);
    Ok(JobResult {
        name: job.name.clone(),
        start_ns: t0,
        runtime_ns: end_t - t0,
        read: rd,
        write: wr,
        intervals,
        percentiles: job.percentiles.clone(),
        coverage,
    })
}
