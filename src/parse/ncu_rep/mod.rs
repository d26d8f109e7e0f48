//! Native reader of Nsight Compute reports (`.ncu-rep`, and `.ncu-repz` = the same, zstd'd):
//! no ncu needed, any ncu version that writes format version 7 (2019–2025 tested).
//!
//! [`open`] streams a report's launches one at a time as [`NativeLaunch`]es: the same
//! [`LaunchRecord`] the CSV parser yields for `ncu --import R --csv --page raw --print-units base`,
//! plus the launch's [`SourceCounters`] (per-instruction counters, cubin, embedded sources).
//! [`read_launches`] collects them. Blocks are read header first, then payload items one at a
//! time, each launch yielded as soon as its item is read (and its metrics' names are known), so
//! memory holds one item (and the modules later results refer to), never the file nor a block.
//!
//! A report is input from whoever made it. Under [`Bounds::Untrusted`] (the default) what it
//! claims is bounded before it is believed: one result item at most [`MAX_RESULT`] bytes, one
//! module or block header at most [`MAX_MODULE`], results waiting for names a later string table
//! adds at most [`MAX_PENDING`] bytes, a compressed report at most [`MAX_EXPANSION`] times its
//! size decompressed; every real report stays far inside (the constants say by how much).
//! A result without a kernel name, a grid or metrics is not one ncu writes: an error, not a row.
//!
//! The layout and field numbers are in `docs/ncu-rep-format.md`; `framing` reads the
//! container, `proto` declares the protobuf fields read, `records` builds the records,
//! [`units`] gives each metric the unit ncu prints for it (the file stores bare numbers).

mod framing;
mod proto;
mod records;
#[cfg(test)]
mod tests;
pub mod units;

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use self::framing::Framing;
use self::proto::{BlockHeader, FileHeader, ProfileResult, ProfileResultLean, SourceData};
use self::records::{Context, Module, Name};
use super::csv::Keep;
use super::{LaunchRecord, SourceCounters};

pub use self::framing::{EXPANSION_FLOOR, MAGIC, MAX_EXPANSION, ZSTD_MAGIC};

/// The only report format version this reader knows; any other goes to `ncu --import`.
pub const FORMAT_VERSION: u32 = 7;

/// The largest result item read untrusted: one launch's metrics and instances. The largest in
/// the fixtures is 0.97 MB (a CUTLASS launch with source counters); sixteen times that, rounded.
pub const MAX_RESULT: u32 = 16 << 20;
/// The largest module (a cubin with its sources) or block header read untrusted. The largest
/// module in the fixtures is 2.5 MB; a cubin of many kernels can be tens of megabytes.
pub const MAX_MODULE: u32 = 256 << 20;
/// The most result bytes held while they wait for metric names a later block adds. ncu names a
/// result's metrics in its own block or the next, so at most one result waits.
pub const MAX_PENDING: u64 = 4 * MAX_RESULT as u64;

/// Whether the bounds on what a report claims apply ([`MAX_RESULT`], [`MAX_MODULE`],
/// [`MAX_PENDING`], [`MAX_EXPANSION`]): on by default, since a report is whoever-made-it's input
/// (a pull request's, for `check`); `--trust-input` lifts them for a trusted oversized report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bounds {
    /// Every bound applies.
    #[default]
    Untrusted,
    /// None applies: memory and time follow what the report claims.
    Lifted,
}

/// Why a report could not be read. `offset` is where the bad length or message starts (in the
/// decompressed stream for `.ncu-repz`).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes at `offset` are not what the format says they must be.
    #[error("{}byte {offset}: {message}", if *.decompressed { "decompressed " } else { "" })]
    Malformed {
        /// Where the bad length or message starts.
        offset: u64,
        /// What is wrong there.
        message: String,
        /// Whether `offset` counts in the decompressed stream (`.ncu-repz`).
        decompressed: bool,
    },
    /// The report claims more than [`Bounds::Untrusted`] reads (`--trust-input` lifts it).
    #[error("{}byte {offset}: {message}", if *.decompressed { "decompressed " } else { "" })]
    Bound {
        /// Where the claim is.
        offset: u64,
        /// What it claims, against which bound.
        message: String,
        /// Whether `offset` counts in the decompressed stream (`.ncu-repz`).
        decompressed: bool,
    },
    /// A format version other than [`FORMAT_VERSION`]: not an error of the file, a reason to
    /// fall back to ncu.
    #[error("report format version {version}, which the native reader does not know (it reads {FORMAT_VERSION})")]
    UnknownVersion {
        /// The version the file states.
        version: u32,
    },
}

