//! The terminal table of `lines`: one table per kernel, worst line first, its diagnoses wrapped
//! under it. Locations are shown relative to the sources' common folder (said once above the
//! tables), so the file name and line stay whole within the width; the counts give way first.

use super::{code, kernels, location, via_note, LinesExporter, COLUMNS};
use crate::error::Result;
use crate::lines::{LineReport, LineRow};
use crate::render::fit::{self, Col, Cut};
use crate::render::Style;
use crate::text::{cut_middle, visible, wrap};

pub(crate) struct Table;

/// When each of [`COLUMNS`] is hidden in a narrow terminal (lower first; `None`: never): the
/// counts behind the ratios go first, the ratio against its ideal and the excess share last.
fn drop_order(header: &str) -> Option<u32> {
    Some(match header {
        "executions" => 1,
        "requests" => 2,
        "sectors" => 3,
        "lines/req" => 4,
        "bytes" => 5,
        "shared wf" => 6,
        "excess" => 7,
        "ways" => 9,
        "share" => 10,
        "op" => 11,
        "ideal/req" => 12,
        "sect/req" => return None,
        _ => 0,
    })
}

impl LinesExporter for Table {
    fn render(&self, report: &LineReport, style: &Style) -> Result<String> {
        // The notices go to stderr (the `lines` command says them), not into the table.
        let width = style.width;
        let root = common_root(report.rows.iter().filter_map(file));
        let mut out = String::new();
        if let Some(root) = &root {
            out.push_str(&wrap(&format!("sources in {}", visible(root)), width, "", "  "));
        }
        let shown = |r: &LineRow| visible(&relative(&location(r), root.as_deref())).into_owned();
        for (title, rows) in kernels(report) {
            out.push('\n');
            out.push_str(&cut_middle(&visible(&title), width.unwrap_or(96).max(20)));
            out.push('\n');
            let mut cols =
                vec![Col::new("location", rows.iter().map(|r| shown(r)).collect()).flex(Cut::Left, 12).prefer(48)];
            for (header, f) in COLUMNS {
                let mut col = Col::new(*header, rows.iter().map(|r| f(r).unwrap_or_else(|| "–".into())).collect());
                col = if *header == "op" { col } else { col.right() };
                cols.push(match drop_order(header) {
                    Some(n) => col.drops(n),
                    None => col,
                });
            }
            let code = rows.iter().map(|r| cut_middle(&code(r), 60)).collect();
            cols.push(Col::new("code", code).flex(Cut::End, 16).drops(8));
            let fitted = fit::table(cols, width, style.color);
            out.push_str(&fitted.text);
            out.push_str(&fitted.footer(width));
            for r in rows.iter().filter(|r| r.diagnosis.is_some()) {
                let diagnosis = visible(r.diagnosis.as_deref().unwrap_or_default());
                out.push_str(&wrap(&format!("{}: {diagnosis}", shown(r)), width, "  ", "    "));
            }
            for (r, note) in rows.iter().filter_map(|r| Some((r, via_note(r)?))) {
                out.push_str(&wrap(&format!("{}: {}", shown(r), visible(&note)), width, "  ", "    "));
            }
        }
        if report.rows.is_empty() {
            out.push_str("no memory instructions with counters (the notes on stderr say why)\n");
        }
        Ok(out)
    }
}

/// The file a row's location names: its path under the source root, else as the line table
/// names it.
fn file(r: &LineRow) -> Option<&str> {
    r.path.as_deref().or(r.file.as_deref())
}

/// The folder every one of `files` is in (with its trailing `/`), if they share one.
fn common_root<'a>(files: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut common: Option<Vec<&str>> = None;
    for f in files {
        let dirs: Vec<&str> = match f.rsplit_once('/') {
            Some((dir, _)) => dir.split('/').collect(),
            None => return None,
        };
        common = Some(match common {
            None => dirs,
            Some(c) => c.iter().zip(&dirs).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    let root = common?.join("/");
    (!root.is_empty()).then(|| format!("{root}/"))
}

/// `location` without the common folder `root`.
fn relative(location: &str, root: Option<&str>) -> String {
    match root {
        Some(root) => location.strip_prefix(root).unwrap_or(location).to_string(),
        None => location.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_root_is_a_whole_folder() {
        let root = |v: &[&str]| common_root(v.iter().copied());
        assert_eq!(root(&["/a/b/c.cu", "/a/b/d.cu"]).as_deref(), Some("/a/b/"));
        assert_eq!(root(&["/a/bc/c.cu", "/a/bd/d.cu"]).as_deref(), Some("/a/"));
        assert_eq!(root(&["/a/b/c.cu"]).as_deref(), Some("/a/b/"));
        assert_eq!(root(&["kernels/x.cu", "x.cu"]), None);
        assert_eq!(root(&["/x.cu", "/y.cu"]), None);
        assert_eq!(relative("/a/b/c.cu:44", Some("/a/b/")), "c.cu:44");
    }
}
