//! Whole-state snapshot / restore (little-endian binary, versioned).

use crate::model::{Buckets, GcState, Model};
use crate::params::Params;
use std::collections::BTreeMap;

const MAGIC: &[u8; 8] = b"SSDSIM\x03\x00";
/// Version 2 (before the idle-time counter) is still read; its idle time starts at 0.
const MAGIC_V2: &[u8; 8] = b"SSDSIM\x02\x00";

struct W(Vec<u8>);
impl W {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn v32(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * 4);
        for &x in v {
            self.u32(x);
        }
    }
    fn v64(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
    }
    fn v8(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
    }
}

struct R<'a> {
    b: &'a [u8],
    i: usize,
}
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.i + n > self.b.len() {
            return Err("snapshot truncated".into());
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn len(&mut self) -> Result<usize, String> {
        let n = self.u64()? as usize;
        if n > self.b.len() {
            return Err("snapshot corrupt (length)".into());
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<String, String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "snapshot corrupt (utf8)".to_string())
    }
    fn v32(&mut self, expect: usize) -> Result<Vec<u32>, String> {
        let n = self.len()?;
        if n != expect {
            return Err("snapshot corrupt (vector size)".into());
        }
        let raw = self.take(n * 4)?;
        Ok(raw.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
    }
    fn v64(&mut self, expect: usize) -> Result<Vec<u64>, String> {
        let n = self.len()?;
        if n != expect {
            return Err("snapshot corrupt (vector size)".into());
        }
        (0..n).map(|_| self.u64()).collect()
    }
    fn v8(&mut self, expect: usize) -> Result<Vec<u8>, String> {
        let n = self.len()?;
        if n != expect {
            return Err("snapshot corrupt (vector size)".into());
        }
        Ok(self.take(n)?.to_vec())
    }
}

pub fn snapshot(m: &Model) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(m.map.len() * 4 + m.rmap.len() * 4 + 4096));
    w.0.extend_from_slice(MAGIC);
    let pm = m.p.to_map();
    w.u64(pm.len() as u64);
    for (k, v) in &pm {
        w.str(k);
        w.f64(*v);
    }
    w.v32(&m.map);
    // stale entries as NIL (see `Model::rmap`): the snapshot holds the state, not the leftovers
    w.v32(&m.live_rmap());
    w.v32(&m.valid);
    w.v32(&m.wp);
    w.v8(&m.state);
    w.v8(&m.slc);
    w.v32(&m.erase_cnt);
    w.v32(&m.next);
    w.v32(&m.prev);
    for b in &m.bk {
        w.v32(&b.head);
        w.u64(b.min as u64);
        w.u32(b.count);
    }
    let fnat: Vec<u32> = m.free_nat.iter().copied().collect();
    let fst: Vec<u32> = m.free_static.iter().copied().collect();
    w.v32(&fnat);
    w.v32(&fst);
    w.v32(&m.open);
    w.v32(&m.upos);
    w.v8(&m.hot);
    let ep: Vec<u8> = m.epoch.iter().flat_map(|e| e.to_le_bytes()).collect();
    w.v8(&ep);
    w.u64(m.host_pages);
    w.u64(m.hot_writes);
    w.u64(m.live_pages);
    w.u32(m.dyn_slc_blocks);
    w.u64(m.slc_written_pages);
    let g = &m.gc;
    w.u32(g.victim);
    w.u32(g.cursor);
    w.u64(g.credit);
    w.u64(g.add);
    w.u64(g.need);
    w.u32(g.last_group);
    w.u32(g.ch);
    w.v64(&m.die_prog);
    w.v64(&m.die_rd);
    w.v64(&m.plane_rd);
    w.v64(&m.ch_free);
    w.u64(m.rng);
    w.u64(m.suspends);
    w.u64(m.read_retries);
    for v in [m.ctrl_free, m.link_free, m.clock, m.host_write_bytes, m.host_read_bytes, m.nand_write_pages,
        m.erased_pages, m.erase_total, m.gc_moved_pages, m.idle_ns]
    {
        w.u64(v);
    }
    w.0
}

