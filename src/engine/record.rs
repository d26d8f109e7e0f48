//! What a run records about itself, built once: `results.json`'s provenance and the run
//! folder's `run.json` are drawn from the same [`Record`], so they cannot disagree. Every
//! command that saves a run folder builds one: `run` (every executor), `profile` under ncu and
//! `profile --backend sim`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::measure::sim::{device_name, SIM_CC};
use crate::results::{Backend, Provenance};
use crate::settings::{Common, RunSettings};
use crate::store::RunDir;
use crate::tools::gpgpusim::{SimMode, CONFIG};

/// The provenance every row of the run shares, and the facts only `run.json` keeps (the
/// patterns asked for, timing settings, per-pattern ncu warnings or simulator seconds).
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub provenance: Provenance,
    pub extra: Map<String, Value>,
    /// Shown under the run's table from the start (why the model stands in for a GPU).
    pub notices: Vec<String>,
}

impl Record {
    /// The facts of every run: the backend, the checkout, the size, the model's L2 fetch and
    /// the patterns; the executor adds its own (`settings` and `extra`).
    pub(crate) fn new(backend: Backend, common: &Common, s: &RunSettings) -> Record {
        let mut record = Record::with_provenance(backend, common, Provenance::new(backend));
        let provenance = &mut record.provenance;
        provenance.settings.insert("size_bytes".into(), s.sizing.bytes.into());
        provenance.settings.insert("l2_fetch_bytes".into(), s.l2_fetch_bytes.into());
        record.extra.insert("patterns".into(), s.patterns.iter().map(|p| p.name()).collect::<Vec<_>>().into());
        record
    }

    /// The facts of every saved run, `backend` and the checkout it was made in, over what is
    /// already `known` (a read report's GPU, ncu version and inputs; the simulator's device).
    pub(crate) fn with_provenance(backend: Backend, common: &Common, known: Provenance) -> Record {
        let git = common.tools.checkout(&common.cwd);
        let provenance = Provenance { backend, git, ..known };
        Record { provenance, extra: Map::new(), notices: Vec::new() }
    }

    /// Write `run.json` into the run folder.
    pub(crate) fn save(&self, dir: &RunDir) -> Result<()> {
        dir.write("run.json", self.run_json().as_bytes()).map(|_| ())
    }

    /// What ncu measures with: its version, the cache and clock control, the timing run's
    /// warm-up and repeats, and the architecture built for.
    pub(crate) fn ncu(mut self, s: &RunSettings, ncu_version: Option<String>, arch: &str) -> Record {
        let p = &s.profiler;
        self.provenance.ncu_version = ncu_version;
        self.provenance.settings.insert("cache_control".into(), p.cache_control.clone().into());
        self.provenance.settings.insert("clock_control".into(), p.clock_control.clone().into());
        self.extra.insert("arch".into(), arch.into());
        self.extra.insert("timing".into(), serde_json::json!({ "warmup": p.warmup, "repeats": p.repeats }));
        self
    }

    /// What GPGPU-Sim simulates with: its version, configuration and mode, and the device its
    /// rows name (`run --backend sim` and `profile --backend sim` alike).
    pub(crate) fn simulator(mut self, version: &str, mode: SimMode) -> Record {
        let p = &mut self.provenance;
        p.gpu = Some(device_name());
        p.compute_capability = Some(SIM_CC.into());
        p.settings.insert("simulator".into(), version.into());
        p.settings.insert("config".into(), CONFIG.into());
        p.settings.insert("sim_mode".into(), mode.name().into());
        self
    }

    /// Merge a task's facts (see [`merge_json`]).
    pub(crate) fn merge(&mut self, facts: Map<String, Value>) {
        merge_json(&mut self.extra, facts);
    }

    /// `run.json`: the provenance's fields and the extra facts in one object.
    pub(crate) fn run_json(&self) -> String {
        let mut all = match serde_json::to_value(&self.provenance) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        all.extend(self.extra.clone());
        format!("{:#}\n", Value::Object(all))
    }
}

/// Merge `from` into `into`: objects merge key by key, at every depth; anything else is
/// replaced. So the tasks of a run each add their own `ncu_warnings.<pattern>` or
/// `slurm.tasks.<task>` without knowing of each other.
pub(crate) fn merge_json(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(old)), Value::Object(new)) => merge_json(old, new),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// [`merge_json`] for a provenance's settings.
pub(crate) fn merge_settings(into: &mut BTreeMap<String, Value>, from: BTreeMap<String, Value>) {
    let mut all: Map<String, Value> = std::mem::take(into).into_iter().collect();
    merge_json(&mut all, from.into_iter().collect());
    *into = all.into_iter().collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_keys_to_objects_at_every_depth_and_replaces_the_rest() {
        let mut r = Record { provenance: Provenance::new(Backend::Ncu), extra: Map::new(), notices: Vec::new() };
        r.merge(serde_json::from_str(r#"{"w": {"stride": ["a"], "t": {"x": 1}}, "arch": "sm_80"}"#).unwrap());
        r.merge(serde_json::from_str(r#"{"w": {"gather": ["b"], "t": {"y": 2}}, "arch": "sm_90"}"#).unwrap());
        let v: Value = serde_json::from_str(&r.run_json()).unwrap();
        assert_eq!(v["w"], serde_json::json!({"stride": ["a"], "gather": ["b"], "t": {"x": 1, "y": 2}}));
        assert_eq!(v["arch"], "sm_90");
        assert_eq!(v["backend"], "ncu", "the provenance's fields are in run.json too");
    }
}
