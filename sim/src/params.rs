//! Drive parameters: a flat set of numeric keys (bytes, ns, counts).
//!
//! The Python loader (`ssdpts.simdrive.load_params`) converts the human
//! friendly preset TOML (GiB, µs, ...) into exactly these keys.

use std::collections::BTreeMap;

macro_rules! define_params {
    ($( $name:ident : $ty:ident = $def:expr, [$min:expr, $max:expr], $doc:expr; )*) => {
        /// All drive parameters (see `docs/simulator.md`).
        #[derive(Clone, Debug, PartialEq)]
        pub struct Params { $( #[doc = $doc] pub $name: $ty, )* }

        impl Default for Params {
            fn default() -> Self { Params { $( $name: $def as $ty, )* } }
        }

        impl Params {
            /// (key, min, max, is_integer, doc)
            pub const KEYS: &'static [(&'static str, f64, f64, bool, &'static str)] = &[
                $( (stringify!($name), $min as f64, $max as f64, !matches!(stringify!($ty).as_bytes(), b"f64"), $doc), )*
            ];

            /// Build from a key -> value map (all keys but `OPTIONAL` required).
            pub fn from_map(m: &BTreeMap<String, f64>) -> Result<Params, String> {
                for k in m.keys() {
                    if !Self::KEYS.iter().any(|e| e.0 == k) {
                        let allowed: Vec<&str> = Self::KEYS.iter().map(|e| e.0).collect();
                        return Err(format!("unknown parameter '{}' (allowed: {})", k, allowed.join(", ")));
                    }
                }
                let mut p = Params::default();
                $(
                    match m.get(stringify!($name)) {
                        // keys added after the first release keep their defaults (old callers and configs)
                        None if OPTIONAL.contains(&stringify!($name)) => {}
                        None => return Err(format!("missing parameter '{}'", stringify!($name))),
                        Some(&v) => {
                            let isint = !matches!(stringify!($ty).as_bytes(), b"f64");
                            if !(v >= $min as f64 && v <= $max as f64) || (isint && v.fract() != 0.0) {
                                return Err(format!("parameter '{}' = {} must be {} in [{}, {}]",
                                    stringify!($name), v, if isint { "an integer" } else { "a number" },
                                    $min as f64, $max as f64));
                            }
                            p.$name = v as $ty;
                        }
                    }
                )*
                p.validate()?;
                Ok(p)
            }

            pub fn to_map(&self) -> BTreeMap<String, f64> {
                let mut m = BTreeMap::new();
                $( m.insert(stringify!($name).to_string(), self.$name as f64); )*
                m
            }
        }
    };
}

/// Keys that may be left out of `from_map` (their default reproduces the
/// behaviour from before they existed).
pub const OPTIONAL: &[&str] = &[
    "planes", "t_read_step_ns", "t_jitter_percent", "read_retry_percent", "read_retry_max", "ctrl_write_cmd_ns",
    "write_overhead_ns", "suspend", "t_suspend_ns", "idle_gc_mb_s", "hot_cold",
];

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * 1024 * 1024;

define_params! {
    user_capacity_bytes: u64 = 16 * GIB, [65536, 1u64 << 44], "user (exported) capacity in bytes (rounded down to 4 KiB)";
    logical_block_size: u32 = 4096, [512, 4096], "reported logical block size in bytes";
    op_percent: f64 = 7.0, [0.5, 400.0], "over-provisioning: spare NAND as % of user capacity (beyond the GC reserve blocks)";
    channels: u32 = 4, [1, 64], "NAND channels";
    dies_per_channel: u32 = 4, [1, 64], "dies per channel (a superblock has one erase block per die)";
    block_bytes: u64 = 3 * MIB, [16 * KIB, 1 * GIB], "erase block size per die in native (TLC/MLC) mode, bytes";
    page_bytes: u32 = 16384, [4096, 1 << 20], "NAND page (read unit) per plane, bytes";
    planes: u32 = 1, [1, 16], "planes per die: reads on different planes of a die overlap; a program unit spans all planes";
    bits_per_cell: u32 = 3, [1, 4], "bits per cell of native mode; an SLC-mode block holds block_bytes/bits_per_cell";
    native_program_unit_bytes: u32 = 98304, [4096, 1 << 22], "bytes programmed per die per native program operation";
    slc_program_unit_bytes: u32 = 32768, [4096, 1 << 22], "bytes programmed per die per SLC program operation";
    t_read_ns: u64 = 60_000, [0, 100_000_000], "native-mode page read time (tR), ns";
    t_read_slc_ns: u64 = 30_000, [0, 100_000_000], "SLC-mode page read time, ns";
    t_read_step_ns: u64 = 0, [0, 100_000_000], "extra native read time per page type: lower tR, middle tR+step, upper tR+2 step, ns";
    t_jitter_percent: f64 = 0.0, [0.0, 50.0], "spread of every tR/tPROG/tBERS: uniform within +- this % of the nominal time";
    read_retry_percent: f64 = 0.0, [0.0, 100.0], "share of NAND reads that need read retry";
    read_retry_max: u32 = 3, [1, 64], "a retried read repeats the sense 1..=this many extra times (uniform)";
    t_prog_ns: u64 = 1_500_000, [1, 100_000_000], "native-mode program time per program unit (tPROG), ns";
    t_prog_slc_ns: u64 = 200_000, [1, 100_000_000], "SLC-mode program time per program unit, ns";
    t_erase_ns: u64 = 3_500_000, [0, 1_000_000_000], "block erase time (tBERS), ns";
    channel_mb_s: u64 = 800, [1, 1_000_000], "per-channel NAND bus bandwidth, MB/s (1e6 B/s)";
    link_mb_s: u64 = 3500, [1, 1_000_000], "host link bandwidth (PCIe/SATA), MB/s";
    ctrl_cmd_ns: u64 = 1500, [0, 100_000_000], "controller service time per command (serial resource), ns";
    ctrl_write_cmd_ns: u64 = 0, [0, 100_000_000], "controller service time per write command (mapping update), ns; 0 = ctrl_cmd_ns";
    host_overhead_ns: u64 = 6000, [0, 100_000_000], "fixed latency added to every command, ns";
    write_overhead_ns: u64 = 0, [0, 100_000_000], "extra fixed latency of a write (buffer commit), ns; not a throughput limit";
    suspend: u32 = 0, [0, 1], "1: host reads suspend a program/erase in progress on their die (0: reads queue behind it)";
    t_suspend_ns: u64 = 20_000, [0, 100_000_000], "cost of one suspend + resume: added to the read and to the suspended operation, ns";
    write_buffer_bytes: u64 = 2 * MIB, [0, 1u64 << 34], "write buffer size; host writes complete once buffered";
    slc_static_bytes: u64 = 256 * MIB, [0, 1u64 << 42], "static SLC cache (dedicated extra blocks), bytes (rounded up to superblocks)";
    slc_dynamic_max_bytes: u64 = 3 * GIB, [0, 1u64 << 42], "maximum dynamic SLC cache (native blocks used in SLC mode), bytes";
    slc_dynamic_fraction: f64 = 0.25, [0.0, 1.0], "dynamic SLC limit as fraction of free (unmapped) user space";
    gc_threshold_blocks: u32 = 4, [2, 100_000], "foreground GC runs while free superblocks < this";
    idle_delay_ns: u64 = 100_000_000, [0, 1u64 << 50], "idle time before background GC/folding starts, ns";
    idle_free_target_percent: f64 = 8.0, [0.0, 100.0], "idle GC works until this % of native-pool superblocks is free";
    hot_cold: u32 = 0, [0, 1], "1: hot/cold separation: overwrites of data younger than one capacity of host writes, and GC moves out of such blocks, go to separate (hot) open blocks";
    idle_gc_mb_s: u64 = 0, [0, 1_000_000], "rate bound of idle GC/folding (NAND page moves), MB/s; 0 = as fast as the dies allow";
    rated_pe_cycles: u32 = 1500, [1, 1_000_000], "rated program/erase cycles (for wear_percent)";
}


impl Params {
    pub fn validate(&self) -> Result<(), String> {
        let pg = 4096u64;
        let chk = |c: bool, msg: String| if c { Ok(()) } else { Err(msg) };
        chk(self.block_bytes % pg == 0, format!("block_bytes {} must be a multiple of 4096", self.block_bytes))?;
        chk(self.page_bytes as u64 % pg == 0, format!("page_bytes {} must be a multiple of 4096", self.page_bytes))?;
        chk((self.page_bytes / 4096).is_power_of_two(),
            format!("page_bytes {} must be 4096 times a power of two", self.page_bytes))?;
        chk(self.native_program_unit_bytes % self.page_bytes == 0,
            format!("native_program_unit_bytes {} must be a multiple of page_bytes {}", self.native_program_unit_bytes, self.page_bytes))?;
        chk(self.slc_program_unit_bytes % self.page_bytes == 0,
            format!("slc_program_unit_bytes {} must be a multiple of page_bytes {}", self.slc_program_unit_bytes, self.page_bytes))?;
        let plane_unit = self.page_bytes as u64 * self.planes as u64;
        chk(self.native_program_unit_bytes as u64 % plane_unit == 0 && self.slc_program_unit_bytes as u64 % plane_unit == 0,
            format!("program units ({} native, {} SLC) must be multiples of page_bytes x planes = {}",
                self.native_program_unit_bytes, self.slc_program_unit_bytes, plane_unit))?;
        chk(self.block_bytes % self.native_program_unit_bytes as u64 == 0,
            format!("block_bytes {} must be a multiple of native_program_unit_bytes {}", self.block_bytes, self.native_program_unit_bytes))?;
        let slc_block = self.block_bytes / self.bits_per_cell as u64;
        chk(self.block_bytes % self.bits_per_cell as u64 == 0 && slc_block % self.slc_program_unit_bytes as u64 == 0,
            format!("block_bytes/bits_per_cell = {} must be a multiple of slc_program_unit_bytes {}", slc_block, self.slc_program_unit_bytes))?;
        let dies = (self.channels * self.dies_per_channel) as u64;
        chk((self.block_bytes / pg) * dies < u32::MAX as u64 / 2, "superblock too large".into())?;
        chk(self.logical_block_size == 512 || self.logical_block_size == 4096,
            format!("logical_block_size {} must be 512 or 4096", self.logical_block_size))?;
        Ok(())
    }
}