/// The snapshot of the state that determines the drive's future performance: wear (erase counts) and the
/// lifetime counters zeroed, and every time relative to the clock (a purged drive and a new one differ
/// only in those, by design; see `Model::purge`).
pub fn performance_state(m: &Model) -> Vec<u8> {
    let mut c = m.clone();
    let now = c.clock;
    for t in c.die_prog.iter_mut().chain(c.die_rd.iter_mut()).chain(c.plane_rd.iter_mut()).chain(c.ch_free.iter_mut())
    {
        *t = t.saturating_sub(now);
    }
    c.ctrl_free = c.ctrl_free.saturating_sub(now);
    c.link_free = c.link_free.saturating_sub(now);
    c.clock = 0;
    for e in c.erase_cnt.iter_mut() {
        *e = 0;
    }
    c.suspends = 0;
    c.read_retries = 0;
    c.host_write_bytes = 0;
    c.host_read_bytes = 0;
    c.nand_write_pages = 0;
    c.erased_pages = 0;
    c.erase_total = 0;
    c.gc_moved_pages = 0;
    c.idle_ns = 0;
    snapshot(&c)
}

pub fn restore(b: &[u8]) -> Result<Model, String> {
    if b.len() < 8 || (&b[..8] != MAGIC && &b[..8] != MAGIC_V2) {
        return Err("not an ssdsim snapshot (bad magic/version)".into());
    }
    let mut r = R { b, i: 8 };
    let n = r.len()?;
    let mut pm = BTreeMap::new();
    for _ in 0..n {
        let k = r.str()?;
        let v = r.f64()?;
        pm.insert(k, v);
    }
    let p = Params::from_map(&pm)?;
    let mut m = Model::new(p)?;
    let nb = m.n_blocks as usize;
    let map = r.v32(m.map.len())?;
    m.map.copy_from_slice(&map);
    drop(map);
    let rmap = r.v32(m.rmap.len())?;
    m.rmap.copy_from_slice(&rmap);
    drop(rmap);
    m.valid = r.v32(nb)?;
    m.wp = r.v32(nb)?;
    m.state = r.v8(nb)?;
    m.slc = r.v8(nb)?;
    m.erase_cnt = r.v32(nb)?;
    m.next = r.v32(nb)?;
    m.prev = r.v32(nb)?;
    for s in 0..3 {
        let hl = m.bk[s].head.len();
        let head = r.v32(hl)?;
        let min = r.u64()? as usize;
        let count = r.u32()?;
        m.bk[s] = Buckets { head, min: min.min(hl), count };
    }
    let nf = r.len()?;
    r.i -= 8;
    m.free_nat = r.v32(nf)?.into();
    let ns = r.len()?;
    r.i -= 8;
    m.free_static = r.v32(ns)?.into();
    let n_streams = m.open.len();
    m.open.copy_from_slice(&r.v32(n_streams)?);
    m.upos.copy_from_slice(&r.v32(n_streams)?);
    m.hot = r.v8(nb)?;
    let ep = r.v8(m.epoch.len() * 2)?;
    m.epoch = ep.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    m.host_pages = r.u64()?;
    m.hot_writes = r.u64()?;
    m.live_pages = r.u64()?;
    m.dyn_slc_blocks = r.u32()?;
    m.slc_written_pages = r.u64()?;
    m.gc = GcState {
        victim: r.u32()?,
        cursor: r.u32()?,
        credit: r.u64()?,
        add: r.u64()?,
        need: r.u64()?,
        last_group: r.u32()?,
        ch: r.u32()?,
    };
    m.die_prog = r.v64(m.die_prog.len())?;
    m.die_rd = r.v64(m.die_rd.len())?;
    m.plane_rd = r.v64(m.plane_rd.len())?;
    m.ch_free = r.v64(m.ch_free.len())?;
    m.rng = r.u64()?;
    m.suspends = r.u64()?;
    m.read_retries = r.u64()?;
    m.ctrl_free = r.u64()?;
    m.link_free = r.u64()?;
    m.clock = r.u64()?;
    m.host_write_bytes = r.u64()?;
    m.host_read_bytes = r.u64()?;
    m.nand_write_pages = r.u64()?;
    m.erased_pages = r.u64()?;
    m.erase_total = r.u64()?;
    m.gc_moved_pages = r.u64()?;
    if &b[..8] == MAGIC {
        m.idle_ns = r.u64()?;
    }
    if r.i != b.len() {
        return Err("snapshot corrupt (trailing bytes)".into());
    }
    Ok(m)
}
