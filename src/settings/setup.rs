//! `coalprof setup`'s settings: the tool home, the components asked for, and what the install
//! steps need to know of the environment (read by the settings layer, as every setting is).

use super::{project_root, Env};
use crate::error::{Error, Result};

/// `coalprof setup`: the tool home, what to install, and what the steps need to know.
pub(super) fn request(a: &crate::cli::SetupArgs, env: &Env) -> Result<crate::tools::setup::Request> {
    use crate::tools::setup::Component;
    let home = env.tool_home.clone().ok_or_else(|| {
        Error::usage("no tool home: COALPROF_HOME, XDG_DATA_HOME and HOME are all unset")
            .with_hint("set COALPROF_HOME to the folder `coalprof setup` should install into")
    })?;
    let components = Component::expand(&a.components);
    // The vendored simulator source sits beside the checkout (`../shared/vendor/`), as the
    // checkout's scripts have always found it.
    let vendor = project_root(&env.cwd)
        .and_then(|r| r.parent().map(|p| p.join("shared/vendor/gpgpu-sim")))
        .filter(|d| d.is_dir());
    Ok(crate::tools::setup::Request {
        home,
        components,
        dry_run: a.dry_run,
        path: env.path.clone(),
        root: env.root,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cuda11_home: env.cuda11.clone(),
        gpgpusim_src: env.gpgpusim_src.clone(),
        vendor,
        user_home: env.home.clone().filter(|h| h.is_dir()).or_else(|| Some(env.tmp.clone())),
    })
}