impl ReadError {
    pub(crate) fn at(offset: u64, message: impl Into<String>) -> ReadError {
        ReadError::Malformed { offset, message: message.into(), decompressed: false }
    }

    fn bound(offset: u64, message: impl Into<String>) -> ReadError {
        ReadError::Bound { offset, message: message.into(), decompressed: false }
    }

    fn decompressed(self, yes: bool) -> ReadError {
        match self {
            ReadError::Malformed { offset, message, .. } => ReadError::Malformed { offset, message, decompressed: yes },
            ReadError::Bound { offset, message, .. } => ReadError::Bound { offset, message, decompressed: yes },
            e => e,
        }
    }
}

/// One launch as the native reader sees it.
#[derive(Debug, Clone)]
pub struct NativeLaunch {
    /// Its launch record, as the CSV readers make them.
    pub record: LaunchRecord,
    /// Its per-instruction counters (SourceCounters section), if collected.
    pub source: SourceCounters,
}

/// A whole report, read.
#[derive(Debug, Clone)]
pub struct Report {
    /// The ncu that wrote it (`2024.3.2.0`), from the report's `Nsight Compute Target` entry;
    /// `None` for 2019 reports, which do not say.
    pub ncu_version: Option<String>,
    /// Every launch, in report order.
    pub launches: Vec<NativeLaunch>,
}

/// Read every launch of the report at `path` (untrusted: within [`Bounds::Untrusted`]).
pub fn read_launches(path: &Path) -> Result<Report, ReadError> {
    let mut it = open(path, Bounds::Untrusted)?;
    let launches = it.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Report { ncu_version: it.ncu_version().map(str::to_string), launches })
}

/// Open a report and check its header; the launches then stream from the iterator, read
/// within `bounds`.
pub fn open(path: &Path, bounds: Bounds) -> Result<LaunchStream, ReadError> {
    LaunchStream::new(Framing::open(path, bounds)?, bounds)
}

/// Open a report held in memory (tests, fuzzing), untrusted.
pub fn from_bytes(bytes: Vec<u8>) -> Result<LaunchStream, ReadError> {
    LaunchStream::new(Framing::from_bytes(bytes)?, Bounds::Untrusted)
}

/// A result waiting for names a later block's string table adds.
struct Pending {
    result: ProfileResult,
    ctx: Context,
    offset: u64,
    /// Its item's size in the file (what [`MAX_PENDING`] counts).
    len: u32,
}

/// What a block's payload holds, in the order it holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Source,
    Result,
    RangeResult,
}

impl Item {
    fn what(self) -> &'static str {
        match self {
            Item::Source => "a source",
            Item::Result => "a result",
            Item::RangeResult => "a range result",
        }
    }
}

/// The block being read: where it started and ends, and which of its items come next.
struct Block {
    start: u64,
    payload_size: u32,
    payload_end: u64,
    /// Each kind of item and how many the header promises, in payload order.
    items: [(Item, u32); 3],
    /// The kind being read (an index into `items`) and how many of it are read.
    kind: usize,
    done: u32,
}

/// The launches of one report, in file order. After an error it yields nothing more.
pub struct LaunchStream {
    framing: Framing,
    /// The cumulative string table: indices count from the first block of the file.
    names: Vec<Name>,
    /// Records only (see [`LaunchStream::records_only`]): metrics filtered, no source counters.
    keep: Option<Keep>,
    /// With `keep`: the source counters all the same (see [`LaunchStream::source_counters_only`]).
    instanced: bool,
    modules: HashMap<u64, Module>,
    bounds: Bounds,
    /// The block whose items are being read, if one is.
    block: Option<Block>,
    pending: VecDeque<Pending>,
    /// The item bytes of the results in `pending`.
    pending_bytes: u64,
    process: Option<String>,
    ncu_version: Option<String>,
    next_id: u64,
    at_end: bool,
    failed: bool,
}

