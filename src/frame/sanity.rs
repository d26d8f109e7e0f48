//! Counters that cannot be true, caught where records become rows (`super::launches::Launches`
//! checks every record it is fed), so every input takes the check: CSV, `.ncu-rep`, a measured
//! run and the simulator's records alike. A value recorded as NaN or infinite (public reports
//! say ncu 2026.2 does that on B200), and pairs `metrics.toml` says are ordered (`at_least`:
//! sectors ≥ requests, shared wavefronts ≥ shared instructions) found out of order. Such a value
//! is taken out of the record, so it is absent rather than trusted, and comes back as a
//! [`Suspect`] the caller attaches to the rows it lands in (`crate::frame::Derivation::discard`):
//! the rows say why, and a gate rule on it, or on anything derived from it, fails with that
//! reason.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::metrics::Mapped;
use crate::parse::{LaunchRecord, Value};

/// One broken counter of one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    /// The launch: its id, kernel, rank and shape, as its result row carries them.
    pub launch: Option<u64>,
    /// The kernel.
    pub kernel: String,
    /// The rank of its report.
    pub rank: Option<u32>,
    /// Grid and block.
    pub shape: (Option<[u32; 3]>, Option<[u32; 3]>),
    /// The catalogue key (`global_load_sectors`).
    pub key: String,
    /// What is wrong, naming the launch and the ncu metric.
    pub reason: String,
}

/// The catalogue's view the check needs, built once per input.
pub(crate) struct Sanity<'a> {
    names: &'a HashMap<String, Mapped>,
    /// (key, key it is at least).
    ordered: Vec<(&'a str, &'a str)>,
    /// The mapping of the last record's metric names, by position: the parsers share one
    /// `Arc<str>` per name, so the next record's names are the same pointers in the same order
    /// and need no hashing (a raw page of 100,000 rows: millions of lookups saved). The plan
    /// holds each name, so no freed name's address can come back as another's.
    plan: RefCell<Vec<(Arc<str>, Option<&'a Mapped>)>>,
}

impl<'a> Sanity<'a> {
    /// The checks of the catalogue `names` maps ncu names into (its `at_least` orderings).
    pub(crate) fn new(names: &'a HashMap<String, Mapped>) -> Sanity<'a> {
        let mut ordered: Vec<(&str, &str)> =
            names.values().filter_map(|m| Some((m.key.as_str(), m.at_least.as_deref()?))).collect();
        ordered.sort_unstable();
        ordered.dedup();
        Sanity { names, ordered, plan: RefCell::new(Vec::new()) }
    }

    /// Each metric's catalogue mapping, in the record's order.
    fn mapped(&self, rec: &LaunchRecord) -> Vec<Option<&'a Mapped>> {
        let mut plan = self.plan.borrow_mut();
        plan.truncate(rec.metrics.len());
        (rec.metrics.iter().enumerate())
            .map(|(i, (name, _))| match plan.get(i) {
                Some((p, m)) if Arc::ptr_eq(p, name) => *m,
                _ => {
                    let m = self.names.get(&**name);
                    if i < plan.len() {
                        plan[i] = (name.clone(), m);
                    } else {
                        plan.push((name.clone(), m));
                    }
                    m
                }
            })
            .collect()
    }

