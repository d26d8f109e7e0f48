//! Measured against predicted: each measured row of a built-in pattern is joined to the model's
//! prediction of the same variant, both derived by the same formulas, and a derived metric that
//! differs beyond its `tolerance` in `metrics.toml` becomes a finding in plain words that says
//! which number was measured, which predicted, and the tolerance.

use polars_core::prelude::*;
use polars_ops::prelude::{DataFrameJoinOps, JoinArgs, JoinType};

use super::cols::{PATTERN, VARIANT};
use super::{polars_error, series, Frame};
use crate::error::Result;
use crate::metrics::Catalogue;
use crate::results::{Row, Source};

/// Suffix of the prediction's columns in the joined frame.
const PREDICTED: &str = "::predicted";
/// Suffix of the relative-difference columns (measured − predicted) / predicted.
const DIFF: &str = "::diff";

/// The measured (or simulated: `source`) rows, each with its prediction and findings; the
/// rows and their findings say which they are.
pub(crate) fn against_model(
    measured: Frame,
    predicted: Frame,
    catalogue: &Catalogue,
    source: Source,
) -> Result<Vec<Row>> {
    let toleranced: Vec<(&str, f64)> =
        catalogue.derived.iter().filter_map(|(k, d)| Some((k.as_str(), d.tolerance?))).collect();
    let predicted = predicted.with_float_columns(toleranced.iter().map(|(k, _)| *k))?;
    let measured = measured.with_float_columns(toleranced.iter().map(|(k, _)| *k))?;
    let keys = [PATTERN, VARIANT];
    let args = JoinArgs::new(JoinType::Left).with_suffix(Some(PREDICTED.into()));
    let predicted = predicted.0.drop_many([super::cols::KERNEL]);
    let mut joined = measured.0.join(&predicted, keys, keys, args, None).map_err(polars_error)?;
    for (k, _) in &toleranced {
        let (m, p) = (series(&joined, k)?, series(&joined, &format!("{k}{PREDICTED}"))?);
        // Predictions are counts and their ratios, never negative.
        let diff = ((&m - &p).and_then(|d| &d / &p)).map_err(polars_error)?;
        joined.with_column(diff.with_name(format!("{k}{DIFF}").into())).map_err(polars_error)?;
    }
    let frame = Frame(joined);
    let names: Vec<String> = frame.0.get_column_names().iter().map(|n| n.to_string()).collect();
    let is_extra = |n: &str| n.ends_with(PREDICTED) || n.ends_with(DIFF);
    let extra: Vec<&str> = names.iter().map(String::as_str).filter(|n| is_extra(n)).collect();
    let mut rows = frame.clone().drop_columns(&extra)?.into_rows(source)?;
    let patterns = frame.strings(PATTERN)?;
    let variants = frame.strings(VARIANT)?;
    let mut predictions = frame.suffixed(PREDICTED)?;
    for (i, row) in rows.iter_mut().enumerate() {
        row.pattern = patterns[i].clone();
        row.variant = variants[i].clone();
        row.predicted = Some(std::mem::take(&mut predictions[i]));
    }
    for (key, tol) in toleranced {
        let (m, p, d) =
            (frame.floats(key)?, frame.floats(&format!("{key}{PREDICTED}"))?, frame.floats(&format!("{key}{DIFF}"))?);
        for (i, row) in rows.iter_mut().enumerate() {
            let (Some(m), Some(p), Some(d)) = (m[i], p[i], d[i]) else { continue };
            if d.is_finite() && d.abs() > tol {
                row.findings.push(finding(source, key, m, p, d, tol));
            }
        }
    }
    Ok(rows)
}

impl Frame {
    fn drop_columns(self, names: &[&str]) -> Result<Frame> {
        Ok(Frame(self.0.drop_many(names.iter().copied())))
    }

    /// The float columns named `key{suffix}`, per row, as metrics under `key`.
    fn suffixed(&self, suffix: &str) -> Result<Vec<crate::results::Metrics>> {
        let mut out = vec![crate::results::Metrics::new(); self.height()];
        for c in self.0.get_columns() {
            let Some(key) = c.name().as_str().strip_suffix(suffix) else { continue };
            if c.dtype() != &DataType::Float64 {
                continue;
            }
            for (m, v) in out.iter_mut().zip(c.f64().map_err(polars_error)?) {
                if let Some(v) = v {
                    m.insert(key.to_string(), v);
                }
            }
        }
        Ok(out)
    }
}

