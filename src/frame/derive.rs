//! Derived metrics: each `metrics.toml` formula compiled once, its metric keys resolved to
//! slots, and evaluated row by row over the results frame (or rows made as rows), in file order
//! (a formula may read the ones above it). A null input gives a null result, and so does a
//! division by zero: never inf or NaN.
//!
//! The formulas were polars expressions once; a lazy query of forty `with_column`s took 3 ms
//! to plan for a one-row frame, most of a small report's `analyze` (`docs/performance.md`,
//! "Native report reading"). The evaluation below keeps their semantics exactly; the tests
//! `the_evaluator_agrees_with_polars_*` hold it to the same formulas evaluated by polars'
//! column arithmetic (`oracle`, below).

use std::collections::{BTreeSet, HashMap};

use polars_core::prelude::*;

use super::formula::{Formula, Func, Op};
use super::sanity::Suspect;
use super::{polars_error, Frame};
use crate::error::{Error, Result};
use crate::metrics::{Catalogue, Kind};
use crate::results::Row;

/// A backend that makes rows itself (GPGPU-Sim), and the raw metrics it measures: any other
/// raw metric of the catalogue it never provides (see [`Derivation::notices_by`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeasuredBy<'a> {
    /// As people call it: `GPGPU-Sim`.
    pub name: &'a str,
    /// The raw metrics (`metrics.toml` keys) it can give a row.
    pub measures: &'a [&'a str],
}

/// The formulas of a catalogue, checked and compiled once: every key a formula reads must be a
/// raw metric, a launch fact or a derived metric defined above it.
pub struct Derivation {
    steps: Vec<Step>,
    /// Raw metrics and launch facts: the columns a frame must have before deriving.
    inputs: BTreeSet<String>,
    raw: BTreeSet<String>,
    /// Raw metrics that only stand in for others (ncu's own ratios): never reported missing.
    fallbacks: BTreeSet<String>,
}

struct Step {
    key: String,
    formula: Formula,
    code: Code,
}

/// A formula with its keys resolved to slots: the inputs' (in `Derivation::inputs` order), then
/// each step's result.
#[derive(Debug, Clone)]
enum Code {
    Num(f64),
    Slot(usize),
    Neg(Box<Code>),
    Bin(Op, Box<Code>, Box<Code>),
    Call(Func, Vec<Code>),
}

impl Derivation {
    /// The kernel metrics: `[derived.*]` over the raw metrics and launch facts.
    pub fn new(c: &Catalogue) -> Result<Derivation> {
        let raw: BTreeSet<String> = c.raw.keys().cloned().collect();
        let mut inputs = raw.clone();
        inputs.extend(c.facts.keys().cloned());
        let fallbacks = c.raw.iter().filter(|(_, r)| r.kind == Kind::Ratio).map(|(k, _)| k.clone()).collect();
        Derivation::compile(c, "derived metric", &c.derived, inputs, raw, fallbacks)
    }

    /// The per-line metrics: `[line.*]` over the per-line counters (`[line_counter.*]`), the
    /// same grammar and the same evaluation as the kernel metrics.
    pub fn lines(c: &Catalogue) -> Result<Derivation> {
        let counters: BTreeSet<String> = c.line_counters.keys().cloned().collect();
        Derivation::compile(c, "per-line metric", &c.line, counters.clone(), counters, BTreeSet::new())
    }

