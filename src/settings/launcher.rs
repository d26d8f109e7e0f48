//! `profile --per-rank -- LAUNCHER … PROGRAM …`: where the launcher's words end and the
//! program's begin, and the variable the launcher numbers its ranks by.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::Env;
use crate::error::{Error, Result};

/// Split `srun -n 4 ./app -x` into the launcher and the program with its arguments: at a second
/// `--` if there is one, else before the first word after the launcher's name that is not an
/// option and names an executable (a path, or a program on `PATH`).
pub(super) fn split_launcher(command: &[OsString], env: &Env) -> Result<(Vec<OsString>, Vec<OsString>)> {
    let usage = |why: String| {
        Error::usage(why).with_hint("mark where the program starts with a second `--`: `-- srun -n 4 -- ./app`")
    };
    let Some(launcher) = command.first() else { return Err(Error::usage("give the launcher and program after `--`")) };
    if let Some(at) = command.iter().skip(1).position(|w| w == "--").map(|i| i + 1) {
        if at + 1 == command.len() {
            return Err(usage("no program after the launcher's `--`".into()));
        }
        return Ok((command[..at].to_vec(), command[at + 1..].to_vec()));
    }
    let executable = |w: &OsString| {
        let p = Path::new(w);
        let is_exe = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if p.components().count() > 1 {
            return is_exe(p);
        }
        let dirs = env.path.as_deref().map(|p| std::env::split_paths(p).collect::<Vec<_>>()).unwrap_or_default();
        dirs.iter().any(|d| is_exe(&d.join(p)))
    };
    let at = (1..command.len())
        .find(|&i| !command[i].to_string_lossy().starts_with('-') && executable(&command[i]))
        .ok_or_else(|| {
            usage(format!(
                "cannot tell where the options of `{}` end and the program begins",
                launcher.to_string_lossy()
            ))
        })?;
    Ok((command[..at].to_vec(), command[at..].to_vec()))
}

/// The variable a launcher numbers its ranks by, from its name.
pub(super) fn rank_env_of(launcher: &OsString) -> Result<String> {
    let name = Path::new(launcher).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let var = match name.as_str() {
        "srun" => "SLURM_PROCID",
        "mpirun" | "mpiexec" | "orterun" | "prterun" => "OMPI_COMM_WORLD_RANK",
        "jsrun" => "JSM_NAMESPACE_RANK",
        "aprun" => "ALPS_APP_PE",
        _ => {
            return Err(Error::usage(format!("cannot tell which variable numbers the ranks of `{name}`"))
                .with_hint("name it with `--rank-env VAR` (`PMI_RANK` for MPICH and Intel MPI)"))
        }
    };
    Ok(var.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launcher_ends_at_a_second_double_dash_or_before_the_first_executable() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("app");
        std::fs::write(&app, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&app, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("data"), "not a program").unwrap();
        let env = Env { path: Some(dir.path().into()), cwd: dir.path().into(), ..Env::read() };
        let words = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let split = |s: &str| split_launcher(&words(s), &env);
        // On PATH, after options and their values (`4`, and `data`, which is no program).
        assert_eq!(split("srun -n 4 -p data app -x").unwrap(), (words("srun -n 4 -p data"), words("app -x")));
        // A path to an executable.
        let by_path = format!("mpirun -np 2 {} a", app.display());
        assert_eq!(split(&by_path).unwrap().1, words(&format!("{} a", app.display())));
        // A second `--` wins, and is dropped.
        assert_eq!(split("mpirun --host app -- app b").unwrap(), (words("mpirun --host app"), words("app b")));
        for bad in ["srun -n 4 ./missing", "srun -n 4 --", "srun"] {
            let e = split(bad).unwrap_err();
            assert_eq!(e.exit(), crate::exit::Exit::Usage, "{bad}");
        }
        assert!(split("srun -n 4 ./missing").unwrap_err().hint().unwrap().contains("-- srun -n 4 -- ./app"));
        assert_eq!(rank_env_of(&"/usr/bin/srun".into()).unwrap(), "SLURM_PROCID");
        assert_eq!(rank_env_of(&"mpiexec".into()).unwrap(), "OMPI_COMM_WORLD_RANK");
        assert!(rank_env_of(&"charmrun".into()).unwrap_err().hint().unwrap().contains("--rank-env"));
    }
}
