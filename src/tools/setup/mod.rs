//! `coalprof setup`: installs what each backend needs into the tool home ([`ToolHome`]), in
//! the layout discovery (`tools/locate.rs`) searches. Each component is a list of steps; a
//! step first looks whether its result is already there (so a second run and `--dry-run`
//! change nothing), and builds into a staging folder inside the home that is renamed into place
//! only when complete (`setup/stage.rs`). Every program runs through `tools/process.rs`.
//!
//! What the machine lacks (a build dependency and no root, no Python `venv`, no `apt-get`) is
//! found while planning, before anything is changed, and said with the command that fixes it.

pub(crate) mod cuda;
mod debian;
pub(crate) mod ncu;
pub(crate) mod sim;
pub(crate) mod stage;
pub(crate) mod triton;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::home::ToolHome;
use super::process::{self, Captured, Cmd};
use super::ToolError;
pub use crate::error::SetupError;

/// What `coalprof setup` can install, as the command line names it (`coalprof setup cuda sim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub(crate) enum Component {
    /// cuda, ncu and sim (triton only when named: it is ~1 GB and only `coalprof triton` needs it).
    All,
    /// nvcc, nvdisasm, cuobjdump, the CUDA headers and NVTX (NVIDIA's PyPI wheels).
    Cuda,
    /// ncu 2022.3 for reading and importing reports (Debian non-free).
    Ncu,
    /// The CUDA 11.8 toolkit and GPGPU-Sim built from its pinned source, for `--backend sim`.
    Sim,
    /// Triton and numpy (no torch) in a Python environment, for `coalprof triton`.
    Triton,
}

impl Component {
    /// What `all` stands for, in the order it installs them.
    pub(crate) const ALL: [Component; 3] = [Component::Cuda, Component::Ncu, Component::Sim];
    /// Every component that installs something, in the order they are installed when named together.
    pub(crate) const EVERY: [Component; 4] = [Component::Cuda, Component::Ncu, Component::Sim, Component::Triton];

    /// The components `asked` names, `all` expanded, without repeats, in [`Component::EVERY`]'s order.
    pub(crate) fn expand(asked: &[Component]) -> Vec<Component> {
        let named =
            |c: &Component| asked.iter().any(|&a| a == *c || (a == Component::All && Component::ALL.contains(c)));
        Component::EVERY.into_iter().filter(named).collect()
    }

    /// The name on the command line (`coalprof setup sim`): clap's.
    pub(crate) fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

/// Everything setup needs, resolved once by the settings layer.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Where to install.
    pub home: ToolHome,
    /// What to install, without repeats, in [`Component::EVERY`]'s order.
    pub components: Vec<Component>,
    /// `--dry-run`: plan and list, change nothing.
    pub dry_run: bool,
    /// `PATH`, where the programs setup runs are looked for.
    pub path: Option<OsString>,
    /// Whether coalprof runs as root (system packages are then installed with apt-get).
    pub root: bool,
    /// How many jobs `make` runs.
    pub jobs: usize,
    /// `CUDA11_HOME`: a CUDA 11 toolkit the user has, linked instead of downloaded.
    pub cuda11_home: Option<PathBuf>,
    /// `COALPROF_GPGPUSIM_SRC`: GPGPU-Sim's source, an archive or a folder.
    pub gpgpusim_src: Option<PathBuf>,
    /// The checkout's vendored GPGPU-Sim (`../shared/vendor/gpgpu-sim/`), when coalprof runs in
    /// its checkout and that folder exists.
    pub vendor: Option<PathBuf>,
    /// The `HOME` ncu is run with to check it (it deploys section files there).
    pub user_home: Option<PathBuf>,
}

/// What a step's result looks like now.
#[derive(Debug)]
pub(crate) enum State {
    /// It is there: what, and where.
    Present(String),
    /// It is not: what the step would do.
    Missing(String),
    /// It cannot be done here: why, and the command that fixes it.
    Blocked(SetupError),
}

/// What a running step does; returns what it installed, in a few words.
type Action = Box<dyn FnOnce(&dyn Report) -> Result<String, SetupError>>;

/// One step of a component.
pub(crate) struct Step {
    /// The component it belongs to.
    pub component: Component,
    /// What it installs (`the CUDA 11.8 toolkit`).
    pub title: &'static str,
    /// Whether it is there, would run, or cannot.
    pub state: State,
    action: Option<Action>,
}

impl Step {
    fn present(component: Component, title: &'static str, what: impl Into<String>) -> Step {
        Step { component, title, state: State::Present(what.into()), action: None }
    }

    fn missing(
        component: Component,
        title: &'static str,
        what: impl Into<String>,
        action: impl FnOnce(&dyn Report) -> Result<String, SetupError> + 'static,
    ) -> Step {
        Step { component, title, state: State::Missing(what.into()), action: Some(Box::new(action)) }
    }

    fn blocked(component: Component, title: &'static str, e: SetupError) -> Step {
        Step { component, title, state: State::Blocked(e), action: None }
    }
}

/// How setup tells a person what it does (the command layer draws it: a bar and lines).
pub(crate) trait Report {
    /// A step whose result is already there.
    fn skipped(&self, step: &Step, what: &str);
    /// A step begins.
    fn started(&self, step: &Step, what: &str);
    /// What the running step does now (`downloading …`, `make -j2`).
    fn doing(&self, what: &str);
    /// A step finished: what it installed, and how long it took.
    fn finished(&self, step: &Step, what: &str, took: Duration);
}