impl LaunchStream {
    fn new(mut framing: Framing, bounds: Bounds) -> Result<LaunchStream, ReadError> {
        let compressed = framing.compressed;
        let header: FileHeader = framing.message("the file header").map_err(|e| e.decompressed(compressed))?;
        if header.version != FORMAT_VERSION {
            return Err(ReadError::UnknownVersion { version: header.version });
        }
        Ok(LaunchStream {
            framing,
            names: Vec::new(),
            keep: None,
            instanced: false,
            modules: HashMap::new(),
            bounds,
            block: None,
            pending: VecDeque::new(),
            pending_bytes: 0,
            process: None,
            ncu_version: None,
            next_id: 0,
            at_end: false,
            failed: false,
        })
    }

    /// Yield only the launch records, with only the metrics `keep` wants: the instanced values
    /// and the modules are skipped undecoded (`source` is then empty). What `analyze` reads.
    pub fn records_only(mut self, keep: Keep) -> LaunchStream {
        self.keep = Some(keep);
        self
    }

    /// Yield the launch records with only the metrics `keep` wants, and every launch's source
    /// counters (the modules, and the instances of the per-instruction metrics in
    /// [`crate::parse::source_metrics`]): what the per-line sums read, without turning the
    /// hundreds of other metrics of each launch, or their instances, into values.
    pub fn source_counters_only(mut self, keep: Keep) -> LaunchStream {
        self.keep = Some(keep);
        self.instanced = true;
        self
    }

    /// The ncu that wrote the report, once the block that says so has been read (all of them
    /// have been when the iterator is exhausted).
    pub fn ncu_version(&self) -> Option<&str> {
        self.ncu_version.as_deref()
    }

    /// `Err` if a `len`-byte `what` at `at` is more than `cap` allows untrusted. A length past
    /// the end of a plain file passes here: the read then says so, which is the truer error.
    fn within(&self, len: u32, cap: u32, what: &str, at: u64) -> Result<(), ReadError> {
        if self.bounds == Bounds::Untrusted && len > cap && !self.framing.past_end(len) {
            return Err(ReadError::bound(
                at,
                format!(
                    "{what} claims {len} bytes, over the {} MiB bound for one (real ones stay far below)",
                    cap >> 20
                ),
            ));
        }
        Ok(())
    }

    /// Read one step: the next block's header, or the next item of the block being read (or,
    /// after its last, the rest of its payload). `Ok(false)` at the clean end of the file.
    fn step(&mut self) -> Result<bool, ReadError> {
        let Some(block) = self.block.as_mut() else {
            return self.read_block_header();
        };
        while block.kind < block.items.len() && block.done == block.items[block.kind].1 {
            block.kind += 1;
            block.done = 0;
        }
        let (start, payload_end, payload_size) = (block.start, block.payload_end, block.payload_size);
        let Some(&(item, count)) = block.items.get(block.kind) else {
            // Items a newer ncu may add after the known ones: skipped, not misread.
            self.block = None;
            let rest = payload_end.saturating_sub(self.framing.offset());
            if rest > 0 {
                self.framing.skip(rest, "the rest of a block's payload")?;
            }
            return Ok(true);
        };
        let (i, what) = (block.done, item.what());
        block.done += 1;
        let at = self.framing.offset();
        if at >= payload_end {
            return Err(ReadError::at(
                start,
                format!(
                    "the block header promises {count} × {what}, but its {payload_size}-byte payload ends after {i}"
                ),
            ));
        }
        let len = self.framing.required_length(what)?;
        if self.framing.offset() + u64::from(len) > payload_end {
            return Err(ReadError::at(at, format!("{what} of {len} bytes runs past the end of its block's payload")));
        }
        match item {
            Item::Source if self.keep.is_some() && !self.instanced => self.framing.skip(u64::from(len), what)?,
            Item::Source => {
                self.within(len, MAX_MODULE, what, at)?;
                let s: SourceData = self.framing.message_of_len(len, what)?;
                let reference = s.reference;
                let m = Module::from_source(s);
                let entry = self.modules.entry(reference).or_default();
                if m.cubin.is_some() {
                    entry.cubin = m.cubin;
                }
                if !m.sources.is_empty() {
                    entry.sources = m.sources;
                }
                entry.sm_revision = m.sm_revision.or(entry.sm_revision);
            }
            Item::Result => {
                self.within(len, MAX_RESULT, what, at)?;
                let result: ProfileResult = match (&self.keep, self.instanced) {
                    (None, _) => self.framing.message_of_len(len, what)?,
                    (Some(_), false) => self.framing.message_of_len::<ProfileResultLean>(len, what)?.into(),
                    // Instances only of what the source counters read; a name a later
                    // string table adds is not known yet, so its instances are kept
                    // (`records::convert` drops them if unwanted).
                    (Some(_), true) => {
                        let names = &self.names;
                        let wanted = |id: u32| names.get(id as usize).is_none_or(|n| n.instanced);
                        self.framing.decoded(len, what, |b| proto::decode_result(b, wanted))?
                    }
                };
                if let Some(missing) = records::missing(&result) {
                    return Err(ReadError::at(
                        at,
                        format!(
                            "a result with no {missing}: ncu writes a kernel name, a grid and metrics for every launch"
                        ),
                    ));
                }
                let ctx = Context { id: self.next_id, process: self.process.clone() };
                self.next_id += 1;
                self.pending_bytes += u64::from(len);
                self.pending.push_back(Pending { result, ctx, offset: at, len });
                if self.bounds == Bounds::Untrusted && self.pending_bytes > MAX_PENDING && self.waits_for().is_some() {
                    return Err(ReadError::bound(
                        at,
                        format!(
                            "{} results ({} bytes) wait for metric names no string table has given yet, more than \
                             the {} MiB a real report holds back",
                            self.pending.len(),
                            self.pending_bytes,
                            MAX_PENDING >> 20
                        ),
                    ));
                }
            }
            Item::RangeResult => self.framing.skip(u64::from(len), what)?,
        }
        Ok(true)
    }

