//! One decoded `ProfileResult` → the [`LaunchRecord`] the CSV parser would have produced for the
//! same launch (names, launch shape, metrics in coalprof's base units, process, NVTX), and its
//! [`SourceCounters`].

use std::collections::HashMap;
use std::sync::Arc;

use prost::Message;

use super::proto::{NvtxState, ProfileResult, SourceData};
use super::units::ncu_unit;
use crate::parse::csv::Keep;
use crate::parse::source_metrics;
use crate::parse::units::{scale, Scale};
use crate::parse::{LaunchRecord, SourceCounters, Value};

/// A module stored whole in some block, found again through its reference.
#[derive(Debug, Clone, Default)]
pub(super) struct Module {
    pub cubin: Option<Arc<[u8]>>,
    pub sources: Arc<[(String, String)]>,
    pub sm_revision: Option<u32>,
}

impl Module {
    pub(super) fn from_source(s: SourceData) -> Module {
        Module {
            cubin: s.binary.map(Arc::from),
            sources: s
                .files
                .map(|f| f.files.into_iter().map(|f| (f.path, f.text)).collect::<Vec<_>>().into())
                .unwrap_or_default(),
            sm_revision: s.sm_revision,
        }
    }

    /// Fill what this copy lacks from an earlier one of the same module.
    fn or(self, earlier: Option<&Module>) -> Module {
        let Some(e) = earlier else { return self };
        Module {
            cubin: self.cubin.or_else(|| e.cubin.clone()),
            sources: if self.sources.is_empty() { e.sources.clone() } else { self.sources },
            sm_revision: self.sm_revision.or(e.sm_revision),
        }
    }
}

/// Everything a result needs that lives outside it: the launch's place in the file and its
/// process, both as the CSV's `ID` and `Process ID`/`Process Name` columns show them.
#[derive(Debug, Clone)]
pub(super) struct Context {
    pub id: u64,
    pub process: Option<String>,
}

/// `"PID name"` as the CSV's two process columns give it (name = the executable's file name,
/// from a Linux or a Windows path).
pub(super) fn process_label(id: Option<u32>, path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().filter(|n| !n.is_empty()).map(str::to_string);
    match (id, name) {
        (Some(p), Some(n)) => Some(format!("{p} {n}")),
        (Some(p), None) => Some(p.to_string()),
        (None, n) => n,
    }
}

/// The largest metric-name index the result uses (it can be read once the table is that long).
pub(super) fn max_name_id(r: &ProfileResult) -> Option<u32> {
    r.metrics.iter().map(|m| m.name_id).max()
}

/// What a result lacks that ncu writes for every launch (a kernel name, a grid, metrics), if
/// anything: such a result is a forged or broken item, not a launch.
pub(super) fn missing(r: &ProfileResult) -> Option<&'static str> {
    if r.mangled.is_empty() && r.function.is_empty() && r.demangled.is_empty() {
        Some("kernel name")
    } else if r.grid.is_none() {
        Some("grid")
    } else if r.metrics.is_empty() {
        Some("metrics")
    } else {
        None
    }
}

/// A metric name of the string table, with what the reader needs to know about it once.
#[derive(Debug, Clone)]
pub(super) struct Name {
    pub name: Arc<str>,
    /// The unit its values are read in, when the caller wants this metric in its records (a
    /// report names thousands of metrics; only the kept ones' values are read).
    pub kept: Option<Scale>,
    /// Whether its instances are read: every metric's when nothing is filtered, else only the
    /// per-instruction metrics the source counters carry (`parse::source_metrics`).
    pub instanced: bool,
}

impl Name {
    pub(super) fn new(name: String, keep: Option<&Keep>) -> Name {
        let kept = keep.is_none_or(|k| k.wants(&name)).then(|| scale(ncu_unit(&name)));
        let instanced = keep.is_none() || source_metrics::is_read(&name);
        Name { kept, instanced, name: Arc::from(name) }
    }
}

