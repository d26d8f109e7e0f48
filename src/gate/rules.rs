//! Gate rules: the `[[gate]]` entries of `metrics.toml`, parsed strictly and compiled once.
//!
//! ```toml
//! [[gate]]
//! match = "stride/*"          # glob over row keys (pattern/variant) or kernel names; "re:…" for a regex
//! metric = "global_load_sectors_per_request"   # a metric name, or a glob such as "*"
//! max = 4.5                   # absolute limits: fail when current > max or current < min
//! regress = "+5%"             # relative to the baseline; the sign says which way is worse
//! min_delta = 0.05            # noise floor: a change smaller than this never regresses
//! severity = "fail"           # or "warn"
//! direction = "lower"         # or "higher": which way is better (default from the metric's name)
//! ```
//!
//! Rules are read in order and, for the same (row, metric), a later rule overrides an earlier one
//! key by key (gungraun's "last one wins"): a broad default can be tightened, loosened or turned
//! into a warning for one kernel without repeating its other keys.
//!
//! An entry as written ([`RuleSpec`]) and which way a metric is better ([`Direction`]) are the
//! catalogue's (`metrics.rs` reads them with the rest of the file); this module compiles them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use globset::{Glob, GlobBuilder, GlobMatcher};
use regex::Regex;
use serde::Deserialize;

use crate::error::Error;
use crate::metrics::{rule_entries, RuleEntry};
use crate::text::fmt_num;

pub(crate) use crate::metrics::{Direction, Directions, RuleSpec, Severity};

/// A relative limit: `+5%` is `{ fraction: 0.05, increase: true }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regress {
    /// 0.05 for 5%.
    pub fraction: f64,
    /// `+`: an increase regresses; `-`: a decrease regresses.
    pub increase: bool,
}

/// What is wrong with one value of a rule as written (its `regress`, its `match`, a metric
/// glob); the rule's usage error says it after the rule's place.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    /// `regress` without `+` or `-`.
    #[error("regress = \"{0}\" needs a sign and a percent, e.g. \"+5%\"")]
    RegressSign(String),
    /// `regress` without `%`.
    #[error("regress = \"{0}\" needs a percent sign, e.g. \"+5%\"")]
    RegressPercent(String),
    /// `regress` whose number is no non-negative percentage.
    #[error("regress = \"{text}\": `{number}` is not a non-negative percentage")]
    RegressNumber {
        /// The limit as written.
        text: String,
        /// Its number as written.
        number: String,
    },
    /// A `match = "re:…"` that is no regular expression.
    #[error("bad regex `{pattern}` in match: {why}")]
    Regex {
        /// The expression as written.
        pattern: String,
        /// Why it does not compile.
        why: regex::Error,
    },
    /// A `match` glob that is no glob.
    #[error("bad glob `{pattern}` in match: {why}")]
    Glob {
        /// The glob as written.
        pattern: String,
        /// Why it does not compile.
        why: globset::ErrorKind,
    },
}

impl Regress {
    /// Parse `"+5%"` / `"-2.5%"`; a missing sign or `%` is an error (no `'200%'` = 2x ambiguity).
    pub fn parse(text: &str) -> Result<Regress, ValueError> {
        let t = text.trim();
        let (increase, rest) = match t.chars().next() {
            Some('+') => (true, &t[1..]),
            Some('-') => (false, &t[1..]),
            _ => return Err(ValueError::RegressSign(text.to_string())),
        };
        let Some(number) = rest.strip_suffix('%') else {
            return Err(ValueError::RegressPercent(text.to_string()));
        };
        match number.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && !number.trim().starts_with(['+', '-']) => {
                Ok(Regress { fraction: v / 100.0, increase })
            }
            _ => Err(ValueError::RegressNumber { text: text.to_string(), number: number.to_string() }),
        }
    }

    /// The direction this limit treats as better.
    pub fn direction(self) -> Direction {
        if self.increase {
            Direction::Lower
        } else {
            Direction::Higher
        }
    }

    /// Back to the rule's notation, for messages.
    pub fn display(self) -> String {
        format!("{}{}%", if self.increase { '+' } else { '-' }, fmt_num(self.fraction * 100.0))
    }
}

