//! The data-frame module: the one place polars is used. Rows of raw metrics and launch facts go
//! in as columns; every derived metric of `metrics.toml` is evaluated column-wise, in file
//! order; values come back out onto the rows. A null input gives a null result (a metric absent
//! from a report stays absent, with a note), and a division by zero gives null, never inf/NaN.

mod formula;

use std::collections::{BTreeSet, HashMap};

use polars::prelude::*;

pub use formula::{Formula, FormulaError};
use formula::{Func, Op};

use crate::error::{Error, Result};
use crate::metrics::Catalogue;
use crate::results::Row;

/// Launch facts that do not come from ncu: the pattern's manifest, timing and the GPU.
pub const LAUNCH_FACTS: &[&str] =
    &["access_bytes", "algorithm_bytes_read", "algorithm_bytes_written", "event_time", "peak_bandwidth"];

/// Parsed formulas of a catalogue, checked once: every key a formula reads must be a raw
/// metric, a launch fact or an earlier derived metric.
pub struct Derivation {
    steps: Vec<(String, Formula)>,
    raw: BTreeSet<String>,
    /// Raw metrics that only stand in for others (ncu's own ratios): never reported missing.
    fallbacks: BTreeSet<String>,
}

impl Derivation {
    pub fn new(c: &Catalogue) -> Result<Derivation> {
        let mut known: BTreeSet<String> = c.raw.keys().cloned().collect();
        known.extend(LAUNCH_FACTS.iter().map(|s| s.to_string()));
        let mut steps = Vec::new();
        for (key, d) in &c.derived {
            let f = Formula::parse(&d.formula).map_err(|e| {
                Error::usage(format!("{}: derived metric `{key}`: {e} in `{}`", c.origin.display(), d.formula))
            })?;
            if let Some(v) = f.vars().into_iter().find(|v| !known.contains(*v)) {
                return Err(Error::usage(format!(
                    "{}: derived metric `{key}` uses `{v}`, which is neither a raw metric, a launch fact, nor a derived metric defined above it",
                    c.origin.display()
                )));
            }
            known.insert(key.clone());
            steps.push((key.clone(), f));
        }
        let fallbacks =
            c.raw.iter().filter(|(_, r)| r.kind == crate::metrics::Kind::Ratio).map(|(k, _)| k.clone()).collect();
        Ok(Derivation { steps, raw: c.raw.keys().cloned().collect(), fallbacks })
    }

    /// Add every derived metric to every row (raw metrics and launch facts must be in place).
    /// Returns the notices for the whole set: which raw metrics the input lacks.
    pub fn apply(&self, rows: &mut [Row]) -> Result<Vec<String>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let mut df = self.frame(rows).map_err(polars_error)?;
        for (key, f) in &self.steps {
            let values = eval(&df, f, rows.len()).map_err(polars_error)?;
            df.with_column(values.with_name(key.as_str().into()).into_series()).map_err(polars_error)?;
        }
        for (key, _) in &self.steps {
            let col = df.column(key).map_err(polars_error)?.f64().map_err(polars_error)?;
            for (row, v) in rows.iter_mut().zip(col) {
                if let Some(v) = v {
                    row.metrics.insert(key.clone(), v);
                }
            }
        }
        let mut missing: BTreeSet<&str> = BTreeSet::new();
        let mut absent: BTreeSet<&str> = BTreeSet::new();
        for row in rows.iter_mut() {
            let (m, a) = self.absent(row);
            missing.extend(m);
            absent.extend(a);
            note_denominator(row);
        }
        let mut notices = Vec::new();
        if !missing.is_empty() {
            notices.push(format!(
                "not in the input: {} (so {} derived metric{} could not be computed)",
                missing.into_iter().collect::<Vec<_>>().join(", "),
                absent.len(),
                if absent.len() == 1 { "" } else { "s" }
            ));
        }
        Ok(notices)
    }

    /// The frame of every key any formula reads, one row per result row, null where absent.
    fn frame(&self, rows: &[Row]) -> PolarsResult<DataFrame> {
        let mut keys: BTreeSet<&str> = self.raw.iter().map(String::as_str).collect();
        keys.extend(LAUNCH_FACTS);
        let columns = keys
            .into_iter()
            .map(|k| {
                let ca: Float64Chunked = rows.iter().map(|r| r.metrics.get(k).copied()).collect();
                ca.with_name(k.into()).into_series().into()
            })
            .collect::<Vec<Column>>();
        DataFrame::new(columns)
    }

    /// The raw metrics a row lacks, and the derived metrics absent because of them.
    fn absent<'a>(&'a self, row: &Row) -> (Vec<&'a str>, Vec<&'a str>) {
        let (mut missing, mut absent) = (Vec::new(), Vec::new());
        for (key, f) in &self.steps {
            if row.metrics.contains_key(key) {
                continue;
            }
            let lacking: Vec<&str> = f
                .vars()
                .into_iter()
                .filter(|v| self.raw.contains(*v) && !self.fallbacks.contains(*v) && !row.metrics.contains_key(*v))
                .collect();
            if !lacking.is_empty() {
                absent.push(key.as_str());
                missing.extend(lacking);
            }
        }
        (missing, absent)
    }
}

