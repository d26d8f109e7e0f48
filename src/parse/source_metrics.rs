//! The per-instruction metrics of ncu's SourceCounters section that the per-line sums read,
//! under every name ncu has given them (2022+ first, then 2020–2021, then 2019).
//!
//! They live beside the reader because it needs them too: a report holds thousands of metrics
//! with instanced values, and the native reader decodes the instances of only these (and
//! `launch__function_pcs`) when reading source counters; `lines/instructions.rs` takes each
//! field from the first name a report has.

/// Warp-level executions: one request per execution of a global memory instruction.
pub const EXECUTIONS: &[&str] = &["inst_executed"];
/// L1 tag requests: the 128-byte lines a request touches.
pub const TAG_REQUESTS: &[&str] = &["memory_l1_tag_requests_global"];
/// Thread-level executions with a true predicate (the active lanes).
pub const THREADS: &[&str] = &["thread_inst_executed_true"];
/// Global sectors fetched.
pub const SECTORS: &[&str] =
    &["memory_l2_theoretical_sectors_global", "memory_l2_sectors_global", "memory_l2_transactions_global"];
/// Global sectors perfectly coalesced accesses would fetch.
pub const IDEAL_SECTORS: &[&str] = &[
    "memory_l2_theoretical_sectors_global_ideal",
    "memory_l2_sectors_global_ideal",
    "memory_ideal_l2_transactions_global",
];
/// ncu's own count of sectors beyond the ideal.
pub const EXCESS_SECTORS: &[&str] =
    &["derived__memory_l2_theoretical_sectors_global_excessive", "derived__memory_l2_sectors_global_excessive"];
/// ncu 2020–2021 count shared accesses as "L1 Sectors Shared", later as wavefronts.
pub const SHARED_WAVEFRONTS: &[&str] = &["memory_l1_wavefronts_shared", "memory_l1_sectors_shared"];
/// Conflict-free shared wavefronts.
pub const SHARED_IDEAL: &[&str] = &["memory_l1_wavefronts_shared_ideal", "memory_l1_sectors_shared_ideal"];
/// Bits per thread of an access.
pub const ACCESS_BITS: &[&str] = &["memory_access_size_type"];
/// The memory space (global, shared, local).
pub const SPACE: &[&str] = &["memory_type"];
/// Load, store or atomic.
pub const ACCESS: &[&str] = &["memory_access_type"];

/// Every name above: the instanced metrics whose values the source counters carry.
pub const ALL: &[&[&str]] = &[
    EXECUTIONS,
    TAG_REQUESTS,
    THREADS,
    SECTORS,
    IDEAL_SECTORS,
    EXCESS_SECTORS,
    SHARED_WAVEFRONTS,
    SHARED_IDEAL,
    ACCESS_BITS,
    SPACE,
    ACCESS,
];

/// The start PCs of a launch's functions, which place the instances of the others.
pub const FUNCTION_PCS: &str = "launch__function_pcs";

/// Whether the source counters carry this metric's instances.
pub fn is_read(name: &str) -> bool {
    name == FUNCTION_PCS || ALL.iter().any(|names| names.contains(&name))
}
