//! `coalprof setup triton`: a Python virtual environment at `<home>/triton` with Triton (pinned
//! to [`VERSION`], a version the Triton counter is tested with) and numpy from PyPI, no torch, for
//! `coalprof triton`. Discovery (`tools/locate.rs`) finds its `bin/python3` after
//! `COALPROF_PYTHON` and coalprof's own Python environment.
//!
//! The venv is made in the stage and renamed into place: its `bin/python3` (a link to the base
//! interpreter, beside `pyvenv.cfg`) works from the new path, which is all coalprof runs; the
//! entry-point scripts (`bin/pip`) name the stage and are not used (`bin/python3 -m pip` is).

use std::path::Path;

use super::stage::Stage;
use super::{need, run, Component, Report, Request, SetupError, Step};

/// The Triton `setup triton` installs: the newest version `tests/it/triton.rs` passes on (3.6.0
/// passes too; docs/guide/triton.md lists them).
pub(crate) const VERSION: &str = "3.9.0";

const TITLE: &str = "Triton and numpy (no torch)";

pub(super) fn plan(req: &Request) -> Vec<Step> {
    let c = Component::Triton;
    let venv = req.home.triton_venv();
    let python = venv.join("bin/python3");
    if let Some(v) = installed(&python) {
        return vec![Step::present(c, TITLE, format!("triton {v} in {}", venv.display()))];
    }
    let base = match need(req, "python3", "python3 python3-venv", "Triton comes from PyPI through pip") {
        Ok(p) => p,
        Err(e) => return vec![Step::blocked(c, TITLE, e)],
    };
    let what = format!("pip install triton=={VERSION} numpy (PyPI, about 300 MB) into {}", venv.display());
    let req = req.clone();
    vec![Step::missing(c, TITLE, what, move |report| install(&req, &base, report))]
}

/// The Triton version importable with numpy by `python`, if both are there (asked as `doctor`
/// and `coalprof triton` ask).
fn installed(python: &Path) -> Option<String> {
    if !python.exists() {
        return None;
    }
    crate::tools::triton::Triton::check(python).ok()?.version().filter(|v| !v.is_empty())
}

fn install(req: &Request, base: &Path, report: &dyn Report) -> Result<String, SetupError> {
    let home = &req.home;
    let stage = Stage::new(&home.root, "triton")?;
    report.doing("creating the Python environment");
    let venv = stage.join("triton");
    super::make_venv(req, base, &venv, Component::Triton)?;
    report.doing(&format!("pip install triton=={VERSION} numpy (PyPI, about 300 MB)"));
    run(
        &super::pip_install(&venv).arg(format!("triton=={VERSION}")).arg("numpy"),
        "cannot install Triton and numpy from PyPI",
    )?;
    stage.commit("triton", &home.triton_venv())?;
    installed(&home.triton_venv().join("bin/python3")).map(|v| format!("triton {v}")).ok_or_else(|| {
        SetupError::cannot(
            format!("{} does not import triton and numpy after the rename", home.triton_venv().display()),
            "run `coalprof setup triton` again, or set COALPROF_PYTHON to a Python with triton and numpy",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::home::ToolHome;

    /// The pin is the newest version the Triton counter is tested with.
    #[test]
    fn the_pin_is_the_newest_supported_version() {
        assert_eq!(crate::tools::triton::SUPPORTED.last(), Some(&VERSION));
    }

    /// With no Python on PATH, the step is blocked with the command that fixes it; nothing is
    /// made in the home.
    #[test]
    fn no_python_on_path_blocks_with_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let req = Request {
            home: ToolHome::at(d.path()),
            components: vec![Component::Triton],
            dry_run: true,
            path: Some(d.path().join("empty").into_os_string()),
            root: false,
            jobs: 1,
            cuda11_home: None,
            gpgpusim_src: None,
            vendor: None,
            user_home: None,
        };
        let steps = plan(&req);
        assert_eq!(steps.len(), 1);
        match &steps[0].state {
            super::super::State::Blocked(e) => assert!(e.to_string().contains("`python3` is not on PATH"), "{e}"),
            _ => panic!("expected blocked"),
        }
        assert!(!req.home.triton_venv().exists());
    }
}
