//! `metrics.toml`: the raw ncu metrics coalprof collects and the metrics it derives from them,
//! which way each is better, and the default `[[gate]]` entries as written (the gate compiles
//! them: `gate/rules.rs`).
//!
//! Parsed strictly: an unknown key anywhere is an error naming it. The file in the working
//! directory (or `--metrics FILE`) wins; otherwise the copy built into the binary is used, so
//! coalprof works outside its checkout.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The `metrics.toml` shipped with this version of coalprof.
pub const BUILTIN: &str = include_str!("../metrics.toml");

/// One raw metric: the ncu name it is read from.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    /// The ncu metric name.
    pub ncu: String,
    /// The unit values are converted to.
    pub unit: String,
    /// What it counts.
    pub description: String,
    /// Older names of the same counter.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Names ncu's section tables print for it (details page).
    #[serde(default)]
    pub labels: Vec<String>,
    /// ncu's base unit, assumed when a report prints no unit for the metric.
    #[serde(default)]
    pub assume_unit: Option<String>,
    /// How it combines over launches.
    #[serde(default)]
    pub kind: Kind,
    /// Another raw metric this one can never be below in one launch (sectors ≥ requests: every
    /// request moves at least one sector); a launch where it is has a broken counter.
    #[serde(default)]
    pub at_least: Option<String>,
}

/// How a raw metric combines over launches.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A count or an amount: summed.
    #[default]
    Counter,
    /// A ratio ncu computed: averaged, weighted by launches.
    Ratio,
}

/// Where an ncu metric name lands: the catalogue key, and the unit to assume if none is printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// The catalogue key.
    pub key: String,
    /// The unit to assume when a report prints none.
    pub assume_unit: Option<String>,
    /// How it combines over launches.
    pub kind: Kind,
    /// The catalogue key this counter is never below (`at_least`), checked by the sanity check.
    pub at_least: Option<String>,
}

/// A launch fact: a number a row knows besides ncu's counters (the pattern's access width, the
/// algorithm's bytes, the CUDA-event time, the GPU's peak bandwidth).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    /// Its unit.
    pub unit: String,
    /// What it is.
    pub description: String,
}

/// One derived metric: a formula over raw metrics, launch facts and earlier derived metrics.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DerivedMetric {
    /// The formula (see `metrics.toml`'s header for the grammar).
    pub formula: String,
    /// Its unit.
    pub unit: String,
    /// What it means.
    pub description: String,
    /// The metric holding this one's ideal value, when there is one.
    #[serde(default)]
    pub ideal: Option<String>,
    /// Which way is better, for the gate.
    #[serde(default)]
    pub direction: Direction,
    /// Relative difference between measured and predicted beyond which it is a finding.
    #[serde(default)]
    pub tolerance: Option<f64>,
}

/// How a displayed value is rounded (`format` of a `[[column]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fmt {
    /// Two decimals (`4.00`).
    Ratio,
    /// An `x` factor (`8.00x`).
    Factor,
    /// A share shown as a percentage (`93%`).
    Percent,
    /// Bytes per second shown as GB/s.
    GbPerSec,
    /// Bytes shown as MB (10^6 bytes).
    Megabytes,
    /// Seconds shown as µs.
    Micros,
    /// A count with separators (`8,388,608`).
    Count,
}

/// One column of the human formats (`[[column]]`): which metric, under which header, rounded how.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// The metric shown.
    pub key: String,
    /// The column header.
    pub header: String,
    /// How values are rounded.
    pub format: Fmt,
    /// Shown by `compare` when no `--metric` is given.
    #[serde(default)]
    pub headline: bool,
    /// The metric holding this one's ideal (from its definition), for colouring.
    #[serde(skip)]
    pub ideal: Option<String>,
}

impl Column {
    /// A column for a metric the catalogue has no `[[column]]` for: its key, two decimals.
    pub fn plain(key: &str) -> Column {
        Column { key: key.into(), header: key.into(), format: Fmt::Ratio, headline: false, ideal: None }
    }
}

