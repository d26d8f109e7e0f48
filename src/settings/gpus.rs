//! `--gpus`: which GPUs of the node `run` spreads its patterns over.

use crate::error::{Error, Result};

/// One `--gpus` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GpuPick {
    All,
    Index(u32),
    Uuid(String),
}

/// Parse `--gpus`: `all`, or indices and `GPU-…`/`MIG-…` UUIDs.
pub(crate) fn parse_picks(values: &[String]) -> Result<Vec<GpuPick>> {
    let picks: Vec<GpuPick> = (values.iter().map(|v| v.trim()))
        .map(|v| match v {
            "all" => Ok(GpuPick::All),
            v if v.starts_with("GPU-") || v.starts_with("MIG-") => Ok(GpuPick::Uuid(v.to_string())),
            v => v.parse().map(GpuPick::Index).map_err(|_| {
                Error::usage(format!("`--gpus {v}`: give `all`, nvidia-smi indices (`0,2`) or UUIDs (`GPU-…`)"))
            }),
        })
        .collect::<Result<_>>()?;
    if picks.len() > 1 && picks.contains(&GpuPick::All) {
        return Err(Error::usage("`--gpus all` stands alone"));
    }
    Ok(picks)
}
