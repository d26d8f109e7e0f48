//! `coalprof profile`'s settings: the program (or the source `--backend sim` builds), its
//! arguments, and for `--per-rank` the launcher and the variable that numbers its ranks.

use std::path::{Path, PathBuf};

use super::launcher::{rank_env_of, split_launcher};
use super::{profiler, Env, PerRank, ProfileSettings, SimSource};
use crate::cli::ProfileArgs;
use crate::error::{Error, Result};
use crate::frame::launches::Grouping;

pub(super) fn settings(a: &ProfileArgs, out_base: PathBuf, env: &Env) -> Result<ProfileSettings> {
    if let Some(k) = &a.kernel {
        regex::Regex::new(k).map_err(|e| Error::usage(format!("`--kernel {k}` is not a valid regex: {e}")))?;
    }
    let (per_rank, command) = match a.per_rank {
        true => {
            let (launcher, command) = split_launcher(&a.command, env)?;
            let rank_env = a.rank_env.clone().map_or_else(|| rank_env_of(&launcher[0]), Ok)?;
            (Some(PerRank { launcher, rank_env }), command)
        }
        false => (None, a.command.clone()),
    };
    let simulate = a.backend == crate::results::Backend::Sim;
    let (program, args, source) = match &a.source {
        Some(file) => {
            if !simulate {
                return Err(Error::usage(format!(
                    "`{}`: a source file is compiled only for `--backend sim`",
                    file.display()
                ))
                .with_hint("under ncu, build the program yourself (with `-lineinfo`) and give it after `--`"));
            }
            if file.extension().is_none_or(|e| e != "cu") {
                return Err(Error::usage(format!("`{}` is not a CUDA source (`.cu`)", file.display()))
                    .with_hint("give a program to run after `--`: `coalprof profile --backend sim -- ./app ARGS`"));
            }
            if !env.cwd.join(file).is_file() {
                return Err(Error::input(file, "no such file"));
            }
            let stem = file.file_stem().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("program"));
            let source = SimSource { file: env.cwd.join(file), nvcc_args: a.nvcc_args.clone() };
            (stem, command.clone(), Some(source))
        }
        None => {
            let (program, args) =
                command.split_first().ok_or_else(|| Error::usage("give the program to profile after `--`"))?;
            // The simulator runs the program in its own folder: a relative path is made absolute.
            let program = match Path::new(program) {
                p if simulate && p.components().count() > 1 => env.cwd.join(p),
                p => p.to_path_buf(),
            };
            (program, args.to_vec(), None)
        }
    };
    Ok(ProfileSettings {
        simulate,
        source_root: env.cwd.clone(),
        kernel: a.kernel.clone(),
        launch_skip: a.launch_skip,
        launch_count: a.launch_count,
        grouping: if a.per_launch { Grouping::PerLaunch } else { Grouping::PerKernel },
        profiler: profiler(&a.profiler, 0, 1),
        out_base,
        program,
        args,
        source,
        per_rank,
    })
}
