//! The raw page's fast path: the input read in chunks of whole lines, each chunk's lines split
//! (`split`) and turned into records (`RawLayout::record`, the same code the `csv` reader's
//! rows go through), on worker threads when the machine has cores to spare.
//!
//! Order and errors are the serial reader's: chunks are handed out and taken back in file
//! order, a chunk stops at its first bad row (the records before it are yielded first, then the
//! error), and a line the splitter refuses stops its chunk there: that line, the chunks read
//! past it and the rest of the input go back to the `csv` reader (`Records::hand_over_to_csv_reader`),
//! which reads on from the same line number. Memory is a few chunks in flight, whatever the
//! file's size.

use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::sync::{mpsc, Arc, Mutex};

use super::split::{self, Row, Split};
use super::{ParseError, RawLayout};
use crate::parse::LaunchRecord;

/// Bytes read per chunk: a hundred rows of a wide raw page, so a thread's hand-off (tens of
/// microseconds) costs little next to its work (a few hundred), and the chunks in flight stay
/// a megabyte or two.
pub(super) const CHUNK: usize = 256 << 10;

/// How one chunk ended.
enum Stop {
    /// Every line read.
    End,
    /// A row is broken (its line counted from the chunk's start, until the reader adds the
    /// lines before the chunk).
    Error(ParseError),
    /// The line at this byte offset is not the splitter's: it and all after it go to the
    /// `csv` reader.
    HandBack { at: usize },
}

/// One chunk, parsed.
struct Parsed {
    records: Vec<LaunchRecord>,
    stop: Stop,
    /// Input lines before the stop (for `End`, all of the chunk's; for `Error`, the bad one too).
    lines: u64,
}

/// Split and convert every line of `chunk` (whole lines; the last may lack its newline).
fn parse_chunk(layout: &RawLayout, chunk: &[u8], split: &mut Split) -> Parsed {
    let mut records = Vec::new();
    let (mut pos, mut lines) = (0usize, 0u64);
    while pos < chunk.len() {
        let rest = &chunk[pos..];
        if rest[0] == b'"' {
            let (len, ok) = split::split(rest, split);
            if !ok {
                return Parsed { records, stop: Stop::HandBack { at: pos }, lines };
            }
            lines += 1;
            match layout.record(&split.row(rest), lines) {
                Ok(r) => records.push(r),
                Err(e) => return Parsed { records, stop: Stop::Error(e), lines },
            }
            pos += len;
            continue;
        }
        // Not a row: the program's output or ncu's `==PROF==` lines, dropped as `LineFilter`
        // drops them. A quote after leading blanks is a row the csv reader must read.
        let len = rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |i| i + 1);
        if rest[..len].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'"') {
            return Parsed { records, stop: Stop::HandBack { at: pos }, lines };
        }
        lines += 1;
        pos += len;
    }
    Parsed { records, stop: Stop::End, lines }
}

/// Makes `buf` at least `len` long, zeroing only what is new.
fn grow(buf: &mut Vec<u8>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0);
    }
}

/// A chunk handed out, in file order.
enum InFlight {
    Ready(Arc<Vec<u8>>, Parsed),
    Waiting(Arc<Vec<u8>>, mpsc::Receiver<Parsed>),
    /// Reading failed here; reported when the chunks before it have been yielded.
    Failed(io::Error),
}

struct Job {
    layout: Arc<RawLayout>,
    chunk: Arc<Vec<u8>>,
    reply: mpsc::SyncSender<Parsed>,
}

/// Worker threads taking chunks from one queue. Dropping it closes the queue: each worker
/// finishes the chunk in hand and exits (none is joined, so dropping never waits).
struct Pool {
    jobs: mpsc::SyncSender<Job>,
}

impl Pool {
    /// `threads` workers, or `None` if the system will not start one.
    fn start(threads: usize) -> Option<Pool> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(threads);
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..threads {
            let queue = queue.clone();
            let started = std::thread::Builder::new().name(format!("coalprof-csv-{i}")).spawn(move || {
                let mut split = Split::default();
                loop {
                    let job = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    let parsed = parse_chunk(&job.layout, &job.chunk, &mut split);
                    let _ = job.reply.send(parsed); // the reader may have stopped; fine
                }
            });
            if started.is_err() && i == 0 {
                return None;
            }
        }
        Some(Pool { jobs })
    }
}