    fn compile(
        c: &Catalogue,
        what: &str,
        defined: &[(String, crate::metrics::DerivedMetric)],
        inputs: BTreeSet<String>,
        raw: BTreeSet<String>,
        fallbacks: BTreeSet<String>,
    ) -> Result<Derivation> {
        let mut known = inputs.clone();
        let mut slots: HashMap<String, usize> = inputs.iter().cloned().zip(0..).collect();
        let mut steps = Vec::new();
        for (key, d) in defined {
            let formula = Formula::parse(&d.formula)
                .map_err(|e| Error::usage(format!("{}: {what} `{key}`: {e} in `{}`", c.origin.display(), d.formula)))?;
            if let Some(v) = formula.vars().into_iter().find(|v| !known.contains(*v)) {
                return Err(Error::usage(format!(
                    "{}: {what} `{key}` uses `{v}`, which is neither an input of its table nor a metric defined above it",
                    c.origin.display()
                )));
            }
            known.insert(key.clone());
            let code = Code::of(&formula, &slots);
            // A key defined twice: later formulas read the later definition.
            slots.insert(key.clone(), inputs.len() + steps.len());
            steps.push(Step { key: key.clone(), formula, code });
        }
        Ok(Derivation { steps, inputs, raw, fallbacks })
    }

