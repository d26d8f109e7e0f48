//! A run folder's files, rendered: `results.json`, each pattern's plots, `results.md` (which
//! links them) and `report.html` (one page, plots inline). `store.rs` writes them, knowing no
//! format; the commands and the engine hand it what this renders.

use super::{plots, render, render_with_plots, Format, Style};
use crate::error::Result;
use crate::results::Results;

/// Every file of a run folder showing `results`, name and content, in the order they are to be
/// written: the plots before the markdown, so that it never links a file that is not there yet.
/// The folder shows `style`'s columns, never in colour.
pub fn run_folder(results: &Results, style: &Style) -> Result<Vec<(String, String)>> {
    let style = Style { color: false, ..style.clone() };
    let mut files = vec![results_file(results, &style)?];
    files.extend(plots(results)?.into_iter().map(|p| (p.file, p.svg)));
    files.push(("results.md".into(), render_with_plots(results, Format::Markdown, &style)?));
    files.push(("report.html".into(), render(results, Format::Html, &style)?));
    Ok(files)
}

/// The run folder's data alone, `results.json`: what `coalprof report` renders the rest from.
pub fn results_file(results: &Results, style: &Style) -> Result<(String, String)> {
    Ok(("results.json".into(), render(results, Format::Json, style)?))
}
