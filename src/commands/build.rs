//! `coalprof build`: compile the pattern executables for one or more architectures.

use crate::build::build;
use crate::error::Result;
use crate::exit::Exit;
use crate::settings::{BuildSettings, Common};

pub(crate) fn run(common: &Common, s: &BuildSettings) -> Result<Exit> {
    let nvcc = common.tools.nvcc_tool()?;
    let archs = if s.archs.is_empty() { vec![common.tools.gpus()?[0].arch()] } else { s.archs.clone() };
    let mut lines = String::new();
    for arch in &archs {
        for b in build(&s.patterns, arch, &nvcc, &s.cache)? {
            let how = if b.cached { "cached" } else { "built" };
            lines.push_str(&format!("{arch} {:<15} {how:<6} {}\n", b.pattern.name(), b.exe.display()));
        }
    }
    super::print(&lines)?;
    Ok(Exit::Ok)
}