    /// Read a block's header (its string table, session, process), and start on its items.
    fn read_block_header(&mut self) -> Result<bool, ReadError> {
        let start = self.framing.offset();
        let Some(len) = self.framing.length("a block header")? else {
            return Ok(false);
        };
        self.within(len, MAX_MODULE, "a block header", self.framing.offset())?;
        let h: BlockHeader = self.framing.message_of_len(len, "a block header")?;
        if let Some(t) = h.string_table {
            let keep = self.keep.as_ref();
            self.names.extend(t.strings.into_iter().map(|n| Name::new(n, keep)));
        }
        for v in h.session_details.iter().flat_map(|s| &s.version_info) {
            if v.provider == "Nsight Compute Target"
                || (self.ncu_version.is_none() && v.provider.contains("Nsight Compute"))
            {
                self.ncu_version = v.version.split_whitespace().next().map(str::to_string);
            }
        }
        if let Some(p) = &h.process {
            self.process = records::process_label(p.id, &p.name);
        }
        let payload_end = self.framing.offset() + u64::from(h.payload_size);
        self.block = Some(Block {
            start,
            payload_size: h.payload_size,
            payload_end,
            items: [
                (Item::Source, h.num_sources),
                (Item::Result, h.num_results),
                (Item::RangeResult, h.num_range_results),
            ],
            kind: 0,
            done: 0,
        });
        Ok(true)
    }

    /// The metric-name index the first pending result waits for, if the string table is not
    /// that long yet.
    fn waits_for(&self) -> Option<u32> {
        let max = records::max_name_id(&self.pending.front()?.result)?;
        (max as usize >= self.names.len()).then_some(max)
    }

    /// The first pending result, if the string table already names all its metrics (or, at
    /// the end of the file, an error if it never will).
    fn ready(&mut self) -> Option<Result<NativeLaunch, ReadError>> {
        let front = self.pending.front()?;
        if let Some(max) = self.waits_for() {
            if !self.at_end {
                return None;
            }
            return Some(Err(ReadError::at(
                front.offset,
                format!(
                    "a result names metric #{max}, but the report's string table has only {} names",
                    self.names.len()
                ),
            )));
        }
        let p = self.pending.pop_front()?;
        self.pending_bytes -= u64::from(p.len);
        let (record, source) = records::convert(p.result, &self.names, p.ctx, &self.modules, self.instanced);
        Some(Ok(NativeLaunch { record, source }))
    }
}

impl Iterator for LaunchStream {
    type Item = Result<NativeLaunch, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(r) = self.ready() {
                self.failed = r.is_err();
                return Some(r.map_err(|e| e.decompressed(self.framing.compressed)));
            }
            if self.at_end {
                return None;
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => self.at_end = true,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.decompressed(self.framing.compressed)));
                }
            }
        }
    }
}