/// Every step of the components asked for, each with its state; nothing is changed.
pub(crate) fn plan(req: &Request) -> Vec<Step> {
    let mut steps = Vec::new();
    for c in &req.components {
        match c {
            Component::Cuda => steps.extend(cuda::plan(req)),
            Component::Ncu => steps.extend(ncu::plan(req)),
            Component::Sim => steps.extend(sim::plan(req)),
            Component::Triton => steps.extend(triton::plan(req)),
            // Expanded into the others by `Component::expand` before a request is made.
            Component::All => {}
        }
    }
    steps
}

/// Run the planned steps in order. A step that cannot be done stops setup before any step
/// runs; a step that fails stops it there (what finished before stays installed; the failed
/// step's stage is removed).
pub(crate) fn install(steps: Vec<Step>, report: &dyn Report) -> Result<(), SetupError> {
    let (blocked, steps): (Vec<Step>, Vec<Step>) =
        steps.into_iter().partition(|s| matches!(s.state, State::Blocked(_)));
    if let Some(State::Blocked(e)) = blocked.into_iter().next().map(|s| s.state) {
        return Err(e);
    }
    for mut step in steps {
        if crate::cancel::cancelled() {
            return Err(ToolError::Interrupted { command: format!("coalprof setup {}", step.component.name()) }.into());
        }
        match &step.state {
            State::Present(what) => report.skipped(&step, what),
            State::Missing(what) => {
                report.started(&step, what);
                let started = Instant::now();
                let action = step.action.take().expect("a missing step has an action");
                let done = action(report)?;
                report.finished(&step, &done, started.elapsed());
            }
            State::Blocked(_) => unreachable!("blocked steps were taken out above"),
        }
    }
    Ok(())
}

/// A program setup needs, on `PATH`.
fn program(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path?;
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false))
}

/// `name` on `PATH`, or why setup cannot go on without it and how to get it.
fn need(req: &Request, name: &str, package: &str, why: &str) -> Result<PathBuf, SetupError> {
    program(req.path.as_deref(), name).ok_or_else(|| {
        SetupError::cannot(
            format!("`{name}` is not on PATH: {why}"),
            format!("run `{}`, then `coalprof setup` again", apt_install(req.root, &[package])),
        )
    })
}

/// The exact command that installs Debian packages (`sudo` unless coalprof runs as root).
fn apt_install(root: bool, packages: &[&str]) -> String {
    let sudo = if root { "" } else { "sudo " };
    format!("{sudo}apt-get install -y --no-install-recommends {}", packages.join(" "))
}

/// Run `cmd`; a non-zero exit is a failure of `what`, with its command line and output.
fn run(cmd: &Cmd, what: &str) -> Result<Captured, SetupError> {
    let out = process::run_sync(cmd, None)?;
    if !out.status.success() {
        // Most installers write their reason to stderr, some (pip's resolver, make) to stdout.
        let text = format!("{}{}", out.stdout, out.stderr);
        return Err(ToolError::failed(what, cmd, &out).with_output(text).into());
    }
    Ok(out)
}

/// A Python virtual environment at `venv`, made by `python`, for `component`'s install. A Python
/// without its `venv` module or `ensurepip` (Debian splits them off) is an error whose hint
/// installs them and runs `coalprof setup COMPONENT` again.
fn make_venv(req: &Request, python: &Path, venv: &Path, component: Component) -> Result<(), SetupError> {
    let made = run(&Cmd::new(python).args(["-m", "venv"]).arg(venv), "cannot create a Python virtual environment");
    made.map(drop).map_err(|e| SetupError::Cannot {
        message: format!(
            "Python cannot create a virtual environment (its `venv` module or `ensurepip` is missing): {e}"
        ),
        hint: Some(format!(
            "run `{}`, then `coalprof setup {}` again",
            apt_install(req.root, &["python3-venv"]),
            component.name()
        )),
    })
}

/// `pip install`, quietly, by the Python of the virtual environment `venv`; the caller adds what.
fn pip_install(venv: &Path) -> Cmd {
    Cmd::new(venv.join("bin/python3")).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-warn-script-location",
    ])
}

/// Whole seconds, for the step lines.
pub(crate) fn seconds(d: Duration) -> String {
    format!("{:.0} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;

    #[test]
    fn the_fix_for_a_missing_package_is_sudo_unless_root() {
        assert_eq!(
            apt_install(false, &["bison", "flex"]),
            "sudo apt-get install -y --no-install-recommends bison flex"
        );
        assert_eq!(apt_install(true, &["curl"]), "apt-get install -y --no-install-recommends curl");
    }

    struct Quiet;
    impl Report for Quiet {
        fn skipped(&self, _: &Step, _: &str) {}
        fn started(&self, _: &Step, _: &str) {}
        fn doing(&self, _: &str) {}
        fn finished(&self, _: &Step, _: &str, _: Duration) {}
    }

    /// A blocked step anywhere in the plan stops setup before the first step runs.
    #[test]
    fn a_blocked_step_stops_setup_before_anything_runs() {
        let ran = std::rc::Rc::new(std::cell::Cell::new(false));
        let r = ran.clone();
        let steps = vec![
            Step::missing(Component::Cuda, "nvcc", "install", move |_| {
                r.set(true);
                Ok("done".into())
            }),
            Step::blocked(
                Component::Sim,
                "build dependencies",
                SetupError::cannot("no bison", "apt-get install bison"),
            ),
        ];
        let err = install(steps, &Quiet).unwrap_err();
        assert_eq!(err.to_string(), "no bison");
        assert_eq!(err.exit(), Exit::Input);
        assert!(!ran.get(), "the first step must not run");
    }
}