/// Where a rule was written, for messages and annotations.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    pub file: PathBuf,
    /// 1-based line of the rule, when known.
    pub line: Option<usize>,
}

#[derive(Debug, Clone)]
enum Matcher {
    Glob(LazyGlob),
    Regex(Regex),
}

/// A glob checked when its rule is read and turned into a regex when first matched: every
/// command reads the default gate (four `match = "*"` rules), only `check` matches with it,
/// and building the four regexes was 0.17 ms of a 2.5 ms `analyze` (`docs/performance.md`,
/// "Native report reading").
#[derive(Debug, Clone)]
struct LazyGlob {
    glob: Glob,
    matcher: OnceLock<GlobMatcher>,
}

impl LazyGlob {
    fn is_match(&self, text: &str) -> bool {
        self.matcher.get_or_init(|| self.glob.compile_matcher()).is_match(text)
    }
}

impl Matcher {
    fn is_match(&self, text: &str) -> bool {
        match self {
            Matcher::Glob(g) => g.is_match(text),
            Matcher::Regex(r) => r.is_match(text),
        }
    }
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// 1-based position among the `[[gate]]` entries.
    pub index: usize,
    /// The rule as written.
    pub spec: RuleSpec,
    /// Where it was written (file and line), for annotations.
    pub location: Location,
    /// Parsed `regress`.
    pub regress: Option<Regress>,
    rows: Matcher,
    /// `None` when `metric` is a plain name.
    metrics: Option<LazyGlob>,
    /// The catalogue's directions, for metrics the rule does not give one for.
    directions: Arc<Directions>,
}

impl Rule {
    /// Whether the rule applies to a row with this key (`pattern/variant`) and kernel name.
    pub fn matches_row(&self, key: &str, kernel: &str) -> bool {
        self.rows.is_match(key) || self.rows.is_match(kernel)
    }

    /// Whether the rule names this metric.
    pub fn matches_metric(&self, metric: &str) -> bool {
        match &self.metrics {
            Some(g) => g.is_match(metric),
            None => self.spec.metric == metric,
        }
    }

    /// The metric name when the rule names exactly one metric (not a glob).
    pub fn literal_metric(&self) -> Option<&str> {
        self.metrics.is_none().then_some(self.spec.metric.as_str())
    }

    /// `rule #2 at metrics.toml:14`, for messages.
    pub fn describe(&self) -> String {
        match self.location.line {
            Some(l) => format!("rule #{} at {}:{l}", self.index, self.location.file.display()),
            None => format!("rule #{} in {}", self.index, self.location.file.display()),
        }
    }
}

#[derive(Deserialize)]
struct Document {
    #[serde(default)]
    gate: Vec<toml::Spanned<RuleSpec>>,
}

/// Parse the `gate` array of a `metrics.toml` document; every other table is ignored (other
/// modules own them). Errors are usage errors (exit 2) that name the file and the key or rule.
/// `directions` (the catalogue's) say which way each metric is better.
pub fn parse_rules(toml_text: &str, origin: &Path, directions: &Directions) -> Result<Vec<Rule>, Error> {
    let doc: Document = toml::from_str(toml_text)
        .map_err(|e| Error::usage(format!("`{}`: {}", origin.display(), e.to_string().trim_end())))?;
    let specs = doc.gate.into_iter().map(|s| (s.span().start, s.into_inner())).collect();
    compile_rules(rule_entries(specs, toml_text), origin, Arc::new(directions.clone()))
}

/// Compile `[[gate]]` entries read from `origin`, each with its line, as [`parse_rules`] does:
/// the catalogue reads its own with the rest of the file, in one parse, and keeps them as
/// written for the settings to compile here.
pub(crate) fn compile_rules(
    entries: Vec<RuleEntry>,
    origin: &Path,
    directions: Arc<Directions>,
) -> Result<Vec<Rule>, Error> {
    (entries.into_iter().enumerate())
        .map(|(i, RuleEntry { line, spec })| {
            let location = Location { file: origin.to_path_buf(), line: Some(line) };
            compile(i + 1, spec, location, directions.clone())
        })
        .collect()
}

