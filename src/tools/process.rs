//! The one process runner: every external command goes through here, as an argument vector
//! (never a shell), in its own process group, with stdout and stderr captured, a timeout, and
//! Ctrl-C handled. On a timeout or an interrupt the whole group is killed, so no grandchild
//! (a kernel under ncu, say) is left running.

#![allow(clippy::disallowed_methods)] // the one process runner

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use super::ToolError;

/// An external command: program, arguments and environment, exactly as they will be passed.
#[derive(Debug, Clone)]
pub struct Cmd {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    pub timeout: Option<Duration>,
    /// Runs to the end even after Ctrl-C: the clean-up a Ctrl-C calls for (`scancel`).
    pub cleanup: bool,
}

impl Cmd {
    pub fn new(program: impl Into<PathBuf>) -> Cmd {
        Cmd { program: program.into(), args: Vec::new(), env: Vec::new(), cwd: None, timeout: None, cleanup: false }
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Cmd {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Cmd {
        self.env.push((k.into(), v.into()));
        self
    }

    pub fn timeout(mut self, t: Option<Duration>) -> Cmd {
        self.timeout = t;
        self
    }

    /// Not interrupted by Ctrl-C (it still has its timeout): what a Ctrl-C itself runs.
    pub fn cleanup(mut self) -> Cmd {
        self.cleanup = true;
        self
    }
}

/// The command line as a user could paste it (arguments with spaces or quotes are quoted).
impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shell_quote(&self.program.to_string_lossy()))?;
        for a in &self.args {
            write!(f, " {}", shell_quote(&a.to_string_lossy()))?;
        }
        Ok(())
    }
}

/// `s` as one shell word (quoted only where a shell would split or expand it).
pub(crate) fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// What a finished command printed, and how it ended.
#[derive(Debug, Clone)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Wall time spent waiting for children, summed (nanoseconds): coalprof's own overhead is the
/// rest of its run time (`-v` logs it at the end of `run` and `profile`).
static CHILD_NANOS: AtomicU64 = AtomicU64::new(0);

/// Total wall time children have run so far (children run one at a time except nvcc builds,
/// where the sum can exceed the elapsed time).
pub(crate) fn child_time() -> Duration {
    Duration::from_nanos(CHILD_NANOS.load(Ordering::Relaxed))
}

/// Run `cmd` to completion; see [`run`].
pub(crate) fn run_sync(cmd: &Cmd, on_line: Option<&mut (dyn FnMut(&str) + Send)>) -> Result<Captured, ToolError> {
    crate::runtime::runtime().block_on(run(cmd, on_line))
}

/// Run `cmd`, feeding each stdout line to `on_line` as it arrives (ncu's progress lines), and
/// return everything it printed. A non-zero exit is *not* an error here: callers interpret it,
/// because ncu and the kernels say more in their output than in their status.
pub(crate) async fn run(cmd: &Cmd, on_line: Option<&mut (dyn FnMut(&str) + Send)>) -> Result<Captured, ToolError> {
    run_until(cmd, on_line, std::future::pending()).await
}

/// How long a child asked to stop ([`run_until`]) has before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// [`run`], also ended when `stop` resolves (a cancelled MCP request): the child's group is
/// asked to stop as a Ctrl-C asks (SIGINT; a coalprof child then kills the groups of its own
/// children, which lead groups of their own, and exits), and after [`STOP_GRACE`] killed;
/// the result is [`ToolError::Interrupted`].
pub(crate) async fn run_until(
    cmd: &Cmd,
    mut on_line: Option<&mut (dyn FnMut(&str) + Send)>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<Captured, ToolError> {
    tracing::debug!(command = %cmd, "running");
    if crate::cancel::cancelled() && !cmd.cleanup {
        return Err(ToolError::Interrupted { command: cmd.to_string() });
    }
    let started = Instant::now();
    let mut command = tokio::process::Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|source| ToolError::Spawn { command: cmd.to_string(), source })?;
    let pid = child.id();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");

    // stderr is drained concurrently so a chatty child can never block on a full pipe.
    let stderr_task = tokio::spawn(read_all(stderr));
    let mut out = String::new();
    let reading = async {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(f) = on_line.as_mut() {
                f(&line);
            }
            out.push_str(&line);
            out.push('\n');
        }
        child.wait().await
    };
    let limit = cmd.timeout.unwrap_or(Duration::MAX);
    let outcome = tokio::select! {
        status = reading => Outcome::Done(status),
        _ = tokio::time::sleep(limit) => Outcome::TimedOut,
        _ = crate::cancel::wait(), if !cmd.cleanup => Outcome::Interrupted,
        _ = stop => Outcome::Stopped,
    };
    let status = match outcome {
        Outcome::Done(status) => status.map_err(|source| ToolError::Spawn { command: cmd.to_string(), source })?,
        Outcome::Stopped => {
            signal_group(pid, libc::SIGINT);
            let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
            kill_group(pid);
            return Err(ToolError::Interrupted { command: cmd.to_string() });
        }
        Outcome::TimedOut | Outcome::Interrupted => {
            kill_group(pid);
            let stderr = stderr_task.await.unwrap_or_default();
            return Err(if matches!(outcome, Outcome::TimedOut) {
                ToolError::Timeout { command: cmd.to_string(), after: limit, stderr }
            } else {
                ToolError::Interrupted { command: cmd.to_string() }
            });
        }
    };
    let stderr = stderr_task.await.unwrap_or_default();
    let elapsed = started.elapsed();
    CHILD_NANOS.fetch_add(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    tracing::debug!(command = %cmd, %status, ?elapsed, "finished");
    Ok(Captured { status, stdout: out, stderr, elapsed })
}

