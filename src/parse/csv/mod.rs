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

mod chunks;
mod split;

use super::no_results::Scan;
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
    // `from_utf8` first: its ASCII fast path is several times quicker than `from_utf8_lossy`'s
    // chunk iterator on the short fields of every row (3% of a one-core parse).
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
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

/// Bytes handed back by the fast path (the line it could not split, and what it had read
/// past it), served before the rest of the input.
struct Prefixed<R> {
    prefix: Vec<u8>,
    pos: usize,
    /// A read error the fast path met just past `prefix`: returned once, where it happened.
    error: Option<io::Error>,
    inner: R,
}

impl<R: BufRead> Read for Prefixed<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Prefixed<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos < self.prefix.len() {
            return Ok(&self.prefix[self.pos..]);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.pos < self.prefix.len() {
            self.pos += n;
        } else {
            self.inner.consume(n);
        }
    }
}

/// Drops every line that is not part of the CSV (app output, `==PROF==` lines), so the CSV
/// reader sees only quoted rows. Implements `Read` over the filtered bytes.
struct LineFilter<R> {
    inner: Prefixed<R>,
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

/// A row's fields, from the `csv` reader or from the fast splitter: the page logic below reads
/// both through this, so the two paths cannot disagree on what a row means.
trait Fields {
    fn count(&self) -> usize;
    fn at(&self, i: usize) -> Option<&[u8]>;
}

impl Fields for csv::ByteRecord {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> Option<&[u8]> {
        self.get(i)
    }
}

impl Fields for split::Row<'_> {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> Option<&[u8]> {
        self.get(i)
    }
}

fn malformed(line: u64, message: impl Into<String>) -> ParseError {
    ParseError::Malformed { line, message: message.into() }
}

/// A column of a row, trimmed; `None` if absent or empty.
fn field<F: Fields>(row: &F, col: Option<usize>) -> Option<Cow<'_, str>> {
    let b = col.and_then(|i| row.at(i))?.trim_ascii();
    (!b.is_empty()).then(|| text(b))
}

/// A launch ID: digits, maybe with thousands separators.
fn parse_id(t: &str) -> Option<u64> {
    if t.contains(',') {
        t.replace(',', "").parse().ok()
    } else {
        t.parse().ok()
    }
}

/// A record for a row's launch, metrics still empty. `line` is the row's input line (errors).
fn launch_of_row<F: Fields>(f: &Fixed, row: &F, line: u64) -> Result<LaunchRecord, ParseError> {
    let kernel = field(row, f.kernel).ok_or_else(|| malformed(line, "a row has no kernel name"))?;
    let id = match field(row, f.id) {
        Some(t) => Some(parse_id(&t).ok_or_else(|| malformed(line, format!("ID `{}` is not a number", shown(&t))))?),
        None => None,
    };
    let process = match (field(row, f.pid), field(row, f.pname)) {
        (Some(p), Some(n)) => Some(format!("{p} {n}")),
        (p, n) => p.or(n).map(Cow::into_owned),
    };
    let nvtx: Vec<Cow<str>> = f.nvtx.iter().filter_map(|&i| field(row, Some(i))).collect();
    let launches = match field(row, f.invocations) {
        // A launch count: a whole number from 1 to 2^32. Anything else would be summed
        // as garbage (0 hides the kernel, a huge count overflows the launch total).
        Some(t) => match units::number(&t) {
            Some(v) if v >= 1.0 && v.fract() == 0.0 && v <= u32::MAX as f64 => v as u64,
            _ => return Err(malformed(line, format!("Invocations `{}` is not a launch count", shown(&t)))),
        },
        None => 1,
    };
    Ok(LaunchRecord {
        id,
        process,
        kernel: kernel.into_owned(),
        grid: field(row, f.grid).and_then(|d| parse_dims(&d)),
        block: field(row, f.block).and_then(|d| parse_dims(&d)),
        device: None,
        cc: field(row, f.cc).map(Cow::into_owned),
        nvtx: (!nvtx.is_empty()).then(|| nvtx.join(" | ")),
        rank: None,
        launches,
        metrics: Vec::new(),
    })
}

/// What the header and units row say about the raw page's columns: read-only once the units
/// row is in, so the fast path's threads share it.
#[derive(Debug)]
struct RawLayout {
    fixed: Fixed,
    width: usize,
    /// (column, name, unit) of every kept metric column.
    columns: Vec<(usize, Arc<str>, Scale)>,
}

