//! ncu output → typed launch records. Nothing downstream sees a raw string from ncu.
//!
//! [`csv`] streams the CSV pages (raw, details, per-kernel summary) of every ncu version;
//! `no_results` explains an input that holds no results (a log, a text report, a binary file);
//! [`units`] converts every value to its base unit; [`ncu_rep`] reads `.ncu-rep` reports
//! natively, into the same records plus each launch's [`SourceCounters`].

pub mod csv;
pub mod gpgpusim;
pub mod ncu_rep;
mod no_results;
pub mod source_metrics;
pub mod units;

use std::sync::Arc;

/// One metric value as ncu printed it, converted to base units.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number in base units.
    Number {
        /// The value.
        value: f64,
        /// Its base unit (`byte`, `second`, or empty).
        unit: &'static str,
    },
    /// A non-numeric value (`CachePreferNone`, a GPU name, an array).
    Text(String),
    /// `n/a`, `nan`, `(!) n/a`, `no data` or empty: the metric exists but has no value.
    Missing(String),
}

impl Value {
    /// Parse `text` printed with `unit`.
    pub fn parse(text: &str, unit: &str) -> Value {
        Value::parse_scaled(text, units::scale(unit))
    }

    /// Parse `text` whose unit is already normalised to `scale` (the raw page computes each
    /// column's scale once, not once per row).
    pub fn parse_scaled(text: &str, scale: units::Scale) -> Value {
        let t = text.trim();
        match units::number(t).map(|v| scale.apply(v)) {
            Some(v) if v.is_finite() => Value::Number { value: v, unit: scale.base },
            // A finite number that overflows f64 once scaled (`1e300` Tbyte) is not a value
            // coalprof can compute with: keep the text, so the metric is absent, never inf.
            Some(_) => Value::Text(t.to_string()),
            None if t.is_empty() || is_missing_token(t) => Value::Missing(t.to_string()),
            None => Value::Text(t.to_string()),
        }
    }

    /// The number, if it is one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Number { value, .. } => Some(*value),
            _ => None,
        }
    }
}

fn is_missing_token(t: &str) -> bool {
    let t = t.trim_start_matches("(!)").trim().to_ascii_lowercase();
    // `no data`: how `--import` prints a metric the report holds without a value.
    matches!(t.as_str(), "n/a" | "nan" | "-nan" | "inf" | "-inf" | "no data" | "")
}

/// One profiled kernel launch (or, from a per-kernel summary, `launches` of them averaged).
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRecord {
    /// ncu's launch ID.
    pub id: Option<u64>,
    /// The profiled process (`[1234] stride`).
    pub process: Option<String>,
    /// The kernel, as ncu names it (demangled, with parameters for C++).
    pub kernel: String,
    /// Grid dimensions.
    pub grid: Option<[u32; 3]>,
    /// Block dimensions.
    pub block: Option<[u32; 3]>,
    /// The GPU's name.
    pub device: Option<String>,
    /// Its compute capability (`9.0`).
    pub cc: Option<String>,
    /// The NVTX range the launch ran in.
    pub nvtx: Option<String>,
    /// The rank (Slurm task, MPI process) that launched it, from its report's file name
    /// (`rank-3.ncu-rep`, what `profile --per-rank` writes); never set by the parsers.
    pub rank: Option<u32>,
    /// How many launches the values stand for: 1, or a summary's `Invocations` (values are then
    /// averages, so totals are `value × launches`).
    pub launches: u64,
    /// Metric values by ncu name, in report order.
    pub metrics: Vec<(Arc<str>, Value)>,
}

impl LaunchRecord {
    /// One launch of `kernel` with nothing else known yet (the parsers and tests fill in the rest).
    pub fn new(kernel: impl Into<String>) -> LaunchRecord {
        LaunchRecord {
            id: None,
            process: None,
            kernel: kernel.into(),
            grid: None,
            block: None,
            device: None,
            cc: None,
            nvtx: None,
            rank: None,
            launches: 1,
            metrics: Vec::new(),
        }
    }

    /// The value of the metric `name`, if the record has it.
    pub fn metric(&self, name: &str) -> Option<&Value> {
        self.metrics.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }
}

/// Per-instruction counters and the kernel's module, as a report made with the SourceCounters section holds them.
#[derive(Debug, Clone, Default)]
pub struct SourceCounters {
    /// `launch__function_pcs`: the start PCs of the launch's functions, the kernel's own first,
    /// so `pc - function_pcs[0]` is the SASS offset into the kernel.
    pub function_pcs: Vec<u64>,
    /// Per-instruction metrics the report has whose correlation ids are not PCs of the
    /// launch's functions (so they cannot be attributed); empty when all were placed.
    pub unplaced: Vec<Arc<str>>,
    /// Instanced metrics by name (`memory_l2_theoretical_sectors_global`, `inst_executed`, …): (absolute PC, value).
    #[allow(clippy::type_complexity)] // the shape the per-line attribution (`lines/`) is written against
    pub instanced: Vec<(Arc<str>, Vec<(u64, f64)>)>,
    /// The module's cubin (an ELF), from `SourceData.Binary`, resolved through references to earlier blocks.
    pub cubin: Option<Arc<[u8]>>,
    /// Source files embedded in the report (`--import-source yes`), path → text, if present.
    /// Shared: every launch of a module holds the same files, and a report of thousands of
    /// launches must not copy them thousands of times.
    pub sources: Arc<[(String, String)]>,
    /// The SM revision of the module (SourceData.SMRevision), if present.
    pub sm_revision: Option<u32>,
    /// The kernel's mangled name (ProfileResult field 5): its symbol in the cubin, which the
    /// demangled `LaunchRecord::kernel` does not name when templates are overloaded.
    pub mangled: Option<String>,
}

/// Parse `"(256, 1, 1)"` (ncu's Block Size / Grid Size columns).
pub fn parse_dims(s: &str) -> Option<[u32; 3]> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    // Every raw-page row has two of these: parsed in place, no allocation.
    let mut it = inner.split(',').map(|p| p.trim().parse::<u32>());
    let d = [it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?];
    it.next().is_none().then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_to_base_units() {
        assert_eq!(Value::parse("1.02", "Kbyte/block"), Value::Number { value: 1020.0, unit: "byte/block" });
        assert_eq!(Value::parse("7,520", "nsecond").number(), Some(7.52e-6));
        assert_eq!(Value::parse("(!) n/a", ""), Value::Missing("(!) n/a".into()));
        assert_eq!(Value::parse("PolicySpread", ""), Value::Text("PolicySpread".into()));
        assert_eq!(Value::parse("(!)", ""), Value::Missing("(!)".into()));
        assert_eq!(Value::parse("1e300", "Tbyte"), Value::Text("1e300".into()));
    }

    #[test]
    fn dims() {
        assert_eq!(parse_dims("(256, 1, 1)"), Some([256, 1, 1]));
        assert_eq!(parse_dims("(16, 64, 1)"), Some([16, 64, 1]));
        assert_eq!(parse_dims("256"), None);
    }
}