enum Outcome {
    Done(std::io::Result<ExitStatus>),
    TimedOut,
    Interrupted,
    Stopped,
}

async fn read_all(mut r: impl AsyncRead + Unpin) -> String {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf).await;
    String::from_utf8_lossy(&buf).into_owned()
}

/// Kill the child's whole process group (it leads its own group: `process_group(0)`).
fn kill_group(pid: Option<u32>) {
    signal_group(pid, libc::SIGKILL);
}

/// Send `signal` to the child's process group.
fn signal_group(pid: Option<u32>, signal: libc::c_int) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal; a stale group id at worst yields ESRCH.
        unsafe {
            libc::killpg(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_arguments_a_shell_would_split() {
        let c = Cmd::new("/bin/echo").arg("a b").arg("it's").arg("-x");
        assert_eq!(c.to_string(), r"/bin/echo 'a b' 'it'\''s' -x");
    }

    #[test]
    fn captures_stdout_stderr_and_status() {
        let c = Cmd::new("/bin/sh").args(["-c", "echo out; echo err >&2; exit 3"]);
        let got = run_sync(&c, None).unwrap();
        assert_eq!(got.stdout, "out\n");
        assert_eq!(got.stderr, "err\n");
        assert_eq!(got.status.code(), Some(3));
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let marker = tempfile::NamedTempFile::new().unwrap();
        let path = marker.path().display().to_string();
        // The grandchild would write the marker after 2 s if it survived the group kill.
        let script = format!("(sleep 2; echo alive > {path}) & sleep 30");
        let c = Cmd::new("/bin/sh").args(["-c", &script]).timeout(Some(Duration::from_millis(300)));
        let err = run_sync(&c, None).unwrap_err();
        assert!(matches!(err, ToolError::Timeout { .. }), "{err}");
        std::thread::sleep(Duration::from_millis(2500));
        assert_eq!(std::fs::read_to_string(marker.path()).unwrap(), "", "a grandchild outlived the timeout");
    }

    #[test]
    fn a_stopped_child_is_asked_with_sigint_then_its_group_killed() {
        let marker = tempfile::NamedTempFile::new().unwrap();
        let path = marker.path().display().to_string();
        // The shell says it saw SIGINT (a coalprof child's Ctrl-C path) and then waits on; the
        // grace runs out and the group (the shell and its `sleep`) is killed.
        let script = format!("trap 'echo asked > {path}' INT; sleep 30 & wait; sleep 30 & wait");
        let c = Cmd::new("/bin/sh").args(["-c", &script]);
        let started = Instant::now();
        let stopped = async { run_until(&c, None, tokio::time::sleep(Duration::from_millis(300))).await };
        let err = crate::runtime::runtime().block_on(stopped).unwrap_err();
        assert!(matches!(err, ToolError::Interrupted { .. }), "{err}");
        let took = started.elapsed();
        assert!(took < STOP_GRACE + Duration::from_secs(3), "stopping took {took:?}");
        assert_eq!(std::fs::read_to_string(marker.path()).unwrap(), "asked\n");
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = run_sync(&Cmd::new("/nonexistent/ncu"), None).unwrap_err();
        assert!(matches!(err, ToolError::Spawn { .. }));
    }
}