impl RawLayout {
    /// The raw page's second row holds the units; pick the metric columns to keep.
    fn from_units_row<F: Fields>(
        header: &[String],
        fixed: Fixed,
        keep: &Keep,
        row: &F,
        line: u64,
    ) -> Result<RawLayout, ParseError> {
        if row.count() != header.len() {
            return Err(malformed(
                line,
                format!("the units row has {} fields, the header {}", row.count(), header.len()),
            ));
        }
        // A units row is empty under ID and Kernel Name; a data row never is.
        let filled = |c: Option<usize>| c.and_then(|i| row.at(i)).is_some_and(|b| !b.trim_ascii().is_empty());
        if filled(fixed.id) || filled(fixed.kernel) {
            return Err(malformed(
                line,
                "the raw page has no units row under its header (export it with `--print-units base`)",
            ));
        }
        let mut seen = HashSet::new();
        let mut columns = Vec::new();
        for (i, name) in header.iter().enumerate() {
            if FIXED_NAMES.contains(&name.as_str()) || is_nvtx(name) {
                continue;
            }
            if !seen.insert(name.as_str()) {
                return Err(malformed(
                    line.saturating_sub(1),
                    format!("the metric column `{}` appears twice in the header", shown(name)),
                ));
            }
            if keep.wants(name) {
                columns.push((i, Arc::from(name.as_str()), units::scale(&text(row.at(i).unwrap_or_default()))));
            }
        }
        Ok(RawLayout { fixed, width: header.len(), columns })
    }

    /// One data row of the raw page → its launch record.
    fn record<F: Fields>(&self, row: &F, line: u64) -> Result<LaunchRecord, ParseError> {
        if row.count() != self.width {
            return Err(malformed(
                line,
                format!(
                    "a row has {} fields, the header {}: the file is truncated or not one CSV",
                    row.count(),
                    self.width
                ),
            ));
        }
        let mut rec = launch_of_row(&self.fixed, row, line)?;
        rec.metrics = (self.columns.iter())
            .map(|(i, name, scale)| (name.clone(), Value::parse_scaled(&text(row.at(*i).unwrap_or_default()), *scale)))
            .collect();
        Ok(finish(rec))
    }
}

/// Where the rows come from.
#[allow(clippy::large_enum_variant)] // one per open report; the csv reader is the common case
enum Source<R> {
    /// The `csv` reader over the filtered lines: every page, and the raw page's odd lines.
    Csv(csv::Reader<LineFilter<R>>),
    /// The raw page of ncu's own CSV, split 64 bytes at a time (`chunks`).
    Fast(Box<chunks::Fast<R>>),
    /// Between the two, for a moment.
    Moving,
}