    /// The raw metrics and launch facts formulas read.
    pub fn inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().map(String::as_str)
    }

    /// Add every derived metric as a column of `frame` (absent inputs become null columns).
    ///
    /// Columns are found through one name index and added in one `hstack_mut`: polars finds a
    /// column by name with a linear search, and a lookup per input and a `with_column` per
    /// step were 0.1 ms of a small report's 2.5 ms `analyze` (`docs/performance.md`, "Native
    /// report reading").
    pub fn derive(&self, frame: Frame) -> Result<Frame> {
        let Frame(mut df) = frame.with_float_columns(self.inputs())?;
        let height = df.height();
        let index: HashMap<String, usize> =
            df.get_column_names().into_iter().enumerate().map(|(i, n)| (n.to_string(), i)).collect();
        let columns: Vec<Vec<Option<f64>>> =
            self.inputs().map(|k| super::floats_of(&df.get_columns()[index[k]])).collect::<Result<_>>()?;
        let mut added = Vec::new();
        let mut derived = vec![Vec::with_capacity(height); self.steps.len()];
        let mut slots = vec![None; self.inputs.len() + self.steps.len()];
        for i in 0..height {
            for (slot, column) in slots.iter_mut().zip(&columns) {
                *slot = column[i];
            }
            self.evaluate(&mut slots);
            for (out, v) in derived.iter_mut().zip(&slots[self.inputs.len()..]) {
                out.push(*v);
            }
        }
        for (step, values) in self.steps.iter().zip(derived) {
            let column = Column::new(step.key.as_str().into(), values);
            match index.get(&step.key) {
                // A frame that already has the metric (derived once before) gets it replaced.
                Some(&i) => {
                    df.replace_column(i, column).map_err(polars_error)?;
                }
                None => added.push(column),
            }
        }
        df.hstack_mut(&added).map_err(polars_error)?;
        Ok(Frame(df))
    }

    /// Every step, in order, over one row's `slots` (its inputs filled in).
    fn evaluate(&self, slots: &mut [Option<f64>]) {
        let first = self.inputs.len();
        for (i, step) in self.steps.iter().enumerate() {
            slots[first + i] = finite(step.code.eval(slots));
        }
    }

    /// Derive rows that were made as rows (the model's predictions): through a frame and back.
    /// Returns the notices for the whole set: which raw metrics the input lacks.
    pub fn apply(&self, rows: &mut [Row]) -> Result<Vec<String>> {
        self.fill(rows)?;
        Ok(self.notices(rows))
    }

    /// Add every derived metric to rows made as rows, and nothing else (no notices).
    pub fn fill(&self, rows: &mut [Row]) -> Result<()> {
        let mut slots = vec![None; self.inputs.len() + self.steps.len()];
        for row in rows {
            for (slot, key) in slots.iter_mut().zip(&self.inputs) {
                *slot = row.metrics.get(key).copied();
            }
            self.evaluate(&mut slots);
            for (step, v) in self.steps.iter().zip(&slots[self.inputs.len()..]) {
                if let Some(v) = v {
                    row.metrics.insert(step.key.clone(), *v);
                }
            }
        }
        Ok(())
    }

    /// What the rows lack, once for the set, and per row how amplification was computed.
    pub fn notices(&self, rows: &mut [Row]) -> Vec<String> {
        self.notices_by(rows, None)
    }

    /// [`notices`](Self::notices) of rows a known backend made: the raw metrics it never
    /// measures are said as `not measured by <backend>` (nothing is wrong with the input; the
    /// words depend on the backend only, so a run of several patterns says them once), and one
    /// it measures but a row lacks is no alarm at all (the backend counts what ran: a kernel
    /// without shared stores has no shared-store counters). Without a backend, every raw metric
    /// a row lacks is `not in the input`, with the count of derived metrics it costs.
    pub(crate) fn notices_by(&self, rows: &mut [Row], backend: Option<&MeasuredBy>) -> Vec<String> {
        let mut never: BTreeSet<&str> = BTreeSet::new();
        // The raw metrics the input lacks, and the derived metrics absent for want of one.
        let (mut missing, mut absent): (BTreeSet<&str>, BTreeSet<&str>) = Default::default();
        for row in rows.iter_mut() {
            for (step, raw) in self.absent(row) {
                for r in raw {
                    match backend {
                        Some(b) if b.measures.contains(&r) => {}
                        Some(_) => {
                            never.insert(r);
                        }
                        None => {
                            missing.insert(r);
                            absent.insert(step);
                        }
                    }
                }
            }
            note_denominator(row);
            note_shared_bytes(row);
        }
        let list = |set: BTreeSet<&str>| set.into_iter().collect::<Vec<_>>().join(", ");
        let mut out = Vec::new();
        if let (Some(b), false) = (backend, never.is_empty()) {
            out.push(format!(
                "not measured by {}: {} (the metrics derived from them are left out)",
                b.name,
                list(never)
            ));
        }
        if !missing.is_empty() {
            out.push(format!(
                "not in the input: {} (so {} derived metric{} could not be computed)",
                list(missing),
                absent.len(),
                if absent.len() == 1 { "" } else { "s" }
            ));
        }
        out
    }

    /// The raw metrics `key` is computed from, directly or through the metrics it reads, ncu's
    /// own ratios (which only stand in) left out: what a report must hold for `key`.
    pub fn reads<'a>(&'a self, key: &'a str) -> BTreeSet<&'a str> {
        let mut out = BTreeSet::new();
        let mut todo = vec![key];
        let mut seen = BTreeSet::new();
        while let Some(k) = todo.pop() {
            if !seen.insert(k) {
                continue;
            }
            if self.raw.contains(k) && !self.fallbacks.contains(k) {
                out.insert(k);
            }
            // The last definition of a key is the one read (as in `compile`).
            if let Some(step) = self.steps.iter().rev().find(|s| s.key == k) {
                todo.extend(step.formula.vars());
            }
        }
        out
    }

    /// `key` and every derived metric that reads it, directly or through another.
    pub fn dependents(&self, key: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::from([key.to_string()]);
        for step in &self.steps {
            if step.formula.vars().iter().any(|v| out.contains(*v)) {
                out.insert(step.key.clone());
            }
        }
        out
    }

    /// Take broken counters out of the rows they land in, with everything derived from them:
    /// each such metric goes from the row's metrics to its `broken` map with the reason, so a
    /// gate rule on it fails saying why. Returns one notice per broken counter.
    pub fn discard(&self, rows: &mut [Row], suspects: &[Suspect]) -> Vec<String> {
        let mut notices = Vec::new();
        for s in suspects {
            let lands = |r: &Row| {
                r.kernel == s.kernel
                    && r.rank == s.rank
                    && (r.grid, r.block) == s.shape
                    && (r.id.is_none() || r.id == s.launch)
            };
            let dependents = self.dependents(&s.key);
            for row in rows.iter_mut().filter(|r| lands(r)) {
                for k in &dependents {
                    row.metrics.remove(k);
                    row.broken.entry(k.clone()).or_insert_with(|| s.reason.clone());
                }
                if !row.notes.contains(&s.reason) {
                    row.notes.push(s.reason.clone());
                }
            }
            if !notices.contains(&s.reason) {
                notices.push(s.reason.clone());
            }
        }
        notices
    }

    /// The derived metrics' keys, in evaluation order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().map(|s| s.key.as_str())
    }

    /// The derived metrics a row lacks for want of raw metrics, each with the raw metrics it
    /// reads that the row lacks.
    fn absent<'a>(&'a self, row: &Row) -> Vec<(&'a str, Vec<&'a str>)> {
        let mut out = Vec::new();
        for step in &self.steps {
            // A broken counter's absence is said where it was found (`discard`), not as missing.
            if row.metrics.contains_key(&step.key) || row.broken.contains_key(&step.key) {
                continue;
            }
            let lacking: Vec<&str> = (step.formula.vars().into_iter())
                .filter(|v| self.raw.contains(*v) && !self.fallbacks.contains(*v) && !row.metrics.contains_key(*v))
                .collect();
            if !lacking.is_empty() {
                out.push((step.key.as_str(), lacking));
            }
        }
        out
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

/// Say why sector efficiency and amplification are absent when lanes share bytes (the
/// `unless_above` of their formulas in `metrics.toml`).
fn note_shared_bytes(row: &mut Row) {
    let (Some(requested), Some(sectors)) =
        (row.metric("global_load_bytes_requested"), row.metric("global_load_sectors"))
    else {
        return;
    };
    if requested > sectors * 32.0 {
        row.notes.push(
            "lanes share bytes (a broadcast): each fetched sector serves more than it holds, so sector efficiency and \
             amplification do not measure waste and are left out; 1 sector/request is ideal here"
                .into(),
        );
    }
}

/// `v` where it is a finite number, else null (0 / 0, x / 0).
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

/// How the formulas compare numbers, as polars does: NaN (a 0 / 0 inside a formula) above
/// every number and equal to itself, so `min(0, 0 / 0)` is 0.
fn compare(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
    }
}

