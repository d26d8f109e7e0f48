//! Streaming parser for ncu's CSV pages, every version from 2019 to 2025.
//!
//! The input may carry application output and `==PROF==` lines before and inside the CSV
//! (ncu shares stdout with the program), CRLF line ends, a BOM, ragged rule rows, NVTX columns,
//! thousands separators and auto-scaled units. Lines are filtered before the CSV reader sees
//! them; columns are found by name; records are yielded one at a time, so memory stays flat
//! whatever the file's size.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, Read};
use std::sync::Arc;

use super::diagnose::Scan;
use super::units::{self, Scale};
use super::{parse_dims, LaunchRecord, Value};

/// Which metrics to keep (launch facts are always kept).
#[derive(Debug, Clone)]
pub enum Keep {
    /// Every metric.
    All,
    /// Only these ncu names.
    Only(HashSet<String>),
}

impl Keep {
    /// Whether a metric of this name is kept (the native reader filters with it too).
    pub fn wants(&self, name: &str) -> bool {
        match self {
            Keep::All => true,
            Keep::Only(set) => set.contains(name) || LAUNCH_SHAPE.contains(&name) || DEVICE_METRICS.contains(&name),
        }
    }
}

/// Metrics that describe the launch's shape, kept whatever the filter.
const LAUNCH_SHAPE: &[&str] = &[
    "launch__grid_dim_x",
    "launch__grid_dim_y",
    "launch__grid_dim_z",
    "launch__block_dim_x",
    "launch__block_dim_y",
    "launch__block_dim_z",
    "launch__grid_size",
    "launch__block_size",
];