/// What the first data line after the header was.
pub(super) enum First<T> {
    /// The units row, read.
    Layout(T),
    /// The input ends first.
    End,
    /// A line for the `csv` reader (`Fast::hand_back` gives it back).
    HandBack,
}

/// What `Fast::next` has.
#[allow(clippy::large_enum_variant)] // a record moves out of it once; boxing would allocate once a record
pub(super) enum Next {
    Record(LaunchRecord),
    End,
    /// The `csv` reader takes over from here (`Fast::hand_back`).
    HandBack,
}

/// The fast path's state: the input, what was read of it, the chunks in flight.
pub(super) struct Fast<R> {
    input: R,
    /// The start of a line read past the last chunk's end.
    tail: Vec<u8>,
    eof: bool,
    /// Input lines before the chunk being yielded (1-based line numbers count from here).
    base: u64,
    threads: usize,
    chunk: usize,
    pool: Option<Pool>,
    layout: Option<Arc<RawLayout>>,
    inflight: VecDeque<InFlight>,
    /// The chunk being yielded, its records, and how it ended.
    current: Option<Arc<Vec<u8>>>,
    records: std::vec::IntoIter<LaunchRecord>,
    stop: Option<Stop>,
    /// Where the `csv` reader takes over: the line's offset in `current`.
    hand_back_at: Option<usize>,
    split: Split,
    /// Chunk buffers done with, to read into again: a fresh megabyte a chunk would be zeroed
    /// pages from the kernel each time.
    free: Vec<Vec<u8>>,
}

impl<R: BufRead> Fast<R> {
    /// After the header (its line and those before it: `line_no`).
    pub(super) fn new(input: R, line_no: u64, threads: usize, chunk: usize) -> Fast<R> {
        Fast {
            input,
            tail: Vec::new(),
            eof: false,
            base: line_no,
            threads,
            chunk: chunk.max(1),
            pool: None,
            layout: None,
            inflight: VecDeque::new(),
            current: None,
            records: Vec::new().into_iter(),
            stop: None,
            hand_back_at: None,
            split: Split::default(),
            free: Vec::new(),
        }
    }

