//! Streaming parser for ncu's CSV pages, every version from 2019 to 2025.
//!
//! The input may carry application output and `==PROF==` lines before and inside the CSV
//! (ncu shares stdout with the program), CRLF line ends, a BOM, ragged rule rows, NVTX columns,
//! thousands separators and auto-scaled units. Lines are filtered before the CSV reader sees
//! them; columns are found by name; records are yielded one at a time, so memory stays flat
//! whatever the file's size.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, Read};
use std::sync::Arc;

use super::diagnose::Scan;
use super::{parse_dims, LaunchRecord, Value};

/// Which metrics to keep (launch facts are always kept).
#[derive(Debug, Clone)]
pub enum Keep {
    All,
    Only(HashSet<String>),
}

impl Keep {
    fn wants(&self, name: &str) -> bool {
        match self {
            Keep::All => true,
            Keep::Only(set) => set.contains(name) || LAUNCH_FACTS.contains(&name),
        }
    }
}

/// Metrics that describe the launch and device, kept whatever the filter.
const LAUNCH_FACTS: &[&str] = &[
    "launch__grid_dim_x",
    "launch__grid_dim_y",
    "launch__grid_dim_z",
    "launch__block_dim_x",
    "launch__block_dim_y",
    "launch__block_dim_z",
    "launch__grid_size",
    "launch__block_size",
    "device__attribute_display_name",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "profiler__replayer_passes",
];

/// The page a CSV came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// `--page raw`: one row per launch, one column per metric, a units row under the header.
    Raw,
    /// `--page details` (the default): one row per metric per launch.
    Details,
    /// `--print-summary per-kernel`: one group per kernel and launch shape, Min/Max/Average.
    Summary,
}

/// Why a CSV could not be parsed. The message says what and where; `line` counts input lines.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("{reason}")]
    NoResults { reason: String, hint: &'static str },
    #[error("line {line}: {message}")]
    Malformed { line: u64, message: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The columns every page may have, by header name.
#[derive(Debug, Default)]
struct Fixed {
    id: Option<usize>,
    pid: Option<usize>,
    pname: Option<usize>,
    kernel: Option<usize>,
    block: Option<usize>,
    grid: Option<usize>,
    cc: Option<usize>,
    nvtx: Vec<usize>,
    metric_name: Option<usize>,
    metric_unit: Option<usize>,
    metric_value: Option<usize>,
    average: Option<usize>,
    invocations: Option<usize>,
}

const FIXED_NAMES: &[&str] = &[
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "Device Id", "CC", "Section Name", "Metric Name", "Metric Unit",
    "Metric Value", "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
    "Estimated Speedup", "Invocations", "Minimum", "Maximum", "Average",
];

fn is_nvtx(name: &str) -> bool {
    name.contains("Domain") && name.contains(':')
}

impl Fixed {
    fn from_header(h: &[String]) -> Fixed {
        let find = |n: &str| h.iter().position(|c| c == n);
        Fixed {
            id: find("ID"),
            pid: find("Process ID"),
            pname: find("Process Name"),
            kernel: find("Kernel Name"),
            block: find("Block Size"),
            grid: find("Grid Size"),
            cc: find("CC"),
            nvtx: h.iter().enumerate().filter(|(_, c)| is_nvtx(c)).map(|(i, _)| i).collect(),
            metric_name: find("Metric Name"),
            metric_unit: find("Metric Unit"),
            metric_value: find("Metric Value"),
            average: find("Average"),
            invocations: find("Invocations"),
        }
    }
}

/// Drops every line that is not part of the CSV (app output, `==PROF==` lines), so the CSV
/// reader sees only quoted rows. Implements `Read` over the filtered bytes.
struct LineFilter<R> {
    inner: R,
    line: Vec<u8>,
    pos: usize,
    line_no: u64,
    /// Input line number of each line handed to the CSV reader, newest last (for errors).
    served: Vec<u64>,
}

impl<R: BufRead> Read for LineFilter<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.line.len() {
            self.line.clear();
            self.pos = 0;
            if self.inner.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(0);
            }
            self.line_no += 1;
            let first = self.line.iter().position(|b| !b.is_ascii_whitespace());
            if first.map(|i| self.line[i]) != Some(b'"') {
                self.line.clear();
                continue;
            }
            if !self.line.ends_with(b"\n") {
                self.line.push(b'\n'); // a last line without newline still ends its record
            }
            if self.served.len() >= 4096 {
                self.served.drain(..2048);
            }
            self.served.push(self.line_no);
        }
        let n = out.len().min(self.line.len() - self.pos);
        out[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// An open CSV report: yields one [`LaunchRecord`] at a time.
pub struct Records<R: BufRead> {
    pub page: Page,
    /// `==ERROR==`/`==WARNING==` lines seen before the header (results may still follow).
    pub warnings: Vec<String>,
    reader: csv::Reader<LineFilter<R>>,
    header: Vec<String>,
    fixed: Fixed,
    /// Raw page: (column, name, unit) of every kept metric column.
    raw_columns: Vec<(usize, Arc<str>, String)>,
    keep: Keep,
    names: HashMap<String, Arc<str>>,
    record: csv::StringRecord,
    pending: Option<(String, LaunchRecord)>,
    done: bool,
}

/// Find the CSV header in `input` (skipping whatever precedes it) and get ready to stream.
pub fn open<R: BufRead>(mut input: R, keep: Keep) -> Result<Records<R>, ParseError> {
    let mut scan = Scan::default();
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let header_line = loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            return Err(ParseError::NoResults { reason: scan.reason(), hint: scan.hint() });
        }
        line_no += 1;
        if line_no == 1 && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            buf.drain(..3);
        }
        if buf.contains(&0) {
            scan.binary();
            return Err(ParseError::NoResults { reason: scan.reason(), hint: scan.hint() });
        }
        let text = String::from_utf8_lossy(&buf);
        let t = text.trim_start();
        if t.starts_with("\"ID\",\"Process ID\"") || t.starts_with("\"Process ID\",\"Process Name\"") {
            break t.trim_end().to_string();
        }
        scan.line(&text);
    };
    let header = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(header_line.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(str::to_string).collect::<Vec<_>>())
        .ok_or_else(|| ParseError::Malformed { line: line_no, message: "unreadable CSV header".into() })?;
    let fixed = Fixed::from_header(&header);
    let page = if fixed.metric_value.is_some() && fixed.metric_name.is_some() {
        Page::Details
    } else if fixed.average.is_some() && fixed.metric_name.is_some() {
        Page::Summary
    } else {
        Page::Raw
    };
    if fixed.kernel.is_none() {
        return Err(ParseError::Malformed { line: line_no, message: "the CSV header has no \"Kernel Name\" column".into() });
    }
    let filter = LineFilter { inner: input, line: Vec::new(), pos: 0, line_no, served: Vec::new() };
    let reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(filter);
    let mut records = Records {
        page,
        warnings: scan.warnings,
        reader,
        header,
        fixed,
        raw_columns: Vec::new(),
        keep,
        names: HashMap::new(),
        record: csv::StringRecord::new(),
        pending: None,
        done: false,
    };
    if page == Page::Raw {
        records.read_units_row()?;
    }
    Ok(records)
}