    /// Check one record: broken values become `Value::Missing` in it, and are returned.
    pub(crate) fn check(&self, rec: &mut LaunchRecord) -> Vec<Suspect> {
        let mapping = self.mapped(rec);
        let who = |rec: &LaunchRecord| match rec.id {
            Some(id) => format!("launch {id} ({})", crate::names::quoted(&rec.kernel)),
            None => crate::names::quoted(&rec.kernel),
        };
        let suspect = |rec: &LaunchRecord, key: &str, reason: String| Suspect {
            launch: rec.id,
            kernel: rec.kernel.clone(),
            rank: rec.rank,
            shape: (rec.grid, rec.block),
            key: key.to_string(),
            reason,
        };
        let mut out = Vec::new();
        let (mut mapped, mut recorded) = (0usize, 0usize);
        for (i, m) in mapping.iter().enumerate() {
            let Some(m) = m else { continue };
            mapped += 1;
            let (name, value) = &rec.metrics[i];
            let what = match value {
                Value::Number { value: v, .. } if !v.is_finite() => Some(v.to_string()),
                Value::Missing(text) | Value::Text(text) if not_a_number(text) => Some(text.trim().to_string()),
                _ => None,
            };
            match what {
                Some(w) => {
                    let reason = format!("{}: ncu recorded `{name}` ({}) as {w}", who(rec), m.key);
                    out.push(suspect(rec, &m.key, reason));
                    rec.metrics[i].1 = Value::Missing(w);
                }
                None => recorded += 1,
            }
        }
        if mapped > 0 && recorded == 0 {
            // Every counter NaN: one sentence for the launch, not one per metric.
            let reason = format!("{}: ncu recorded no values (every counter is NaN)", who(rec));
            out.iter_mut().for_each(|s| s.reason = reason.clone());
            return out;
        }
        // The first metric of `key` that holds a number.
        let number = |rec: &LaunchRecord, key: &str| {
            (mapping.iter().zip(&rec.metrics))
                .find_map(|(m, (_, v))| (m.as_ref()?.key == key).then(|| v.number()).flatten())
        };
        for (key, floor) in &self.ordered {
            let (Some(v), Some(f)) = (number(rec, key), number(rec, floor)) else { continue };
            if v < f {
                let reason = format!(
                    "{}: {key} {v} is below {floor} {f}, which cannot be measured (every one of them moves at \
                     least one): a broken counter",
                    who(rec)
                );
                out.push(suspect(rec, key, reason.clone()));
                out.push(suspect(rec, floor, reason));
                for (m, (_, value)) in mapping.iter().zip(rec.metrics.iter_mut()) {
                    if m.is_some_and(|m| m.key == *key || m.key == *floor) {
                        *value = Value::Missing("broken".into());
                    }
                }
            }
        }
        out
    }
}

/// `nan`, `NaN`, `-nan(ind)`, `inf`, `-Infinity`: what ncu, C's printf and spreadsheets write for
/// a value that is not a number.
fn not_a_number(text: &str) -> bool {
    let t = text.trim().trim_start_matches(['+', '-']).to_ascii_lowercase();
    t == "nan" || t.starts_with("nan(") || t == "inf" || t == "infinity"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Catalogue;

    fn rec(values: &[(&str, Value)]) -> LaunchRecord {
        LaunchRecord {
            id: Some(3),
            metrics: values.iter().map(|(n, v)| (Arc::from(*n), v.clone())).collect(),
            ..LaunchRecord::new("k")
        }
    }

    fn num(v: f64) -> Value {
        Value::Number { value: v, unit: "" }
    }

    #[test]
    fn nan_and_impossible_pairs_are_taken_out_and_named() {
        let c = Catalogue::builtin();
        let names = c.ncu_names();
        let s = Sanity::new(&names);
        let mut r = rec(&[
            ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", Value::Missing("nan".into())),
            ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", num(10.0)),
            ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", num(5.0)),
            ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", num(10.0)),
            ("dram__bytes_read.sum", num(100.0)),
        ]);
        let found = s.check(&mut r);
        let keys: Vec<&str> = found.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["global_load_sectors", "global_store_sectors", "global_store_requests"]);
        assert!(found[0].reason.contains("launch 3 (`k`)") && found[0].reason.contains("as nan"), "{:?}", found[0]);
        assert!(found[1].reason.contains("below global_store_requests"), "{:?}", found[1]);
        assert_eq!(r.metrics.iter().filter(|(_, v)| v.number().is_some()).count(), 2, "{:?}", r.metrics);
        // A broadcast's ideal above its actual is fine; equal counts are fine.
        let mut ok = rec(&[
            ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", num(10.0)),
            ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", num(10.0)),
        ]);
        assert!(s.check(&mut ok).is_empty());
    }

    #[test]
    fn a_launch_of_only_nans_recorded_no_values() {
        let c = Catalogue::builtin();
        let names = c.ncu_names();
        let mut r = rec(&[
            ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", Value::Number { value: f64::NAN, unit: "sector" }),
            ("dram__bytes_read.sum", Value::Missing("-nan(ind)".into())),
            ("launch__grid_size", num(4.0)),
        ]);
        let found = Sanity::new(&names).check(&mut r);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|s| s.reason.contains("ncu recorded no values")), "{found:?}");
    }
}
