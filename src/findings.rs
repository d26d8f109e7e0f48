//! Measured against predicted: a difference beyond the metric's tolerance (`metrics.toml`)
//! becomes a finding in plain words.

use crate::metrics::Catalogue;
use crate::results::Row;

/// Compare a measured row with its prediction and add findings.
pub fn compare(row: &mut Row, catalogue: &Catalogue) {
    let Some(predicted) = row.predicted.clone() else { return };
    for (key, metric) in &catalogue.derived {
        let Some(tol) = metric.tolerance else { continue };
        let (Some(m), Some(p)) = (row.metric(key), predicted.get(key).copied()) else { continue };
        let diff = (m - p) / p.abs().max(1e-12);
        if diff.abs() <= tol {
            continue;
        }
        let mut text = format!("measured {m:.2} {key}, the model predicts {p:.2} ({:+.0}%)", diff * 100.0);
        if let Some(why) = explanation(key, diff) {
            text.push_str(": ");
            text.push_str(why);
        }
        row.findings.push(text);
    }
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
    use crate::results::{Metrics, Source};

    #[test]
    fn a_difference_beyond_tolerance_is_a_finding() {
        let mut row = Row {
            pattern: Some("offset".into()),
            variant: Some("offset_1".into()),
            id: Some(1),
            metrics: Metrics::from([
                ("global_load_sectors_per_request".into(), 5.0),
                ("dram_amplification".into(), 1.01),
            ]),
            predicted: Some(Metrics::from([
                ("global_load_sectors_per_request".into(), 4.0),
                ("dram_amplification".into(), 1.0),
            ])),
            ..Row::new("offset_copy", Source::Measured)
        };
        compare(&mut row, &Catalogue::builtin());
        assert_eq!(row.findings.len(), 1, "{:?}", row.findings);
        assert!(row.findings[0].starts_with(
            "measured 5.00 global_load_sectors_per_request, the model predicts 4.00 (+25%): is the base misaligned"
        ));
    }
}