/// What happens when a check is violated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The gate fails (exit 1).
    #[default]
    Fail,
    /// Reported everywhere, never fails the gate.
    Warn,
}

/// Which way is better, for the gate and for findings: `direction` in `metrics.toml` (lower
/// unless a metric says otherwise), or a `[[gate]]` rule's own `direction`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Lower is better (sectors per request, amplification, wavefronts, conflicts).
    #[default]
    Lower,
    /// Higher is better (sector efficiency, bandwidth, fraction of peak).
    Higher,
}

/// Each catalogue metric's direction (metrics it does not name are lower-is-better).
pub type Directions = std::collections::BTreeMap<String, Direction>;

/// One `[[gate]]` entry exactly as written: plain data the catalogue reads with the rest of the
/// file; `crate::gate` compiles it (`gate/rules.rs` says what each key does).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Glob over row keys (`pattern/variant`) or kernel names; `re:<regex>` for a regex.
    #[serde(rename = "match")]
    pub pattern: String,
    /// A metric name (`global_load_sectors_per_request`) or a glob over metric names (`*`).
    pub metric: String,
    /// Fail when the current value is above this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Fail when the current value is below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Allowed change against the baseline: `"+5%"` (an increase of more than 5% regresses) or
    /// `"-5%"` (a decrease of more than 5% regresses, for higher-is-better metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regress: Option<String>,
    /// Changes smaller than this (absolute, in the metric's unit) never regress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_delta: Option<f64>,
    /// `fail` (default) or `warn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// `lower` or `higher` is better; defaults to the metric's `direction` in `metrics.toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
}

/// A `[[gate]]` entry and the line it starts on (for the gate's messages and annotations).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleEntry {
    /// 1-based line of its `[[gate]]` header.
    pub line: usize,
    /// The entry as written.
    pub spec: RuleSpec,
}

/// `[[gate]]` entries with the byte offset each starts at in `toml_text`, with their lines.
pub(crate) fn rule_entries(specs: Vec<(usize, RuleSpec)>, toml_text: &str) -> Vec<RuleEntry> {
    // Line numbers counted on from the previous entry's: the entries come in file order, and
    // counting from the top for each was a pass over the file per entry.
    let (mut at, mut line) = (0, 1);
    (specs.into_iter())
        .map(|(start, spec)| {
            let start = start.min(toml_text.len());
            if start < at {
                (at, line) = (0, 1);
            }
            line += toml_text.as_bytes()[at..start].iter().filter(|&&b| b == b'\n').count();
            at = start;
            RuleEntry { line, spec }
        })
        .collect()
}

/// The whole file. The `[[gate]]` entries are kept as written, each with its line, for the gate
/// module to compile (the settings do, once).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// Raw metrics by key.
    pub raw: BTreeMap<String, RawMetric>,
    /// Launch facts formulas may read besides the raw metrics.
    #[serde(default, rename = "fact")]
    pub facts: BTreeMap<String, Fact>,
    /// In file order: later formulas may use earlier results.
    #[serde(default, deserialize_with = "ordered")]
    pub derived: Vec<(String, DerivedMetric)>,
    /// Per-line counters (`[line_counter.*]`): what `crate::lines` sums per source line and
    /// access kind, the inputs of the per-line formulas.
    #[serde(default, rename = "line_counter")]
    pub line_counters: BTreeMap<String, Fact>,
    /// Per-line metrics (`[line.*]`), in file order: formulas over the per-line counters,
    /// evaluated by the same derivation as the kernel metrics.
    #[serde(default, deserialize_with = "ordered")]
    pub line: Vec<(String, DerivedMetric)>,
    /// What the human formats show, in order (`[[column]]`).
    #[serde(default, rename = "column")]
    pub columns: Vec<Column>,
    /// The `[[gate]]` entries as written, with their places in the file.
    #[serde(default)]
    gate: Vec<toml::Spanned<RuleSpec>>,
    /// The default gate rules: the `[[gate]]` entries, in file order, each with its line.
    #[serde(skip)]
    pub rules: Vec<RuleEntry>,
    /// The file it was read from, for error messages.
    #[serde(skip)]
    pub origin: PathBuf,
}

