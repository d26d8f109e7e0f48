//! The results of a run or an analysis: the rows every exporter renders and the gate checks.
//!
//! This is also the JSON contract other tools read (`--format json`, `results.json`): a
//! top-level object with `"schema"` and `"rows"`; each row names its kernel (and pattern and
//! variant for the built-in patterns), says whether its numbers were `measured` or `predicted`,
//! and carries `"metrics"`, numbers keyed by the stable snake_case names of `metrics.toml`.
//! Bump [`SCHEMA`] on any change that could break a reader.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of the JSON layout below.
pub const SCHEMA: &str = "coalprof/1";

/// Where a row's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Hardware counters read by ncu.
    Measured,
    /// The address model's prediction.
    Predicted,
    /// The kernel's PTX executed in GPGPU-Sim (`--backend sim`): its per-instruction counters.
    Simulated,
}

impl Source {
    /// The word rows, findings and exports use: `measured`, `predicted`, `simulated`.
    pub fn word(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Predicted => "predicted",
            Source::Simulated => "simulated",
        }
    }
}

/// Metric values keyed by their stable snake_case names.
pub type Metrics = BTreeMap<String, f64>;

/// One kernel (or one launch of it) and its metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Built-in pattern name (`kv-layout`), absent for the user's own kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Variant name within the pattern (`nhd_fp16`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The kernel name as ncu reports it (demangled).
    pub kernel: String,
    /// For a row of one source line of the kernel (`coalprof check` with `line_*` rules on
    /// `.ncu-rep` inputs): `kernels/gemm.cu:42`, repository-relative where it resolves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// For a line row: the access kind of its instructions (`global store`), part of its key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// ncu's result ID for a single launch; null for a row that aggregates launches.
    pub id: Option<u64>,
    /// How many launches this row aggregates (counters summed, ratios of the sums).
    pub launches: u64,
    /// The rank (Slurm task, MPI process) whose report the row comes from (`profile --per-rank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Grid dimensions (measured rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[u32; 3]>,
    /// Block dimensions (measured rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    /// The variant's parameters by name (`{"stride": 8}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Value>,
    /// Measured by ncu, predicted by the model, or simulated by GPGPU-Sim.
    pub source: Source,
    /// Every value by catalogue key: raw counters, launch facts and derived metrics.
    pub metrics: Metrics,
    /// On measured rows of built-in patterns: the model's prediction under the same keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Metrics>,
    /// Why a value is absent or how it was computed (`dram_amplification is over the bytes
    /// the threads asked for`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Metrics left out because a counter they come from is broken (NaN, or impossible
    /// counts), with the reason: a gate rule on one fails with it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub broken: BTreeMap<String, String>,
    /// Differences between measured and predicted beyond tolerance, in plain words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Where the row was measured, in a run spread over GPUs (`run --gpus`) or Slurm
    /// partitions (`run --slurm`); absent in a run on one GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
}

/// The GPU (and Slurm partition and node) a row was measured on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The GPU's name (`NVIDIA H200`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Its architecture (`sm_90`): the baseline section its rows are gated under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// `GPU-…`, what the child was pinned to with `CUDA_VISIBLE_DEVICES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// nvidia-smi's index of the GPU on its node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// The Slurm partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The Slurm node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl Placement {
    /// How a column group of `compare` is labelled: the GPU and its architecture, else the
    /// partition.
    pub fn label(&self) -> Option<String> {
        match (&self.gpu, &self.arch, &self.partition) {
            (Some(g), Some(a), _) => Some(format!("{g} {a}")),
            (Some(g), None, _) => Some(g.clone()),
            (None, _, Some(p)) => Some(format!("partition {p}")),
            (None, Some(a), None) => Some(a.clone()),
            (None, None, None) => None,
        }
    }
}

impl Row {
    /// A row for one launch of `kernel`, with no metrics yet.
    pub fn new(kernel: impl Into<String>, source: Source) -> Row {
        Row {
            pattern: None,
            variant: None,
            kernel: kernel.into(),
            line: None,
            op: None,
            broken: BTreeMap::new(),
            id: None,
            launches: 1,
            rank: None,
            grid: None,
            block: None,
            params: BTreeMap::new(),
            source,
            metrics: Metrics::new(),
            predicted: None,
            notes: Vec::new(),
            findings: Vec::new(),
            placement: None,
        }
    }

    /// The row's identity (see [`RowKey`]).
    pub fn row_key(&self) -> RowKey {
        RowKey {
            name: match (&self.pattern, &self.variant) {
                (Some(p), Some(v)) => format!("{p}/{v}"),
                _ => self.kernel.clone(),
            },
            builtin: self.pattern.is_some() && self.variant.is_some(),
            rank: self.rank,
            grid: self.grid,
            block: self.block,
            line: self.line.clone(),
            op: self.op.clone(),
        }
    }

