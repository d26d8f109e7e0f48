//! A closed pipe on stdout or stderr (`coalprof … | head`, a log reader that went away): every
//! command still exits with its own code, quietly, and never aborts (the release profile has
//! `panic = "abort"`, so a failed `eprintln!` would be SIGABRT, exit 134 in a shell).

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::util::{fixture, root};

/// A pipe whose reading end is already closed: every write to it fails with `EPIPE`.
fn broken_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills `fds` with two new descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "a pipe");
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    writer.into()
}

/// `coalprof ARGS` with stdout and stderr both broken pipes: its exit code, or the signal that
/// ended it, said.
fn run_broken(args: &[&str]) -> Result<i32, String> {
    let status = Command::new(env!("CARGO_BIN_EXE_coalprof"))
        .args(args)
        .env_remove("COALPROF_LOG")
        .env("COALPROF_HOME", root().join("target/no-tool-home"))
        .env("NO_COLOR", "1")
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .status()
        .expect("coalprof runs");
    status.code().ok_or_else(|| format!("killed by signal {:?} (6 is SIGABRT)", status.signal()))
}

#[test]
fn every_kind_of_output_into_closed_pipes_exits_with_its_own_code() {
    let csv = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let csv = csv.to_str().unwrap();
    let cases: &[(&str, &[&str], i32)] = &[
        // An error on stderr (and its hint): the input's exit code, 3.
        ("an input error", &["analyze", "no/such/report.csv"], 3),
        // Data on stdout.
        ("a table", &["patterns"], 0),
        ("a report", &["analyze", csv, "--format", "json"], 0),
        // The tracing logger on stderr, beside data on stdout.
        ("logs", &["-vv", "analyze", csv], 0),
        // clap's own output: help on stdout, a usage error on stderr.
        ("help", &["analyze", "--help"], 0),
        ("a usage error", &["analyze", "--no-such-flag"], 2),
        // A shell's completions (clap_complete writes them all at once).
        ("completions", &["completions", "bash"], 0),
    ];
    let mut wrong = Vec::new();
    for (what, args, code) in cases {
        match run_broken(args) {
            Ok(c) if c == *code => {}
            got => wrong.push(format!("{what} (`coalprof {}`): {got:?}, not exit {code}", args.join(" "))),
        }
    }
    assert!(wrong.is_empty(), "into closed pipes:\n{}", wrong.join("\n"));
}