/// Build the record. `names` must cover every index (checked by the caller, which also keeps
/// one `Arc<str>` per name so that records share them). With `instanced_too`, the instances of
/// a metric whose name reads them ([`Name::instanced`]) go into the source counters, whether or
/// not the record keeps its value.
pub(super) fn convert(
    r: ProfileResult,
    names: &[Name],
    ctx: Context,
    modules: &HashMap<u64, Module>,
    instanced_too: bool,
) -> (LaunchRecord, SourceCounters) {
    let mut metrics = Vec::with_capacity(r.metrics.len());
    let mut counters = SourceCounters::default();
    let mut instanced = Vec::new();
    for m in r.metrics {
        let Name { name, kept, instanced: read_instances } = &names[m.name_id as usize];
        let name = name.clone();
        if &*name == source_metrics::FUNCTION_PCS {
            counters.function_pcs = function_pcs(&m);
        }
        let has_instances = *read_instances && !m.instances.is_empty();
        let Some(unit) = *kept else {
            if instanced_too && has_instances {
                instanced.push((name.clone(), instance_pairs(&m)));
            }
            continue;
        };
        let value = match m.value.as_ref() {
            Some(v) => match (&v.string, v.number()) {
                // Text goes through the CSV parser's own rule, so that a numeric string reads
                // as it does from a CSV.
                (Some(s), _) => Value::parse_scaled(s, unit),
                (None, Some(x)) if x.is_finite() => match unit.apply(x) {
                    y if y.is_finite() => Value::Number { value: y, unit: unit.base },
                    _ => Value::Text(x.to_string()),
                },
                (None, Some(x)) => Value::Missing(x.to_string()),
                (None, None) => Value::Missing(String::new()),
            },
            None => Value::Missing(String::new()),
        };
        if has_instances {
            instanced.push((name.clone(), instance_pairs(&m)));
        }
        metrics.push((name, value));
    }
    // Only metrics correlated with instruction addresses: per-unit instances (SM, FBPA, …)
    // have small indices as correlation ids, PM-sampling ones timestamps (~1.7e18); a PC lies
    // in the module, within 4 GiB past one of the launch's function starts.
    let starts: Vec<u64> = counters.function_pcs.iter().copied().filter(|&pc| pc > 0).collect();
    let is_pc = |c: u64| starts.iter().any(|&pc| c >= pc && c - pc < 1 << 32);
    let (placed, other): (Vec<_>, Vec<_>) = (instanced.into_iter())
        .filter(|(n, _)| &**n != source_metrics::FUNCTION_PCS)
        .partition(|(_, pairs)| !pairs.is_empty() && pairs.iter().all(|(c, _)| is_pc(*c)));
    counters.instanced = placed;
    counters.unplaced = other.into_iter().map(|(n, _)| n).filter(|n| SOURCE_METRICS.contains(&&**n)).collect();
    let source = r.source.as_deref().map(SourceData::decode).transpose().unwrap_or_else(|e| {
        crate::messages::warning(format!(
            "a launch's module reference does not parse ({e}); its source counters lack the module"
        ));
        None
    });
    if let Some(src) = source {
        let reference = src.reference;
        let m = Module::from_source(src).or(modules.get(&reference));
        counters.cubin = m.cubin;
        counters.sources = m.sources;
        counters.sm_revision = m.sm_revision;
    }
    let dims = |d: Option<super::proto::Uint64x3>| {
        d.and_then(|d| Some([u32::try_from(d.x).ok()?, u32::try_from(d.y).ok()?, u32::try_from(d.z).ok()?]))
    };
    let (grid, block) = launch_shape(dims(r.grid), dims(r.block), &metrics);
    counters.mangled = Some(r.mangled.clone()).filter(|m| !m.is_empty());
    let kernel = [r.demangled, r.function, r.mangled].into_iter().find(|n| !n.is_empty()).unwrap_or_default();
    let record = LaunchRecord {
        id: Some(ctx.id),
        process: ctx.process,
        kernel,
        grid,
        block,
        device: None,
        cc: None,
        nvtx: r.nvtx.as_deref().and_then(|b| NvtxState::decode(b).ok()).as_ref().and_then(nvtx_label),
        rank: None,
        launches: 1,
        metrics,
    };
    (crate::parse::csv::finish(record), counters)
}

/// A metric's instances as (correlation id, value).
fn instance_pairs(m: &super::proto::MetricResult) -> Vec<(u64, f64)> {
    (m.instances.iter())
        .filter_map(|e| Some((e.correlation_id.as_ref()?.integer()?, e.value.as_ref()?.number()?)))
        .collect()
}

/// Per-instruction metrics of the SourceCounters section that are correlated with PCs: when a
/// report has one of them but its PCs cannot be placed, the reader says so (never zero rows in
/// silence).
const SOURCE_METRICS: &[&str] =
    &["inst_executed", "memory_type", "memory_l2_theoretical_sectors_global", "memory_l1_wavefronts_shared"];

