//! The source heat view of one kernel: its worst lines in context, the code with a gutter of
//! numbers per line (sectors per request against the ideal, excess sectors and their share of
//! the kernel's, shared wavefronts against theirs), each line shaded by its share of the
//! excess, the diagnosis under it, and SASS rows under a line for instruction rows. What has no
//! line is listed as instructions.

use std::collections::{BTreeMap, HashMap};

use maud::{html, Markup};

use super::num;
use crate::lines::LineRow;
use crate::render::columns::Severity;
use crate::text::{count, percent, ratio};

/// A source file's text, or why it is not shown.
#[derive(Debug, Clone)]
pub(crate) enum FileText {
    Lines(Vec<String>),
    Unavailable(String),
}

/// The files the rows name, as the line tables name them: what the heat view shows around
/// each line. Gathered by the command from the same lookup that found each row's code.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    pub files: HashMap<String, FileText>,
}

impl Context {
    /// The file's lines, or why there are none.
    pub(crate) fn insert(&mut self, file: &str, lines: Option<Vec<String>>, why: impl FnOnce() -> String) {
        let text = match lines {
            Some(l) => FileText::Lines(l),
            None => FileText::Unavailable(why()),
        };
        self.files.insert(file.to_string(), text);
    }
}

/// Lines of code shown around each hot line.
const AROUND: u32 = 2;

/// The heat view of one kernel's rows (worst first, as the report ranks them).
pub(super) fn heat(rows: &[&LineRow], context: &Context) -> Markup {
    let ranked: Vec<(usize, &LineRow)> = rows.iter().enumerate().map(|(i, r)| (i + 1, *r)).collect();
    let (lined, loose): (Vec<_>, Vec<_>) = ranked.into_iter().partition(|(_, r)| r.line.is_some() && r.file.is_some());
    let mut files: Vec<(&str, Vec<(usize, &LineRow)>)> = Vec::new();
    for (rank, r) in lined {
        let f = r.file.as_deref().unwrap_or_default();
        match files.iter_mut().find(|(name, _)| *name == f) {
            Some((_, v)) => v.push((rank, r)),
            None => files.push((f, vec![(rank, r)])),
        }
    }
    html! {
        @for (file, rows) in &files {
            @let shown = rows[0].1.path.as_deref().unwrap_or(file);
            h4.file { code { (shown) } }
            (file_view(rows, context.files.get(*file)))
        }
        @if !loose.is_empty() {
            h4 { "Instructions without a source line" }
            (table(html! { @for (rank, r) in &loose { (sass_row(*rank, r)) (diagnosis(r)) } }))
        }
    }
}

fn table(body: Markup) -> Markup {
    html! {
        div.wide { table.heat {
            thead { tr {
                th { "line" } th { "op" } th title="sectors per request" { "sect/req" } th { "ideal" }
                th { "excess sectors" } th { "share" } th title="shared wavefronts" { "smem wf" } th { "ideal wf" } th { "code" }
            } }
            tbody { (body) }
        } }
    }
}

/// One file's hot lines: in context when its text is known, else each line's own code (or why
/// there is none).
fn file_view(rows: &[(usize, &LineRow)], text: Option<&FileText>) -> Markup {
    let mut by_line: BTreeMap<u32, Vec<(usize, &LineRow)>> = BTreeMap::new();
    for &(rank, r) in rows {
        by_line.entry(r.line.unwrap_or_default()).or_default().push((rank, r));
    }
    let lines = match text {
        Some(FileText::Lines(l)) => Some(l),
        _ => None,
    };
    let Some(lines) = lines else {
        let why = match text {
            Some(FileText::Unavailable(why)) => why.clone(),
            _ => "the report embeds no source for this file".to_string(),
        };
        return html! {
            @if rows.iter().all(|(_, r)| r.source.is_none()) { p.unavailable { "source not available: " (why) } }
            (table(html! { @for (line, rows) in &by_line { (hot_line(*line, rows, None)) } }))
        };
    };
    let last = lines.len() as u32;
    let mut windows: Vec<(u32, u32)> = Vec::new();
    for &l in by_line.keys() {
        let (from, to) = (l.saturating_sub(AROUND).max(1), (l + AROUND).min(last.max(l)));
        match windows.last_mut() {
            Some((_, end)) if from <= *end + 1 => *end = (*end).max(to),
            _ => windows.push((from, to)),
        }
    }
    let text = |l: u32| lines.get((l as usize).wrapping_sub(1)).map(String::as_str);
    // Each window is shown without the indentation all its lines share.
    let indent = |(from, to): (u32, u32)| {
        (from..=to)
            .filter_map(text)
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.len() - t.trim_start_matches([' ', '\t']).len())
            .min()
            .unwrap_or(0)
    };
    let cut: Vec<usize> = windows.iter().map(|w| indent(*w)).collect();
    let code = |l: u32| {
        let i = windows.iter().position(|(f, t)| (*f..=*t).contains(&l)).unwrap_or(0);
        text(l).map(|t| t.get(cut[i]..).unwrap_or(t))
    };
    html! {
        (table(html! {
            @for (i, (from, to)) in windows.iter().enumerate() {
                @if i == 0 && *from > 1 { tr.gap { td colspan="9" { "⋯ lines 1–" (from - 1) } } }
                @if i > 0 { tr.gap { td colspan="9" { "⋯ lines " (windows[i - 1].1 + 1) "–" (from - 1) } } }
                @for l in *from..=*to {
                    @match by_line.get(&l) {
                        Some(rows) => (hot_line(l, rows, code(l))),
                        None => tr.ctx { td.ln { (l) } td colspan="7" {} td.src { (code(l).unwrap_or_default()) } },
                    }
                }
            }
        }))
    }
}

