//! `coalprof triton FILE.py::KERNEL`: interpret a Triton kernel (`triton/`), print `lines`' rows
//! of it, and save the run folder `lines RUN` and `check RUN` read.

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::lines::source::Sources;
use crate::settings::{Common, TritonSettings};

pub(crate) fn run(common: &Common, s: &TritonSettings) -> Result<Exit> {
    // The input first: a file that is not there is the input's fault whatever is installed.
    if !s.request.file.is_file() {
        return Err(Error::input(&s.request.file, "no such file (give `FILE.py::KERNEL`)"));
    }
    let (triton, _) = common.tools.triton()?;
    let doc = crate::triton::interpret(&triton, &common.cache, &s.request)?;
    let mut sources = Sources::new(s.source_root.clone());
    let report = crate::triton::line_report(&doc, &s.options, &common.catalogue, &mut sources)?;
    if let Some(dir) = &s.out {
        crate::store::write_output(&dir.join(crate::triton::DOC_FILE), pretty(&doc)?.as_bytes())?;
        let run = crate::triton::run_json(&doc, &s.request);
        crate::store::write_output(&dir.join("run.json"), pretty(&run)?.as_bytes())?;
        let all = crate::lines::Options { top: None, ..crate::lines::Options::default() };
        let whole = crate::triton::line_report(&doc, &all, &common.catalogue, &mut sources)?;
        let results = crate::triton::results(&doc, &whole);
        crate::store::write_output(&dir.join("results.json"), pretty(&results)?.as_bytes())?;
    }
    if report.rows.is_empty() && doc.not_modelled.is_empty() {
        return Err(Error::nothing_matched(
            format!("`{}` has no global load or store that ran", doc.kernel),
            Some("check `--grid` and the masks".into()),
        ));
    }
    for n in &report.notices {
        crate::messages::note(n);
    }
    let style = common.style.summarising("triton", s.out.as_deref()).with_inputs(std::slice::from_ref(&s.request.file));
    super::print(&crate::render::render_lines(&report, common.format, &style)?)?;
    if let Some(path) = &s.sarif {
        super::write_sarif(path, &report, &|_| "warning")?;
    }
    if let Some(dir) = &s.out {
        crate::messages::note(format!("saved {} (`coalprof lines {0}`, `coalprof check {0}`)", dir.display()));
    }
    Ok(Exit::Ok)
}

/// A run folder's document as JSON people read.
fn pretty(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| Error::encoding("JSON", e))
}
