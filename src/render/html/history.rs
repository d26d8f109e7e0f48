//! The page of `coalprof history --format html`: the runs in time order with their commits,
//! then per metric the trend of every row over the runs and the table of values.

use maud::html;

use super::{anchor, num, page};
use crate::frame::history::{History, Series};
use crate::render::history::{changed, column, multiples};
use crate::render::Style;

pub(crate) fn history(h: &History, style: &Style) -> String {
    let mut metrics: Vec<&str> = Vec::new();
    for s in &h.series {
        if !metrics.contains(&s.metric.as_str()) {
            metrics.push(&s.metric);
        }
    }
    let body = html! {
        table.runs {
            thead { tr { th { "#" } th { "time (UTC)" } th { "commit" } th { "run" } th { "backend" } th { "GPU" } } }
            tbody { @for (i, r) in h.runs.iter().enumerate() {
                tr data-run=(r.name) {
                    td.n { (i + 1) } td { (r.time) } td { code { (r.commit_label()) } } td { code { (r.name) } }
                    td { (r.backend) } td { (r.gpu.as_deref().unwrap_or("–")) }
                }
            } }
        }
        @if h.series.is_empty() { p { "No series: no run has the metrics and rows asked for." } }
        @for m in &metrics {
            @let series: Vec<&Series> = h.series.iter().filter(|s| s.metric == *m).collect();
            @let c = column(style, m);
            section.metric id=(anchor("m", m)) data-metric=(m) {
                h2 { (c.header) " " small { code { (m) } } }
                (multiples(h, &series, style))
                div.wide { table.history.sortable {
                    thead { tr { th { "row" } @for i in 0..h.runs.len() { th title=(h.runs[i].commit_label()) { "#" (i + 1) } } th { "first changed" } } }
                    tbody { @for s in &series {
                        tr data-key=(s.key) {
                            td { code { (s.key) } }
                            @for i in 0..h.runs.len() {
                                @let p = s.points.iter().find(|p| p.run == i);
                                (num(p.map(|p| p.value), &p.map_or("–".into(), |p| c.format.show(p.value)), None))
                            }
                            td { (changed(h, s, &c)) }
                        }
                    } }
                } }
            }
        }
    };
    let facts = vec![format!("{} run(s)", h.runs.len()), format!("{} series", h.series.len())];
    page("coalprof history", &facts, body)
}