/// A line with numbers: one row per line row (a line can load globally and store to shared
/// memory), or the code once with a SASS row per instruction row.
fn hot_line(line: u32, rows: &[(usize, &LineRow)], code: Option<&str>) -> Markup {
    let instructions = rows.iter().any(|(_, r)| r.pc_offset.is_some());
    let text = |r: &LineRow| code.map(str::to_string).or_else(|| r.source.clone());
    html! {
        @if instructions {
            @let first = rows[0].1;
            tr.line data-line=(line) { td.ln { (line) } td colspan="7" {} td.src { (text(first).unwrap_or_default()) } }
            @for (rank, r) in rows { (sass_row(*rank, r)) (diagnosis(r)) }
        } @else {
            @for (rank, r) in rows {
                @let share = heat_of(r.excess_share, r.shared_wavefronts_per_ideal);
                tr.hot.worst[*rank == 1] style={ "--share:" (format!("{share:.3}")) }
                    data-rank=(rank) data-line=(line) data-file=[r.file.as_deref()] {
                    td.ln { (line) }
                    (gutter(r))
                    td.src { @match text(r) { Some(t) => (t), None => span.unavailable { "source not available" } } }
                }
                (diagnosis(r))
            }
        }
    }
}

/// How hot a row is shaded (0–1): its share of the kernel's excess sectors, or for a shared
/// access the share of its wavefronts beyond the ideal (`1 − 1/n` for an n-way conflict: 0.97
/// for 32-way), so a bank conflict is marked as load waste is.
pub(super) fn heat_of(excess_share: Option<f64>, ways: Option<f64>) -> f64 {
    let shared = ways.filter(|&n| n > 1.0).map_or(0.0, |n| 1.0 - 1.0 / n);
    excess_share.unwrap_or(0.0).max(shared).clamp(0.0, 1.0)
}

/// An instruction row: its offset and SASS, its numbers.
fn sass_row(rank: usize, r: &LineRow) -> Markup {
    let share = heat_of(r.excess_share, r.shared_wavefronts_per_ideal);
    let pc = r.pc_offset.map(|pc| format!("+{pc:#x}")).unwrap_or_default();
    html! {
        tr.hot.sass.worst[rank == 1] style={ "--share:" (format!("{share:.3}")) }
            data-rank=(rank) data-line=[r.line] data-pc=[r.pc_offset] {
            td.ln { code { (pc) } }
            (gutter(r))
            td.src { @match &r.sass { Some(s) => (s), None => span.unavailable { "SASS not available (nvdisasm not found)" } } }
        }
    }
}

/// The numbers beside a line.
fn gutter(r: &LineRow) -> Markup {
    let count = |v: Option<f64>| v.map_or("–".into(), count);
    let ratio = |v: Option<f64>| v.map_or("–".into(), ratio);
    let over = r.sectors_per_request.zip(r.ideal_sectors_per_request).is_some_and(|(v, i)| v > i * 1.05);
    let conflict = r.shared_wavefronts.zip(r.shared_ideal_wavefronts).is_some_and(|(v, i)| v > i * 1.05);
    html! {
        td.g { (r.op.as_deref().unwrap_or("–")) }
        (num(r.sectors_per_request, &ratio(r.sectors_per_request), over.then_some(Severity::Bad)))
        (num(r.ideal_sectors_per_request, &ratio(r.ideal_sectors_per_request), None))
        (num(r.excess_sectors, &count(r.excess_sectors), None))
        (num(r.excess_share, &r.excess_share.map_or("–".into(), percent), None))
        (num(r.shared_wavefronts, &count(r.shared_wavefronts), conflict.then_some(Severity::Bad)))
        (num(r.shared_ideal_wavefronts, &count(r.shared_ideal_wavefronts), None))
    }
}

fn diagnosis(r: &LineRow) -> Markup {
    html! {
        @if let Some(d) = &r.diagnosis {
            tr.diag { td colspan="9" { @if let Some(rule) = r.rule { span.tag.warn { (rule) } " " } (d) } }
        }
    }
}
