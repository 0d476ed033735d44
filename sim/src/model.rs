//! Page-mapped FTL model with superblocks, greedy GC, SLC cache and a
//! reservation-based timing model.
//!
//! Units: one mapping unit ("page") is 4 KiB. Times are ns of simulated time.

use crate::params::Params;
use std::collections::VecDeque;

pub const PAGE: u64 = 4096;
pub const NIL: u32 = u32::MAX;
/// Foreground GC moves pages in batches of this many (see `gc_credit`).
const GC_BATCH: u64 = 16;
/// How many slots ahead `gc_run` prefetches the reverse-map entries of the victim and the destination.
const RMAP_AHEAD: u32 = 512;
/// Seed of the model's service-time random stream (jitter, read retry): a new drive and a purged one
/// start from it, so a purge leaves the same state whatever ran before.
pub(crate) const RNG_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

pub(crate) const ST_FREE: u8 = 0;
pub(crate) const ST_OPEN: u8 = 1;
pub(crate) const ST_CLOSED: u8 = 2;
pub(crate) const ST_VICTIM: u8 = 3;

/// Bucket sets for closed blocks (greedy victim selection).
pub(crate) const SET_NATIVE: usize = 0;
pub(crate) const SET_DYN: usize = 1;
pub(crate) const SET_STATIC: usize = 2;

/// Write streams (open blocks).
pub(crate) const S_HOST_SLC: usize = 0;
pub(crate) const S_HOST_NAT: usize = 1;
pub(crate) const S_GC: usize = 2;
/// hot/cold separation (`hot_cold`): host writes of hot data, GC moves out of hot blocks
pub(crate) const S_HOST_HOT: usize = 3;
pub(crate) const S_GC_HOT: usize = 4;
pub(crate) const N_STREAMS: usize = 5;

/// Closed blocks bucketed by valid-page count (doubly linked lists through
/// `Model::next`/`Model::prev`), for O(1) amortised min-valid selection.
#[derive(Clone, Debug)]
pub(crate) struct Buckets {
    pub head: Vec<u32>,
    pub min: usize,
    pub count: u32,
}

impl Buckets {
    fn new(n: usize) -> Self {
        Buckets { head: vec![NIL; n + 1], min: n + 1, count: 0 }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct GcState {
    pub victim: u32,
    pub cursor: u32,
    pub credit: u64,
    pub add: u64,
    pub need: u64,
    pub last_group: u32,
    pub ch: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub nand_write_bytes: u64,
    pub waf: f64,
    pub erase_count_total: u64,
    pub erase_count_avg: f64,
    pub erase_count_max: u64,
    pub wear_percent: f64,
    pub free_blocks: u64,
    pub total_blocks: u64,
    pub slc_used_bytes: u64,
    pub slc_capacity_bytes: u64,
    pub clock_ns: u64,
    pub power_on_ns: u64,
    pub live_bytes: u64,
    pub gc_moved_bytes: u64,
    /// program/erase suspends by host reads (lifetime)
    pub suspend_count: u64,
    /// NAND reads that needed read retry (lifetime)
    pub read_retry_count: u64,
    /// free superblocks of the native pool (the GC's free pool; `free_blocks` adds the static SLC ones)
    pub free_native_blocks: u64,
    /// simulated time the host left the drive idle (lifetime; think time and `idle`)
    pub idle_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub p: Params,
    // ---- derived geometry
    pub dies: u32,
    pub ppsb: u32,      // native pages per superblock
    pub slc_ppsb: u32,  // SLC-mode pages per superblock
    pub u_nat: u32,     // pages per native program unit
    pub u_slc: u32,     // pages per SLC program unit
    pub page_pages: u32, // 4K pages per NAND read unit
    pub page_shift: u32,
    pub ppsb_div: FastDiv,
    /// NAND page of each read-unit group of a superblock, [native, slc][slot >> page_shift]:
    /// die | plane << 16 | page type << 24 (0 lower .. bits-1 upper; 0 in SLC mode)
    pub group_info: [Vec<u32>; 2],
    /// channel of each die
    pub die_ch: Vec<u32>,
    pub user_pages: u32,
    pub n_nat: u32,     // native pool superblocks [0, n_nat)
    pub n_static: u32,  // static SLC superblocks [n_nat, n_nat+n_static)
    pub n_blocks: u32,
    pub dyn_max_blocks: u32,
    pub window_nat: u64,
    pub window_slc: u64,
    pub ch_page_ns: u64,
    /// host link transfer time of one 4 KiB page (the common case of `admit`)
    pub link_page_ns: u64,
    /// nominal read time [host, GC (/ planes)][SLC, native lower, middle, upper, (4th)]
    pub read_nominal: [[u64; 5]; 2],
    /// t_jitter_percent / 100 (the same f64 `jitter` computed per call before)
    pub jitter_frac: f64,
    /// t_jitter_percent > 0 (tested per call before)
    pub jitter_on: bool,
    /// read retry when (random >> 11) < this (read_retry_percent of 2^53)
    pub retry_threshold: u64,
    pub idle_target_blocks: u32,
    pub check_each_op: bool,
    // ---- mapping state
    pub(crate) map: BigTable,
    /// The logical page of each physical page. An entry is live when `map` points back at it; the GC
    /// leaves the slots it moved out of a victim as they were, so stale entries (NIL for the model)
    /// remain behind the victim's cursor, in erased blocks and beyond an open block's write pointer,
    /// where nothing reads them: the GC scans only a closed block's slots from its cursor on, and
    /// appending overwrites a slot before it counts. `live_rmap` gives the table with them as NIL.
    pub(crate) rmap: BigTable,
    pub(crate) valid: Vec<u32>,
    pub(crate) wp: Vec<u32>,
    pub(crate) state: Vec<u8>,
    pub(crate) slc: Vec<u8>,
    pub(crate) erase_cnt: Vec<u32>,
    pub(crate) next: Vec<u32>,
    pub(crate) prev: Vec<u32>,
    pub(crate) bk: [Buckets; 3],
    pub(crate) free_nat: VecDeque<u32>,
    pub(crate) free_static: VecDeque<u32>,
    pub(crate) open: [u32; N_STREAMS],
    /// pages written into the current program unit of each stream
    pub(crate) upos: [u32; N_STREAMS],
    /// per block: 1 if it belongs to the hot pool (hot/cold separation)
    pub(crate) hot: Vec<u8>,
    /// per logical page (only with hot_cold): epoch of its last host write,
    /// in units of `epoch_pages` host pages (15 bits, wrapping), and in the
    /// top bit whether that write came soon after the one before
    pub(crate) epoch: Vec<u16>,
    pub epoch_pages: u64,
    /// host pages written since the purge; the clock of data age
    pub(crate) host_pages: u64,
    /// host pages classified hot (since the purge)
    pub(crate) hot_writes: u64,
    pub(crate) live_pages: u64,
    pub(crate) dyn_slc_blocks: u32,
    pub(crate) slc_written_pages: u64,
    pub(crate) gc: GcState,
    // ---- timing state
    /// end of the program/erase backlog of each die (array operations)
    pub(crate) die_prog: Vec<u64>,
    /// end of the last read of each die (any plane)
    pub(crate) die_rd: Vec<u64>,
    /// end of the last read of each plane (die * planes + plane)
    pub(crate) plane_rd: Vec<u64>,
    pub(crate) ch_free: Vec<u64>,
    /// service-time randomness (jitter, read retry); part of the state
    pub(crate) rng: u64,
    pub(crate) suspends: u64,
    pub(crate) read_retries: u64,
    pub(crate) ctrl_free: u64,
    pub(crate) link_free: u64,
    pub clock: u64,
    // ---- counters
    pub(crate) host_write_bytes: u64,
    pub(crate) host_read_bytes: u64,
    pub(crate) nand_write_pages: u64,
    pub(crate) erased_pages: u64,
    pub(crate) erase_total: u64,
    pub(crate) gc_moved_pages: u64,
    pub(crate) idle_ns: u64,
}

/// Exact division of 32-bit numerators by a runtime constant (Lemire).
#[derive(Clone, Copy, Debug)]
pub struct FastDiv {
    d: u32,
    m: u64,
}

impl FastDiv {
    pub fn new(d: u32) -> Self {
        assert!(d > 0);
        FastDiv { d, m: (u64::MAX / d as u64).wrapping_add(1) }
    }
    #[inline(always)]
    pub fn div(self, n: u32) -> u32 {
        if self.d == 1 {
            return n;
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }
    #[inline(always)]
    pub fn divrem(self, n: u32) -> (u32, u32) {
        let q = self.div(n);
        (q, n - q * self.d)
    }
}

/// Prefetch a line that is about to be written.
#[inline(always)]
pub(crate) fn prefetch_w<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_ET0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A filled table of u32 in memory of its own, 2 MiB aligned and a whole number of 2 MiB long, advised to
/// use transparent huge pages before it is first touched (the mapping tables are accessed at random: a
/// huge page halves the TLB misses). A Vec's memory starts anywhere, so its first and last partial huge
/// pages stayed in 4 KiB pages: about a sixth of the two tables on the 16 GiB drive. The table starts one
/// cache line into its memory: the GC prefetches `map[NIL]` as the word before the table (see `gc_run`),
/// which must stay a mapped, cached line (a prefetch of an unmapped address costs a page walk).
pub(crate) struct BigTable {
    ptr: std::ptr::NonNull<u32>,
    len: usize,
}

// SAFETY: BigTable owns its memory exclusively, as a Vec<u32> does
unsafe impl Send for BigTable {}
unsafe impl Sync for BigTable {}

impl BigTable {
    const HUGE_PAGE: usize = 2 << 20;
    /// u32 before the table (one cache line)
    const LEAD: usize = 16;

    fn layout(n: usize) -> std::alloc::Layout {
        let bytes = ((n + Self::LEAD) * 4).next_multiple_of(Self::HUGE_PAGE);
        std::alloc::Layout::from_size_align(bytes, Self::HUGE_PAGE).expect("ssdsim: table too large")
    }

    pub(crate) fn new(n: usize, val: u32) -> BigTable {
        let layout = Self::layout(n);
        // SAFETY: the layout's size is not zero
        let p = unsafe { std::alloc::alloc(layout) } as *mut u32;
        let Some(ptr) = std::ptr::NonNull::new(p) else { std::alloc::handle_alloc_error(layout) };
        #[cfg(target_os = "linux")]
        // SAFETY: the range is the allocation just made (advice only; its result does not matter)
        unsafe {
            libc::madvise(p as *mut libc::c_void, layout.size(), libc::MADV_HUGEPAGE);
        }
        // SAFETY: p holds LEAD + n u32 (layout), written here before any read
        unsafe {
            for i in 0..Self::LEAD + n {
                p.add(i).write(val);
            }
        }
        // SAFETY: inside the allocation
        BigTable { ptr: unsafe { ptr.add(Self::LEAD) }, len: n }
    }
}

impl Drop for BigTable {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().sub(Self::LEAD) as *mut u8, Self::layout(self.len)) }
    }
}

