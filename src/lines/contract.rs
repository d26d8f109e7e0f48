//! TEMPORARY: a local copy of the contract the native `.ncu-rep` reader (branch `native-rep`)
//! commits in `src/report/mod.rs`. Delete this file when that branch is merged and re-export
//! `crate::report::SourceCounters` instead.

use std::sync::Arc;

/// Per-instruction counters and the kernel's module, as a report made with the SourceCounters
/// section holds them.
#[derive(Debug, Clone, Default)]
pub struct SourceCounters {
    /// `launch__function_pcs`: pc - function_pc = SASS offset.
    pub function_pc: Option<u64>,
    /// Instanced metric name -> (absolute PC, value).
    pub instanced: Vec<(Arc<str>, Vec<(u64, f64)>)>,
    /// `SourceData.Binary` (ELF).
    pub cubin: Option<Arc<[u8]>>,
    /// Embedded source files, path -> text, if present.
    pub sources: Vec<(String, String)>,
    pub sm_revision: Option<u32>,
}