impl Code {
    fn of(f: &Formula, slots: &HashMap<String, usize>) -> Code {
        let of = |f: &Formula| Box::new(Code::of(f, slots));
        match f {
            Formula::Num(v) => Code::Num(*v),
            // `compile` checked every key is known.
            Formula::Var(name) => Code::Slot(slots[name.as_str()]),
            Formula::Neg(a) => Code::Neg(of(a)),
            Formula::Bin(op, a, b) => Code::Bin(*op, of(a), of(b)),
            Formula::Call(func, args) => Code::Call(*func, args.iter().map(|a| Code::of(a, slots)).collect()),
        }
    }

    /// The value over one row's slots: null where an input is; IEEE arithmetic otherwise (the
    /// caller makes the result finite or null).
    fn eval(&self, slots: &[Option<f64>]) -> Option<f64> {
        match self {
            Code::Num(v) => Some(*v),
            Code::Slot(i) => slots[*i],
            // Negation, not `0 - x`: `-0` stays `-0`, as polars negates (the oracle, below).
            Code::Neg(a) => Some(-a.eval(slots)?),
            Code::Bin(op, a, b) => {
                let (a, b) = (a.eval(slots)?, b.eval(slots)?);
                Some(match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div => a / b,
                })
            }
            Code::Call(func, args) => {
                let arg = |i: usize| args[i].eval(slots);
                match func {
                    Func::Ceil => arg(0).map(f64::ceil),
                    Func::Min => {
                        let (a, b) = (arg(0)?, arg(1)?);
                        Some(if compare(a, b).is_le() { a } else { b })
                    }
                    Func::Max => {
                        let (a, b) = (arg(0)?, arg(1)?);
                        Some(if compare(a, b).is_ge() { a } else { b })
                    }
                    // Each argument is made finite first, so a 0 / 0 falls through to the next.
                    Func::Coalesce => args.iter().find_map(|a| finite(a.eval(slots))),
                    // With `a` or `b` absent, `x` stands.
                    Func::UnlessAbove => match (arg(0), arg(1)) {
                        (Some(a), Some(b)) if compare(a, b).is_gt() => None,
                        _ => arg(2),
                    },
                }
            }
        }
    }
}

