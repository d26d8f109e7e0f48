//! Which baseline section and which name a row is gated under.
//!
//! The gate, the baseline and every output must agree on a row's identity, so it is computed in
//! one place: the architecture section (`sm_90`; `model` for predicted rows, `sim` for simulated ones) and the row key
//! (`pattern/variant`, or the kernel name), disambiguated when one kernel has several launch rows.

use std::collections::BTreeMap;

use crate::results::{Provenance, Results, Row, Source};

/// A row with its architecture section and key.
pub(crate) type Identified<'a> = (String, String, &'a Row, &'a Provenance);

/// The baseline section a row belongs to: predicted rows never mix with measured ones, and a
/// row of a run spread over GPUs of several architectures goes by its own GPU's.
pub(crate) fn arch_of(provenance: &Provenance, row: &Row) -> String {
    match row.source {
        Source::Predicted => "model".to_string(),
        // The simulator's GPU configuration, never a real GPU's section.
        Source::Simulated => "sim".to_string(),
        Source::Measured => row.placement.as_ref().and_then(|p| p.arch.clone()).unwrap_or_else(|| provenance.arch()),
    }
}

/// Every row of every input, with its (arch, key). A key that repeats within one architecture
/// (one kernel launched several times, not aggregated) becomes `key@<id>`, or `key#<n>` without
/// an id, so JUnit test names stay unique and baseline entries do not overwrite each other.
pub(crate) fn identify(inputs: &[Results]) -> Vec<Identified<'_>> {
    let mut all = Vec::new();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for results in inputs {
        for row in &results.rows {
            let arch = arch_of(&results.provenance, row);
            *counts.entry((arch.clone(), row.key())).or_default() += 1;
            all.push((arch, row.key(), row, &results.provenance));
        }
    }
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (arch, key, row, _) in &mut all {
        let id = (arch.clone(), key.clone());
        if counts[&id] > 1 {
            let n = seen.entry(id).or_default();
            *n += 1;
            *key = match row.id {
                Some(launch) => format!("{key}@{launch}"),
                None => format!("{key}#{n}"),
            };
        }
    }
    all
}
