//! Terminal tables that fit a width: every table of coalprof (results, `lines`, `compare`,
//! `history`) is built here from columns that say how they give way. Secondary columns drop
//! first (in the order each table gives), then the flexible columns (a kernel name, a location,
//! code) shrink towards their minimum; `--wide` (no width) shows everything. Every cell is made
//! [`visible`](crate::text::visible) on the way in: names from an input stay text.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, Table};

use super::columns::Severity;
use crate::text::{cut_end, cut_middle, elide_left, visible, width as text_width};

/// How a flexible column's cells are cut to its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// In the middle: both ends of a C++ name tell it apart.
    Middle,
    /// From the left, the file name and line kept whole: locations.
    Left,
    /// At the end: code.
    End,
}

/// One column of a table to fit.
#[derive(Debug, Clone)]
pub(crate) struct Col {
    /// The header (`\n` between its lines).
    pub header: String,
    /// One cell per row, with how it reads (coloured where colour is asked for).
    pub cells: Vec<(String, Option<Severity>)>,
    pub right: bool,
    /// When it is hidden: columns of the lowest number go first (several may share one and go
    /// together); `None` never goes.
    pub drop: Option<u32>,
    /// A column that shrinks, how, and to how few characters at most.
    pub flex: Option<(Cut, usize)>,
    /// The width a flexible column keeps while other columns can still be hidden: a location
    /// is shown whole rather than a sliver of code beside it.
    pub prefer: Option<usize>,
}

impl Col {
    /// A column of plain cells, never hidden, never shrunk.
    pub(crate) fn new(header: impl Into<String>, cells: Vec<String>) -> Col {
        Col {
            header: header.into(),
            cells: cells.into_iter().map(|c| (c, None)).collect(),
            right: false,
            drop: None,
            flex: None,
            prefer: None,
        }
    }

    /// Right-aligned (numbers).
    pub(crate) fn right(mut self) -> Col {
        self.right = true;
        self
    }

    /// Hidden in turn `order` (lower first) when the table is too wide.
    pub(crate) fn drops(mut self, order: u32) -> Col {
        self.drop = Some(order);
        self
    }

    /// Shrinks, cut by `cut`, down to `min` characters.
    pub(crate) fn flex(mut self, cut: Cut, min: usize) -> Col {
        self.flex = Some((cut, min));
        self
    }

    /// Keeps `width` characters (or its natural width, if less) until no column is left to hide.
    pub(crate) fn prefer(mut self, width: usize) -> Col {
        self.prefer = Some(width);
        self
    }

    /// Its width while columns are being hidden.
    fn wanted(&self) -> usize {
        let min = self.min();
        self.prefer.map_or(min, |p| min.max(p.min(self.natural())))
    }

    fn natural(&self) -> usize {
        self.cells.iter().map(|(c, _)| text_width(c)).chain([text_width(&self.header)]).max().unwrap_or(0)
    }

    /// The narrowest it may become: a flexible column its minimum (never below its header's
    /// widest word), a location its file names.
    fn min(&self) -> usize {
        let natural = self.natural();
        match self.flex {
            None => natural,
            Some((cut, min)) => {
                let header = self.header.split_whitespace().map(|w| w.chars().count()).max().unwrap_or(0);
                let whole = match cut {
                    Cut::Left => self.cells.iter().map(|(c, _)| elide_left(c, 0).chars().count()).max().unwrap_or(0),
                    _ => 0,
                };
                natural.min(min.max(header).max(whole))
            }
        }
    }
}

/// A table laid out: its text (ending in a newline) and the headers of the columns it hid.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fitted {
    pub text: String,
    pub hidden: Vec<String>,
}

impl Fitted {
    /// `3 columns hidden to fit 100 columns (sector eff, L2 amp, DRAM amp): --wide shows all`,
    /// wrapped to the width; empty when nothing was hidden.
    pub(crate) fn footer(&self, width: Option<usize>) -> String {
        if self.hidden.is_empty() {
            return String::new();
        }
        let n = self.hidden.len();
        let text = format!(
            "{n} column{} hidden to fit {} columns ({}): --wide shows all",
            if n == 1 { "" } else { "s" },
            width.unwrap_or(0),
            self.hidden.join(", ")
        );
        crate::text::wrap(&text, width, "", "  ")
    }
}

/// The width of a table of columns of widths `widths` in the UTF8_FULL_CONDENSED style: a
/// border and a space either side of every cell.
fn table_width(widths: &[usize]) -> usize {
    widths.iter().map(|w| w + 3).sum::<usize>() + 1
}

