//! Which line wastes the bandwidth: per-instruction counters of a report made with the
//! `SourceCounters` section, attributed to SASS instructions and, through the cubin's line
//! tables, to source lines; diagnosed in the lesson's words.
//!
//! [`cubin`] reads the line tables; [`contract`] is the shape the native report reader hands over.

pub mod contract;
pub mod cubin;
