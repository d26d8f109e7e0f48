//! `coalprof lines REPORT…`: which source line (or SASS instruction) wastes the bandwidth; of
//! the run folders `profile --backend sim` saves too (`measure::sim::line_report`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::lines::aggregate::Sass;
use crate::lines::source::Sources;
use crate::render::html::Context;
use crate::render::lines::LinesExporter;
use crate::render::Format;
use crate::settings::{Common, LinesSettings};
use crate::tools::nvdisasm::{self, Nvdisasm};
use crate::tools::ToolError;

pub(crate) fn run(common: &Common, s: &LinesSettings) -> Result<Exit> {
    // A run folder of `coalprof triton`: its lines come from the engine's document.
    let interpreted: Vec<_> = s.reports.iter().filter_map(|p| crate::triton::folder(p)).collect();
    if !interpreted.is_empty() {
        return interpreted_lines(common, s, &interpreted);
    }
    // A run folder of `profile --backend sim`: its lines come from the simulator's statistics.
    let simulated: Vec<_> = s.reports.iter().filter_map(|p| crate::measure::sim::sim_folder(p)).collect();
    if !simulated.is_empty() {
        return simulated_lines(common, s, &simulated);
    }
    let mut sources = Sources::new(s.source_root.clone());
    let mut disassembly = Disassembly::new(common);
    // Streamed: one launch at a time into the per-line sums (memory flat whatever the size).
    let mut report =
        crate::lines::report(&s.reports, common.bounds, &s.options, &common.catalogue, &mut sources, &mut |b| {
            disassembly.sass(b)
        })?;
    if report.matched == 0 {
        return Err(nothing_matched("kernel launch in the reports", s));
    }
    report.notices.extend(disassembly.notice);
    show(s, &report, |report| match common.format {
        // The page shows the code around each line: the files, from the same lookup.
        Format::Html => {
            crate::render::html::Lines { context: context(report, &mut sources) }.render(report, &common.style)
        }
        f => crate::render::render_lines(report, f, &common.style.summarising("lines", None).with_inputs(&s.reports)),
    })
}

/// What every kind of input ends with: the notes (what the rows cannot say: no `-lineinfo`,
/// accesses inside CUDA headers put on their call sites, sampled programs), the rows as
/// `render` writes them, and SARIF.
fn show(
    s: &LinesSettings,
    report: &crate::lines::LineReport,
    render: impl FnOnce(&crate::lines::LineReport) -> Result<String>,
) -> Result<Exit> {
    for n in &report.notices {
        crate::messages::note(n);
    }
    super::print(&render(report)?)?;
    if let Some(path) = &s.sarif {
        super::write_sarif(path, report, &|_| "warning")?;
    }
    Ok(Exit::Ok)
}

/// Exit 5: no `what` matched (with the hint to check `--kernel`, if one was given).
fn nothing_matched(what: &str, s: &LinesSettings) -> Error {
    Error::nothing_matched(
        format!("no {what} matches"),
        s.options.kernel.as_ref().map(|k| format!("check `--kernel {k}`")),
    )
}

/// The rows in the asked format, for the inputs whose page needs no source context.
fn rendered<'a>(
    common: &'a Common,
    s: &'a LinesSettings,
) -> impl FnOnce(&crate::lines::LineReport) -> Result<String> + 'a {
    |report| {
        let style = common.style.summarising("lines", None).with_inputs(&s.reports);
        crate::render::render_lines(report, common.format, &style)
    }
}

/// `lines RUN` on run folders `profile --backend sim` saved (`measure::sim::line_report`).
fn simulated_lines(common: &Common, s: &LinesSettings, folders: &[PathBuf]) -> Result<Exit> {
    if folders.len() != s.reports.len() {
        return Err(Error::usage("give simulated run folders and `.ncu-rep` reports to `lines` separately"));
    }
    let sim = common.tools.gpgpusim().ok();
    let mut sources = Sources::new(s.source_root.clone());
    let report = crate::measure::sim::line_report(folders, &s.options, &common.catalogue, &mut sources, sim.as_ref())?;
    if report.rows.is_empty() {
        return Err(nothing_matched("memory instruction of the simulated kernels", s));
    }
    show(s, &report, rendered(common, s))
}

