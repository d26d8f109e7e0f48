//! Native reader of Nsight Compute reports (`.ncu-rep`, and `.ncu-repz` = the same, zstd'd):
//! no ncu needed, any ncu version that writes format version 7 (2019–2025 tested).
//!
//! [`open`] streams a report's launches one at a time as [`NativeLaunch`]es: the same
//! [`LaunchRecord`] the CSV parser yields for `ncu --import R --csv --page raw --print-units base`,
//! plus the launch's [`SourceCounters`] (per-instruction counters, cubin, embedded sources).
//! [`read_launches`] collects them. Blocks are read header first, then payload items one at a
//! time, so memory holds one item (and the modules later results refer to), never the file.
//!
//! The layout and field numbers are in `docs/ncu-rep-format.md`; `framing` reads the
//! container, `messages` declares the protobuf fields read, `records` builds the records,
//! [`units`] gives each metric the unit ncu prints for it (the file stores bare numbers).

mod framing;
mod messages;
mod records;
#[cfg(test)]
mod tests;
pub mod units;

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use self::framing::Framing;
use self::messages::{BlockHeader, FileHeader, ProfileResult, ProfileResultLean, SourceData};
use self::records::{Context, Module, Name};
use super::csv::Keep;
use super::{LaunchRecord, SourceCounters};

pub use self::framing::{MAGIC, ZSTD_MAGIC};

