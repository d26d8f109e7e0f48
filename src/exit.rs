//! The exit-code contract, documented in the README's table: scripts and CI branch on it.

use std::process::ExitCode;

/// What a run of coalprof ended with. Each variant is one row of the README's exit-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked for was done (and the gate, if any, passed).
    Ok = 0,
    /// The gate ran and at least one fail-severity check failed.
    GateFailed = 1,
    /// Bad flags, a bad `metrics.toml` or rules file, a bad expression or regex.
    Usage = 2,
    /// An input, report or baseline that cannot be read or is malformed; a kernel that failed.
    Input = 3,
    /// No profiler: no GPU or driver, no `ncu`/`nvcc`, or performance counters not permitted.
    ProfilerUnavailable = 4,
    /// Nothing matched: no kernel was profiled, no row matched a filter, no rule applied.
    NothingMatched = 5,
    /// A bug in coalprof itself (sysexits' EX_SOFTWARE).
    Internal = 70,
    /// Interrupted by Ctrl-C: the patterns that finished are on disk.
    Interrupted = 130,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}