/// TOML tables are maps; keep the file's order so formulas can refer to earlier ones.
fn ordered<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<(String, DerivedMetric)>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<(String, DerivedMetric)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a table of derived metrics")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> std::result::Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = m.next_entry()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    d.deserialize_map(V)
}

/// The built-in catalogue as `build.rs` wrote it, in JSON (`null` if the file did not parse
/// then: the TOML parser reports why at run time).
const BUILTIN_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/metrics.json"));

/// `BUILTIN_JSON`'s shape: the tables but `[[gate]]`, and each gate entry with the byte offset
/// it starts at in `BUILTIN` (for its line number).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Precompiled {
    catalogue: Catalogue,
    gate: Vec<(usize, RuleSpec)>,
}

impl Catalogue {
    /// Parse `text`; `origin` names the file in error messages.
    ///
    /// The built-in text (also the checkout's own `metrics.toml`, unchanged) is read from the
    /// JSON `build.rs` made of it: TOML took 0.18 ms of a 2.4 ms `analyze`, JSON a fraction of
    /// that (`docs/performance.md`, "Native report reading"). Any other text is parsed.
    pub fn parse(text: &str, origin: &Path) -> Result<Catalogue> {
        let precompiled = if text == BUILTIN { serde_json::from_str(BUILTIN_JSON).ok().flatten() } else { None };
        let (mut c, gate) = match precompiled {
            Some(Precompiled { catalogue, gate }) => (catalogue, gate),
            None => Catalogue::from_toml(text, origin)?,
        };
        c.origin = origin.to_path_buf();
        c.rules = rule_entries(gate, text);
        c.validate()?;
        for col in &mut c.columns {
            col.ideal = c.derived.iter().find(|(k, _)| *k == col.key).and_then(|(_, d)| d.ideal.clone());
        }
        Ok(c)
    }

    /// The catalogue and its gate entries (with their byte offsets) as TOML reads them.
    fn from_toml(text: &str, origin: &Path) -> Result<(Catalogue, Vec<(usize, RuleSpec)>)> {
        let mut c: Catalogue = toml::from_str(text).map_err(|e| {
            Error::usage(format!("{}: {}", origin.display(), e.message().trim())).with_hint(location(text, e.span()))
        })?;
        let gate = std::mem::take(&mut c.gate).into_iter().map(|s| (s.span().start, s.into_inner())).collect();
        Ok((c, gate))
    }

