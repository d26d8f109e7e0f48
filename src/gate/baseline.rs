//! The checked-in baseline, `coalprof.baseline.json`: reviewed like code, so it is written to make
//! an update a small diff: one section per GPU architecture (counters differ per SM generation;
//! `model` holds predicted rows), keys sorted, values rounded to 4 significant digits, 2-space
//! indentation and a trailing newline.
//!
//! ```json
//! {
//!   "schema": "coalprof-baseline/1",
//!   "environments": {
//!     "sm_90": {
//!       "provenance": { "backend": "ncu", "compute_capability": "9.0", "gpu": "NVIDIA H200" },
//!       "rows": {
//!         "stride/stride_2": { "dram_amplification": 2.001, "global_load_sectors_per_request": 8.0 }
//!       }
//!     }
//!   }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::gate::identity::identify;
use crate::results::{Provenance, Results, Row};

/// Version of the layout above; a file with another schema is refused (exit 3).
pub(crate) const SCHEMA: &str = "coalprof-baseline/1";

/// Significant digits kept when writing: enough for counter ratios, few enough to avoid churn.
pub(crate) const SIGNIFICANT_DIGITS: i32 = 4;

/// Metric values of one row, keyed by metric name.
pub(crate) type RowValues = BTreeMap<String, f64>;

/// The whole baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Baseline {
    pub schema: String,
    /// One section per architecture (`sm_90`, `model`).
    #[serde(default)]
    pub environments: BTreeMap<String, Environment>,
}

/// One architecture's section: what produced it and the rows' values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Environment {
    #[serde(default)]
    pub provenance: BaselineProvenance,
    /// Row key (`pattern/variant` or kernel name) → metric → value.
    #[serde(default)]
    pub rows: BTreeMap<String, RowValues>,
}

/// The provenance that changes the numbers, kept so a reviewer sees what a section was measured with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BaselineProvenance {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ncu_version: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, Value>,
}

impl From<&Provenance> for BaselineProvenance {
    fn from(p: &Provenance) -> BaselineProvenance {
        BaselineProvenance {
            backend: p.backend.to_string(),
            gpu: p.gpu.clone(),
            compute_capability: p.compute_capability.clone(),
            ncu_version: p.ncu_version.clone(),
            settings: p.settings.clone(),
        }
    }
}

impl Default for Baseline {
    fn default() -> Baseline {
        Baseline { schema: SCHEMA.to_string(), environments: BTreeMap::new() }
    }
}

impl Baseline {
    /// Read a baseline; unreadable or malformed files are input errors (exit 3).
    pub(crate) fn load(path: &Path) -> Result<Baseline, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::input_caused(path, "cannot read the baseline", e)
                .with_hint(format!("create it with `coalprof baseline update <run> --baseline {}`", path.display()))
        })?;
        Baseline::parse(&text, path)
    }

    /// Parse a baseline's text; `path` is for messages.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<Baseline, Error> {
        let baseline: Baseline =
            serde_json::from_str(text).map_err(|e| Error::input_caused(path, "not a coalprof baseline", e))?;
        if baseline.schema != SCHEMA {
            return Err(Error::input(
                path,
                format!("baseline schema is `{}`, this coalprof reads `{SCHEMA}`", baseline.schema),
            ));
        }
        Ok(baseline)
    }

    /// The recorded value of one metric of one row in one architecture.
    pub(crate) fn get(&self, arch: &str, key: &str, metric: &str) -> Option<f64> {
        self.environments.get(arch)?.rows.get(key)?.get(metric).copied()
    }

    /// Replace the sections of every architecture present in `runs` with those runs' rows,
    /// keeping the metrics `keep(key, metric)` accepts; other sections are left untouched.
    /// `keep(row key, row, metric)` says which values to record.
    pub(crate) fn merge_runs(&mut self, runs: &[Results], keep: &dyn Fn(&str, &Row, &str) -> bool) {
        let mut fresh: BTreeMap<String, Environment> = BTreeMap::new();
        for (arch, key, row, provenance) in identify(runs) {
            let env = fresh.entry(arch).or_default();
            if env.provenance == BaselineProvenance::default() {
                env.provenance = provenance.into();
            }
            let values: RowValues = row
                .metrics
                .iter()
                .filter(|(m, v)| v.is_finite() && keep(&key, row, m))
                .map(|(m, v)| (m.clone(), round_significant(*v, SIGNIFICANT_DIGITS)))
                .collect();
            if !values.is_empty() {
                env.rows.insert(key, values);
            }
        }
        self.environments.extend(fresh);
    }

    /// The file's text: pretty JSON, sorted keys, trailing newline.
    pub(crate) fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a baseline always serializes");
        text.push('\n');
        text
    }
}