/// The formulas evaluated by polars' column arithmetic, as they were before the evaluator: the
/// oracle the evaluator is held to.
#[cfg(test)]
mod oracle {
    use polars_core::prelude::*;
    use polars_ops::prelude::RoundSeries;

    use super::{Formula, Func, Op};

    /// `s` where `mask` is true, else `other` (a null in `mask` is false, as in polars' `when`).
    fn pick(s: &Series, mask: &BooleanChunked, other: &Series) -> Series {
        s.zip_with(&mask.fill_null_with_values(false).unwrap(), other).unwrap()
    }

    /// `s` where `mask` is true, else null.
    fn keep(s: &Series, mask: &BooleanChunked) -> Series {
        pick(s, mask, &Series::full_null(PlSmallStr::EMPTY, s.len(), &DataType::Float64))
    }

    /// `s` where it is a finite number, else null (0 / 0, x / 0).
    fn finite_or_null(s: Series) -> Series {
        keep(&s, &s.is_finite().unwrap())
    }

    /// The formula over the columns of `df`.
    fn eval(f: &Formula, df: &DataFrame) -> Series {
        let constant = |v: f64| Series::new(PlSmallStr::EMPTY, vec![v; df.height()]);
        match f {
            Formula::Num(v) => constant(*v),
            Formula::Var(name) => df.column(name).unwrap().as_materialized_series().clone(),
            Formula::Neg(a) => (&eval(a, df) * &constant(-1.0)).unwrap(),
            Formula::Bin(op, a, b) => {
                let (a, b) = (eval(a, df), eval(b, df));
                match op {
                    Op::Add => &a + &b,
                    Op::Sub => &a - &b,
                    Op::Mul => &a * &b,
                    Op::Div => &a / &b,
                }
                .unwrap()
            }
            Formula::Call(func, args) => {
                let mut args: Vec<Series> = args.iter().map(|a| eval(a, df)).collect();
                let both = |a: &Series, b: &Series| &a.is_not_null() & &b.is_not_null();
                match func {
                    Func::Ceil => args.remove(0).ceil().unwrap(),
                    Func::Min | Func::Max => {
                        let (a, b) = (args.remove(0), args.remove(0));
                        let a_wins = if *func == Func::Min { a.lt_eq(&b) } else { a.gt_eq(&b) };
                        keep(&pick(&a, &a_wins.unwrap(), &b), &both(&a, &b))
                    }
                    // Each argument is made finite first, so a 0 / 0 falls through to the next.
                    Func::Coalesce => {
                        let mut args = args.into_iter().map(finite_or_null);
                        let first = args.next().unwrap();
                        args.fold(first, |acc, next| pick(&acc, &acc.is_not_null(), &next))
                    }
                    Func::UnlessAbove => {
                        let (a, b, x) = (args.remove(0), args.remove(0), args.remove(0));
                        keep(&x, &!&a.gt(&b).unwrap().fill_null_with_values(false).unwrap())
                    }
                }
            }
        }
    }