/// Device attributes (the GPU, its compute capability, what peak bandwidth needs) and the
/// replay pass count: collected with every profiling run, kept whatever the filter.
pub const DEVICE_METRICS: &[&str] = &[
    "device__attribute_display_name",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_memory_clock_rate",
    "device__attribute_global_memory_bus_width",
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
    /// The input holds no results table (a log, a text report, an empty file).
    #[error("{reason}")]
    NoResults {
        /// What the input is instead.
        reason: String,
        /// How to get a report coalprof reads.
        hint: &'static str,
    },
    /// A results table that is broken at `line`.
    #[error("line {line}: {message}")]
    Malformed {
        /// The input line (1-based).
        line: u64,
        /// What is wrong there.
        message: String,
    },
    /// The input could not be read.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A field or column name quoted in an error message: one line, at most 60 characters (a
/// mangled file can put a newline or ten megabytes in a field).
fn shown(s: &str) -> String {
    let mut chars = s.chars().flat_map(char::escape_debug);
    let mut out: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// A field's text: borrowed when it is UTF-8 (always, from ncu), else with replacement characters.
fn text(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
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
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "Device Id",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
    "Invocations",
    "Minimum",
    "Maximum",
    "Average",
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
    /// Whether the file is ncu's own, every field quoted: then a line that does not start with
    /// a quote is the program's output mixed into ncu's stdout. A re-saved file quotes only
    /// where it must, so there every line but ncu's `==` lines and blank ones is data.
    quoted: bool,
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
            let first = self.line.iter().position(|b| !b.is_ascii_whitespace()).map(|i| &self.line[i..]);
            let data = match first {
                None => false,
                Some(rest) if self.quoted => rest[0] == b'"',
                Some(rest) => !rest.starts_with(b"=="),
            };
            if !data {
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
    /// Which page of ncu's output the report is (raw or details).
    pub page: Page,
    /// `==ERROR==`/`==WARNING==` lines seen before the header (results may still follow).
    pub warnings: Vec<String>,
    reader: csv::Reader<LineFilter<R>>,
    header: Vec<String>,
    fixed: Fixed,
    /// Raw page: (column, name, unit) of every kept metric column.
    raw_columns: Vec<(usize, Arc<str>, Scale)>,
    keep: Keep,
    names: HashMap<String, Arc<str>>,
    /// Bytes, not `StringRecord`: a row is not validated as UTF-8 as a whole (the hot path
    /// reads a few numeric columns of hundreds), and a stray Latin-1 byte in a process name
    /// (a Windows capture) costs a replacement character, not the report.
    record: csv::ByteRecord,
    pending: Option<(String, LaunchRecord)>,
    done: bool,
}

/// Whether a line (its quotes removed) is the header of ncu's raw or details page: it starts
/// with `ID,Process ID` (or `Process ID,Process Name`), or has one column before that, the
/// index pandas' `to_csv` writes.
fn is_header(bare: &str) -> bool {
    ["ID,Process ID", "Process ID,Process Name"]
        .iter()
        .any(|h| bare.find(h).is_some_and(|at| at == 0 || (bare[..at].ends_with(',') && !bare[..at - 1].contains(','))))
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
        // ncu quotes every field; a CSV re-saved by Python's `csv`, pandas or a spreadsheet
        // quotes only where it must, and reads the same.
        if is_header(&t.replace('"', "")) {
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
        return Err(ParseError::Malformed {
            line: line_no,
            message: "the CSV header has no \"Kernel Name\" column".into(),
        });
    }
    let quoted = header_line.starts_with('"');
    let filter = LineFilter { inner: input, line: Vec::new(), pos: 0, line_no, served: Vec::new(), quoted };
    let reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(1 << 16).from_reader(filter);
    let mut records = Records {
        page,
        warnings: scan.warnings,
        reader,
        header,
        fixed,
        raw_columns: Vec::new(),
        keep,
        names: HashMap::new(),
        record: csv::ByteRecord::new(),
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
        match self.reader.read_byte_record(&mut self.record) {
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
        // A units row is empty under ID and Kernel Name; a data row never is.
        let filled = |c: Option<usize>| c.is_some_and(|i| !self.record[i].trim_ascii().is_empty());
        if filled(self.fixed.id) || filled(self.fixed.kernel) {
            return Err(
                self.malformed("the raw page has no units row under its header (export it with `--print-units base`)")
            );
        }
        let mut seen = HashSet::new();
        for (i, name) in self.header.iter().enumerate() {
            if FIXED_NAMES.contains(&name.as_str()) || is_nvtx(name) {
                continue;
            }
            if !seen.insert(name.as_str()) {
                return Err(ParseError::Malformed {
                    line: self.line().saturating_sub(1),
                    message: format!("the metric column `{}` appears twice in the header", shown(name)),
                });
            }
            if self.keep.wants(name) {
                self.raw_columns.push((i, Arc::from(name.as_str()), units::scale(&text(&self.record[i]))));
            }
        }
        Ok(())
    }

    /// A column of the current row, trimmed; `None` if absent or empty.
    fn field(&self, col: Option<usize>) -> Option<Cow<'_, str>> {
        let b = col.and_then(|i| self.record.get(i))?.trim_ascii();
        (!b.is_empty()).then(|| text(b))
    }

    /// A record for the current row's launch, metrics still empty.
    fn launch_of_row(&self) -> Result<LaunchRecord, ParseError> {
        let f = &self.fixed;
        let kernel = self.field(f.kernel).ok_or_else(|| self.malformed("a row has no kernel name"))?;
        let id = match self.field(f.id) {
            Some(t) => Some(
                t.replace(',', "")
                    .parse::<u64>()
                    .map_err(|_| self.malformed(format!("ID `{}` is not a number", shown(&t))))?,
            ),
            None => None,
        };
        let process = match (self.field(f.pid), self.field(f.pname)) {
            (Some(p), Some(n)) => Some(format!("{p} {n}")),
            (p, n) => p.or(n).map(Cow::into_owned),
        };
        let nvtx: Vec<Cow<str>> = f.nvtx.iter().filter_map(|&i| self.field(Some(i))).collect();
        let launches = match self.field(f.invocations) {
            // A launch count: a whole number from 1 to 2^32. Anything else would be summed
            // as garbage (0 hides the kernel, a huge count overflows the launch total).
            Some(t) => match units::number(&t) {
                Some(v) if v >= 1.0 && v.fract() == 0.0 && v <= u32::MAX as f64 => v as u64,
                _ => return Err(self.malformed(format!("Invocations `{}` is not a launch count", shown(&t)))),
            },
            None => 1,
        };
        Ok(LaunchRecord {
            id,
            process,
            kernel: kernel.into_owned(),
            grid: self.field(f.grid).and_then(|d| parse_dims(&d)),
            block: self.field(f.block).and_then(|d| parse_dims(&d)),
            device: None,
            cc: self.field(f.cc).map(Cow::into_owned),
            nvtx: (!nvtx.is_empty()).then(|| nvtx.join(" | ")),
            rank: None,
            launches,
            metrics: Vec::new(),
        })
    }

    /// The key that groups long-format rows into one launch.
    fn group_key(&self) -> String {
        let f = &self.fixed;
        let parts = [f.id, f.pid, f.kernel, f.block, f.grid];
        parts.iter().map(|&c| self.field(c).unwrap_or_default()).collect::<Vec<_>>().join("\u{1f}")
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
            .map(|(i, name, scale)| (name.clone(), Value::parse_scaled(&text(&self.record[*i]), *scale)))
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
            let Some(name) = self.field(Some(name_col)).map(Cow::into_owned) else {
                continue; // a rule row: no metric
            };
            // Metric rows may stop early (2021+ leave the rule columns off), never run long:
            // more fields than the header means a stray quote or comma shifted the row, and
            // its "value" would be some other column's.
            if self.record.len() > self.header.len() {
                return Err(self.malformed(format!(
                    "the row for `{}` has {} fields, the header {}: a quote or comma is out of place",
                    shown(&name),
                    self.record.len(),
                    self.header.len()
                )));
            }
            if self.record.len() <= value_col {
                return Err(self.malformed(format!(
                    "the row for `{}` ends before its value column: the file is truncated",
                    shown(&name)
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
                let unit = self.field(self.fixed.metric_unit).unwrap_or_default();
                let value = Value::parse(&text(self.record.get(value_col).unwrap_or_default()), &unit);
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

/// Fill launch facts that ncu printed as metrics rather than columns (the native reader too).
pub(super) fn finish(mut r: LaunchRecord) -> LaunchRecord {
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
        if self.done {
            return None; // after the end, and after the first error: nothing half-read follows
        }
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

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    const RAW: &[u8] = include_bytes!(
        "../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv"
    );
    const DETAILS: &[u8] = include_bytes!(
        "../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_details_base.csv"
    );
    const SUMMARY: &[u8] =
        include_bytes!("../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_summary_per_kernel.csv");

    /// Parse `bytes` to the end. It must return, yield at most one record per input line, and
    /// stop after its first error.
    fn drain(bytes: &[u8]) -> Result<usize, TestCaseError> {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
        let Ok(mut recs) = open(bytes, Keep::All) else { return Ok(0) };
        let mut n = 0;
        while let Some(r) = recs.next() {
            n += 1;
            prop_assert!(n <= lines, "{} records from {} lines", n, lines);
            if r.is_err() {
                prop_assert!(recs.next().is_none(), "records after an error");
                break;
            }
        }
        Ok(n)
    }

    /// One edit of a real report.
    #[derive(Debug, Clone)]
    enum Edit {
        Delete(usize, usize),
        Insert(usize, &'static [u8]),
        Flip(usize, u8),
        Truncate(usize),
        DuplicateLine(usize),
        DropLine(usize),
    }

    const TOKENS: &[&[u8]] = &[
        b"\"",
        b",",
        b"\"\"",
        b"\n",
        b"\r\n",
        b"\0",
        b"\xff\xfe",
        b"nan",
        b"(!)",
        b"(!) n/a",
        b"1e309",
        b"-",
        b"99999999999999999999999",
        b",,,,",
        b"\n==PROF== Disconnected from process 1\n",
        b"\"ID\",\"Process ID\"",
        b"\xef\xbb\xbf",
        b" ",
        b"1,2",
        b"\"\",\"\"",
    ];

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
            (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, TOKENS[t])),
            (any::<usize>(), 1..=255u8).prop_map(|(p, b)| Edit::Flip(p, b)),
            any::<usize>().prop_map(Edit::Truncate),
            any::<usize>().prop_map(Edit::DuplicateLine),
            any::<usize>().prop_map(Edit::DropLine),
        ]
    }

    /// The byte range of line `i` (modulo the line count), newline included.
    fn line_range(b: &[u8], i: usize) -> std::ops::Range<usize> {
        let starts: Vec<usize> =
            std::iter::once(0).chain(b.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(i, _)| i + 1)).collect();
        let s = starts[i % starts.len()];
        let e = b[s..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| s + p + 1);
        s..e
    }

    fn apply(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        for e in edits {
            let len = b.len().max(1);
            match *e {
                Edit::Delete(p, n) => {
                    let p = (p % len).min(b.len());
                    b.drain(p..(p + n).min(b.len()));
                }
                Edit::Insert(p, t) => {
                    let p = p % (b.len() + 1);
                    b.splice(p..p, t.iter().copied());
                }
                Edit::Flip(p, x) => {
                    if !b.is_empty() {
                        let p = p % b.len();
                        b[p] ^= x;
                    }
                }
                Edit::Truncate(p) => b.truncate(p % len),
                Edit::DuplicateLine(i) => {
                    let r = line_range(&b, i);
                    let line = b[r.clone()].to_vec();
                    b.splice(r.start..r.start, line);
                }
                Edit::DropLine(i) => {
                    let r = line_range(&b, i);
                    b.drain(r);
                }
            }
        }
        b
    }

    /// A kernel name as ncu prints them: templates, commas, spaces, quotes (doubled in CSV).
    fn kernel_name() -> impl Strategy<Value = String> {
        "[a-z][a-zA-Z0-9_<>(),*:\" ]{0,24}[a-z)>]"
    }

    const UNITS: &[&str] =
        &["", "byte", "Kbyte", "Mbyte", "nsecond", "usecond", "ns", "sector", "Gbyte/second", "cycle/nsecond", "%"];

    /// A metric value as ncu may print it: plain, with thousands separators, with decimals.
    fn value_text() -> impl Strategy<Value = (String, f64)> {
        (any::<u32>(), proptest::option::of(0u32..100), any::<bool>()).prop_map(|(n, frac, group)| {
            let int = if group {
                let d = n.to_string();
                d.chars().enumerate().fold(String::new(), |mut s, (i, c)| {
                    if i > 0 && (d.len() - i) % 3 == 0 {
                        s.push(',');
                    }
                    s.push(c);
                    s
                })
            } else {
                n.to_string()
            };
            let (text, plain) = match frac {
                Some(f) => (format!("{int}.{f:02}"), format!("{n}.{f:02}")),
                None => (int, n.to_string()),
            };
            (text, plain.parse::<f64>().unwrap())
        })
    }

    fn quote(s: &str) -> String {
        format!("\"{}\"", s.replace('"', "\"\""))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            drain(&bytes)?;
        }

        #[test]
        fn arbitrary_bytes_after_a_real_header_never_panic(which in 0..3usize, tail in proptest::collection::vec(any::<u8>(), 0..512)) {
            let src = [RAW, DETAILS, SUMMARY][which];
            let header = &src[..line_range(src, 0).end];
            let mut bytes = header.to_vec();
            bytes.extend_from_slice(&tail);
            drain(&bytes)?;
        }

        #[test]
        fn mutated_real_reports_never_panic(which in 0..3usize, edits in proptest::collection::vec(edit(), 1..6)) {
            let src = [RAW, DETAILS, SUMMARY][which];
            drain(&apply(src.to_vec(), &edits))?;
        }

        #[test]
        fn generated_raw_pages_yield_every_row_with_its_values(
            units_of in proptest::collection::vec(0..UNITS.len(), 1..6),
            rows in proptest::collection::vec((kernel_name(), proptest::collection::vec(value_text(), 6)), 0..12),
            crlf in any::<bool>(),
            noise in any::<bool>(),
            bom in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            if noise {
                text.push_str(&format!("app output, with, commas{eol}==PROF== Connected to process 7 (/bin/app){eol}"));
            }
            let names: Vec<String> = (0..units_of.len()).map(|j| format!("m{j}__t_sectors.sum")).collect();
            let fixed = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream"];
            let header: Vec<String> = fixed.iter().map(|s| s.to_string()).chain(names.iter().cloned()).collect();
            text.push_str(&header.iter().map(|h| quote(h)).collect::<Vec<_>>().join(","));
            text.push_str(eol);
            let unit_row: Vec<String> = fixed.iter().map(|_| String::new()).chain(units_of.iter().map(|&u| UNITS[u].to_string())).collect();
            text.push_str(&unit_row.iter().map(|u| quote(u)).collect::<Vec<_>>().join(","));
            text.push_str(eol);
            for (i, (kernel, values)) in rows.iter().enumerate() {
                let mut f = vec![i.to_string(), "42".into(), "app".into(), "127.0.0.1".into(), kernel.clone(), "2023-Oct-03 02:29:39".into(), "1".into(), "7".into()];
                f.extend(values.iter().take(names.len()).map(|(t, _)| t.clone()));
                text.push_str(&f.iter().map(|v| quote(v)).collect::<Vec<_>>().join(","));
                text.push_str(eol);
                if noise && i % 3 == 1 {
                    text.push_str(&format!("==PROF== Profiling \"k\" - {i}: 0%....50%....100% - 9 passes{eol}"));
                }
            }
            let recs = open(text.as_bytes(), Keep::All).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(recs.page, Page::Raw);
            let got: Vec<LaunchRecord> = recs.collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got.len(), rows.len());
            for (i, (r, (kernel, values))) in got.iter().zip(&rows).enumerate() {
                prop_assert_eq!(r.id, Some(i as u64));
                prop_assert_eq!(&r.kernel, kernel.trim());
                prop_assert_eq!(r.process.as_deref(), Some("42 app"));
                prop_assert_eq!(r.metrics.len(), names.len());
                for (j, name) in names.iter().enumerate() {
                    let s = units::scale(UNITS[units_of[j]]);
                    let want = Value::Number { value: s.apply(values[j].1), unit: s.base };
                    prop_assert_eq!(r.metric(name), Some(&want), "row {} metric {} `{}`", i, name, values[j].0);
                }
            }
        }
    }
}