impl<R: BufRead> Records<R> {
    fn line(&self) -> u64 {
        self.reader.get_ref().served.last().copied().unwrap_or(0)
    }

    fn malformed(&self, message: impl Into<String>) -> ParseError {
        ParseError::Malformed { line: self.line(), message: message.into() }
    }

    /// Read the next CSV row into `self.record`; false at the end.
    fn next_row(&mut self) -> Result<bool, ParseError> {
        match self.reader.read_record(&mut self.record) {
            Ok(more) => Ok(more),
            Err(e) => match e.kind() {
                csv::ErrorKind::Io(_) => Err(ParseError::Io(io::Error::other(e.to_string()))),
                _ => Err(self.malformed(format!("unreadable CSV row: {e}"))),
            },
        }
    }

    /// The raw page's second row holds the units; pick the metric columns to keep.
    fn read_units_row(&mut self) -> Result<(), ParseError> {
        if !self.next_row()? {
            return Ok(());
        }
        if self.record.len() != self.header.len() {
            return Err(self.malformed(format!(
                "the units row has {} fields, the header {}",
                self.record.len(),
                self.header.len()
            )));
        }
        if self.fixed.id.is_some_and(|i| !self.record[i].is_empty()) {
            return Err(self.malformed(
                "the raw page has no units row under its header (export it with `--print-units base`)",
            ));
        }
        let mut seen = HashSet::new();
        for (i, name) in self.header.iter().enumerate() {
            if FIXED_NAMES.contains(&name.as_str()) || is_nvtx(name) {
                continue;
            }
            if !seen.insert(name.as_str()) {
                return Err(ParseError::Malformed {
                    line: self.line().saturating_sub(1),
                    message: format!("the metric column `{name}` appears twice in the header"),
                });
            }
            if self.keep.wants(name) {
                self.raw_columns.push((i, Arc::from(name.as_str()), self.record[i].to_string()));
            }
        }
        Ok(())
    }

    fn field(&self, col: Option<usize>) -> Option<&str> {
        col.and_then(|i| self.record.get(i)).map(str::trim).filter(|s| !s.is_empty())
    }