    /// The file named by `--metrics`, else `metrics.toml` in `dir` if present, else the built-in.
    pub fn load(explicit: Option<&Path>, dir: &Path) -> Result<Catalogue> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => {
                let p = dir.join("metrics.toml");
                if !p.is_file() {
                    return Catalogue::parse(BUILTIN, Path::new("<built-in metrics.toml>"));
                }
                p
            }
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::usage(format!("cannot read `{}`: {e}", path.display())))?;
        Catalogue::parse(&text, &path)
    }

    /// The built-in catalogue (`BUILTIN`), parsed.
    pub fn builtin() -> Catalogue {
        Catalogue::parse(BUILTIN, Path::new("<built-in metrics.toml>")).expect("the built-in metrics.toml is valid")
    }

    /// Every ncu name, alias and label → where it is stored.
    pub fn ncu_names(&self) -> HashMap<String, Mapped> {
        let mut m = HashMap::new();
        for (key, raw) in &self.raw {
            let mapped = Mapped {
                key: key.clone(),
                assume_unit: raw.assume_unit.clone(),
                kind: raw.kind,
                at_least: raw.at_least.clone(),
            };
            for name in std::iter::once(&raw.ncu).chain(&raw.aliases).chain(&raw.labels) {
                m.insert(name.clone(), mapped.clone());
            }
        }
        m
    }

    /// The list for `ncu --metrics`.
    pub fn ncu_metric_list(&self) -> String {
        self.raw.values().map(|r| r.ncu.as_str()).collect::<Vec<_>>().join(",")
    }

    /// The derived metric `key`, if defined.
    pub fn derived(&self, key: &str) -> Option<&DerivedMetric> {
        self.derived.iter().find(|(k, _)| k == key).map(|(_, d)| d)
    }

    /// The per-line metric `key` (`[line.*]`), if defined.
    pub fn line_metric(&self, key: &str) -> Option<&DerivedMetric> {
        self.line.iter().find(|(k, _)| k == key).map(|(_, d)| d)
    }

    /// Every per-line key: the counters, then the derived ones in file order.
    pub fn line_keys(&self) -> impl Iterator<Item = &str> {
        self.line_counters.keys().map(String::as_str).chain(self.line.iter().map(|(k, _)| k.as_str()))
    }

    /// Unit of any key: raw metric, launch fact, derived metric, per-line counter or metric.
    pub fn unit(&self, key: &str) -> Option<&str> {
        (self.raw.get(key).map(|r| r.unit.as_str()))
            .or_else(|| self.facts.get(key).map(|f| f.unit.as_str()))
            .or_else(|| self.derived(key).map(|d| d.unit.as_str()))
            .or_else(|| self.line_counters.get(key).map(|l| l.unit.as_str()))
            .or_else(|| self.line_metric(key).map(|l| l.unit.as_str()))
    }

    /// Which way each metric is better, from the catalogue's `direction` keys (counters: lower).
    pub fn directions(&self) -> Directions {
        let derived = self.derived.iter().chain(&self.line).map(|(k, d)| (k.clone(), d.direction));
        let counters = self.raw.keys().chain(self.line_counters.keys()).map(|k| (k.clone(), Direction::Lower));
        counters.chain(derived).collect()
    }

    /// Whether `key` is defined anywhere in the catalogue.
    pub fn defines(&self, key: &str) -> bool {
        self.unit(key).is_some()
    }

    fn validate(&self) -> Result<()> {
        for key in self.line_keys() {
            let twice = self.line_counters.contains_key(key) && self.line_metric(key).is_some();
            if !key.starts_with("line_") || self.raw.contains_key(key) || self.derived(key).is_some() || twice {
                return Err(Error::usage(format!(
                    "{}: per-line metric `{key}` must start with `line_`, be defined once and not be a kernel metric",
                    self.origin.display()
                )));
            }
        }
        for (key, l) in &self.line {
            if let Some(ideal) = l.ideal.as_ref().filter(|i| self.line_metric(i).is_none()) {
                return Err(Error::usage(format!(
                    "{}: per-line metric `{key}` names an unknown ideal `{ideal}`",
                    self.origin.display()
                )));
            }
        }
        if let Some((key, other)) = self
            .raw
            .iter()
            .find_map(|(k, r)| r.at_least.as_ref().filter(|o| !self.raw.contains_key(*o)).map(|o| (k, o)))
        {
            return Err(Error::usage(format!(
                "{}: raw metric `{key}` is `at_least` `{other}`, which is not a raw metric",
                self.origin.display()
            )));
        }
        if let Some(key) = self.facts.keys().find(|k| self.raw.contains_key(*k)) {
            return Err(Error::usage(format!(
                "{}: `{key}` is both a raw metric and a launch fact",
                self.origin.display()
            )));
        }
        for (key, d) in &self.derived {
            if self.raw.contains_key(key) || self.facts.contains_key(key) {
                return Err(Error::usage(format!(
                    "{}: `{key}` is both a derived metric and a raw metric or launch fact",
                    self.origin.display()
                )));
            }
            if let Some(ideal) = &d.ideal {
                if self.derived(ideal).is_none() && !self.raw.contains_key(ideal) {
                    return Err(Error::usage(format!(
                        "{}: derived metric `{key}` names an unknown ideal `{ideal}`",
                        self.origin.display()
                    )));
                }
            }
        }
        if let Some(col) =
            self.columns.iter().find(|c| !self.raw.contains_key(&c.key) && self.derived(&c.key).is_none())
        {
            return Err(Error::usage(format!(
                "{}: the column `{}` shows `{}`, which is neither a raw nor a derived metric",
                self.origin.display(),
                col.header,
                col.key
            )));
        }
        Ok(())
    }
}