/// An open CSV report: yields one [`LaunchRecord`] at a time.
pub struct Records<R: BufRead> {
    /// Which page of ncu's output the report is (raw or details).
    pub page: Page,
    /// `==ERROR==`/`==WARNING==` lines seen before the header (results may still follow).
    pub warnings: Vec<String>,
    source: Source<R>,
    header: Vec<String>,
    /// The header's columns; moved into `layout` once the raw page's units row is read.
    fixed: Fixed,
    /// Raw page: the columns, once the units row is read.
    layout: Option<Arc<RawLayout>>,
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

/// How the rows of a raw page are read. [`open`] takes the fast path; tests hold it equal to
/// the `csv` reader alone, and the parse benchmark times each.
#[derive(Debug, Clone, Copy)]
pub enum Strategy {
    /// The `csv` reader alone: every row through its state machine, on the calling thread.
    Csv,
    /// ncu's own raw page split 64 bytes at a time in chunks of `chunk` bytes, on `threads`
    /// worker threads (0: inline, on the calling thread); other pages and lines the splitter
    /// refuses go to the `csv` reader.
    Fast {
        /// Worker threads; 0 parses on the calling thread.
        threads: usize,
        /// Bytes read per chunk.
        chunk: usize,
    },
}

impl Strategy {
    /// The fast path with one parsing thread per core the process may run on (inline on one).
    pub fn default_fast() -> Strategy {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Strategy::Fast { threads: if cores > 1 { cores.min(8) } else { 0 }, chunk: chunks::CHUNK }
    }
}

/// Find the CSV header in `input` (skipping whatever precedes it) and get ready to stream.
pub fn open<R: BufRead>(input: R, keep: Keep) -> Result<Records<R>, ParseError> {
    open_with(input, keep, Strategy::default_fast())
}

/// [`open`], reading the rows as `strategy` says.
pub fn open_with<R: BufRead>(mut input: R, keep: Keep, strategy: Strategy) -> Result<Records<R>, ParseError> {
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
    let mut records = Records {
        page,
        warnings: scan.warnings,
        source: Source::Moving,
        header,
        fixed,
        layout: None,
        keep,
        names: HashMap::new(),
        record: csv::ByteRecord::new(),
        pending: None,
        done: false,
    };
    match strategy {
        // ncu's own raw page: the fast path, which hands odd lines back to the csv reader.
        Strategy::Fast { threads, chunk } if page == Page::Raw && quoted => {
            records.source = Source::Fast(Box::new(chunks::Fast::new(input, line_no, threads, chunk)));
            records.read_units_row_fast()?;
        }
        _ => {
            records.source = Source::Csv(csv_reader(input, Vec::new(), None, line_no, quoted));
            if page == Page::Raw {
                records.read_units_row()?;
            }
        }
    }
    Ok(records)
}

/// The `csv` reader over the filtered lines of `prefix` then `input`; `line_no` lines came before.
fn csv_reader<R: BufRead>(
    input: R,
    prefix: Vec<u8>,
    error: Option<io::Error>,
    line_no: u64,
    quoted: bool,
) -> csv::Reader<LineFilter<R>> {
    let filter = LineFilter {
        inner: Prefixed { prefix, pos: 0, error, inner: input },
        line: Vec::new(),
        pos: 0,
        line_no,
        served: Vec::new(),
        quoted,
    };
    csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(1 << 16).from_reader(filter)
}

impl<R: BufRead> Records<R> {
    fn line(&self) -> u64 {
        match &self.source {
            Source::Csv(reader) => reader.get_ref().served.last().copied().unwrap_or(0),
            _ => 0,
        }
    }

    fn malformed(&self, message: impl Into<String>) -> ParseError {
        malformed(self.line(), message)
    }