/// Say which denominator amplification used when the algorithm's bytes are not known.
fn note_denominator(row: &mut Row) {
    let over_requested = !row.metrics.contains_key("algorithm_bytes_read")
        && (row.metrics.contains_key("dram_amplification") || row.metrics.contains_key("l2_amplification"));
    if over_requested {
        row.notes
            .push("amplification is over the bytes the threads asked for (the algorithm's bytes are not known)".into());
    }
}

fn polars_error(e: PolarsError) -> Error {
    Error::usage(format!("deriving metrics failed: {e}"))
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn binary(a: &Float64Chunked, b: &Float64Chunked, f: impl Fn(f64, f64) -> f64) -> Float64Chunked {
    a.into_iter().zip(b).map(|(x, y)| finite(f(x?, y?))).collect()
}

/// Evaluate `f` over the columns of `df` (`n` rows).
fn eval(df: &DataFrame, f: &Formula, n: usize) -> PolarsResult<Float64Chunked> {
    Ok(match f {
        Formula::Num(v) => std::iter::repeat_n(Some(*v), n).collect(),
        Formula::Var(name) => df.column(name)?.f64()?.clone(),
        Formula::Neg(a) => eval(df, a, n)?.into_iter().map(|x| x.map(|x| -x)).collect(),
        Formula::Bin(op, a, b) => {
            let (a, b) = (eval(df, a, n)?, eval(df, b, n)?);
            match op {
                Op::Add => binary(&a, &b, |x, y| x + y),
                Op::Sub => binary(&a, &b, |x, y| x - y),
                Op::Mul => binary(&a, &b, |x, y| x * y),
                Op::Div => binary(&a, &b, |x, y| x / y),
            }
        }
        Formula::Call(func, args) => {
            let cols = args.iter().map(|a| eval(df, a, n)).collect::<PolarsResult<Vec<_>>>()?;
            match func {
                Func::Ceil => cols[0].into_iter().map(|x| x.map(f64::ceil)).collect(),
                Func::Min => binary(&cols[0], &cols[1], f64::min),
                Func::Max => binary(&cols[0], &cols[1], f64::max),
                Func::Coalesce => {
                    let mut iters: Vec<_> = cols.iter().map(|c| c.into_iter()).collect();
                    (0..n).map(|_| iters.iter_mut().map(|it| it.next().flatten()).fold(None, Option::or)).collect()
                }
            }
        }
    })
}

/// Metric keys in a stable display order: the catalogue's, then any others alphabetically.
pub fn ordered_keys(c: &Catalogue, rows: &[Row]) -> Vec<String> {
    let mut order: HashMap<&str, usize> = HashMap::new();
    for (i, k) in c.derived.iter().map(|(k, _)| k.as_str()).chain(c.raw.keys().map(String::as_str)).enumerate() {
        order.entry(k).or_insert(i);
    }
    let present: BTreeSet<&str> = rows.iter().flat_map(|r| r.metrics.keys().map(String::as_str)).collect();
    let mut keys: Vec<&str> = present.into_iter().collect();
    keys.sort_by_key(|k| (order.get(k).copied().unwrap_or(usize::MAX), *k));
    keys.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Source;

    fn row(pairs: &[(&str, f64)]) -> Row {
        Row { metrics: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(), ..Row::new("k", Source::Measured) }
    }

    #[test]
    fn derives_ratios_and_notes_what_is_missing() {
        let d = Derivation::new(&Catalogue::builtin()).unwrap();
        let mut rows = vec![
            row(&[("global_load_sectors", 268_427_291.0), ("global_load_requests", 8_388_608.0)]),
            row(&[
                ("dram_bytes_read", 1000.0),
                ("global_load_bytes_requested", 500.0),
                ("global_load_requests", 0.0),
                ("global_load_sectors", 0.0),
            ]),
        ];
        let notices = d.apply(&mut rows).unwrap();
        let spr = rows[0].metric("global_load_sectors_per_request").unwrap();
        assert!((spr - 31.999_026_656_150_818).abs() < 1e-9, "{spr}");
        assert!(rows[0].metric("dram_amplification").is_none());
        assert!(notices[0].starts_with("not in the input: ") && notices[0].contains("dram_bytes_read"), "{notices:?}");
        // 0 / 0 is absent, not NaN; amplification falls back to the bytes the threads asked for.
        assert!(rows[1].metric("global_load_sectors_per_request").is_none());
        assert_eq!(rows[1].metric("dram_amplification"), Some(2.0));
        assert!(rows[1].notes.iter().any(|n| n.contains("asked for")), "{:?}", rows[1].notes);
    }

    #[test]
    fn a_formula_reading_an_unknown_key_is_a_usage_error() {
        let text =
            crate::metrics::BUILTIN.replace("global_load_sectors / global_load_requests", "global_load_sectors / nope");
        let c = Catalogue::parse(&text, std::path::Path::new("m.toml")).unwrap();
        let err = Derivation::new(&c).err().unwrap();
        assert!(err.to_string().contains("`nope`"), "{err}");
    }
}