impl std::ops::Deref for BigTable {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        // SAFETY: len initialised u32 at ptr (new)
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for BigTable {
    fn deref_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in deref, and &mut self is exclusive
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Clone for BigTable {
    fn clone(&self) -> BigTable {
        let mut t = BigTable::new(self.len, 0);
        t.copy_from_slice(self);
        t
    }
}

impl std::fmt::Debug for BigTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[inline(always)]
fn max(a: u64, b: u64) -> u64 {
    if a > b { a } else { b }
}

impl Model {
    pub fn new(p: Params) -> Result<Model, String> {
        p.validate()?;
        let dies = p.channels * p.dies_per_channel;
        let block_pages = (p.block_bytes / PAGE) as u32;
        let slc_block_pages = block_pages / p.bits_per_cell;
        let ppsb = dies * block_pages;
        let slc_ppsb = dies * slc_block_pages;
        let u_nat = p.native_program_unit_bytes / PAGE as u32;
        let u_slc = p.slc_program_unit_bytes / PAGE as u32;
        let page_pages = p.page_bytes / PAGE as u32;
        let page_shift = page_pages.trailing_zeros();
        // a program unit (u pages) goes to one die, units round robin over the
        // dies; inside a unit the NAND pages interleave planes first, then
        // page types (lower/middle/upper of one word line)
        let planes = p.planes;
        let mk_groups = |u: u32, cap: u32, types: u32| -> Vec<u32> {
            (0..cap / page_pages)
                .map(|g| {
                    let die = (g * page_pages / u) % dies;
                    let k = (g * page_pages % u) / page_pages;
                    let plane = k % planes;
                    let ptype = (k / planes) % types;
                    die | plane << 16 | ptype << 24
                })
                .collect()
        };
        let group_info = [mk_groups(u_nat, ppsb, p.bits_per_cell), mk_groups(u_slc, slc_ppsb, 1)];
        let die_ch: Vec<u32> = (0..dies).map(|d| d % p.channels).collect();
        let mut read_nominal = [[0u64; 5]; 2];
        for k in 0..5 {
            let t = if k == 0 { p.t_read_slc_ns } else { p.t_read_ns + (k as u64 - 1) * p.t_read_step_ns };
            read_nominal[0][k] = t;
            read_nominal[1][k] = t / p.planes as u64;
        }
        let retry_threshold = (p.read_retry_percent / 100.0 * (1u64 << 53) as f64) as u64;
        let user_pages64 = p.user_capacity_bytes / PAGE;
        if user_pages64 >= (NIL as u64) / 2 {
            return Err("user_capacity_bytes too large".into());
        }
        let user_pages = user_pages64 as u32;
        // op_percent is the *effective* spare: the GC reserve (free blocks plus
        // the unwritten tails of the open blocks, which average about
        // threshold + 0.15 superblocks in steady state) is added on top.
        let data_blocks = (user_pages as f64) * (1.0 + p.op_percent / 100.0) / ppsb as f64;
        let reserve = p.gc_threshold_blocks as f64 + 0.15;
        let n_nat = ((data_blocks + reserve).round() as u32).max(data_blocks.ceil() as u32 + 2);
        let slc_sb_bytes = slc_ppsb as u64 * PAGE;
        let n_static = ((p.slc_static_bytes + slc_sb_bytes - 1) / slc_sb_bytes) as u32;
        let dyn_max_blocks = (p.slc_dynamic_max_bytes / slc_sb_bytes) as u32;
        let n_blocks = n_nat + n_static;
        if (n_blocks as u64) * (ppsb as u64) >= NIL as u64 {
            return Err("drive too large for 32-bit physical page numbers".into());
        }
        let buf_pages_per_die = p.write_buffer_bytes / PAGE / dies as u64;
        let window_nat = buf_pages_per_die * p.t_prog_ns / u_nat as u64;
        let window_slc = buf_pages_per_die * p.t_prog_slc_ns / u_slc as u64;
        let ch_page_ns = PAGE * 1000 / p.channel_mb_s;
        let idle_target_blocks = ((n_nat as f64) * p.idle_free_target_percent / 100.0).floor() as u32;
        let total_pages = n_blocks as usize * ppsb as usize;
        let nb = n_blocks as usize;
        let mut m = Model {
            dies, ppsb, slc_ppsb, u_nat, u_slc, page_pages, page_shift, ppsb_div: FastDiv::new(ppsb), group_info, die_ch,
            user_pages, n_nat, n_static, n_blocks,
            dyn_max_blocks, window_nat, window_slc, ch_page_ns, link_page_ns: PAGE * 1000 / p.link_mb_s, read_nominal, jitter_frac: p.t_jitter_percent / 100.0, jitter_on: !(p.t_jitter_percent <= 0.0), retry_threshold, idle_target_blocks,
            check_each_op: cfg!(debug_assertions) && total_pages <= (1 << 16),
            map: BigTable::new(user_pages as usize, NIL),
            rmap: BigTable::new(total_pages, NIL),
            valid: vec![0; nb],
            wp: vec![0; nb],
            state: vec![ST_FREE; nb],
            slc: vec![0; nb],
            erase_cnt: vec![0; nb],
            next: vec![NIL; nb],
            prev: vec![NIL; nb],
            bk: [Buckets::new(ppsb as usize), Buckets::new(slc_ppsb as usize), Buckets::new(slc_ppsb as usize)],
            free_nat: (0..n_nat).collect(),
            free_static: (n_nat..n_blocks).collect(),
            open: [NIL; N_STREAMS],
            upos: [0; N_STREAMS],
            hot: vec![0; nb],
            epoch: vec![0; if p.hot_cold != 0 { user_pages as usize } else { 0 }],
            epoch_pages: (user_pages as u64 / 64).max(1),
            host_pages: 0,
            hot_writes: 0,
            live_pages: 0,
            dyn_slc_blocks: 0,
            slc_written_pages: 0,
            gc: GcState { victim: NIL, ..Default::default() },
            die_prog: vec![0; dies as usize],
            die_rd: vec![0; dies as usize],
            plane_rd: vec![0; (dies * p.planes) as usize],
            ch_free: vec![0; p.channels as usize],
            rng: RNG_SEED,
            suspends: 0,
            read_retries: 0,
            ctrl_free: 0,
            link_free: 0,
            clock: 0,
            host_write_bytes: 0,
            host_read_bytes: 0,
            nand_write_pages: 0,
            erased_pages: 0,
            erase_total: 0,
            gc_moved_pages: 0,
            idle_ns: 0,
            p,
        };
        for b in n_nat..n_blocks {
            m.slc[b as usize] = 1;
        }
        Ok(m)
    }

    /// Cache hint: the engine pre-generates random I/Os and prefetches their
    /// mapping entries (pure performance, no effect on results).
    #[inline(always)]
    pub fn prefetch_map(&self, off: u64) {
        let lpn = (off / PAGE) as usize;
        if lpn < self.map.len() {
            prefetch_w(&self.map[lpn]);
        }
    }

    /// Second stage: prefetch the reverse-map entry of the page's current location.
    #[inline(always)]
    pub fn prefetch_rmap(&self, off: u64) {
        let lpn = (off / PAGE) as usize;
        if lpn < self.map.len() {
            let ppn = self.map[lpn];
            if ppn != NIL {
                prefetch_w(&self.rmap[ppn as usize]);
            }
        }
    }

    /// Whether the reverse-map entry of `ppn` is live (a mapped page that `map` points back at).
    #[inline]
    pub(crate) fn rmap_live(&self, ppn: u32) -> bool {
        let l = self.rmap[ppn as usize];
        l != NIL && self.map[l as usize] == ppn
    }

    /// The reverse map as the model sees it: stale entries (see `rmap`) as NIL.
    pub(crate) fn live_rmap(&self) -> Vec<u32> {
        (0..self.rmap.len() as u32).map(|p| if self.rmap_live(p) { self.rmap[p as usize] } else { NIL }).collect()
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.user_pages as u64 * PAGE
    }

    // ------------------------------------------------------------------
    // buckets
    #[inline]
    fn set_of(&self, b: u32) -> usize {
        if b >= self.n_nat { SET_STATIC } else if self.slc[b as usize] != 0 { SET_DYN } else { SET_NATIVE }
    }

    #[inline]
    fn bucket_insert(&mut self, set: usize, b: u32) {
        let v = self.valid[b as usize] as usize;
        let bk = &mut self.bk[set];
        let h = bk.head[v];
        self.next[b as usize] = h;
        self.prev[b as usize] = NIL;
        if h != NIL {
            self.prev[h as usize] = b;
        }
        bk.head[v] = b;
        if v < bk.min {
            bk.min = v;
        }
        bk.count += 1;
    }

    #[inline]
    fn bucket_remove(&mut self, set: usize, b: u32, v: usize) {
        let n = self.next[b as usize];
        let pr = self.prev[b as usize];
        if pr != NIL {
            self.next[pr as usize] = n;
        } else {
            self.bk[set].head[v] = n;
        }
        if n != NIL {
            self.prev[n as usize] = pr;
        }
        self.bk[set].count -= 1;
    }

    /// Move closed block `b` from bucket `v` to the head of bucket `v - 1` (a page of it was
    /// invalidated): `bucket_remove` then `bucket_insert`, in one step (the host-write path).
    #[inline(always)]
    fn bucket_down(&mut self, set: usize, b: u32, v: usize) {
        let bi = b as usize;
        let n = self.next[bi];
        let pr = self.prev[bi];
        let bk = &mut self.bk[set];
        if pr != NIL {
            self.next[pr as usize] = n;
        } else {
            bk.head[v] = n;
        }
        if n != NIL {
            self.prev[n as usize] = pr;
        }
        let h = bk.head[v - 1];
        self.next[bi] = h;
        self.prev[bi] = NIL;
        if h != NIL {
            self.prev[h as usize] = b;
        }
        bk.head[v - 1] = b;
        if v - 1 < bk.min {
            bk.min = v - 1;
        }
    }

    /// Min-valid closed block of a set (not removed).
    fn bucket_peek(&mut self, set: usize) -> Option<u32> {
        let bk = &mut self.bk[set];
        if bk.count == 0 {
            return None;
        }
        while bk.head[bk.min] == NIL {
            bk.min += 1;
        }
        Some(bk.head[bk.min])
    }

    // ------------------------------------------------------------------
    // geometry helpers
    #[inline(always)]
    fn die_of(&self, slot: u32, slc: bool) -> usize {
        (self.group_info[slc as usize][(slot >> self.page_shift) as usize] & 0xffff) as usize
    }

    #[inline(always)]
    fn info_of(&self, slot: u32, slc: bool) -> u32 {
        self.group_info[slc as usize][(slot >> self.page_shift) as usize]
    }

    #[inline(always)]
    fn cap_of(&self, b: u32) -> u32 {
        if self.slc[b as usize] != 0 { self.slc_ppsb } else { self.ppsb }
    }

    /// Next value of the model's own random stream (splitmix64).
    #[inline(always)]
    fn rand(&mut self) -> u64 {
        crate::engine::splitmix64(&mut self.rng)
    }

    /// `t` spread uniformly within +- t_jitter_percent.
    #[inline(always)]
    fn jitter(&mut self, t: u64) -> u64 {
        if !self.jitter_on || t == 0 {
            return t;
        }
        // the integers converted here are below 2^63 and the product is in [0, 1.5 t] (t_jitter_percent
        // <= 50), so the conversions through i64 give the same values as through u64, in one instruction
        // each where x86-64 has no unsigned conversion (the GC calls this for every read and program)
        let x = ((self.rand() >> 11) as i64) as f64; // u = x / 2^53 in [0, 1)
        // 2u - 1: scaling x by a power of two is exact, so x / 2^52 is 2u exactly, as computed before
        let f = 1.0 + self.jitter_frac * (x * (1.0 / (1u64 << 52) as f64) - 1.0);
        debug_assert!(t < 1 << 62);
        let r = (t as i64) as f64 * f;
        debug_assert!(r >= 0.0 && r < 9.2e18);
        // SAFETY: r is finite and in [0, 2^63) (above), where the unchecked conversion is the same as
        // `as` without its saturation code
        unsafe { r.to_int_unchecked::<i64>() as u64 }
    }

    /// Sense time of one NAND page read: nominal time of its page type,
    /// jitter, and (for a share of reads) 1..=read_retry_max extra senses.
    #[inline(always)]
    fn read_time(&mut self, info: u32, slc: bool, host: bool) -> u64 {
        let k = if slc { 0 } else { 1 + (info >> 24) as usize };
        debug_assert!(k < 5);
        // SAFETY: the page type is below bits_per_cell <= 4 (validated), so k < 5
        let nominal = unsafe { *self.read_nominal.get_unchecked(!host as usize).get_unchecked(k) };
        let mut t = self.jitter(nominal);
        if self.retry_threshold > 0 {
            let r = self.rand();
            if (r >> 11) < self.retry_threshold {
                let extra = 1 + (r & 0x3ff) % self.p.read_retry_max as u64;
                t += extra * nominal;
                self.read_retries += 1;
            }
        }
        t
    }

    /// Reserve a NAND read of one read unit (`info` from `group_info`);
    /// returns the time its data is transferred. A host read may suspend
    /// the program/erase of its die (`suspend`); background (GC) reads are
    /// queued with the die's programs and erases (all planes).
    #[inline(always)]
    fn nand_read(&mut self, info: u32, slc: bool, npages: u64, now: u64, host: bool) -> u64 {
        let die = (info & 0xffff) as usize;
        let pl = die * self.p.planes as usize + ((info >> 16) & 0xff) as usize;
        let tr = self.read_time(info, slc, host);
        let e = if !host {
            // background reads are part of the die's array-operation queue;
            // GC reads whole word lines with multi-plane reads, so a plane
            // page costs tR / planes of die time (`read_nominal[1]`)
            let e = max(now, self.die_prog[die]) + tr;
            self.die_prog[die] = e;
            e
        } else {
            let e = if self.p.suspend != 0 && self.die_prog[die] > now {
                // the array operation in progress is suspended for the read
                // and resumes after it: it is pushed back by the time the die
                // spends in reads that did not overlap reads already under
                // way on its other planes, plus one suspend/resume cost when
                // the die was not already suspended
                let busy_to = self.die_rd[die];
                let fresh = busy_to <= now;
                let s = max(now, self.plane_rd[pl]) + if fresh { self.p.t_suspend_ns } else { 0 };
                let e = s + tr;
                let ext = e.saturating_sub(max(busy_to, now)) + if fresh { self.p.t_suspend_ns } else { 0 };
                self.die_prog[die] += ext;
                self.suspends += fresh as u64;
                e
            } else {
                max(max(now, self.plane_rd[pl]), self.die_prog[die]) + tr
            };
            self.plane_rd[pl] = e;
            self.die_rd[die] = max(self.die_rd[die], e);
            e
        };
        let c = self.die_ch[die] as usize;
        let x = npages * self.ch_page_ns;
        let ct = max(now, self.ch_free[c]) + x;
        self.ch_free[c] = ct;
        max(e + x, ct)
    }

    /// A GC read of one plane page: queued with the die's programs and
    /// erases (see `nand_read`); its channel transfer is booked by the caller. Returns the channel.
    #[inline(always)]
    fn gc_read(&mut self, info: u32, slc: bool, now: u64) -> usize {
        let die = (info & 0xffff) as usize;
        let tr = self.read_time(info, slc, false);
        debug_assert!(die < self.die_prog.len() && die < self.die_ch.len());
        // SAFETY: group_info holds dies below `dies`, the length of die_prog and die_ch
        unsafe {
            let d = self.die_prog.get_unchecked_mut(die);
            *d = max(now, *d) + tr;
            *self.die_ch.get_unchecked(die) as usize
        }
    }

    #[inline(always)]
    fn program_unit(&mut self, die: usize, slc: bool, npages: u32, now: u64) {
        let c = self.die_ch[die] as usize;
        let ct = max(now, self.ch_free[c]) + npages as u64 * self.ch_page_ns;
        self.ch_free[c] = ct;
        let tp = if slc { self.p.t_prog_slc_ns } else { self.p.t_prog_ns };
        let tp = self.jitter(tp);
        let s = max(max(ct, self.die_prog[die]), self.die_rd[die]);
        self.die_prog[die] = s + tp;
    }

    // ------------------------------------------------------------------
    // SLC policy
    fn dyn_limit(&self) -> u32 {
        if self.dyn_max_blocks == 0 {
            return 0;
        }
        let free_user = self.user_pages as u64 - self.live_pages;
        let by_space = (self.p.slc_dynamic_fraction * free_user as f64 / self.slc_ppsb as f64).floor() as u32;
        by_space.min(self.dyn_max_blocks)
    }

    fn dyn_allowed(&self) -> bool {
        self.dyn_max_blocks > 0
            && self.free_nat.len() as u32 > self.p.gc_threshold_blocks + 2
            && self.dyn_slc_blocks < self.dyn_limit()
    }

    pub fn slc_capacity_pages(&self) -> u64 {
        (self.n_static as u64 + self.dyn_limit().max(self.dyn_slc_blocks) as u64) * self.slc_ppsb as u64
    }

    // ------------------------------------------------------------------
    // allocation
    fn take_free(&mut self, b: u32, stream: usize, slc: bool) {
        self.state[b as usize] = ST_OPEN;
        self.slc[b as usize] = slc as u8;
        if slc && b < self.n_nat {
            self.dyn_slc_blocks += 1;
        }
        self.open[stream] = b;
        self.upos[stream] = 0;
        self.hot[b as usize] = (stream == S_HOST_HOT || stream == S_GC_HOT) as u8;
    }

    /// Written by the host less than one capacity of host writes ago (64
    /// epochs; epochs wrap after 512 capacities).
    #[inline]
    fn is_young(&self, lpn: u32) -> bool {
        let now = (self.host_pages / self.epoch_pages) as u16;
        now.wrapping_sub(self.epoch[lpn as usize]) & 0x7fff < 64
    }

    /// Hot data: its last two host writes each came less than one capacity of
    /// host writes after the previous one, the last of them recently.
    #[inline]
    fn is_hot(&self, lpn: u32) -> bool {
        self.epoch[lpn as usize] & 0x8000 != 0 && self.is_young(lpn)
    }

    /// Make sure `stream` has an open block. Returns false if the host-SLC
    /// stream cannot get one (cache full).
    fn ensure_open(&mut self, stream: usize, now: u64) -> bool {
        if self.open[stream] != NIL {
            return true;
        }
        match stream {
            S_HOST_SLC => {
                if let Some(b) = self.free_static.pop_front() {
                    self.take_free(b, stream, true);
                    true
                } else if self.dyn_allowed() {
                    let b = self.free_nat.pop_front().unwrap();
                    self.take_free(b, stream, true);
                    true
                } else {
                    false
                }
            }
            S_HOST_NAT | S_HOST_HOT => {
                // keep a free block for each GC stream that may open
                let reserve = if self.p.hot_cold != 0 { 3 } else { 2 };
                while self.free_nat.len() < reserve {
                    self.gc_sync_victim(now);
                }
                let b = self.free_nat.pop_front().unwrap();
                self.take_free(b, stream, false);
                true
            }
            _ => {
                let b = self.free_nat.pop_front().expect("ssdsim: no free block for GC (internal error)");
                self.take_free(b, stream, false);
                true
            }
        }
    }

    fn close(&mut self, b: u32) {
        self.state[b as usize] = ST_CLOSED;
        let s = self.set_of(b);
        self.bucket_insert(s, b);
    }

    /// Append `lpn` to the open block of `stream` (must be open). Returns the die.
    #[inline(always)]
    fn append(&mut self, stream: usize, lpn: u32, now: u64) -> usize {
        let b = self.open[stream];
        let bi = b as usize;
        let slot = self.wp[bi];
        let ppn = b * self.ppsb + slot;
        self.rmap[ppn as usize] = lpn;
        self.map[lpn as usize] = ppn;
        self.valid[bi] += 1;
        let w = slot + 1;
        self.wp[bi] = w;
        self.nand_write_pages += 1;
        let slc = self.slc[bi] != 0;
        if slc {
            self.slc_written_pages += 1;
        }
        let u = if slc { self.u_slc } else { self.u_nat };
        let die = self.die_of(slot, slc);
        let cap = if slc { self.slc_ppsb } else { self.ppsb };
        let up = self.upos[stream] + 1;
        if up == u || w == cap {
            self.program_unit(die, slc, up, now);
            self.upos[stream] = 0;
        } else {
            self.upos[stream] = up;
        }
        if w == cap {
            self.close(b);
            self.open[stream] = NIL;
        }
        die
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        let b = self.ppsb_div.div(ppn);
        let bi = b as usize;
        self.rmap[ppn as usize] = NIL;
        let v = self.valid[bi];
        self.valid[bi] = v - 1;
        if self.state[bi] == ST_CLOSED {
            let s = self.set_of(b);
            self.bucket_down(s, b, v as usize);
        }
    }

    // ------------------------------------------------------------------
    // GC
    /// Select a victim from the given sets (min valid). Returns false if none.
    fn gc_start(&mut self, sets: &[usize]) -> bool {
        debug_assert!(self.gc.victim == NIL);
        let mut best: Option<(u32, usize)> = None;
        for &s in sets {
            if let Some(b) = self.bucket_peek(s) {
                let v = self.valid[b as usize];
                if best.map_or(true, |(bb, _)| v < self.valid[bb as usize]) {
                    best = Some((b, s));
                }
            }
        }
        let Some((b, s)) = best else { return false };
        let v = self.valid[b as usize];
        self.bucket_remove(s, b, v as usize);
        self.state[b as usize] = ST_VICTIM;
        self.gc = GcState {
            victim: b,
            cursor: 0,
            credit: 0,
            add: v as u64,
            need: (self.ppsb - v) as u64,
            last_group: NIL,
            ch: 0,
        };
        true
    }

    /// Move up to `budget` valid pages of the current victim into the GC
    /// stream; once the victim holds no valid page, one more unit of budget
    /// erases it. Returns the budget used. The loop is specialised for the
    /// GC stream (always native mode) because it carries most of the work
    /// in steady state (WA - 1 moves per host page).
    #[allow(unused_assignments)] // the last flush of the channel batch resets `pend`
    fn gc_run(&mut self, now: u64, budget: u64) -> u64 {
        if self.p.hot_cold != 0 {
            return self.gc_run_sorted(now, budget);
        }
        let v = self.gc.victim;
        let vi = v as usize;
        let mut done = 0u64;
        let mut left = self.valid[vi];
        if left > 0 {
            let end = self.wp[vi];
            let base = v * self.ppsb;
            let slc = self.slc[vi] != 0;
            let mut cursor = self.gc.cursor;
            let cap = self.ppsb;
            let u = self.u_nat;
            let mut last_group = self.gc.last_group;
            // first slot of the group after last_group
            let mut next_group = last_group.wrapping_add(1) << self.page_shift;
            let mut ch = self.gc.ch as usize;
            // channel transfer of the pages read from the current group is
            // booked in one step (before any other booking on the channels)
            let mut pend = 0u64;
            macro_rules! flush_ch {
                () => {
                    if pend > 0 {
                        self.ch_free[ch] = max(now, self.ch_free[ch]) + pend * self.ch_page_ns;
                        pend = 0;
                    }
                };
            }
            let nmap = self.map.len();
            let gs = S_GC;
            while done < budget && left > 0 {
                if self.open[gs] == NIL {
                    self.ensure_open(gs, now);
                }
                let d = self.open[gs];
                let di = d as usize;
                let dbase = d * self.ppsb;
                let mut w = self.wp[di];
                let mut up = self.upos[gs];
                let w0 = w;
                // the pages moved since the last channel booking are pend + (w - wf)
                let mut wf = w;
                macro_rules! flush_moved {
                    ($to:expr) => {
                        pend += ($to - wf) as u64;
                        wf = $to;
                        flush_ch!();
                    };
                }
                let rmap = self.rmap.as_mut_ptr();
                let map = self.map.as_mut_ptr();
                debug_assert!(((base + end) as usize) <= self.rmap.len() && ((dbase + cap) as usize) <= self.rmap.len());
                // moves possible into this destination block in this call;
                // a program unit completes at every `unit_end` (the block
                // size is a multiple of the unit, so the block ends on one)
                let wend = w + (budget - done).min(left as u64).min((cap - w) as u64) as u32;
                let mut unit_end = w + (u - up);
                let page_shift = self.page_shift;
                // The reverse-map lines of the victim (read) and of the destination (written) are
                // fetched far ahead: both blocks were last touched long ago, so each new line is a
                // miss that the hardware prefetcher does not cover in time. The lines of the destination
                // this call writes and the victim's it scans (about the moves times the slots per
                // valid page left), RMAP_AHEAD slots on, here: nothing in the loop.
                let mut pf = w + RMAP_AHEAD;
                while pf < wend + RMAP_AHEAD {
                    prefetch_w(rmap.wrapping_add((dbase + pf) as usize));
                    pf += 16;
                }
                let scan = ((wend - w) as u64 * (end - cursor) as u64 / left.max(1) as u64) as u32 + 16;
                let mut pf = cursor + RMAP_AHEAD;
                while pf < cursor + scan + RMAP_AHEAD {
                    prefetch_w(rmap.wrapping_add((base + pf) as usize));
                    pf += 16;
                }
                // the loop has no branch on whether a slot holds a valid page (13 % of the victim's
                // slots do not, at random, at WA 8: a mispredicted branch each time); an invalid slot
                // writes NIL into the destination slot `w` (unwritten, and overwritten by the next move)
                // and its map update goes to `sink`. A moved page's victim slot keeps its logical page
                // number: that entry is stale (its map entry points elsewhere now), nothing reads the
                // slots behind the cursor, and the block is erased next (see `Model::rmap`): one store
                // a slot less, and the victim's reverse-map lines stay clean
                let group4 = page_shift == 2;
                let mut sink = 0u32;
                // (opaque to the optimiser: a store to a local nobody reads would become a branch again)
                let sink: *mut u32 = std::hint::black_box(&mut sink as *mut u32);
                while w < wend {
                    // Fast path, a whole read group (`gsz` slots from a group start) at a time when every
                    // slot of it is scanned in this call (each moves at most one page) and the prefetch
                    // ahead stays in the victim: the group's read goes first when a slot of it is valid
                    // (the invalid slots before that one move nothing), the moves follow, and the program
                    // unit that one of them may complete (a unit is at least a group) is booked after
                    // them with the channel transfer of the pages moved up to it: the moves in between
                    // only write the maps, so the order of every booking and random draw is the same
                    // as page by page below.
                    // (groups of 4 slots, 16 KiB NAND pages: a constant, so the group's slots are unrolled)
                    if group4 && cursor & 3 == 0 && cursor + 4 + 32 <= end && wend - w >= 4 {
                        // SAFETY: cursor + 3 < end (above), as below
                        let gl = unsafe { rmap.add((base + cursor) as usize) };
                        let any = unsafe { *gl & *gl.add(1) & *gl.add(2) & *gl.add(3) } != NIL;
                        if any {
                            // a group after last_group (cursor is its first slot)
                            let g = cursor >> page_shift;
                            flush_moved!(w);
                            last_group = g;
                            next_group = (g + 1) << page_shift;
                            let info = self.info_of(cursor, slc);
                            ch = self.gc_read(info, slc, now);
                        }
                        for k in 0..4 {
                            let old = base + cursor + k;
                            // SAFETY: as below; old + 32 < base + end
                            let lpn = unsafe { *rmap.add(old as usize) };
                            let valid = lpn != NIL;
                            let l2 = unsafe { *rmap.add(old as usize + 32) };
                            prefetch_w(map.wrapping_add(l2.wrapping_add(1) as usize).wrapping_sub(1));
                            let ppn = dbase + w;
                            debug_assert!(!valid || (lpn as usize) < nmap);
                            let target: *mut u32 = std::hint::select_unpredictable(valid, map.wrapping_add(lpn as usize), sink);
                            unsafe {
                                *rmap.add(ppn as usize) = lpn;
                                *target = ppn;
                            }
                            w += valid as u32;
                        }
                        cursor += 4;
                        if w >= unit_end {
                            flush_moved!(unit_end);
                            let die = self.die_of(unit_end - 1, false);
                            self.program_unit(die, false, u, now);
                            unit_end += u;
                        }
                        continue;
                    }
                    let slot = cursor;
                    cursor += 1;
                    let old = base + slot;
                    // SAFETY: slot < end <= cap and the victim/destination
                    // superblocks lie inside rmap (checked above); lpn and
                    // l2 are mapped logical pages (< map.len()) or NIL.
                    let lpn = unsafe { *rmap.add(old as usize) };
                    let valid = lpn != NIL;
                    // prefetch the forward-map entry of a page a few slots ahead
                    let ahead = slot + 32;
                    if ahead < end {
                        let l2 = unsafe { *rmap.add((base + ahead) as usize) };
                        // map[l2] as map + (l2 + 1) - 1 in 32 bits: an empty slot (NIL) gives the word
                        // before map, a valid address that is never written (prefetches do not fault anyway)
                        prefetch_w(map.wrapping_add(l2.wrapping_add(1) as usize).wrapping_sub(1));
                    }
                    // a slot of a group after last_group (slots only increase; NIL + 1 wraps to 0)
                    if valid & (slot >= next_group) {
                        let g = slot >> page_shift;
                        flush_moved!(w);
                        last_group = g;
                        next_group = (g + 1) << page_shift;
                        let info = self.info_of(slot, slc);
                        ch = self.gc_read(info, slc, now);
                    }
                    let ppn = dbase + w;
                    debug_assert!(!valid || (lpn as usize) < nmap);
                    let target: *mut u32 = std::hint::select_unpredictable(valid, map.wrapping_add(lpn as usize), sink);
                    unsafe {
                        *rmap.add(ppn as usize) = lpn;
                        *target = ppn;
                    }
                    w += valid as u32;
                    // (w < unit_end after an invalid slot: unit_end moved on when w reached it)
                    if w == unit_end {
                        flush_moved!(w);
                        let die = self.die_of(w - 1, false);
                        self.program_unit(die, false, u, now);
                        unit_end += u;
                    }
                }
                pend += (w - wf) as u64;
                up = u - (unit_end - w);
                debug_assert!(w != cap || up == 0);
                done += (w - w0) as u64;
                left -= w - w0;
                let moved = w - w0;
                self.wp[di] = w;
                self.upos[gs] = up;
                self.valid[di] += moved;
                self.nand_write_pages += moved as u64;
                self.gc_moved_pages += moved as u64;
                if w == cap {
                    self.close(d);
                    self.open[gs] = NIL;
                }
            }
            flush_ch!();
            self.gc.last_group = last_group;
            self.gc.ch = ch as u32;
            self.valid[vi] = left;
            self.gc.cursor = cursor;
            if left > 0 || done == budget {
                return done;
            }
        }
        debug_assert_eq!(self.valid[vi], 0);
        self.erase(v, now);
        self.gc.victim = NIL;
        done + 1
    }

    /// `gc_run` with hot/cold separation: each moved page goes to the hot or
    /// the cold GC stream by the age of its data (page by page, plain loop).
    #[inline(never)]
    fn gc_run_sorted(&mut self, now: u64, budget: u64) -> u64 {
        let v = self.gc.victim;
        let vi = v as usize;
        let mut done = 0u64;
        if self.valid[vi] > 0 {
            let base = v * self.ppsb;
            let slc = self.slc[vi] != 0;
            while done < budget && self.valid[vi] > 0 {
                let slot = self.gc.cursor;
                self.gc.cursor += 1;
                let old = base + slot;
                let lpn = self.rmap[old as usize];
                if lpn == NIL {
                    continue;
                }
                let g = slot >> self.page_shift;
                if g != self.gc.last_group {
                    self.gc.last_group = g;
                    let info = self.info_of(slot, slc);
                    self.nand_read(info, slc, 0, now, false);
                    self.gc.ch = self.die_ch[(info & 0xffff) as usize];
                }
                let c = self.gc.ch as usize;
                self.ch_free[c] = max(now, self.ch_free[c]) + self.ch_page_ns;
                self.rmap[old as usize] = NIL;
                self.valid[vi] -= 1;
                let stream = if self.is_hot(lpn) { S_GC_HOT } else { S_GC };
                self.ensure_open(stream, now);
                self.append(stream, lpn, now);
                self.gc_moved_pages += 1;
                done += 1;
            }
            if self.valid[vi] > 0 || done == budget {
                return done;
            }
        }
        self.erase(v, now);
        self.gc.victim = NIL;
        done + 1
    }

    /// Run GC until one victim is erased (foreground, synchronous).
    fn gc_sync_victim(&mut self, now: u64) {
        if self.gc.victim == NIL && !self.gc_start(&[SET_NATIVE, SET_DYN]) {
            panic!("ssdsim: out of space and no GC victim (internal error)");
        }
        self.gc_run(now, u64::MAX);
    }

    /// Incremental foreground GC, called once per host page written.
    #[inline]
    fn gc_credit(&mut self, now: u64) {
        if self.gc.victim == NIL {
            if self.free_nat.len() as u32 >= self.p.gc_threshold_blocks {
                return;
            }
            if !self.gc_start(&[SET_NATIVE, SET_DYN]) {
                return;
            }
        }
        // pace: the nominal rate keeps the free count constant; scale it by
        // (deficit + 1) so free blocks are pulled back to the threshold
        let free = self.free_nat.len() as u32;
        let deficit = self.p.gc_threshold_blocks.saturating_sub(free) as u64;
        self.gc.credit += self.gc.add * (deficit + 1);
        // moves are done in batches of GC_BATCH (fewer calls; a batch is a
        // few host pages of delay) unless free blocks are running out
        if self.gc.credit < self.gc.need * if free > 2 { GC_BATCH } else { 1 } {
            return;
        }
        let mut n = if self.gc.need == 0 { u64::MAX } else { self.gc.credit / self.gc.need };
        self.gc.credit -= if self.gc.need == 0 { 0 } else { n * self.gc.need };
        while n > 0 {
            n -= self.gc_run(now, n);
            if self.gc.victim == NIL {
                if (self.free_nat.len() as u32) < self.p.gc_threshold_blocks && self.gc_start(&[SET_NATIVE, SET_DYN]) {
                    continue;
                }
                break;
            }
        }
    }

    fn erase(&mut self, b: u32, now: u64) {
        let bi = b as usize;
        for d in 0..self.dies as usize {
            let te = self.jitter(self.p.t_erase_ns);
            self.die_prog[d] = max(max(now, self.die_prog[d]), self.die_rd[d]) + te;
        }
        let _ = bi;
        self.erase_block_state(b);
    }

    /// State part of an erase (no timing).
    fn erase_block_state(&mut self, b: u32) {
        let bi = b as usize;
        debug_assert_eq!(self.valid[bi], 0);
        self.erase_cnt[bi] += 1;
        self.erase_total += self.dies as u64;
        self.erased_pages += self.wp[bi] as u64;
        if self.slc[bi] != 0 {
            self.slc_written_pages -= self.wp[bi] as u64;
            if b < self.n_nat {
                self.dyn_slc_blocks -= 1;
            }
        }
        // every page of an erased block is already unmapped (its reverse-map entries NIL or stale):
        // GC moved its valid pages, host writes and TRIM invalidated the rest
        // (purge clears rmap itself)
        debug_assert!((0..self.wp[bi]).all(|s| !self.rmap_live(b * self.ppsb + s)));
        self.wp[bi] = 0;
        self.hot[bi] = 0;
        self.state[bi] = ST_FREE;
        if b < self.n_nat {
            self.slc[bi] = 0;
            self.free_nat.push_back(b);
        } else {
            self.free_static.push_back(b);
        }
    }

    // ------------------------------------------------------------------
    // host operations
    /// Write one 4K page at time `now`; returns the earliest completion time
    /// imposed by the write buffer (NAND backlog).
    #[inline]
    fn host_write_page(&mut self, lpn: u32, now: u64) -> u64 {
        let old = self.map[lpn as usize];
        let mut hot = false;
        if old != NIL {
            hot = self.p.hot_cold != 0 && self.is_hot(lpn);
            self.invalidate(old);
            self.map[lpn as usize] = NIL;
        } else {
            self.live_pages += 1;
        }
        if self.p.hot_cold != 0 {
            let soon = (old != NIL && self.is_young(lpn)) as u16;
            self.epoch[lpn as usize] = (self.host_pages / self.epoch_pages) as u16 & 0x7fff | soon << 15;
        }
        self.host_pages += 1;
        let slc_possible = !self.free_static.is_empty() || self.dyn_max_blocks > 0;
        let stream = if self.open[S_HOST_SLC] != NIL || (slc_possible && self.ensure_open(S_HOST_SLC, now)) {
            S_HOST_SLC
        } else {
            let s = if hot { S_HOST_HOT } else { S_HOST_NAT };
            self.hot_writes += hot as u64;
            if self.open[s] == NIL {
                self.ensure_open(s, now);
            }
            s
        };
        let slc = self.slc[self.open[stream] as usize] != 0;
        let die = self.append(stream, lpn, now);
        self.gc_credit(now);
        self.die_prog[die].saturating_sub(if slc { self.window_slc } else { self.window_nat })
    }

    /// A command through the controller (serial service time) and the host link (payload transfer):
    /// (controller done, link done).
    fn admit(&mut self, now: u64, len: u64, write: bool) -> (u64, u64) {
        let cmd = if write && self.p.ctrl_write_cmd_ns > 0 { self.p.ctrl_write_cmd_ns } else { self.p.ctrl_cmd_ns };
        let tc = max(now, self.ctrl_free) + cmd;
        self.ctrl_free = tc;
        let xfer = if len == PAGE { self.link_page_ns } else { len * 1000 / self.p.link_mb_s };
        let tl = max(tc, self.link_free) + xfer;
        self.link_free = tl;
        (tc, tl)
    }

    /// Host write of `len` bytes at `off` submitted at `now`; returns completion time.
    pub fn write_io(&mut self, now: u64, off: u64, len: u64) -> u64 {
        let (tc, tl) = self.admit(now, len, true);
        let (first, last) = (off / PAGE, (off + len + PAGE - 1) / PAGE);
        let mut acc = tl;
        // read-modify-write of partially written 4K pages
        if off % PAGE != 0 || (off + len) % PAGE != 0 {
            for lpn in [first, last - 1] {
                let pg_lo = lpn * PAGE;
                let partial = off > pg_lo || off + len < pg_lo + PAGE;
                let ppn = self.map[lpn as usize];
                if partial && ppn != NIL {
                    let (b, slot) = self.ppsb_div.divrem(ppn);
                    let slc = self.slc[b as usize] != 0;
                    let info = self.info_of(slot, slc);
                    let r = self.nand_read(info, slc, 1, tc, true);
                    acc = max(acc, r);
                }
                if first == last - 1 {
                    break;
                }
            }
        }
        let mut ready = acc;
        for lpn in first..last {
            let r = self.host_write_page(lpn as u32, acc);
            ready = max(ready, r);
        }
        self.host_write_bytes += len;
        if self.check_each_op {
            self.check_invariants().unwrap();
        }
        ready + self.p.host_overhead_ns + self.p.write_overhead_ns
    }

    /// Host read; returns completion time.
    pub fn read_io(&mut self, now: u64, off: u64, len: u64) -> u64 {
        let (tc, tl) = self.admit(now, len, false);
        let (first, last) = (off / PAGE, (off + len + PAGE - 1) / PAGE);
        let mut done = tl;
        let mut last_group = NIL;
        let mut npages = 0u64;
        let mut cur_info = 0u32;
        let mut cur_slc = false;
        for lpn in first..last {
            let ppn = self.map[lpn as usize];
            if ppn == NIL {
                continue;
            }
            let g = ppn >> self.page_shift;
            if g != last_group {
                if npages > 0 {
                    done = max(done, self.nand_read(cur_info, cur_slc, npages, tc, true));
                }
                last_group = g;
                let (b, slot) = self.ppsb_div.divrem(ppn);
                cur_slc = self.slc[b as usize] != 0;
                cur_info = self.info_of(slot, cur_slc);
                npages = 0;
            }
            npages += 1;
        }
        if npages > 0 {
            done = max(done, self.nand_read(cur_info, cur_slc, npages, tc, true));
        }
        self.host_read_bytes += len;
        done + self.p.host_overhead_ns
    }

    /// Unmap all 4K pages fully inside [off, off+len).
    pub fn trim(&mut self, off: u64, len: u64) {
        let first = (off + PAGE - 1) / PAGE;
        let last = ((off + len) / PAGE).min(self.user_pages as u64);
        for lpn in first..last {
            let ppn = self.map[lpn as usize];
            if ppn != NIL {
                self.invalidate(ppn);
                self.map[lpn as usize] = NIL;
                self.live_pages -= 1;
            }
        }
        if self.check_each_op {
            self.check_invariants().unwrap();
        }
    }

    /// Fresh-out-of-box: unmap everything, erase all used blocks, and reset
    /// every piece of state that shapes later performance to what a new drive
    /// has (GC progress, program-unit positions, the hot/cold classifier, the
    /// service-time random stream), so the same workload after a purge gives
    /// the same result whatever ran before. What a real purge keeps is kept:
    /// wear (erase counts) and the lifetime counters (host/NAND bytes, idle
    /// time, suspends, retries), and the clock, which advances by the erase
    /// time (all resources are free from then on, as on a new drive at 0).
    pub fn purge(&mut self) {
        let t0 = self.busy_until();
        for v in self.map.iter_mut() {
            *v = NIL;
        }
        self.live_pages = 0;
        self.gc = GcState { victim: NIL, ..Default::default() };
        self.open = [NIL; N_STREAMS];
        self.upos = [0; N_STREAMS];
        for e in self.epoch.iter_mut() {
            *e = 0;
        }
        self.host_pages = 0;
        self.hot_writes = 0;
        self.rng = RNG_SEED;
        for s in 0..3 {
            let n = self.bk[s].head.len() - 1;
            self.bk[s] = Buckets::new(n);
        }
        // the bucket links of the closed blocks (stale once the buckets are emptied)
        self.next.fill(NIL);
        self.prev.fill(NIL);
        let mut erased = 0u64;
        self.free_nat.clear();
        self.free_static.clear();
        for b in 0..self.n_blocks {
            let bi = b as usize;
            self.valid[bi] = 0;
            let base = bi * self.ppsb as usize;
            for slot in &mut self.rmap[base..base + self.wp[bi] as usize] {
                *slot = NIL;
            }
            if self.state[bi] != ST_FREE || self.wp[bi] != 0 {
                self.erase_block_state(b); // pushes onto a free list
                erased += 1;
            } else if b < self.n_nat {
                self.free_nat.push_back(b);
            } else {
                self.free_static.push_back(b);
            }
        }
        // erased blocks were pushed in index order together with the free
        // ones above; restore a canonical order
        let mut fnat: Vec<u32> = self.free_nat.drain(..).collect();
        fnat.sort_unstable();
        self.free_nat = fnat.into();
        let mut fst: Vec<u32> = self.free_static.drain(..).collect();
        fst.sort_unstable();
        self.free_static = fst.into();
        // every die erases its block of each used superblock in parallel
        let t = t0 + erased * self.p.t_erase_ns;
        for d in self.die_prog.iter_mut().chain(self.die_rd.iter_mut()).chain(self.plane_rd.iter_mut()) {
            *d = t;
        }
        for c in self.ch_free.iter_mut() {
            *c = t;
        }
        self.ctrl_free = t;
        self.link_free = t;
        self.clock = t;
        if self.check_each_op {
            self.check_invariants().unwrap();
        }
    }

    /// Latest reservation end of any resource (>= clock).
    pub fn busy_until(&self) -> u64 {
        let mut t = self.clock.max(self.ctrl_free).max(self.link_free);
        for &d in self.die_prog.iter().chain(self.die_rd.iter()) {
            t = t.max(d);
        }
        t
    }

    // ------------------------------------------------------------------
    // background work
    /// The host is idle during [t_start, t_end): after `idle_delay_ns`,
    /// fold SLC data and run GC until `idle_free_target_percent` is reached,
    /// at most at `idle_gc_mb_s` (page moves are issued paced at that rate).
    pub fn background(&mut self, t_start: u64, t_end: u64) {
        self.idle_ns += t_end.saturating_sub(t_start);
        let mut now = t_start.saturating_add(self.p.idle_delay_ns);
        if now >= t_end {
            return;
        }
        const CHUNK: u32 = 32;
        let ns_per_page = if self.p.idle_gc_mb_s > 0 { PAGE * 1000 / self.p.idle_gc_mb_s } else { 0 };
        while now < t_end {
            // stop when the dies are booked past the end of the idle period
            let mut busy = 0u64;
            for &d in &self.die_prog {
                busy = busy.max(d);
            }
            if busy >= t_end {
                break;
            }
            if self.gc.victim == NIL {
                let free = self.free_nat.len() as u32;
                let thr = self.p.gc_threshold_blocks;
                let started = if self.bk[SET_STATIC].count > 0 && free > thr + 1 {
                    self.gc_start(&[SET_STATIC])
                } else if self.bk[SET_DYN].count > 0 && free > 2 {
                    self.gc_start(&[SET_DYN])
                } else if free < self.idle_target_blocks.max(thr) {
                    // only worth it if the victim is not (almost) full
                    match self.bucket_peek(SET_NATIVE) {
                        Some(b) if self.valid[b as usize] + self.ppsb / 64 < self.ppsb => self.gc_start(&[SET_NATIVE]),
                        _ => false,
                    }
                } else {
                    false
                };
                if !started {
                    break;
                }
            }
            let moved0 = self.gc_moved_pages;
            self.gc_run(now, CHUNK as u64);
            now += (self.gc_moved_pages - moved0).max(1) * ns_per_page;
        }
        if self.check_each_op {
            self.check_invariants().unwrap();
        }
    }

    /// Advance the clock by `ns` with no host I/O.
    pub fn idle(&mut self, ns: u64) {
        let t0 = self.clock;
        let t1 = t0 + ns;
        self.background(t0, t1);
        self.clock = t1;
    }

    // ------------------------------------------------------------------
    pub fn counters(&self) -> Counters {
        let nand = self.nand_write_pages * PAGE;
        let nphys = self.n_blocks as u64 * self.dies as u64;
        let avg = self.erase_total as f64 / nphys as f64;
        Counters {
            host_write_bytes: self.host_write_bytes,
            host_read_bytes: self.host_read_bytes,
            nand_write_bytes: nand,
            waf: if self.host_write_bytes > 0 { nand as f64 / self.host_write_bytes as f64 } else { 0.0 },
            erase_count_total: self.erase_total,
            erase_count_avg: avg,
            erase_count_max: self.erase_cnt.iter().copied().max().unwrap_or(0) as u64,
            wear_percent: avg / self.p.rated_pe_cycles as f64 * 100.0,
            free_blocks: (self.free_nat.len() + self.free_static.len()) as u64,
            total_blocks: self.n_blocks as u64,
            slc_used_bytes: self.slc_written_pages * PAGE,
            slc_capacity_bytes: self.slc_capacity_pages() * PAGE,
            clock_ns: self.clock,
            power_on_ns: self.clock,
            live_bytes: self.live_pages * PAGE,
            gc_moved_bytes: self.gc_moved_pages * PAGE,
            suspend_count: self.suspends,
            read_retry_count: self.read_retries,
            free_native_blocks: self.free_nat.len() as u64,
            idle_ns: self.idle_ns,
        }
    }

    pub fn free_native_blocks(&self) -> u32 {
        self.free_nat.len() as u32
    }

    // ------------------------------------------------------------------
    /// Full consistency check of mapping, counts, buckets and counters.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut live = 0u64;
        for (lpn, &ppn) in self.map.iter().enumerate() {
            if ppn != NIL {
                live += 1;
                if self.rmap[ppn as usize] != lpn as u32 {
                    return Err(format!("map[{lpn}]={ppn} but rmap={}", self.rmap[ppn as usize]));
                }
            }
        }
        if live != self.live_pages {
            return Err(format!("live_pages {} != mapped {}", self.live_pages, live));
        }
        let mut dyn_blocks = 0u32;
        let mut slc_written = 0u64;
        let mut sum_wp = 0u64;
        let mut open_seen = 0;
        for b in 0..self.n_blocks {
            let bi = b as usize;
            let base = b as usize * self.ppsb as usize;
            let cap = self.cap_of(b);
            let wp = self.wp[bi];
            if wp > cap {
                return Err(format!("block {b} wp {wp} > cap {cap}"));
            }
            let mut v = 0;
            // stale entries (see `rmap`) only behind the GC victim's cursor and beyond the write pointer
            let stale_to = if b == self.gc.victim { self.gc.cursor } else { 0 };
            for s in 0..self.ppsb as usize {
                let l = self.rmap[base + s];
                if l != NIL {
                    if self.map[l as usize] != (base + s) as u32 {
                        if (s as u32) < stale_to || s as u32 >= wp {
                            continue;
                        }
                        return Err(format!("rmap[{}]={l} but map={}", base + s, self.map[l as usize]));
                    }
                    if s as u32 >= wp {
                        return Err(format!("block {b} slot {s} valid beyond wp"));
                    }
                    v += 1;
                }
            }
            if v != self.valid[bi] {
                return Err(format!("block {b} valid {} != counted {v}", self.valid[bi]));
            }
            let st = self.state[bi];
            if st == ST_FREE && (wp != 0 || v != 0 || self.hot[bi] != 0) {
                return Err(format!("free block {b} not empty (or still tagged hot)"));
            }
            if b >= self.n_nat && self.slc[bi] == 0 {
                return Err(format!("static block {b} not in SLC mode"));
            }
            if st != ST_FREE {
                sum_wp += wp as u64;
                if self.slc[bi] != 0 {
                    slc_written += wp as u64;
                    if b < self.n_nat {
                        dyn_blocks += 1;
                    }
                }
            }
            if st == ST_CLOSED && wp != cap {
                return Err(format!("closed block {b} not full"));
            }
            if st == ST_OPEN {
                open_seen += 1;
                if !self.open.contains(&b) {
                    return Err(format!("open block {b} not in any stream"));
                }
            }
            if st == ST_VICTIM && self.gc.victim != b {
                return Err(format!("victim-state block {b} is not the GC victim"));
            }
        }
        let open_cnt = self.open.iter().filter(|&&b| b != NIL).count();
        if open_cnt != open_seen {
            return Err(format!("open streams {open_cnt} != open blocks {open_seen}"));
        }
        if dyn_blocks != self.dyn_slc_blocks {
            return Err(format!("dyn_slc_blocks {} != {}", self.dyn_slc_blocks, dyn_blocks));
        }
        if slc_written != self.slc_written_pages {
            return Err(format!("slc_written_pages {} != {}", self.slc_written_pages, slc_written));
        }
        if sum_wp + self.erased_pages != self.nand_write_pages {
            return Err(format!("nand pages {} != written {} + erased {}", self.nand_write_pages, sum_wp, self.erased_pages));
        }
        let esum: u64 = self.erase_cnt.iter().map(|&e| e as u64).sum::<u64>() * self.dies as u64;
        if esum != self.erase_total {
            return Err(format!("erase_total {} != {}", self.erase_total, esum));
        }
        // free lists
        let mut seen = vec![false; self.n_blocks as usize];
        for (&b, pool_static) in self.free_nat.iter().map(|b| (b, false)).chain(self.free_static.iter().map(|b| (b, true))) {
            if seen[b as usize] || self.state[b as usize] != ST_FREE || (b >= self.n_nat) != pool_static {
                return Err(format!("free list corrupt at block {b}"));
            }
            seen[b as usize] = true;
        }
        let nfree = self.state.iter().filter(|&&s| s == ST_FREE).count();
        if nfree != self.free_nat.len() + self.free_static.len() {
            return Err("free list size mismatch".into());
        }
        // buckets
        let mut in_bucket = vec![false; self.n_blocks as usize];
        for s in 0..3 {
            let bk = &self.bk[s];
            let mut cnt = 0;
            for (v, &h) in bk.head.iter().enumerate() {
                let mut b = h;
                let mut prev = NIL;
                while b != NIL {
                    let bi = b as usize;
                    if in_bucket[bi] || self.valid[bi] as usize != v || self.state[bi] != ST_CLOSED || self.set_of(b) != s {
                        return Err(format!("bucket set {s} corrupt at block {b}"));
                    }
                    if v < bk.min {
                        return Err(format!("bucket set {s} min {} > {v}", bk.min));
                    }
                    if self.prev[bi] != prev {
                        return Err(format!("bucket prev link corrupt at {b}"));
                    }
                    in_bucket[bi] = true;
                    cnt += 1;
                    prev = b;
                    b = self.next[bi];
                }
            }
            if cnt != bk.count {
                return Err(format!("bucket set {s} count {} != {cnt}", bk.count));
            }
        }
        for b in 0..self.n_blocks as usize {
            if (self.state[b] == ST_CLOSED) != in_bucket[b] {
                return Err(format!("closed block {b} bucket membership wrong"));
            }
        }
        Ok(())
    }
}

/// Hot and cold pools (hot/cold separation): physical pages of the
/// non-free native blocks and the live pages they hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pools {
    pub hot_physical_pages: u64,
    pub hot_live_pages: u64,
    pub cold_physical_pages: u64,
    pub cold_live_pages: u64,
    pub free_pages: u64,
    /// host pages written / classified hot (since the last purge)
    pub host_pages: u64,
    pub hot_writes: u64,
}

impl Model {
    pub fn pools(&self) -> Pools {
        let mut p = Pools { host_pages: self.host_pages, hot_writes: self.hot_writes, ..Pools::default() };
        for b in 0..self.n_nat as usize {
            if self.state[b] == ST_FREE {
                p.free_pages += self.ppsb as u64;
            } else if self.hot[b] != 0 {
                p.hot_physical_pages += self.ppsb as u64;
                p.hot_live_pages += self.valid[b] as u64;
            } else {
                p.cold_physical_pages += self.ppsb as u64;
                p.cold_live_pages += self.valid[b] as u64;
            }
        }
        p
    }

    /// Unwritten pages in the native pool (free blocks + open-block tails).
    pub fn empty_pages(&self) -> u64 {
        let mut e = self.free_nat.len() as u64 * self.ppsb as u64;
        for &b in &self.open {
            if b != NIL && b < self.n_nat {
                e += (self.cap_of(b) - self.wp[b as usize]) as u64;
            }
        }
        e
    }
}