/// Round to `digits` significant digits (4.0234 → 4.023, 123456 → 123500).
pub(crate) fn round_significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let text = format!("{:.*e}", (digits - 1).max(0) as usize, v);
    text.parse().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Row, Source};

    fn row(pattern: &str, variant: &str, metrics: &[(&str, f64)]) -> Row {
        Row {
            pattern: Some(pattern.into()),
            variant: Some(variant.into()),
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Row::new(format!("{pattern}_kernel"), Source::Measured)
        }
    }

    fn run(cc: &str, rows: Vec<Row>) -> Results {
        let provenance = Provenance {
            backend: crate::results::Backend::Ncu,
            compute_capability: Some(cc.into()),
            gpu: Some("GPU".into()),
            ..Default::default()
        };
        Results::new(provenance, rows)
    }

    #[test]
    fn rounds_to_four_significant_digits() {
        assert_eq!(round_significant(4.02349, 4), 4.023);
        assert_eq!(round_significant(123456.0, 4), 123500.0);
        assert_eq!(round_significant(0.000123456, 4), 0.0001235);
        assert_eq!(round_significant(0.0, 4), 0.0);
    }

    #[test]
    fn merge_rewrites_only_the_sections_it_has_rows_for() {
        let mut b = Baseline::default();
        b.merge_runs(&[run("8.0", vec![row("stride", "stride_1", &[("s", 4.0)])])], &|_, _, _| true);
        b.merge_runs(&[run("9.0", vec![row("stride", "stride_2", &[("s", 8.00004), ("d", 1.0)])])], &|_, _, m| {
            m == "s"
        });
        assert_eq!(b.get("sm_80", "stride/stride_1", "s"), Some(4.0));
        assert_eq!(b.get("sm_90", "stride/stride_2", "s"), Some(8.0));
        assert_eq!(b.get("sm_90", "stride/stride_2", "d"), None);
        b.merge_runs(&[run("9.0", vec![row("coalesced", "fp32", &[("s", 4.0)])])], &|_, _, _| true);
        assert_eq!(b.get("sm_90", "stride/stride_2", "s"), None, "the sm_90 section is rewritten");
        assert_eq!(b.get("sm_80", "stride/stride_1", "s"), Some(4.0), "sm_80 is untouched");
    }

    #[test]
    fn json_is_sorted_and_ends_with_a_newline() {
        let mut b = Baseline::default();
        b.merge_runs(&[run("9.0", vec![row("z", "v", &[("b", 2.0), ("a", 1.23456)])])], &|_, _, _| true);
        let text = b.to_json();
        assert!(text.ends_with("}\n"));
        assert!(text.find("\"a\"").unwrap() < text.find("\"b\"").unwrap());
        assert!(text.contains("1.235"));
        assert_eq!(Baseline::parse(&text, Path::new("b.json")).unwrap(), b);
    }

    #[test]
    fn wrong_schema_and_garbage_are_input_errors() {
        let e = Baseline::parse("{\"schema\": \"other/9\"}", Path::new("b.json")).unwrap_err();
        assert!(matches!(e, Error::Input { .. }) && e.to_string().contains("other/9"), "{e}");
        let e = Baseline::parse("{", Path::new("b.json")).unwrap_err();
        assert!(matches!(e, Error::Input { .. }));
    }
}