    /// Read the next CSV row into `self.record`; false at the end.
    fn next_row(&mut self) -> Result<bool, ParseError> {
        let Source::Csv(reader) = &mut self.source else { return Ok(false) };
        match reader.read_byte_record(&mut self.record) {
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
        let fixed = std::mem::take(&mut self.fixed);
        let layout = RawLayout::from_units_row(&self.header, fixed, &self.keep, &self.record, self.line())?;
        self.layout = Some(Arc::new(layout));
        Ok(())
    }

    /// The units row through the fast path; if it cannot split it, the csv reader takes over.
    fn read_units_row_fast(&mut self) -> Result<(), ParseError> {
        let Source::Fast(fast) = &mut self.source else { return self.read_units_row() };
        match fast.first_row(|row, line| {
            RawLayout::from_units_row(&self.header, std::mem::take(&mut self.fixed), &self.keep, row, line)
        })? {
            chunks::First::Layout(layout) => {
                let layout = Arc::new(layout);
                fast.start(layout.clone());
                self.layout = Some(layout);
                Ok(())
            }
            chunks::First::End => Ok(()),
            chunks::First::HandBack => {
                self.hand_over_to_csv_reader();
                self.read_units_row()
            }
        }
    }

    /// From the fast path to the `csv` reader, at the line the fast path could not split.
    fn hand_over_to_csv_reader(&mut self) {
        if let Source::Fast(fast) = std::mem::replace(&mut self.source, Source::Moving) {
            let (input, prefix, error, line_no) = fast.hand_back();
            self.source = Source::Csv(csv_reader(input, prefix, error, line_no, true));
        }
    }

    /// The key that groups long-format rows into one launch.
    fn group_key(&self) -> String {
        let f = &self.fixed;
        let parts = [f.id, f.pid, f.kernel, f.block, f.grid];
        parts.iter().map(|&c| field(&self.record, c).unwrap_or_default()).collect::<Vec<_>>().join("\u{1f}")
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
        let Some(layout) = self.layout.clone() else { return Ok(None) };
        loop {
            match &mut self.source {
                Source::Fast(fast) => match fast.next()? {
                    chunks::Next::Record(r) => return Ok(Some(r)),
                    chunks::Next::End => return Ok(None),
                    chunks::Next::HandBack => self.hand_over_to_csv_reader(),
                },
                Source::Csv(_) => {
                    if !self.next_row()? {
                        return Ok(None);
                    }
                    return layout.record(&self.record, self.line()).map(Some);
                }
                Source::Moving => return Ok(None),
            }
        }
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
            let Some(name) = field(&self.record, Some(name_col)).map(Cow::into_owned) else {
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
                self.pending = Some((key, launch_of_row(&self.fixed, &self.record, self.line())?));
            }
            if self.keep.wants(&name) {
                let unit = field(&self.record, self.fixed.metric_unit).unwrap_or_default();
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
    use super::Strategy as ReadWith;
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::Strategy;

    const RAW: &[u8] = include_bytes!(
        "../../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv"
    );
    const DETAILS: &[u8] = include_bytes!(
        "../../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_details_base.csv"
    );
    const SUMMARY: &[u8] =
        include_bytes!("../../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_summary_per_kernel.csv");

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

    /// Everything a parse yields, as text: the page, the warnings, each record or error in
    /// order (`{:?}` of an f64 is exact, so equal text is equal output, byte for byte).
    fn outcome(bytes: &[u8], strategy: ReadWith) -> Vec<String> {
        match open_with(bytes, Keep::All, strategy) {
            Err(e) => vec![format!("open: {e:?}")],
            Ok(recs) => {
                let mut v = vec![format!("{:?} {:?}", recs.page, recs.warnings)];
                v.extend(recs.map(|r| format!("{r:?}")));
                v
            }
        }
    }

    /// The fast path, inline and on two threads, with chunks of `chunk` bytes, yields what the
    /// `csv` reader alone yields.
    fn same_as_the_csv_reader(bytes: &[u8], chunk: usize) -> Result<(), TestCaseError> {
        let want = outcome(bytes, ReadWith::Csv);
        for threads in [0, 2] {
            let got = outcome(bytes, ReadWith::Fast { threads, chunk });
            prop_assert_eq!(&got, &want, "threads {}, chunks of {} bytes", threads, chunk);
        }
        Ok(())
    }

    /// A raw page of many rows: the fixture's rows four times over (fresh IDs), and a line of
    /// the program's output and an `==PROF==` line among them.
    fn many_rows() -> Vec<u8> {
        let text = String::from_utf8_lossy(RAW);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| l.starts_with("\"ID\"")).expect("a header");
        let mut out = format!("{}\n{}\n", lines[at], lines[at + 1]);
        for n in 0..4 {
            for (i, row) in lines[at + 2..].iter().filter(|l| l.starts_with('"')).enumerate() {
                let rest = row.split_once("\",\"").map_or("", |(_, r)| r);
                out.push_str(&format!("\"{}\",\"{rest}\n", n * 1000 + i));
                if i == 3 {
                    out.push_str("app output, with \"quotes\n==PROF== Profiling \"k\"\n");
                }
            }
        }
        out.into_bytes()
    }

    /// Every CSV fixture, and each as CRLF, without its last newline, and cut inside its last line.
    #[test]
    fn the_fast_path_reads_every_csv_fixture_as_the_csv_reader_does() {
        let mut files = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut dirs = vec![root];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "csv" || x == "txt" || x == "log") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 20, "{} fixtures", files.len());
        let mut raw_pages = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            if matches!(open(&bytes[..], Keep::All), Ok(r) if r.page == Page::Raw) {
                raw_pages += 1;
            }
            let crlf = String::from_utf8_lossy(&bytes).replace("\r\n", "\n").replace('\n', "\r\n").into_bytes();
            let trimmed = bytes.strip_suffix(b"\n").unwrap_or(&bytes).to_vec();
            let cut = bytes[..bytes.len().saturating_sub(bytes.len().min(37))].to_vec();
            for (what, b) in [("as is", &bytes), ("crlf", &crlf), ("no last newline", &trimmed), ("cut", &cut)] {
                for chunk in [1, 100, 4096, chunks::CHUNK] {
                    if let Err(e) = same_as_the_csv_reader(b, chunk) {
                        panic!("{} ({what}): {e}", f.display());
                    }
                }
            }
        }
        assert!(raw_pages >= 5, "{raw_pages} raw pages among the fixtures");
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
        b"\r",
        b"\"\"\"",
        b" \"",
        b"\",\"",
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
        fn mutated_raw_pages_read_the_same_on_the_fast_path(edits in proptest::collection::vec(edit(), 1..6), chunk in 1usize..3000) {
            same_as_the_csv_reader(&apply(many_rows(), &edits), chunk)?;
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