    /// [`RowKey::plain`]: what gate rules match.
    pub fn key(&self) -> String {
        self.row_key().plain()
    }

    /// The value of `key`, if the row has it.
    pub fn metric(&self, key: &str) -> Option<f64> {
        self.metrics.get(key).copied()
    }
}

/// A row's identity, one for the gate, the baseline, `compare` and `lines`: the built-in
/// `pattern/variant` or the kernel, its rank, its launch shape, and a line row's `file:line`
/// and op. Rules match its [`plain`](RowKey::plain) form; where two rows share that (one kernel
/// launched with two shapes), the [`shaped`](RowKey::shaped) form tells them apart by what they
/// are, not by where they sit in the file, so a baseline survives reordered launches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    /// `pattern/variant`, or the kernel's name.
    pub name: String,
    /// A built-in pattern's variant: its name already fixes its shape.
    pub builtin: bool,
    /// The rank of a `--per-rank` report.
    pub rank: Option<u32>,
    /// The launch's grid and block, where known.
    pub grid: Option<[u32; 3]>,
    /// See `grid`.
    pub block: Option<[u32; 3]>,
    /// A line row's `file:line`.
    pub line: Option<String>,
    /// A line row's access kind.
    pub op: Option<String>,
}

impl RowKey {
    /// `pattern/variant` for built-in rows, else the kernel name (with ` [rank N]` for a row of
    /// one rank's report). A line row adds its `file:line` and op, so the baseline keys lines by
    /// file, line, op and kernel (a line that moves is `new` + `missing`, not a silent pass).
    pub fn plain(&self) -> String {
        let base = if self.builtin { self.name.clone() } else { ranked(&self.name, self.rank) };
        match (&self.line, &self.op) {
            (Some(l), Some(op)) => format!("{base} @ {l} ({op})"),
            (Some(l), None) => format!("{base} @ {l}"),
            (None, _) => base,
        }
    }

    /// `grid 256x1x1, block 128x1x1`, where both are known.
    pub fn shape(&self) -> Option<String> {
        let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
        Some(format!("grid {}, block {}", dims(self.grid?), dims(self.block?)))
    }

    /// [`plain`](RowKey::plain) with the launch shape (`gemm [grid 256x1x1, block 128x1x1]`)
    /// for a user kernel whose shape is known; the plain key otherwise.
    pub fn shaped(&self) -> String {
        match (self.builtin, self.shape()) {
            (false, Some(s)) => {
                let plain = self.plain();
                match plain.split_once(" @ ") {
                    Some((base, line)) => format!("{base} [{s}] @ {line}"),
                    None => format!("{plain} [{s}]"),
                }
            }
            _ => self.plain(),
        }
    }
}

/// Where numbers come from: the one closed set of backends, spelled once. `run --backend` and
/// `profile --backend` take it as it is (clap's names are serde's: a test holds them equal),
/// provenance, the Slurm task file and run folders' names carry it. `import` and `triton` are
/// no choice of `--backend`: `analyze` and `check` read reports, `coalprof triton` interprets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Measure with ncu where a GPU is present, otherwise predict with the model (and say so).
    #[default]
    Auto,
    /// Measure with ncu; exit 4 without a GPU.
    Ncu,
    /// Predict with the address model, anywhere.
    Model,
    /// Execute the kernels in GPGPU-Sim (no GPU; `coalprof setup sim` installs it).
    Sim,
    /// Reports read as they are (`analyze`, `check`).
    #[value(skip)]
    Import,
    /// A Triton kernel's addresses from Triton's interpreter (`coalprof triton`).
    #[value(skip)]
    Triton,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // serde's name, the one the JSON carries.
        match serde_json::to_value(self) {
            Ok(Value::String(name)) => f.write_str(&name),
            _ => Err(std::fmt::Error),
        }
    }
}

/// What produced the results: everything that changes the numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The coalprof version.
    pub coalprof: String,
    /// What measured, predicted, simulated, read or interpreted them; under `--slurm`, the
    /// `--backend` the run was given.
    pub backend: Backend,
    /// The ncu version that measured (or wrote the report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ncu_version: Option<String>,
    /// The GPU's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Compute capability, e.g. `9.0`, and the architecture it implies, e.g. `sm_90`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// The driver version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The GPU's peak DRAM bandwidth, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_bandwidth_bytes_per_s: Option<f64>,
    /// Profiler settings (`cache_control`, `clock_control`, replay passes, L2 fetch size …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, Value>,
    /// The files the rows were read from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// The git checkout the run was made in (`run`, `profile`), when it was made in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
}

