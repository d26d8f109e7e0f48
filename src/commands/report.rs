//! `coalprof report RUN`: re-render a saved run in any format, without profiling again.

use std::path::Path;

use crate::error::Result;
use crate::exit::Exit;
use crate::import::{kind, read_results_json, results_file, Kind};
use crate::render::{plot_files, render, render_with_plots};
use crate::settings::Common;

pub(crate) fn run(common: &Common, run: &Path) -> Result<Exit> {
    let file = match kind(run)? {
        Kind::RunDir => results_file(run)?,
        _ => run.to_path_buf(),
    };
    let results = read_results_json(&file)?;
    let style =
        common.style.summarising("report", file.parent().filter(|_| kind(run).is_ok_and(|k| k == Kind::RunDir)));
    // A run folder saved with its plots: markdown links them, as in its own `results.md`.
    let folder = file.parent().unwrap_or(Path::new("."));
    let files: Vec<String> = plot_files(&results).into_iter().flat_map(|(_, f)| f).collect();
    let text = if common.format == crate::render::Format::Html {
        let name = folder.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let page = crate::render::html::Report { title: format!("coalprof report: {name}") };
        crate::render::Exporter::render(&page, &results, &common.style)?
    } else if !files.is_empty() && files.iter().all(|f| folder.join(f).is_file()) {
        render_with_plots(&results, common.format, &style)?
    } else {
        render(&results, common.format, &style)?
    };
    super::print(&text)?;
    Ok(Exit::Ok)
}