/// `line L, column C` of a byte span, for the hint under a TOML error.
fn location(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else { return "check the file's TOML syntax".into() };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, str::len) + 1;
    format!("at line {line}, column {col}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_keeps_derived_order() {
        let c = Catalogue::builtin();
        assert_eq!(c.raw["global_load_sectors"].ncu, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
        assert_eq!(c.derived[0].0, "global_load_sectors_per_request");
        assert_eq!(c.ncu_names()["dram__read_bytes"].key, "dram_bytes_read");
    }

    #[test]
    fn the_built_in_json_reads_as_the_toml_does() {
        // The JSON must read by itself: `parse` falls back to TOML when it does not.
        assert!(serde_json::from_str::<Option<Precompiled>>(BUILTIN_JSON).unwrap().is_some(), "build.rs wrote null");
        let origin = Path::new("<built-in metrics.toml>");
        let from_json = Catalogue::parse(BUILTIN, origin).unwrap();
        // One byte more (a newline) is not the built-in text: the TOML path.
        let from_toml = Catalogue::parse(&format!("{BUILTIN}\n"), origin).unwrap();
        let tables =
            |c: &Catalogue| format!("{:?}", (&c.raw, &c.facts, &c.derived, &c.line_counters, &c.line, &c.columns));
        assert_eq!(tables(&from_json), tables(&from_toml));
        assert_eq!(from_json.rules, from_toml.rules);
        assert!(!from_json.rules.is_empty() && from_json.derived.len() > 10);
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let text = BUILTIN.replacen("unit = \"sector\"", "unit = \"sector\"\nunits = \"x\"", 1);
        let err = Catalogue::parse(&text, Path::new("m.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("units") && msg.contains("m.toml"), "{msg}");
        assert!(err.hint().unwrap().starts_with("at line "), "{:?}", err.hint());
    }

    #[test]
    fn columns_come_in_file_order_with_their_ideals_and_name_only_known_metrics() {
        let c = Catalogue::builtin();
        assert_eq!(c.columns[0].key, "global_load_sectors_per_request");
        assert_eq!(c.columns[0].ideal.as_deref(), Some("global_load_ideal_sectors_per_request"));
        assert!(c.columns.iter().any(|c| c.key == "duration" && c.format == Fmt::Micros && c.headline));
        let text = BUILTIN.replacen("key = \"l2_amplification\"", "key = \"l2_amplificaton\"", 1);
        let msg = Catalogue::parse(&text, Path::new("m.toml")).unwrap_err().to_string();
        assert!(msg.contains("`l2_amplificaton`") && msg.contains("L2 amp"), "{msg}");
        let text = BUILTIN.replacen("format = \"factor\"", "format = \"fraction\"", 1);
        let msg = Catalogue::parse(&text, Path::new("m.toml")).unwrap_err().to_string();
        assert!(msg.contains("fraction"), "{msg}");
    }

    #[test]
    fn unknown_top_level_table_is_an_error() {
        let err = Catalogue::parse("[raw]\n[extra]\n", Path::new("m.toml")).unwrap_err();
        assert!(err.to_string().contains("extra"), "{err}");
    }
}

#[cfg(test)]
mod proptests {
    use std::path::Path;

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

        /// Cutting the real file anywhere and appending junk parses or fails as a usage error.
        #[test]
        fn damaged_metrics_toml_is_an_error_never_a_panic(cut in 0usize..8000, junk in ".{0,40}") {
            let text = super::BUILTIN;
            let mut end = cut.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let damaged = format!("{}{junk}", &text[..end]);
            if let Err(e) = super::Catalogue::parse(&damaged, Path::new("m.toml")) {
                prop_assert_eq!(e.exit(), crate::exit::Exit::Usage);
            }
        }
    }
}
