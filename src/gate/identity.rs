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
/// (one kernel launched several times, not aggregated) takes its launch shape
/// (`gemm [grid 256x1x1, block 128x1x1]`, [`crate::results::RowKey::shaped`]); only where the
/// shape does not tell the rows apart either does it become `key@<id>`, or `key#<n>` without an
/// id, so JUnit test names stay unique and baseline entries do not overwrite each other, and a
/// baseline does not depend on the order of launches whose shapes differ.
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
    // Repeated plain keys take their shape first.
    for (arch, key, row, _) in &mut all {
        if counts[&(arch.clone(), key.clone())] > 1 {
            *key = row.row_key().shaped();
        }
    }
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (arch, key, _, _) in &all {
        *counts.entry((arch.clone(), key.clone())).or_default() += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(grid: u32, id: u64) -> Row {
        let mut r = Row::new("gemm", Source::Measured);
        (r.grid, r.block, r.id) = (Some([grid, 1, 1]), Some([128, 1, 1]), Some(id));
        r
    }

    fn keys(rows: Vec<Row>) -> Vec<String> {
        let mut p = Provenance::new(crate::results::Backend::Ncu);
        p.compute_capability = Some("9.0".into());
        let inputs = [Results::new(p, rows)];
        let mut k: Vec<String> = identify(&inputs).into_iter().map(|(_, key, _, _)| key).collect();
        k.sort();
        k
    }

    #[test]
    fn repeated_kernels_are_told_apart_by_shape_whatever_their_order_then_by_launch() {
        let shaped = ["gemm [grid 256x1x1, block 128x1x1]", "gemm [grid 512x1x1, block 128x1x1]"];
        assert_eq!(keys(vec![launch(256, 1), launch(512, 2)]), shaped);
        assert_eq!(keys(vec![launch(512, 7), launch(256, 9)]), shaped, "the order and ids do not matter");
        let same = keys(vec![launch(256, 1), launch(256, 2)]);
        assert_eq!(same, ["gemm [grid 256x1x1, block 128x1x1]@1", "gemm [grid 256x1x1, block 128x1x1]@2"]);
        assert_eq!(keys(vec![launch(256, 1)]), ["gemm"], "a kernel launched once keeps its plain name");
    }
}