/// Lay out `cols` within `width` characters (`None`: everything, as wide as it comes).
pub(crate) fn table(mut cols: Vec<Col>, width: Option<usize>, color: bool) -> Fitted {
    for c in &mut cols {
        // A header's own lines stay lines (a label over a metric); everything else is escaped.
        c.header = c.header.split('\n').map(visible).collect::<Vec<_>>().join("\n");
        for (cell, _) in &mut c.cells {
            if let std::borrow::Cow::Owned(v) = visible(cell) {
                *cell = v;
            }
        }
    }
    let mut hidden = Vec::new();
    if let Some(width) = width {
        loop {
            let wanted: Vec<usize> = cols.iter().map(Col::wanted).collect();
            if table_width(&wanted) <= width {
                break;
            }
            let Some(next) = cols.iter().filter_map(|c| c.drop).min() else { break };
            for c in cols.iter().filter(|c| c.drop == Some(next)) {
                let name = c.header.split('\n').next_back().unwrap_or_default().to_string();
                if !hidden.contains(&name) {
                    hidden.push(name);
                }
            }
            cols.retain(|c| c.drop != Some(next));
        }
        // From the wanted widths where they fit (else the minimums), what is left over goes to
        // the flexible columns, first column first.
        let wanted: Vec<usize> = cols.iter().map(Col::wanted).collect();
        let base = if table_width(&wanted) <= width { wanted } else { cols.iter().map(Col::min).collect() };
        let mut spare = width.saturating_sub(table_width(&base));
        for (c, base) in cols.iter_mut().zip(base) {
            let Some((cut, _)) = c.flex else { continue };
            let give = (c.natural() - base).min(spare);
            spare -= give;
            let w = base + give;
            for (cell, _) in &mut c.cells {
                *cell = match cut {
                    Cut::Middle => cut_middle(cell, w),
                    Cut::Left => elide_left(cell, w),
                    Cut::End => cut_end(cell, w),
                };
            }
        }
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    if color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.set_header(cols.iter().map(|c| Cell::new(&c.header)));
    let rows = cols.iter().map(|c| c.cells.len()).max().unwrap_or(0);
    for i in 0..rows {
        t.add_row(cols.iter().map(|c| {
            let (text, colour) = c.cells.get(i).cloned().unwrap_or_default();
            let mut cell = Cell::new(text);
            if c.right {
                cell = cell.set_alignment(CellAlignment::Right);
            }
            match colour {
                Some(s) if color => cell.fg(terminal_colour(s)),
                _ => cell,
            }
        }));
    }
    Fitted { text: format!("{t}\n"), hidden }
}

/// The one place a [`Severity`] becomes a terminal colour.
fn terminal_colour(s: Severity) -> Color {
    match s {
        Severity::Good => Color::Green,
        Severity::Warn => Color::Yellow,
        Severity::Bad => Color::Red,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn widest(s: &str) -> usize {
        s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn the_border_arithmetic_is_comfy_tables() {
        let cols = vec![Col::new("ab", cells(&["abcd"])), Col::new("x", cells(&["1"])).right()];
        let t = table(cols, None, false);
        assert_eq!(widest(&t.text), table_width(&[4, 1]), "{}", t.text);
    }

    #[test]
    fn secondary_columns_drop_first_then_names_shrink() {
        let name = "void cub::DeviceScanKernel<Policy600, int *, int *, cub::ScanTileState<int, true>>(int)";
        let cols = || {
            vec![
                Col::new("kernel", cells(&[name])).flex(Cut::Middle, 16),
                Col::new("ld sectors/req", cells(&["32.00"])).right(),
                Col::new("ideal", cells(&["4.00"])).right().drops(3),
                Col::new("L2 amp", cells(&["8.00x"])).right().drops(1),
                Col::new("DRAM amp", cells(&["8.00x"])).right().drops(2),
            ]
        };
        let wide = table(cols(), None, false);
        assert!(wide.hidden.is_empty() && wide.text.contains(name));
        let t = table(cols(), Some(50), false);
        assert!(widest(&t.text) <= 50, "{}", t.text);
        assert_eq!(t.hidden, ["L2 amp", "DRAM amp"], "{}", t.text);
        assert!(t.text.contains("ideal") && t.text.contains('…'), "{}", t.text);
        let footer = t.footer(Some(50));
        assert!(footer.lines().all(|l| l.chars().count() <= 50), "{footer}");
        let said = footer.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(said.contains("2 columns hidden to fit 50 columns (L2 amp, DRAM amp)"), "{said}");
    }

    #[test]
    fn locations_keep_their_file_and_line() {
        let loc = "/very/long/path/to/the/sources/of/the/project/conv_kernels.cu:44";
        let cols = vec![
            Col::new("location", cells(&[loc])).flex(Cut::Left, 12),
            Col::new("code", cells(&["out[i] = in[i * stride] + bias[c];"])).flex(Cut::End, 12).drops(1),
        ];
        let t = table(cols, Some(40), false);
        assert!(widest(&t.text) <= 40, "{}", t.text);
        assert!(t.text.contains("conv_kernels.cu:44"), "{}", t.text);
    }

    #[test]
    fn cells_are_escaped() {
        let t = table(vec![Col::new("kernel", cells(&["evil\n::warning::x\x1b[2J"]))], Some(80), false);
        assert!(!t.text.contains('\x1b') && t.text.lines().all(|l| !l.starts_with("::")), "{}", t.text);
    }
}