    /// A record for the current row's launch, metrics still empty.
    fn launch_of_row(&self) -> Result<LaunchRecord, ParseError> {
        let f = &self.fixed;
        let kernel = self.field(f.kernel).ok_or_else(|| self.malformed("a row has no kernel name"))?;
        let id = match self.field(f.id) {
            Some(t) => Some(t.replace(',', "").parse::<u64>().map_err(|_| self.malformed(format!("ID `{t}` is not a number")))?),
            None => None,
        };
        let process = match (self.field(f.pid), self.field(f.pname)) {
            (Some(p), Some(n)) => Some(format!("{p} {n}")),
            (p, n) => p.or(n).map(str::to_string),
        };
        let nvtx: Vec<&str> = f.nvtx.iter().filter_map(|&i| self.field(Some(i))).collect();
        let launches = match self.field(f.invocations) {
            Some(t) => t.replace(',', "").parse::<f64>().map(|v| v as u64).unwrap_or(1),
            None => 1,
        };
        Ok(LaunchRecord {
            id,
            process,
            kernel: kernel.to_string(),
            grid: self.field(f.grid).and_then(parse_dims),
            block: self.field(f.block).and_then(parse_dims),
            device: None,
            cc: self.field(f.cc).map(str::to_string),
            nvtx: (!nvtx.is_empty()).then(|| nvtx.join(" | ")),
            launches,
            metrics: Vec::new(),
        })
    }

    /// The key that groups long-format rows into one launch.
    fn group_key(&self) -> String {
        let f = &self.fixed;
        let parts = [f.id, f.pid, f.kernel, f.block, f.grid];
        parts.iter().map(|&c| self.field(c).unwrap_or("")).collect::<Vec<_>>().join("\u{1f}")
    }

    fn name(&mut self, n: &str) -> Arc<str> {
        if let Some(a) = self.names.get(n) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(n);
        self.names.insert(n.to_string(), a.clone());
        a
    }

    fn next_raw(&mut self) -> Result<Option<LaunchRecord>, ParseError> {
        if !self.next_row()? {
            return Ok(None);
        }
        if self.record.len() != self.header.len() {
            return Err(self.malformed(format!(
                "a row has {} fields, the header {}: the file is truncated or not one CSV",
                self.record.len(),
                self.header.len()
            )));
        }
        let mut rec = self.launch_of_row()?;
        rec.metrics = self
            .raw_columns
            .iter()
            .map(|(i, name, unit)| (name.clone(), Value::parse(&self.record[*i], unit)))
            .collect();
        Ok(Some(finish(rec)))
    }

    fn next_long(&mut self) -> Result<Option<LaunchRecord>, ParseError> {
        let value_col = if self.page == Page::Details { self.fixed.metric_value } else { self.fixed.average };
        let (Some(name_col), Some(value_col)) = (self.fixed.metric_name, value_col) else {
            return Ok(None);
        };
        loop {
            if self.done || !self.next_row()? {
                self.done = true;
                return Ok(self.pending.take().map(|(_, r)| finish(r)));
            }
            let Some(name) = self.field(Some(name_col)).map(str::to_string) else {
                continue; // a rule row: no metric
            };
            if self.record.len() <= value_col {
                return Err(self.malformed(format!(
                    "the row for `{name}` ends before its value column: the file is truncated"
                )));
            }
            let key = self.group_key();
            let finished = match &self.pending {
                Some((k, _)) if *k != key => self.pending.take().map(|(_, r)| finish(r)),
                _ => None,
            };
            if self.pending.is_none() {
                self.pending = Some((key, self.launch_of_row()?));
            }
            if self.keep.wants(&name) {
                let unit = self.field(self.fixed.metric_unit).unwrap_or("").to_string();
                let value = Value::parse(self.record.get(value_col).unwrap_or(""), &unit);
                let name = self.name(&name);
                if let Some((_, rec)) = self.pending.as_mut() {
                    rec.metrics.push((name, value));
                }
            }
            if finished.is_some() {
                return Ok(finished);
            }
        }
    }
}

/// Fill launch facts that ncu printed as metrics rather than columns.
fn finish(mut r: LaunchRecord) -> LaunchRecord {
    let num = |r: &LaunchRecord, n: &str| r.metric(n).and_then(Value::number).map(|v| v as u32);
    if r.grid.is_none() {
        if let (Some(x), Some(y), Some(z)) =
            (num(&r, "launch__grid_dim_x"), num(&r, "launch__grid_dim_y"), num(&r, "launch__grid_dim_z"))
        {
            r.grid = Some([x, y, z]);
        }
    }
    if r.block.is_none() {
        if let (Some(x), Some(y), Some(z)) =
            (num(&r, "launch__block_dim_x"), num(&r, "launch__block_dim_y"), num(&r, "launch__block_dim_z"))
        {
            r.block = Some([x, y, z]);
        }
    }
    if r.cc.is_none() {
        if let (Some(a), Some(b)) = (
            num(&r, "device__attribute_compute_capability_major"),
            num(&r, "device__attribute_compute_capability_minor"),
        ) {
            r.cc = Some(format!("{a}.{b}"));
        }
    }
    if let Some(Value::Text(name)) = r.metric("device__attribute_display_name") {
        r.device = Some(name.clone());
    }
    r
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<LaunchRecord, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        let got = match self.page {
            Page::Raw => self.next_raw(),
            Page::Details | Page::Summary => self.next_long(),
        };
        match got {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