fn compile(index: usize, spec: RuleSpec, location: Location, directions: Arc<Directions>) -> Result<Rule, Error> {
    let at = || match location.line {
        Some(l) => format!("`{}`: [[gate]] rule #{index} (line {l})", location.file.display()),
        None => format!("`{}`: [[gate]] rule #{index}", location.file.display()),
    };
    let bad = |msg: String| Error::usage(format!("{}: {msg}", at()));
    let rows = compile_matcher(&spec.pattern).map_err(|e| bad(e.to_string()))?;
    let metrics = if is_glob(&spec.metric) {
        Some(glob(&spec.metric).map_err(|e| bad(format!("metric `{}`: {}", spec.metric, e.kind())))?)
    } else {
        None
    };
    if spec.metric.trim().is_empty() {
        return Err(bad("metric is empty".into()));
    }
    let regress = spec.regress.as_deref().map(Regress::parse).transpose().map_err(|e| {
        bad(e.to_string())
            .with_hint("write the allowed change with its sign and unit: \"+5%\" fails on an increase of more than 5%")
    })?;
    for (name, v) in [("max", spec.max), ("min", spec.min), ("min_delta", spec.min_delta)] {
        if v.is_some_and(|v| !v.is_finite()) {
            return Err(bad(format!("{name} must be a finite number")));
        }
    }
    if spec.min_delta.is_some_and(|d| d < 0.0) {
        return Err(bad("min_delta must not be negative".into()));
    }
    if let (Some(lo), Some(hi)) = (spec.min, spec.max) {
        if lo > hi {
            return Err(bad(format!("min = {lo} is above max = {hi}: nothing could pass")));
        }
    }
    if let (Some(r), None) = (regress, &metrics) {
        let dir = spec.direction.unwrap_or_else(|| direction_of(&directions, &spec.metric));
        if r.direction() != dir {
            let want = if dir == Direction::Lower { '+' } else { '-' };
            return Err(bad(format!(
                "regress = \"{}\" on `{}`, where {} is better: a regression is {}; write \"{want}{}%\"",
                spec.regress.as_deref().unwrap_or_default(),
                spec.metric,
                if dir == Direction::Lower { "lower" } else { "higher" },
                if dir == Direction::Lower { "an increase" } else { "a decrease" },
                fmt_num(r.fraction * 100.0),
            )));
        }
    }
    let sets_anything = spec.max.is_some()
        || spec.min.is_some()
        || regress.is_some()
        || spec.min_delta.is_some()
        || spec.severity.is_some()
        || spec.direction.is_some();
    if !sets_anything {
        return Err(bad("sets no limit: add max, min or regress (or severity to override)".into()));
    }
    Ok(Rule { index, spec, location, regress, rows, metrics, directions })
}

fn direction_of(directions: &Directions, metric: &str) -> Direction {
    directions.get(metric).copied().unwrap_or_default()
}

fn compile_matcher(pattern: &str) -> Result<Matcher, ValueError> {
    if let Some(re) = pattern.strip_prefix("re:") {
        Regex::new(re).map(Matcher::Regex).map_err(|why| ValueError::Regex { pattern: re.to_string(), why })
    } else {
        (glob(pattern).map(Matcher::Glob))
            .map_err(|e| ValueError::Glob { pattern: pattern.to_string(), why: e.kind().clone() })
    }
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

fn glob(pattern: &str) -> Result<LazyGlob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|glob| LazyGlob { glob, matcher: OnceLock::new() })
}

