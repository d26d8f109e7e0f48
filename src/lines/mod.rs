//! Which line wastes the bandwidth: per-instruction counters of a report made with the
//! `SourceCounters` section, attributed to SASS instructions and, through the cubin's line
//! tables, to source lines; diagnosed in the lesson's words.
//!
//! [`cubin`] reads the line tables of the cubin the native reader hands over in
//! [`crate::report::SourceCounters`].

pub mod aggregate;
pub mod cubin;
pub mod diagnose;
pub mod gate;
pub mod instructions;
pub mod sarif;
pub mod source;

pub use aggregate::{build, By, LineReport, LineRow, Options};
