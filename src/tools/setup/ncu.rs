//! `coalprof setup ncu`: ncu 2022.3 for reading and importing reports (and `--query-metrics`),
//! from Debian bookworm non-free's `nsight-compute-target`, unpacked into `<home>/ncu/root/`
//! with the empty `sections/` folder ncu refuses to start without, and `<home>/bin/ncu` linked
//! to it. Profiling on a GPU wants the ncu of the machine's own CUDA toolkit.

use std::path::{Path, PathBuf};

use super::debian::{self, Apt};
use super::stage::{self, Stage};
use super::{Component, Report, Request, SetupError, Step};
use crate::tools::home::ToolHome;

/// The package.
const PACKAGE: &str = "nsight-compute-target";

/// Where the package puts Nsight Compute, under the unpacked root.
const NSIGHT: &str = "usr/lib/x86_64-linux-gnu/nsight-compute";

/// The executable, under [`NSIGHT`].
const EXE: &str = "target/linux-desktop-glibc_2_11_3-x64/ncu";

const TITLE: &str = "ncu 2022.3";

/// What to do where Debian's package cannot be had.
const OTHERWISE: &str =
    "install Nsight Compute from NVIDIA (it ships with the CUDA toolkit) and point coalprof at it with `--ncu PATH` or `COALPROF_NCU`";

fn nsight(root: &Path) -> PathBuf {
    root.join("root").join(NSIGHT)
}

pub(super) fn plan(req: &Request) -> Vec<Step> {
    let home = req.home.clone();
    let c = Component::Ncu;
    let unpacked = nsight(&home.ncu_root()).join(EXE);
    if unpacked.is_file() {
        if ready(&home) {
            return vec![Step::present(c, TITLE, home.ncu().display().to_string())];
        }
        let what = format!("link {} and make its sections/ folder", home.ncu().display());
        return vec![Step::missing(c, TITLE, what, move |_| finish(&home).map(|()| "linked".into()))];
    }
    if std::env::consts::ARCH != "x86_64" {
        let e = SetupError::cannot(
            format!("Debian's {PACKAGE} is built for x86_64 only, not this {}", std::env::consts::ARCH),
            OTHERWISE,
        );
        return vec![Step::blocked(c, TITLE, e)];
    }
    if let Err(e) = Apt::new(req, "ncu 2022.3", OTHERWISE) {
        return vec![Step::blocked(c, TITLE, e)];
    }
    let what = format!("download {PACKAGE} (about 116 MB) from {} into {}", Apt::describe(), home.ncu_root().display());
    let req = req.clone();
    vec![Step::missing(c, TITLE, what, move |report| install(&req, report))]
}

/// `bin/ncu` leads to an ncu with its sections folder beside it.
fn ready(home: &ToolHome) -> bool {
    let nsight = nsight(&home.ncu_root());
    home.ncu().is_file() && nsight.join("sections").is_dir() && linked(home)
}

fn linked(home: &ToolHome) -> bool {
    match (std::fs::canonicalize(home.ncu()), std::fs::canonicalize(nsight(&home.ncu_root()).join(EXE))) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The sections folder (ncu exits 255, `Failed to add rules search path`, without one; the
/// real sections ship in the 232 MB GUI package, and an empty folder is enough for `--import`
/// and `--query-metrics`) and the `bin/ncu` link, relative so the home can move.
fn finish(home: &ToolHome) -> Result<(), SetupError> {
    let sections = nsight(&home.ncu_root()).join("sections");
    std::fs::create_dir_all(&sections).map_err(|e| SetupError::io(&sections, e))?;
    let target = Path::new("..").join("ncu/root").join(NSIGHT).join(EXE);
    stage::link(&home.root, &target, &home.ncu())
}

fn install(req: &Request, report: &dyn Report) -> Result<String, SetupError> {
    let home = &req.home;
    let apt = Apt::new(req, "ncu 2022.3", OTHERWISE)?;
    let stage = Stage::new(&home.root, "ncu")?;
    report.doing("apt-get update (Debian non-free)");
    apt.update()?;
    report.doing(&format!("downloading {PACKAGE} (about 116 MB)"));
    let debs = apt.download(&[PACKAGE], &stage.join("debs"))?;
    report.doing(&format!("unpacking {PACKAGE}"));
    debian::unpack(req, &debs[0], &stage.join("ncu/root"), &[])?;
    let sections = nsight(&stage.join("ncu")).join("sections");
    std::fs::create_dir_all(&sections).map_err(|e| SetupError::io(&sections, e))?;
    if !nsight(&stage.join("ncu")).join(EXE).is_file() {
        return Err(SetupError::cannot(
            format!("{PACKAGE} has no `{NSIGHT}/{EXE}`: Debian's package changed"),
            OTHERWISE,
        ));
    }
    stage.commit("ncu", &home.ncu_root())?;
    finish(home)?;
    let ncu = crate::tools::ncu::Ncu { path: home.ncu(), home: req.user_home.clone() };
    Ok(ncu.version()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Idempotence: an unpacked ncu with its link and sections is there; one missing either is
    /// finished without a download.
    #[test]
    fn present_only_with_the_link_and_the_sections_folder() {
        let d = tempfile::tempdir().unwrap();
        let home = ToolHome::at(d.path());
        let exe = nsight(&home.ncu_root()).join(EXE);
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, "").unwrap();
        assert!(!ready(&home));
        finish(&home).unwrap();
        assert!(ready(&home));
        assert_eq!(std::fs::canonicalize(home.ncu()).unwrap(), std::fs::canonicalize(&exe).unwrap());
        std::fs::remove_dir(nsight(&home.ncu_root()).join("sections")).unwrap();
        assert!(!ready(&home), "ncu does not start without its sections folder");
    }
}