/// The settings that apply to one (row, metric) after every matching rule, later ones winning key
/// by key. Each value remembers the rule that set it, so a violation can point at its line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effective<'r> {
    pub max: Option<(f64, &'r Rule)>,
    pub min: Option<(f64, &'r Rule)>,
    pub regress: Option<(Regress, &'r Rule)>,
    pub min_delta: f64,
    pub severity: Severity,
    pub direction: Option<Direction>,
    /// The last matching rule, for locations when no single key is to blame.
    pub last: Option<&'r Rule>,
}

impl<'r> Effective<'r> {
    /// Merge every rule that applies to (row, metric); `None` if none does.
    pub(crate) fn resolve(rules: &'r [Rule], key: &str, kernel: &str, metric: &str) -> Option<Effective<'r>> {
        let mut eff = Effective::default();
        for rule in rules.iter().filter(|r| r.matches_metric(metric) && r.matches_row(key, kernel)) {
            let s = &rule.spec;
            if let Some(v) = s.max {
                eff.max = Some((v, rule));
            }
            if let Some(v) = s.min {
                eff.min = Some((v, rule));
            }
            if let Some(r) = rule.regress {
                eff.regress = Some((r, rule));
            }
            if let Some(d) = s.min_delta {
                eff.min_delta = d;
            }
            if let Some(sev) = s.severity {
                eff.severity = sev;
            }
            if let Some(d) = s.direction {
                eff.direction = Some(d);
            }
            eff.last = Some(rule);
        }
        eff.last.is_some().then_some(eff)
    }

    /// Whether any limit is set (a rule that only sets `severity` checks nothing by itself).
    pub(crate) fn has_limit(&self) -> bool {
        self.max.is_some() || self.min.is_some() || self.regress.is_some()
    }

    /// The direction that decides what a regression is: the rules' own, else the catalogue's.
    pub(crate) fn direction(&self, metric: &str) -> Direction {
        let catalogue = || self.last.map_or(Direction::Lower, |r| direction_of(&r.directions, metric));
        self.direction.unwrap_or_else(catalogue)
    }

    /// `<= 4.5, +5% vs baseline`: the limits in words, for tables.
    pub(crate) fn describe_limits(&self) -> String {
        let mut parts = Vec::new();
        if let Some((v, _)) = self.min {
            parts.push(format!(">= {}", fmt_num(v)));
        }
        if let Some((v, _)) = self.max {
            parts.push(format!("<= {}", fmt_num(v)));
        }
        if let Some((r, _)) = self.regress {
            parts.push(r.display());
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Rule>, Error> {
        parse_rules(text, Path::new("metrics.toml"), &crate::metrics::Catalogue::builtin().directions())
    }

    fn usage_message(text: &str) -> String {
        match parse(text) {
            Err(e @ Error::Usage { .. }) => e.to_string(),
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn parses_the_documented_rule_and_ignores_other_tables() {
        let rules = parse(
            r#"
[metric.global_load_sectors_per_request]
unit = "sectors"

[[gate]]
match = "stride/*"
metric = "global_load_sectors_per_request"
max = 4.5
regress = "+5%"
min_delta = 0.05
severity = "fail"
"#,
        )
        .unwrap();
        assert_eq!(rules.len(), 1);
        let r = &rules[0];
        assert_eq!(r.location.line, Some(5), "the `[[gate]]` header line");
        assert_eq!(r.regress, Some(Regress { fraction: 0.05, increase: true }));
        assert!(r.matches_row("stride/stride_8", "stride_kernel"));
        assert!(!r.matches_row("coalesced/fp32", "copy"));
    }

    #[test]
    fn unknown_key_is_a_usage_error_naming_key_and_file() {
        let msg = usage_message("[[gate]]\nmatch = \"*\"\nmetric = \"m\"\nmaxx = 4.5\n");
        assert!(msg.contains("maxx"), "{msg}");
        assert!(msg.contains("metrics.toml"), "{msg}");
    }

    #[test]
    fn regress_needs_sign_and_percent() {
        for bad in ["5", "5%", "+5", "+x%", "+-5%", "%"] {
            let text = format!("[[gate]]\nmatch = \"*\"\nmetric = \"m\"\nregress = \"{bad}\"\n");
            let msg = usage_message(&text);
            assert!(msg.contains("rule #1") && msg.contains(bad), "{bad}: {msg}");
        }
        assert_eq!(Regress::parse("+0%").unwrap().fraction, 0.0);
        assert_eq!(Regress::parse("-2.5%").unwrap(), Regress { fraction: 0.025, increase: false });
    }

    #[test]
    fn regress_sign_must_match_the_metric_direction() {
        let msg =
            usage_message("[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sector_efficiency\"\nregress = \"+5%\"\n");
        assert!(msg.contains("\"-5%\""), "{msg}");
        parse("[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sector_efficiency\"\nregress = \"-5%\"\n").unwrap();
    }

    #[test]
    fn the_direction_comes_from_the_catalogue() {
        let rule = "[[gate]]\nmatch = \"*\"\nmetric = \"occupancy\"\nregress = \"+5%\"\n";
        let higher = Directions::from([("occupancy".to_string(), Direction::Higher)]);
        let err = parse_rules(rule, Path::new("m.toml"), &higher).unwrap_err();
        assert!(err.to_string().contains("higher is better"), "{err}");
        parse_rules(rule, Path::new("m.toml"), &Directions::new()).unwrap();
    }

    #[test]
    fn bad_glob_and_regex_name_rule_and_pattern() {
        let two =
            "[[gate]]\nmatch = \"*\"\nmetric = \"m\"\nmax = 1\n[[gate]]\nmatch = \"re:(\"\nmetric = \"m\"\nmax = 1\n";
        let msg = usage_message(two);
        assert!(msg.contains("rule #2") && msg.contains("`(`"), "{msg}");
        let msg = usage_message("[[gate]]\nmatch = \"stride/[\"\nmetric = \"m\"\nmax = 1\n");
        assert!(msg.contains("rule #1") && msg.contains("stride/["), "{msg}");
    }

    #[test]
    fn a_rule_must_set_something() {
        let msg = usage_message("[[gate]]\nmatch = \"*\"\nmetric = \"m\"\n");
        assert!(msg.contains("sets no limit"), "{msg}");
    }

    #[test]
    fn later_rules_override_earlier_ones_key_by_key() {
        let rules = parse(
            r#"
[[gate]]
match = "*"
metric = "global_load_sectors_per_request"
max = 4.5
regress = "+5%"

[[gate]]
match = "stride/stride_32"
metric = "global_load_sectors_per_request"
max = 32

[[gate]]
match = "re:^stride/"
metric = "*"
severity = "warn"
"#,
        )
        .unwrap();
        let m = "global_load_sectors_per_request";
        let e = Effective::resolve(&rules, "stride/stride_32", "k", m).unwrap();
        assert_eq!(e.max.map(|(v, r)| (v, r.index)), Some((32.0, 2)));
        assert_eq!(e.regress.map(|(_, r)| r.index), Some(1));
        assert_eq!(e.severity, Severity::Warn);
        let e = Effective::resolve(&rules, "coalesced/fp32", "k", m).unwrap();
        assert_eq!(e.max.map(|(v, _)| v), Some(4.5));
        assert_eq!(e.severity, Severity::Fail);
        assert!(Effective::resolve(&rules, "coalesced/fp32", "k", "dram_amplification").is_none());
        let e = Effective::resolve(&rules, "stride/stride_2", "k", "dram_amplification").unwrap();
        assert!(!e.has_limit());
    }

    #[test]
    fn kernel_names_match_too() {
        let rules = parse("[[gate]]\nmatch = \"gemm<*\"\nmetric = \"m\"\nmax = 1\n").unwrap();
        assert!(rules[0].matches_row("void gemm<float, 128>(const float*, float*, int)", "gemm<float, 128>"));
    }

    #[test]
    fn numbers_print_with_four_significant_digits() {
        assert_eq!(fmt_num(4.5), "4.5");
        assert_eq!(fmt_num(32.0), "32");
        assert_eq!(fmt_num(1.23456), "1.235");
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(1.5e12), "1.500e12");
    }
}