    /// The whole formula, as `Derivation` makes it: finite or null.
    pub(super) fn column(f: &Formula, df: &DataFrame) -> Series {
        finite_or_null(eval(f, df))
    }
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
                ("global_load_sectors", 20.0),
            ]),
        ];
        let notices = d.apply(&mut rows).unwrap();
        let spr = rows[0].metric("global_load_sectors_per_request").unwrap();
        assert!((spr - 31.999_026_656_150_818).abs() < 1e-9, "{spr}");
        assert!(rows[0].metric("dram_amplification").is_none());
        assert!(notices[0].starts_with("not in the input: ") && notices[0].contains("dram_bytes_read"), "{notices:?}");
        // x / 0 is absent, not inf; amplification falls back to the bytes the threads asked for.
        assert!(rows[1].metric("global_load_sectors_per_request").is_none());
        assert_eq!(rows[1].metric("dram_amplification"), Some(2.0));
        assert!(rows[1].notes.iter().any(|n| n.contains("asked for")), "{:?}", rows[1].notes);
    }

    #[test]
    fn a_backend_splits_what_it_never_measures_from_what_rows_lack() {
        let d = Derivation::new(&Catalogue::builtin()).unwrap();
        let rows = || vec![row(&[("global_load_sectors", 64.0), ("global_load_requests", 8.0)])];
        let measures = ["global_load_sectors", "global_load_requests", "shared_load_wavefronts", "duration"];
        let backend = MeasuredBy { name: "Sim", measures: &measures };
        let notices = d.notices_by(&mut rows(), Some(&backend));
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].starts_with("not measured by Sim: dram_bytes_read, dram_bytes_write, "), "{notices:?}");
        // What it measures but the rows lack (no shared access ran; no duration) is no alarm.
        assert!(!notices[0].contains("shared_load_wavefronts") && !notices[0].contains("duration"), "{notices:?}");
        let plain = d.notices(&mut rows());
        assert!(plain[0].starts_with("not in the input: ") && plain[0].contains("shared_load_wavefronts"), "{plain:?}");
    }

    #[test]
    fn reads_are_the_raw_metrics_behind_a_metric_at_any_depth() {
        let d = Derivation::new(&Catalogue::builtin()).unwrap();
        let over = d.reads("global_load_sectors_over_ideal");
        for raw in
            ["global_load_sectors", "global_load_requests", "global_load_bytes_requested", "global_load_instructions"]
        {
            assert!(over.contains(raw), "{raw}: {over:?}");
        }
        assert!(!over.contains("reported_global_load_sectors_per_request"), "ncu's own ratio only stands in: {over:?}");
        assert!(!over.contains("access_bytes"), "a launch fact is no counter: {over:?}");
    }

    #[test]
    fn functions_propagate_nulls_and_coalesce_skips_them() {
        let text = crate::metrics::BUILTIN.replace(
            "formula = \"(dram_bytes_read + dram_bytes_write) / duration\"",
            "formula = \"min(dram_bytes_read, max(dram_bytes_write, 3)) + ceil(0.5) - -1\"",
        );
        let d = Derivation::new(&Catalogue::parse(&text, std::path::Path::new("m.toml")).unwrap()).unwrap();
        let mut rows = vec![
            row(&[("dram_bytes_read", 10.0), ("dram_bytes_write", 1.0)]),
            row(&[("dram_bytes_read", 2.0), ("dram_bytes_write", 5.0)]),
            row(&[("dram_bytes_write", 5.0)]),
        ];
        d.apply(&mut rows).unwrap();
        let bw: Vec<Option<f64>> = rows.iter().map(|r| r.metric("dram_bandwidth")).collect();
        assert_eq!(bw, [Some(5.0), Some(4.0), None]);
    }

    #[test]
    fn a_formula_reading_an_unknown_key_is_a_usage_error() {
        let text =
            crate::metrics::BUILTIN.replace("global_load_sectors / global_load_requests", "global_load_sectors / nope");
        let c = Catalogue::parse(&text, std::path::Path::new("m.toml")).unwrap();
        let err = Derivation::new(&c).err().unwrap();
        assert!(err.to_string().contains("`nope`"), "{err}");
    }
    /// Rows of random inputs for `keys`: absent, zero, negative, huge and ordinary values.
    fn random_rows(keys: &[&str], n: usize, seed: u64) -> Vec<Vec<Option<f64>>> {
        const VALUES: [Option<f64>; 9] =
            [None, Some(0.0), Some(-0.0), Some(-1.5), Some(1.0), Some(2.0), Some(31.75), Some(4096.0), Some(1e308)];
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                (0..keys.len())
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        VALUES[(x % VALUES.len() as u64) as usize]
                    })
                    .collect()
            })
            .collect()
    }

    /// The frame of `rows` over `keys`, and the same frame derived by polars' arithmetic.
    fn by_polars(keys: &[&str], rows: &[Vec<Option<f64>>], steps: &[(&str, &Formula)]) -> DataFrame {
        let columns = (keys.iter().enumerate())
            .map(|(j, k)| Column::new((*k).into(), rows.iter().map(|r| r[j]).collect::<Vec<_>>()))
            .collect();
        let mut df = DataFrame::new(columns).unwrap();
        for (key, f) in steps {
            let column = oracle::column(f, &df).with_name((*key).into());
            df.with_column(column).unwrap();
        }
        df
    }

    #[test]
    fn the_evaluator_agrees_with_polars_on_every_builtin_formula() {
        let d = Derivation::new(&Catalogue::builtin()).unwrap();
        let keys: Vec<&str> = d.inputs().collect();
        let rows = random_rows(&keys, 2000, 0x5eed);
        let steps: Vec<(&str, &Formula)> = d.steps.iter().map(|s| (s.key.as_str(), &s.formula)).collect();
        let want = Frame(by_polars(&keys, &rows, &steps));
        let columns = (keys.iter().enumerate())
            .map(|(j, k)| Column::new((*k).into(), rows.iter().map(|r| r[j]).collect::<Vec<_>>()))
            .collect();
        let got = d.derive(Frame(DataFrame::new(columns).unwrap())).unwrap();
        let mut non_null = 0;
        for (key, _) in &steps {
            let (g, w) = (got.floats(key).unwrap(), want.floats(key).unwrap());
            assert_eq!(g, w, "{key}");
            non_null += g.iter().flatten().count();
        }
        assert!(non_null > 1000, "the inputs leave most formulas null: {non_null} values");
    }

    /// Random formulas over `a`, `b` and `c`, with every literal `metrics.toml` could hold.
    fn formula() -> impl proptest::strategy::Strategy<Value = Formula> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            prop::sample::select(vec![0.0, 1.0, -2.0, 0.5, 32.0]).prop_map(Formula::Num),
            prop::sample::select(vec!["a", "b", "c"]).prop_map(|v| Formula::Var(v.into())),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            let op = prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul, Op::Div]);
            prop_oneof![
                inner.clone().prop_map(|a| Formula::Neg(Box::new(a))),
                (op, inner.clone(), inner.clone()).prop_map(|(op, a, b)| Formula::Bin(op, Box::new(a), Box::new(b))),
                inner.clone().prop_map(|a| Formula::Call(Func::Ceil, vec![a])),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Formula::Call(Func::Min, vec![a, b])),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Formula::Call(Func::Max, vec![a, b])),
                prop::collection::vec(inner.clone(), 1..4).prop_map(|v| Formula::Call(Func::Coalesce, v)),
                (inner.clone(), inner.clone(), inner)
                    .prop_map(|(a, b, x)| Formula::Call(Func::UnlessAbove, vec![a, b, x])),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_evaluator_agrees_with_polars_on_random_formulas(f in formula(), seed in 1u64..u64::MAX) {
            let keys = ["a", "b", "c"];
            let rows = random_rows(&keys, 64, seed);
            let want = Frame(by_polars(&keys, &rows, &[("out", &f)])).floats("out").unwrap();
            let slots: HashMap<String, usize> = keys.iter().map(|k| k.to_string()).zip(0..).collect();
            let code = Code::of(&f, &slots);
            let got: Vec<Option<f64>> = rows.iter().map(|r| finite(code.eval(r))).collect();
            proptest::prop_assert_eq!(got, want, "{:?}", f);
        }
    }
}
