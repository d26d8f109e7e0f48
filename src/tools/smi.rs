//! `nvidia-smi`: the GPUs present (name, compute capability, memory, driver).

use std::path::PathBuf;
use std::time::Duration;

use super::process::{run_sync, Cmd};
use super::ToolError;

/// One GPU as nvidia-smi reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// `9.0`.
    pub compute_capability: String,
    pub memory_mib: Option<u64>,
    pub driver: String,
    /// `GPU-…`: what `CUDA_VISIBLE_DEVICES` pins a process to, whatever the enumeration order.
    pub uuid: Option<String>,
}

impl Gpu {
    /// `sm_90` for compute capability 9.0.
    pub fn arch(&self) -> String {
        format!("sm_{}", self.compute_capability.replace('.', ""))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Smi {
    pub path: PathBuf,
}

impl Smi {
    pub(crate) fn gpus(&self) -> Result<Vec<Gpu>, ToolError> {
        let c = Cmd::new(&self.path)
            .args([
                "--query-gpu=index,name,compute_cap,memory.total,driver_version,uuid",
                "--format=csv,noheader,nounits",
            ])
            .timeout(Some(Duration::from_secs(60)));
        let out = run_sync(&c, None)?;
        if !out.status.success() {
            return Err(ToolError::NoProfiler {
                message: format!(
                    "nvidia-smi found no usable GPU: {}",
                    out.stdout.trim().lines().next().unwrap_or("").trim()
                ),
                hint: "check that the NVIDIA driver is installed and loaded (`nvidia-smi` should list the GPU)".into(),
            });
        }
        Ok(parse(&out.stdout))
    }
}

/// Parse `0, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-…` lines (the UUID may be missing).
pub(crate) fn parse(text: &str) -> Vec<Gpu> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            if f.len() < 5 {
                return None;
            }
            Some(Gpu {
                index: f[0].parse().ok()?,
                name: f[1].to_string(),
                compute_capability: f[2].to_string(),
                memory_mib: f[3].parse().ok(),
                driver: f[4].to_string(),
                uuid: f.get(5).filter(|u| u.starts_with("GPU-")).map(|u| u.to_string()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_query_lines() {
        let g = parse("0, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-5f3c1b2a-0000-4000-8000-000000000001\n");
        assert_eq!(g[0].name, "NVIDIA H200");
        assert_eq!(g[0].uuid.as_deref(), Some("GPU-5f3c1b2a-0000-4000-8000-000000000001"));
        assert_eq!(parse("0, NVIDIA H200, 9.0, 143771, 570.124.06\n")[0].uuid, None);
        assert_eq!(g[0].arch(), "sm_90");
        assert_eq!(g[0].memory_mib, Some(143_771));
        assert!(parse("garbage").is_empty());
    }
}
