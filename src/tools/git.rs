//! `git`: the commit, branch and dirty flag of the checkout a run is made in, recorded in its
//! provenance (`history` orders runs by it, benchmark exports name it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Cmd};
use crate::results::Git as Checkout;

#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub path: PathBuf,
}

impl Git {
    /// The checkout `dir` is in, or `None` outside one (or when git fails: a run is never lost
    /// for want of its commit; `-v` logs why).
    pub(crate) fn checkout(&self, dir: &Path) -> Option<Checkout> {
        let ask = |args: &[&str]| -> Option<String> {
            let c = Cmd::new(&self.path)
                .arg("-C")
                .arg(dir)
                .args(args.iter().copied())
                .env("GIT_OPTIONAL_LOCKS", "0")
                .timeout(Some(Duration::from_secs(30)));
            match run_sync(&c, None) {
                Ok(out) if out.status.success() => Some(out.stdout),
                Ok(out) => {
                    tracing::info!(command = %c, stderr = out.stderr.trim(), "git: no checkout recorded");
                    None
                }
                Err(e) => {
                    tracing::info!("git: no checkout recorded: {e}");
                    None
                }
            }
        };
        let head = ask(&["log", "-1", "--format=%H%n%cI"])?;
        let mut lines = head.lines();
        let commit = lines.next()?.trim().to_string();
        let date = lines.next().map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
        let branch = ask(&["symbolic-ref", "--quiet", "--short", "HEAD"]).map(|b| b.trim().to_string());
        let status = ask(&["status", "--porcelain", "--untracked-files=no"])?;
        Some(Checkout { commit, branch: branch.filter(|b| !b.is_empty()), dirty: parse_dirty(&status), date })
    }
}

/// `git status --porcelain` prints a line per changed tracked file; none means clean.
fn parse_dirty(porcelain: &str) -> bool {
    porcelain.lines().any(|l| !l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_when_any_tracked_file_changed() {
        assert!(!parse_dirty(""));
        assert!(!parse_dirty("\n"));
        assert!(parse_dirty(" M src/lib.rs\n"));
    }

    #[test]
    #[allow(clippy::disallowed_methods, clippy::print_stderr)] // the test sets up a real repository
    fn records_a_real_checkout() {
        let Some(git) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("git"))
            .find(|p| p.is_file())
        else {
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED records_a_real_checkout: git is not on PATH");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let g = |args: &[&str]| {
            let ok = std::process::Command::new(&git).arg("-C").arg(dir.path()).args(args).status().unwrap();
            assert!(ok.success(), "git {args:?}");
        };
        let git = Git { path: git.clone() };
        assert_eq!(git.checkout(dir.path()), None, "not a checkout");
        g(&["init", "-q", "-b", "trunk"]);
        std::fs::write(dir.path().join("f"), "1").unwrap();
        g(&["add", "f"]);
        g(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]);
        let clean = git.checkout(dir.path()).expect("a checkout");
        assert_eq!(clean.commit.len(), 40);
        assert_eq!(clean.branch.as_deref(), Some("trunk"));
        assert!(!clean.dirty);
        assert!(clean.date.is_some());
        std::fs::write(dir.path().join("f"), "2").unwrap();
        assert!(git.checkout(dir.path()).unwrap().dirty);
    }
}
