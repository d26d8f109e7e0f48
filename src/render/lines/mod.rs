//! Exporters of `coalprof lines`: one file per format behind one small trait, as for the
//! results table. Every format renders the same [`LineReport`]; table, markdown and CSV share
//! the column model below. SARIF ([`sarif`]), the file `--sarif` writes, renders it too.

pub(crate) mod csv;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod sarif;
pub(crate) mod table;

use super::{Format, Style};
use crate::error::Result;
use crate::lines::{LineReport, LineRow};
use crate::text::{count, percent, ratio};

/// One output format of the line report.
pub(crate) trait LinesExporter {
    fn render(&self, report: &LineReport, style: &Style) -> Result<String>;
}

/// A format the line report is not written in (benchmark exports and SVG are for results).
pub(crate) struct Unsupported(pub(crate) Format);

impl LinesExporter for Unsupported {
    fn render(&self, _: &LineReport, _: &Style) -> Result<String> {
        Err(self.0.unsupported("lines"))
    }
}

/// The rows of each kernel (or launch), in report order.
pub(crate) fn kernels(report: &LineReport) -> Vec<(String, Vec<&LineRow>)> {
    let mut out: Vec<(String, Vec<&LineRow>)> = Vec::new();
    for r in &report.rows {
        let kernel = crate::results::ranked(&r.kernel, r.rank);
        let title = match r.launch {
            Some(id) => format!("{kernel} (launch {id})"),
            None if r.launches > 1 => format!("{kernel} ({} launches summed)", r.launches),
            None => kernel,
        };
        match out.last_mut() {
            Some((t, rows)) if *t == title => rows.push(r),
            _ => out.push((title, vec![r])),
        }
    }
    out
}

/// `kernels/gemm.cu:42`, or `+0x1a0` for an instruction without a line.
pub(crate) fn location(r: &LineRow) -> String {
    let file = r.path.as_deref().or(r.file.as_deref());
    match (file, r.line, r.pc_offset) {
        (Some(f), Some(l), Some(pc)) => format!("{f}:{l} +{pc:#x}"),
        (Some(f), Some(l), None) => format!("{f}:{l}"),
        (_, _, Some(pc)) => format!("+{pc:#x}"),
        _ => "?".into(),
    }
}

/// Where a row's accesses were made inside a library (`sm_32_intrinsics.hpp:302`): the gate
/// rows' words, so every format says it alike.
pub(crate) use crate::lines::gate_rows::via;

/// The note beside a row whose accesses were made inside a library.
pub(crate) fn via_note(r: &LineRow) -> Option<String> {
    Some(format!("made inside {}, counted on the line that called it", via(r)?))
}

/// A column: its header and its cell text ("–" where the report has no number).
pub(crate) type ColumnDef = (&'static str, fn(&LineRow) -> Option<String>);

/// The columns people read.
pub(crate) const COLUMNS: &[ColumnDef] = &[
    ("op", |r| r.op.clone()),
    ("bytes", |r| r.access_bytes.map(|b| b.to_string())),
    ("executions", |r| r.executions.map(count)),
    ("requests", |r| r.requests.map(count)),
    ("sect/req", |r| r.sectors_per_request.map(ratio)),
    ("ideal/req", |r| r.ideal_sectors_per_request.map(ratio)),
    ("lines/req", |r| r.lines_per_request.map(ratio)),
    ("sectors", |r| r.sectors.map(count)),
    ("excess", |r| r.excess_sectors.map(count)),
    ("share", |r| r.excess_share.map(percent)),
    ("shared wf", |r| r.shared_wavefronts.map(count)),
    ("ways", |r| r.shared_wavefronts_per_ideal.map(|v| format!("{v:.1}"))),
];

/// The code shown for a row: the source line, else the SASS.
pub(crate) fn code(r: &LineRow) -> String {
    r.source.clone().or_else(|| r.sass.clone()).unwrap_or_default()
}