/// `lines RUN` on run folders `coalprof triton --out` saved.
fn interpreted_lines(common: &Common, s: &LinesSettings, docs: &[PathBuf]) -> Result<Exit> {
    if docs.len() != s.reports.len() {
        return Err(Error::usage("give Triton run folders and other inputs to `lines` separately"));
    }
    let mut sources = Sources::new(s.source_root.clone());
    let mut all = crate::lines::LineReport::empty();
    for d in docs {
        let r =
            crate::triton::line_report(&crate::triton::read_folder(d)?, &s.options, &common.catalogue, &mut sources)?;
        all.rows.extend(r.rows);
        all.notices.extend(r.notices);
        all.arch = all.arch.take().or(r.arch);
    }
    if all.rows.is_empty() {
        return Err(nothing_matched("memory instruction of the interpreted kernels", s));
    }
    show(s, &all, rendered(common, s))
}

/// The text of every file the rows name, or why it is not at hand.
fn context(report: &crate::lines::LineReport, sources: &mut Sources) -> Context {
    let mut context = Context::default();
    for file in report.rows.iter().filter_map(|r| r.file.as_deref()) {
        if context.files.contains_key(file) {
            continue;
        }
        let resolved = sources.resolve(file).clone();
        context.insert(file, resolved.lines, || match &resolved.relative {
            Some(rel) => format!("the report embeds no source for `{file}` and `{rel}` cannot be read under the source root"),
            None => format!(
                "the report embeds no source for `{file}` (profile with `--import-source yes`) and it is not under the source root (`--source-root`)"
            ),
        });
    }
    context
}

/// nvdisasm over a report's cubins, if it is installed (its listings cached beside the built
/// kernels, `sass/`); its absence or failure is one notice.
struct Disassembly {
    nvdisasm: Option<Nvdisasm>,
    cache: PathBuf,
    notice: Option<String>,
}

impl Disassembly {
    fn new(common: &Common) -> Disassembly {
        let (nvdisasm, notice) = match common.tools.cuda_tool("nvdisasm") {
            Ok(found) => (Some(Nvdisasm { path: found.path }), None),
            Err(_) => {
                (None, Some("nvdisasm not found: SASS text left out (op and width are from the counters)".into()))
            }
        };
        Disassembly { nvdisasm, cache: common.cache.join("sass"), notice }
    }

    fn sass(&mut self, cubin: &[u8]) -> Option<Sass> {
        let nvdisasm = self.nvdisasm.as_ref()?;
        let result = self.listing(nvdisasm, cubin).map(|l| nvdisasm::parse(&l)).map_err(|e| e.to_string());
        match result {
            Ok(functions) => Some(
                functions
                    .into_iter()
                    .map(|(f, ins)| (f, ins.into_iter().map(|i| (i.offset, i.text)).collect::<BTreeMap<_, _>>()))
                    .collect(),
            ),
            Err(e) => {
                let first = e
                    .lines()
                    .find(|l| l.contains("fatal") || l.contains("error"))
                    .unwrap_or(e.lines().next().unwrap_or(""));
                self.notice.get_or_insert(format!(
                    "nvdisasm could not disassemble a kernel's cubin, SASS text left out: {}",
                    first.trim()
                ));
                None
            }
        }
    }

    /// The cubin's listing: read back from the cache, or made by nvdisasm and saved there.
    /// nvdisasm is 95% of `coalprof lines` on a small report (340 of 360 ms for the 3.8 MB
    /// CUTLASS fixture); its 1 MB listing read back and parsed costs about 5 ms. A cache that
    /// cannot be written is skipped (logged under `-v`).
    fn listing(&self, nvdisasm: &Nvdisasm, cubin: &[u8]) -> std::result::Result<String, ToolError> {
        let file = self.cache.join(format!("{}.sass", nvdisasm.cache_key(cubin)));
        if let Ok(listing) = std::fs::read_to_string(&file) {
            return Ok(listing);
        }
        let listing = nvdisasm.listing_of(cubin)?;
        if let Err(e) = crate::store::write_output(&file, listing.as_bytes()) {
            tracing::debug!("nvdisasm listing not cached: {e}");
        }
        Ok(listing)
    }
}