/// The commit, branch and state of the checkout a run was made in: what `history` orders runs
/// by and benchmark dashboards name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Git {
    /// The full commit hash of `HEAD`.
    pub commit: String,
    /// The branch checked out; absent on a detached `HEAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Whether tracked files differed from the commit.
    pub dirty: bool,
    /// The commit's date (ISO 8601, the committer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

impl Git {
    /// The first 12 hex digits of the commit.
    pub fn short(&self) -> &str {
        self.commit.get(..12).unwrap_or(&self.commit)
    }
}

impl Provenance {
    /// The provenance of results made by this coalprof with `backend`.
    pub fn new(backend: Backend) -> Provenance {
        Provenance { coalprof: env!("CARGO_PKG_VERSION").into(), backend, ..Provenance::default() }
    }

    /// The GPU architecture key (`sm_90`) baselines are filed under, `unknown` when not known.
    pub fn arch(&self) -> String {
        self.compute_capability
            .as_deref()
            .map(|cc| format!("sm_{}", cc.replace('.', "")))
            .unwrap_or_else(|| "unknown".to_string())
    }
}

/// Whether a metric is a per-source-line one (`line_*`, `[line.*]` in `metrics.toml`): the gate
/// checks those on line rows only, and kernel metrics on kernel rows only.
pub fn is_line_metric(metric: &str) -> bool {
    metric.starts_with("line_")
}

/// A whole result set, as saved in `results.json` and printed by `--format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// `coalprof/1`.
    pub schema: String,
    /// What produced the rows.
    pub provenance: Provenance,
    /// One row per variant, kernel or launch.
    pub rows: Vec<Row>,
    /// Run-level notices (`no GPU found: showing the model's prediction`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// The source lines that waste the most per measured launch (reports with source counters
    /// and `-lineinfo` kernels), worst first: what `coalprof lines` says, for the review.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst_lines: Vec<WorstLine>,
}

impl Results {
    /// Results of the current schema.
    pub fn new(provenance: Provenance, rows: Vec<Row>) -> Results {
        Results { schema: SCHEMA.to_string(), provenance, rows, notices: Vec::new(), worst_lines: Vec::new() }
    }

    /// Add the rows, inputs, worst lines and notices of `other` (results of another input of
    /// the same kind); each notice is said once, but one only `other` has is news.
    pub(crate) fn merge(&mut self, other: Results) {
        self.rows.extend(other.rows);
        self.provenance.inputs.extend(other.provenance.inputs);
        self.worst_lines.extend(other.worst_lines);
        for n in other.notices {
            if !self.notices.contains(&n) {
                self.notices.push(n);
            }
        }
    }
}

/// One of a launch's worst source lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorstLine {
    /// The pattern, for built-in patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The variant, for built-in patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The kernel.
    pub kernel: String,
    /// The rank whose report it comes from (`profile --per-rank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// `kernels/stride.cu:20`, repository-relative where it resolves.
    pub location: String,
    /// Where inside a library (`sm_32_intrinsics.hpp:302`) its accesses were made, when they
    /// stand on the user's line that called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// What the line's memory instructions do.
    pub op: Option<String>,
    /// Sectors per global request.
    pub sectors_per_request: Option<f64>,
    /// The ideal for its addresses.
    pub ideal_sectors_per_request: Option<f64>,
    /// Sectors beyond the ideal.
    pub excess_sectors: Option<f64>,
    /// Its share of the kernel's excess sectors (0–1).
    pub excess_share: Option<f64>,
    /// Shared wavefronts per ideal wavefront (n for an n-way bank conflict).
    pub shared_ways: Option<f64>,
    /// The line's code, when the source was found.
    pub code: Option<String>,
    /// What it means, in plain words.
    pub diagnosis: Option<String>,
}

/// `kernel [rank 3]` for a kernel of one rank's report, else the kernel: how rows, line rows and
/// compare keys keep the ranks of one run apart.
pub(crate) fn ranked(kernel: &str, rank: Option<u32>) -> String {
    match rank {
        Some(n) => format!("{kernel} [rank {n}]"),
        None => kernel.to_string(),
    }
}

/// `8388608` → `8,388,608` (`text.rs` formats every number people read; this is its one
/// public name).
pub use crate::text::thousands;

#[cfg(test)]
mod tests {
    use super::Backend;
    use clap::ValueEnum;

    #[test]
    fn a_backend_has_one_name_on_the_command_line_and_in_the_json() {
        for b in Backend::value_variants() {
            let clap = b.to_possible_value().expect("a value clap knows");
            assert_eq!(clap.get_name(), b.to_string());
            assert_eq!(serde_json::to_value(b).unwrap(), b.to_string());
        }
        // Reports and Triton kernels are no choice of `--backend`.
        for (b, name) in [(Backend::Import, "import"), (Backend::Triton, "triton")] {
            assert_eq!(b.to_string(), name);
            assert!(Backend::from_str(name, false).is_err());
        }
    }
}