/// `measured 5.00 global_load_sectors_per_request, predicted 4.00 (+25%, tolerance ±2%): is the base misaligned?`
fn finding(source: Source, key: &str, measured: f64, predicted: f64, diff: f64, tolerance: f64) -> String {
    let mut text = format!(
        "{} {measured:.2} {key}, predicted {predicted:.2} ({:+.0}%, tolerance ±{}%)",
        source.word(),
        diff * 100.0,
        tolerance * 100.0
    );
    if let Some(why) = explanation(key, diff) {
        text.push_str(": ");
        text.push_str(why);
    }
    text
}

fn explanation(key: &str, diff: f64) -> Option<&'static str> {
    match (key, diff > 0.0) {
        ("global_load_sectors_per_request", true) => Some("is the base misaligned, or are lanes inactive?"),
        ("global_load_sectors_per_request", false) => Some("are lanes reading the same words (broadcast)?"),
        ("dram_amplification", true) => Some("the L2 may fetch more than 32 bytes per miss (try `--l2-fetch 64`), or the data outgrew L2 between touches"),
        ("dram_amplification", false) => Some("data the model counts as DRAM traffic was found in L2"),
        ("l2_amplification", false) => Some("L1 reused sectors across thread blocks"),
        ("shared_load_wavefronts_per_instruction", true) => Some("more bank conflicts than the address arithmetic implies"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(variant: &str, pairs: &[(&str, f64)]) -> Frame {
        let mut columns = vec![
            Column::new("kernel".into(), ["offset_copy"]),
            Column::new(PATTERN.into(), ["offset"]),
            Column::new(VARIANT.into(), [variant]),
        ];
        columns.extend(pairs.iter().map(|(k, v)| Column::new((*k).into(), [*v])));
        Frame(DataFrame::new(columns).unwrap())
    }

    #[test]
    fn a_difference_beyond_tolerance_is_a_finding_that_names_both_sides() {
        let measured = frame("offset_1", &[("global_load_sectors_per_request", 5.0), ("dram_amplification", 1.01)]);
        let predicted = frame("offset_1", &[("global_load_sectors_per_request", 4.0), ("dram_amplification", 1.0)]);
        let rows = against_model(measured, predicted, &Catalogue::builtin(), Source::Measured).unwrap();
        assert_eq!(rows[0].variant.as_deref(), Some("offset_1"));
        assert_eq!(rows[0].predicted.as_ref().unwrap()["global_load_sectors_per_request"], 4.0);
        assert_eq!(rows[0].findings.len(), 1, "{:?}", rows[0].findings);
        assert_eq!(
            rows[0].findings[0],
            "measured 5.00 global_load_sectors_per_request, predicted 4.00 (+25%, tolerance ±2%): is the base misaligned, or are lanes inactive?"
        );
    }

    #[test]
    fn simulated_rows_say_so_in_their_source_and_findings() {
        let simulated = frame("offset_1", &[("global_load_sectors_per_request", 5.0)]);
        let predicted = frame("offset_1", &[("global_load_sectors_per_request", 4.0)]);
        let rows = against_model(simulated, predicted, &Catalogue::builtin(), Source::Simulated).unwrap();
        assert_eq!(rows[0].source, Source::Simulated);
        assert!(rows[0].findings[0].starts_with("simulated 5.00 global_load_sectors_per_request, predicted 4.00"));
    }

    #[test]
    fn rows_are_matched_by_variant_not_by_position() {
        let measured = frame("offset_2", &[("global_load_sectors_per_request", 4.0)]);
        let mut predicted = frame("offset_1", &[("global_load_sectors_per_request", 5.0)]);
        predicted.0.vstack_mut(&frame("offset_2", &[("global_load_sectors_per_request", 4.0)]).0).unwrap();
        let rows = against_model(measured, predicted, &Catalogue::builtin(), Source::Measured).unwrap();
        assert!(rows[0].findings.is_empty(), "{:?}", rows[0].findings);
    }
}
