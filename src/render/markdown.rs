//! Markdown for a kernel review: one table per pattern, the notes and findings under it.
//! Names are escaped (`text::markdown`) so a C++ name cannot break the table, nor a hostile one
//! start a line.

use super::columns::{cell, groups, label, notes, present, rank};
use super::plot::plot_files;
use super::{Exporter, Style};
use crate::error::Result;
use crate::results::{Results, Source};
use crate::text::markdown as escape;

pub(super) struct Markdown {
    /// Link each pattern's plots (`![stride](stride.svg)`): the report sits in a run folder.
    pub plots: bool,
}

impl Exporter for Markdown {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let cols = present(results, &style.columns);
        let plots = if self.plots { plot_files(results) } else { Vec::new() };
        let mut out = String::from("# coalprof results\n\n");
        let p = &results.provenance;
        let mut facts = vec![format!("backend `{}`", escape(&p.backend.to_string()))];
        if let Some(g) = &p.gpu {
            facts.push(format!("GPU {}", escape(g)));
        }
        if let Some(cc) = &p.compute_capability {
            facts.push(format!("CC {}", escape(cc)));
        }
        if let Some(v) = &p.ncu_version {
            facts.push(format!("ncu {}", escape(v)));
        }
        out.push_str(&format!("{}\n\n", facts.join(" · ")));
        for n in &results.notices {
            out.push_str(&format!("> {}\n\n", escape(n)));
        }
        for (pattern, rows) in groups(results) {
            let predicted = rows.iter().all(|r| r.source == Source::Predicted);
            let simulated = rows.iter().all(|r| r.source == Source::Simulated);
            let how = if predicted {
                " (predicted)"
            } else if simulated {
                " (simulated)"
            } else {
                ""
            };
            match pattern {
                Some(name) => out.push_str(&format!("## `{}`{how}\n\n", escape(name))),
                None => out.push_str("## Kernels\n\n"),
            }
            let first = if pattern.is_some() { "variant" } else { "kernel" };
            let ranks = rows.iter().any(|r| r.rank.is_some());
            let mut header = vec![first.to_string()];
            if ranks {
                header.push("rank".into());
            }
            header.push("launches".into());
            header.extend(cols.iter().map(|c| c.header.clone()));
            out.push_str(&format!("| {} |\n", header.join(" | ")));
            let align: Vec<&str> = header.iter().enumerate().map(|(i, _)| if i == 0 { ":--" } else { "--:" }).collect();
            out.push_str(&format!("|{}|\n", align.join("|")));
            for r in &rows {
                let mut line = vec![format!("`{}`", escape(&label(r)))];
                if ranks {
                    line.push(rank(r));
                }
                line.push(r.launches.to_string());
                line.extend(cols.iter().map(|c| cell(r, c)));
                out.push_str(&format!("| {} |\n", line.join(" | ")));
            }
            out.push('\n');
            let notes: Vec<String> = notes(&rows).into_iter().map(|n| format!("- {}", escape(&n))).collect();
            if !notes.is_empty() {
                out.push_str(&notes.join("\n"));
                out.push_str("\n\n");
            }
            out.push_str(&super::worst::markdown(&super::worst::of(results, pattern)));
            let files = plots.iter().find(|(p, _)| Some(p.as_str()) == pattern).map_or(&[][..], |(_, f)| &f[..]);
            for f in files {
                let alt = f.trim_end_matches(".svg").replace("-bandwidth", " bandwidth");
                out.push_str(&format!("![{alt}]({f})\n\n"));
            }
        }
        if let Some(r) = results.rows.iter().find(|r| r.predicted.is_some()) {
            out.push_str(&format!("Cells read `{} (predicted)`.\n", r.source.word()));
        }
        Ok(out)
    }
}
