//! Slurm's client commands: `sbatch` to submit, `squeue` for progress, `scontrol show job` (and
//! `sacct`, where accounting is on) for a finished job's state, exit code and node, `scancel`.
//! Argument vectors and the reading of their output, over the one process runner.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Captured, Cmd};
use super::ToolError;

/// Each job's state as `squeue` names it (`RUNNING`, `COMPLETED`, …), by job id.
pub(crate) type JobStates = BTreeMap<u64, String>;

/// The folder holding `sbatch` and its siblings.
#[derive(Debug, Clone)]
pub(crate) struct Slurm {
    pub bin: PathBuf,
}

/// A job as Slurm last reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Job {
    /// `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`, `NODE_FAIL`, …
    pub state: String,
    /// `exit:signal`, as Slurm prints it (`0:0`).
    pub exit_code: Option<String>,
    pub partition: Option<String>,
    pub node: Option<String>,
}

impl Job {
    /// A state after which the job never runs again.
    pub(crate) fn finished(&self) -> bool {
        !matches!(
            self.state.as_str(),
            "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | "SUSPENDED" | "REQUEUED" | "RESIZING" | "STAGE_OUT"
        )
    }
}

const QUICK: Option<Duration> = Some(Duration::from_secs(60));

impl Slurm {
    fn cmd(&self, name: &str) -> Cmd {
        Cmd::new(self.bin.join(name)).timeout(QUICK)
    }

    /// `sbatch --parsable ARGS… SCRIPT`: the job id.
    pub(crate) fn sbatch(&self, args: &[OsString], script: &Path) -> Result<u64, ToolError> {
        let c = self.cmd("sbatch").arg("--parsable").args(args.iter().cloned()).arg(script);
        let out = run_sync(&c, None)?;
        let id = out.stdout.trim().split(';').next().and_then(|s| s.trim().parse().ok());
        match id {
            Some(id) if out.status.success() => Ok(id),
            _ => Err(failed("sbatch could not submit the task", &c, &out)),
        }
    }

    /// `squeue` over `ids`, every state Slurm still remembers: id → state. Jobs it has
    /// forgotten are absent.
    pub(crate) fn squeue(&self, ids: &[u64]) -> Result<JobStates, ToolError> {
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let c = self.cmd("squeue").args(["--noheader", "--states=all", "--format=%i|%T"]).arg(format!("--jobs={list}"));
        let out = run_sync(&c, None)?;
        if !out.status.success() {
            if out.stderr.contains("Invalid job id") {
                return Ok(BTreeMap::new());
            }
            return Err(failed("squeue could not list the tasks", &c, &out));
        }
        Ok(parse_squeue(&out.stdout))
    }

    /// A job's final facts: `scontrol show job`, else `sacct`; `None` when neither knows it.
    pub(crate) fn job(&self, id: u64) -> Result<Option<Job>, ToolError> {
        let c = self.cmd("scontrol").args(["show", "job", "--oneliner"]).arg(id.to_string());
        let out = run_sync(&c, None)?;
        if out.status.success() {
            if let Some(j) = parse_scontrol(&out.stdout) {
                return Ok(Some(j));
            }
        }
        let c = self
            .cmd("sacct")
            .args(["--noheader", "--parsable2", "--format=JobID,State,ExitCode,Partition,NodeList", "--jobs"])
            .arg(id.to_string());
        match run_sync(&c, None) {
            Ok(out) if out.status.success() => Ok(parse_sacct(&out.stdout, id)),
            _ => Ok(None),
        }
    }

    /// `scancel IDS…` (Ctrl-C while waiting).
    pub(crate) fn scancel(&self, ids: &[u64]) -> Result<(), ToolError> {
        let c = self.cmd("scancel").args(ids.iter().map(u64::to_string)).cleanup();
        let out = run_sync(&c, None)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(failed("scancel could not cancel the tasks", &c, &out))
        }
    }
}

fn failed(what: &str, c: &Cmd, out: &Captured) -> ToolError {
    ToolError::Failed {
        what: what.into(),
        command: c.to_string(),
        status: format!("{}", out.status),
        stderr: format!("{}{}", out.stdout, out.stderr),
        hint: Some("is the cluster up? `sinfo` lists its partitions (`SLURM_CONF` names its configuration)".into()),
    }
}

/// `12|RUNNING` lines.
pub(crate) fn parse_squeue(text: &str) -> BTreeMap<u64, String> {
    (text.lines())
        .filter_map(|l| {
            let (id, state) = l.trim().split_once('|')?;
            Some((id.trim().parse().ok()?, state.trim().to_string()))
        })
        .collect()
}

/// `scontrol show job --oneliner`: space-separated `Key=Value` pairs.
pub(crate) fn parse_scontrol(text: &str) -> Option<Job> {
    let fields: BTreeMap<&str, &str> = text.split_whitespace().filter_map(|kv| kv.split_once('=')).collect();
    let text_of = |k: &str| fields.get(k).map(|v| v.to_string()).filter(|v| !v.is_empty() && v != "(null)");
    Some(Job {
        state: text_of("JobState")?,
        exit_code: text_of("ExitCode"),
        partition: text_of("Partition"),
        node: text_of("BatchHost").or_else(|| text_of("NodeList")),
    })
}

/// `sacct --parsable2`: `JobID|State|ExitCode|Partition|NodeList`, the job's own line (not its
/// steps'); `CANCELLED by 0` reads `CANCELLED`.
pub(crate) fn parse_sacct(text: &str, id: u64) -> Option<Job> {
    let line = text.lines().find(|l| l.split('|').next() == Some(id.to_string().as_str()))?;
    let f: Vec<&str> = line.split('|').collect();
    let opt = |i: usize| f.get(i).map(|s| s.to_string()).filter(|s| !s.is_empty());
    Some(Job {
        state: f.get(1)?.split_whitespace().next()?.to_string(),
        exit_code: opt(2),
        partition: opt(3),
        node: opt(4),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_squeue_scontrol_and_sacct() {
        let q = parse_squeue("12|RUNNING\n13|PENDING\n  14|COMPLETED\n");
        assert_eq!(q[&12], "RUNNING");
        assert_eq!(q[&14], "COMPLETED");
        let j = parse_scontrol(
            "JobId=12 JobName=coalprof-stride UserId=root(0) JobState=FAILED Reason=NonZeroExitCode \
             ExitCode=3:0 Partition=debug NodeList=node1 BatchHost=node1 StdOut=/r/slurm/stride.log",
        )
        .unwrap();
        assert_eq!(
            j,
            Job {
                state: "FAILED".into(),
                exit_code: Some("3:0".into()),
                partition: Some("debug".into()),
                node: Some("node1".into())
            }
        );
        assert!(j.finished());
        let s = parse_sacct("12|CANCELLED by 0|0:15|gpu|n2\n12.batch|CANCELLED|0:15||n2\n", 12).unwrap();
        assert_eq!((s.state.as_str(), s.node.as_deref()), ("CANCELLED", Some("n2")));
        assert!(!Job { state: "PENDING".into(), ..Job::default() }.finished());
    }
}