/// The start PCs of the launch's functions. Up to ncu 2024.x the scalar value is the start PC
/// (and one instance repeats it); from 2025.1 the scalar is the number of functions and the
/// PCs are only in the instances (docs/ncu-rep-format.md). So: the instances' values in order
/// of their correlation ids (the first is the kernel's own), else the scalar.
fn function_pcs(m: &super::proto::MetricResult) -> Vec<u64> {
    let mut instances: Vec<(u64, u64)> = m
        .instances
        .iter()
        .filter_map(|e| Some((e.correlation_id.as_ref()?.integer()?, e.value.as_ref()?.integer()?)))
        .collect();
    if instances.is_empty() {
        return m.value.as_ref().and_then(|v| v.integer()).into_iter().collect();
    }
    instances.sort_unstable();
    instances.into_iter().map(|(_, pc)| pc).collect()
}

/// Grid and block as ncu reports them. The launch metrics win where present (the CSV takes
/// them from there too). 2019 reports have no `launch__grid_dim_*`, and their grid field counts
/// threads per dimension (grid × block: `(102400, 1, 1)` for 100 blocks of 1024), which
/// `launch__grid_size` tells apart.
fn launch_shape(
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    metrics: &[(Arc<str>, Value)],
) -> (Option<[u32; 3]>, Option<[u32; 3]>) {
    let num = |n: &str| metrics.iter().find(|(k, _)| &**k == n).and_then(|(_, v)| v.number());
    let three = |p: &str| -> Option<[u32; 3]> {
        let d = |a: &str| num(&format!("{p}{a}")).filter(|v| *v >= 0.0 && *v <= f64::from(u32::MAX)).map(|v| v as u32);
        Some([d("x")?, d("y")?, d("z")?])
    };
    let product = |d: [u32; 3]| d.iter().map(|&x| f64::from(x)).product::<f64>();
    let block = three("launch__block_dim_").or(block);
    let grid = three("launch__grid_dim_").or_else(|| {
        let (g, size) = (grid?, num("launch__grid_size"));
        match (block, size) {
            (Some(b), Some(size)) if product(g) != size && b.iter().all(|&x| x > 0) => {
                let per_block = [g[0] / b[0], g[1] / b[1], g[2] / b[2]];
                let exact = (0..3).all(|i| g[i] % b[i] == 0);
                Some(if exact && product(per_block) == size { per_block } else { g })
            }
            _ => Some(g),
        }
    });
    (grid, block)
}

/// The push/pop ranges open at the launch, as ncu's CSV prints them in its NVTX column:
/// `TID  "domain:range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"` per open range.
fn nvtx_label(n: &NvtxState) -> Option<String> {
    let domain = |id: u64| {
        n.domains.iter().find(|d| d.id == id).map(|d| d.name.as_str()).unwrap_or("<default domain>").to_string()
    };
    let mut parts = Vec::new();
    for t in &n.threads {
        let mut ranges = Vec::new();
        for d in &t.domains {
            for r in &d.ranges {
                let a = r.attributes.clone().unwrap_or_default();
                let (clr_type, color) = match a.color {
                    Some(c) if c.kind == 1 => ("RGB".to_string(), format!("0x{:08x}", c.value)),
                    _ => ("none".to_string(), "none".to_string()),
                };
                let (msg_type, msg) = match a.message {
                    Some(m) if m.kind == 1 => ("ASCII", m.text),
                    Some(m) if m.kind == 2 => ("UNICODE", m.text),
                    _ => ("none", "none".to_string()),
                };
                ranges.push(format!(
                    "\"{}:{}:none:none:{clr_type}:{color}:{msg_type}:{msg}\"",
                    domain(d.domain_id),
                    r.name
                ));
            }
        }
        if !ranges.is_empty() {
            parts.push(format!("{}  {}", t.id, ranges.join("  ")));
        }
    }
    (!parts.is_empty()).then(|| parts.join("  "))
}

#[cfg(test)]
mod tests {
    use super::process_label;

    #[test]
    fn process_is_pid_and_file_name() {
        assert_eq!(process_label(Some(411), "/home/u/a.out").as_deref(), Some("411 a.out"));
        assert_eq!(process_label(Some(7), "C:\\Users\\u\\app.exe").as_deref(), Some("7 app.exe"));
        assert_eq!(process_label(None, "").as_deref(), None);
    }
}