/// The only report format version this reader knows; any other goes to `ncu --import`.
pub const FORMAT_VERSION: u32 = 7;

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

    fn decompressed(self, yes: bool) -> ReadError {
        match self {
            ReadError::Malformed { offset, message, .. } => ReadError::Malformed { offset, message, decompressed: yes },
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

/// Read every launch of the report at `path`.
pub fn read_launches(path: &Path) -> Result<Report, ReadError> {
    let mut it = open(path)?;
    let launches = it.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Report { ncu_version: it.ncu_version().map(str::to_string), launches })
}

/// Open a report and check its header; the launches then stream from the iterator.
pub fn open(path: &Path) -> Result<Launches, ReadError> {
    Launches::new(Framing::open(path)?)
}

/// Open a report held in memory (tests, fuzzing).
pub fn from_bytes(bytes: Vec<u8>) -> Result<Launches, ReadError> {
    Launches::new(Framing::from_bytes(bytes)?)
}

/// A result waiting for names a later block's string table adds.
struct Pending {
    result: ProfileResult,
    ctx: Context,
    offset: u64,
}

/// The launches of one report, in file order. After an error it yields nothing more.
pub struct Launches {
    framing: Framing,
    /// The cumulative string table: indices count from the first block of the file.
    names: Vec<Name>,
    /// Records only (see [`Launches::records_only`]): metrics filtered, no source counters.
    keep: Option<Keep>,
    /// With `keep`: the source counters all the same (see [`Launches::source_counters_only`]).
    instanced: bool,
    modules: HashMap<u64, Module>,
    pending: VecDeque<Pending>,
    process: Option<String>,
    ncu_version: Option<String>,
    next_id: u64,
    at_end: bool,
    failed: bool,
}

impl Launches {
    fn new(mut framing: Framing) -> Result<Launches, ReadError> {
        let compressed = framing.compressed;
        let header: FileHeader = framing.message("the file header").map_err(|e| e.decompressed(compressed))?;
        if header.version != FORMAT_VERSION {
            return Err(ReadError::UnknownVersion { version: header.version });
        }
        Ok(Launches {
            framing,
            names: Vec::new(),
            keep: None,
            instanced: false,
            modules: HashMap::new(),
            pending: VecDeque::new(),
            process: None,
            ncu_version: None,
            next_id: 0,
            at_end: false,
            failed: false,
        })
    }

    /// Yield only the launch records, with only the metrics `keep` wants: the instanced values
    /// and the modules are skipped undecoded (`source` is then empty). What `analyze` reads.
    pub fn records_only(mut self, keep: Keep) -> Launches {
        self.keep = Some(keep);
        self
    }

    /// Yield the launch records with only the metrics `keep` wants, and every launch's source
    /// counters (the modules, and the instances of the per-instruction metrics in
    /// [`crate::parse::source_metrics`]): what the per-line sums read, without turning the
    /// hundreds of other metrics of each launch, or their instances, into values.
    pub fn source_counters_only(mut self, keep: Keep) -> Launches {
        self.keep = Some(keep);
        self.instanced = true;
        self
    }

    /// The ncu that wrote the report, once the block that says so has been read (all of them
    /// have been when the iterator is exhausted).
    pub fn ncu_version(&self) -> Option<&str> {
        self.ncu_version.as_deref()
    }

    /// Read one block: its header, then each payload item.
    fn read_block(&mut self) -> Result<bool, ReadError> {
        let start = self.framing.offset();
        let Some(len) = self.framing.length("a block header")? else {
            return Ok(false);
        };
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
        let payload_start = self.framing.offset();
        let payload_end = payload_start + u64::from(h.payload_size);
        let items = [(h.num_sources, "a source"), (h.num_results, "a result"), (h.num_range_results, "a range result")];
        for (count, what) in items {
            for i in 0..count {
                let at = self.framing.offset();
                if at >= payload_end {
                    return Err(ReadError::at(
                        start,
                        format!(
                            "the block header promises {count} × {what}, but its {}-byte payload ends after {i}",
                            h.payload_size
                        ),
                    ));
                }
                let len = self.framing.required_length(what)?;
                if self.framing.offset() + u64::from(len) > payload_end {
                    return Err(ReadError::at(
                        at,
                        format!("{what} of {len} bytes runs past the end of its block's payload"),
                    ));
                }
                match what {
                    "a source" if self.keep.is_some() && !self.instanced => self.framing.skip(u64::from(len), what)?,
                    "a source" => {
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
                    "a result" => {
                        let result: ProfileResult = match (&self.keep, self.instanced) {
                            (None, _) => self.framing.message_of_len(len, what)?,
                            (Some(_), false) => self.framing.message_of_len::<ProfileResultLean>(len, what)?.into(),
                            // Instances only of what the source counters read; a name a later
                            // string table adds is not known yet, so its instances are kept
                            // (`records::convert` drops them if unwanted).
                            (Some(_), true) => {
                                let names = &self.names;
                                let wanted = |id: u32| names.get(id as usize).is_none_or(|n| n.instanced);
                                self.framing.decoded(len, what, |b| messages::decode_result(b, wanted))?
                            }
                        };
                        let ctx = Context { id: self.next_id, process: self.process.clone() };
                        self.next_id += 1;
                        self.pending.push_back(Pending { result, ctx, offset: at });
                    }
                    _ => self.framing.skip(u64::from(len), what)?,
                }
            }
        }
        // Items a newer ncu may add after the known ones: skipped, not misread.
        let rest = payload_end.saturating_sub(self.framing.offset());
        if rest > 0 {
            self.framing.skip(rest, "the rest of a block's payload")?;
        }
        Ok(true)
    }

    /// The first pending result, if the string table already names all its metrics (or, at
    /// the end of the file, an error if it never will).
    fn ready(&mut self) -> Option<Result<NativeLaunch, ReadError>> {
        let front = self.pending.front()?;
        let max = records::max_name_id(&front.result);
        if max.is_some_and(|m| m as usize >= self.names.len()) {
            if !self.at_end {
                return None;
            }
            let (offset, max) = (front.offset, max.unwrap_or_default());
            return Some(Err(ReadError::at(
                offset,
                format!(
                    "a result names metric #{max}, but the report's string table has only {} names",
                    self.names.len()
                ),
            )));
        }
        let p = self.pending.pop_front()?;
        let (record, source) = records::convert(p.result, &self.names, p.ctx, &self.modules, self.instanced);
        Some(Ok(NativeLaunch { record, source }))
    }
}

impl Iterator for Launches {
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
            match self.read_block() {
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