    /// Read up to the first data line and give it to `read` (the units row), as the `csv`
    /// reader would see it; lines before it are dropped as `LineFilter` drops them.
    pub(super) fn first_row<T>(
        &mut self,
        read: impl FnOnce(&Row<'_>, u64) -> Result<T, ParseError>,
    ) -> Result<First<T>, ParseError> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if self.input.read_until(b'\n', &mut line)? == 0 {
                self.eof = true;
                return Ok(First::End);
            }
            match line.iter().position(|b| !b.is_ascii_whitespace()) {
                None => {}
                Some(0) if line[0] == b'"' => {
                    let (_, ok) = split::split(&line, &mut self.split);
                    if !ok {
                        self.tail = line;
                        self.hand_back_at = Some(0);
                        return Ok(First::HandBack);
                    }
                    self.base += 1;
                    return read(&self.split.row(&line), self.base).map(First::Layout);
                }
                Some(i) if line[i] == b'"' => {
                    self.tail = line;
                    self.hand_back_at = Some(0);
                    return Ok(First::HandBack);
                }
                Some(_) => {}
            }
            self.base += 1;
        }
    }

    /// The units row is in: rows may now be read, with these columns.
    pub(super) fn start(&mut self, layout: Arc<RawLayout>) {
        self.layout = Some(layout);
    }

    /// The next record, the end, or the hand-over to the `csv` reader.
    pub(super) fn next(&mut self) -> Result<Next, ParseError> {
        loop {
            if let Some(r) = self.records.next() {
                return Ok(Next::Record(r));
            }
            match self.stop.take() {
                Some(Stop::Error(e)) => return Err(e),
                Some(Stop::HandBack { at }) => {
                    self.hand_back_at = Some(at);
                    return Ok(Next::HandBack);
                }
                Some(Stop::End) | None => {}
            }
            self.fill();
            let Some(front) = self.inflight.pop_front() else { return Ok(Next::End) };
            let (chunk, parsed) = match front {
                InFlight::Ready(c, p) => (c, p),
                InFlight::Waiting(c, rx) => match rx.recv() {
                    Ok(p) => (c, p),
                    Err(_) => return Err(ParseError::Io(io::Error::other("a parsing thread stopped"))),
                },
                InFlight::Failed(e) => return Err(ParseError::Io(e)),
            };
            let stop = match parsed.stop {
                Stop::Error(ParseError::Malformed { line, message }) => {
                    Stop::Error(ParseError::Malformed { line: self.base + line, message })
                }
                s => s,
            };
            self.base += parsed.lines;
            if let Some(done) = self.current.replace(chunk).and_then(|c| Arc::try_unwrap(c).ok()) {
                if self.free.len() < 2 {
                    self.free.push(done);
                }
            }
            self.records = parsed.records.into_iter();
            self.stop = Some(stop);
        }
    }

    /// Read and hand out chunks until enough are in flight (one when parsing inline).
    fn fill(&mut self) {
        let Some(layout) = self.layout.clone() else { return };
        let depth = (2 * self.threads).max(1);
        while self.inflight.len() < depth {
            let chunk = match self.read_chunk() {
                Ok(Some(c)) => Arc::new(c),
                Ok(None) => return,
                Err(e) => {
                    self.inflight.push_back(InFlight::Failed(e));
                    self.eof = true;
                    self.tail.clear();
                    return;
                }
            };
            // A report read in one chunk is parsed inline: no thread starts for a small file.
            let last = self.eof && self.tail.is_empty();
            if self.pool.is_none() && self.threads > 0 && !(last && self.inflight.is_empty()) {
                self.pool = Pool::start(self.threads);
                if self.pool.is_none() {
                    self.threads = 0;
                }
            }
            match &self.pool {
                Some(pool) => {
                    let (reply, rx) = mpsc::sync_channel(1);
                    let job = Job { layout: layout.clone(), chunk: chunk.clone(), reply };
                    if pool.jobs.send(job).is_err() {
                        let parsed = parse_chunk(&layout, &chunk, &mut self.split);
                        self.inflight.push_back(InFlight::Ready(chunk, parsed));
                    } else {
                        self.inflight.push_back(InFlight::Waiting(chunk, rx));
                    }
                }
                None => {
                    let parsed = parse_chunk(&layout, &chunk, &mut self.split);
                    self.inflight.push_back(InFlight::Ready(chunk, parsed));
                    return;
                }
            }
        }
    }

    /// The next chunk of whole lines (the input's last line may lack its newline).
    ///
    /// Reads go straight into the chunk, `chunk` bytes at a time (the caller's `BufReader` is
    /// smaller, so it passes them through): through `read_to_end` on a larger one they were
    /// copied once more out of its buffer (`docs/performance.md`, "CSV: what 8x pandas would
    /// take"). A reused buffer keeps its length, so only bytes it never had are zeroed.
    fn read_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut buf = self.free.pop().unwrap_or_default();
        let mut len = self.tail.len();
        grow(&mut buf, len);
        buf[..len].copy_from_slice(&self.tail);
        self.tail.clear();
        while !self.eof {
            grow(&mut buf, len + self.chunk);
            let got = match self.input.read(&mut buf[len..len + self.chunk]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let read = len..len + got;
            len += got;
            if let Some(nl) = buf[read.clone()].iter().rposition(|&b| b == b'\n') {
                let end = read.start + nl + 1;
                self.tail.extend_from_slice(&buf[end..len]);
                len = end;
                break;
            }
        }
        buf.truncate(len);
        Ok((!buf.is_empty()).then_some(buf))
    }

    /// Stop: the input, what was read of it from the refused line on (that line, the chunks
    /// read past it, the partial line after them), a read error met past them (the `csv`
    /// reader meets it there in turn), and the lines before that line.
    pub(super) fn hand_back(mut self) -> (R, Vec<u8>, Option<io::Error>, u64) {
        let mut prefix = Vec::new();
        if let (Some(chunk), Some(at)) = (&self.current, self.hand_back_at) {
            prefix.extend_from_slice(&chunk[at..]);
        }
        for f in self.inflight.drain(..) {
            match f {
                InFlight::Ready(c, _) | InFlight::Waiting(c, _) => prefix.extend_from_slice(&c),
                InFlight::Failed(e) => return (self.input, prefix, Some(e), self.base),
            }
        }
        prefix.append(&mut self.tail);
        (self.input, prefix, None, self.base)
    }
}
