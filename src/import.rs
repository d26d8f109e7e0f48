//! Reading what the user points coalprof at: an ncu CSV (any page, any version), an
//! `.ncu-rep`/`.ncu-repz` report (read natively; `ncu --import` for a format version the native
//! reader does not know, or when asked), a `results.json`, or a run folder.
//!
//! [`open_report`] is the one place a report is opened, for every command (`run`'s reports in
//! `measure/` and `lines`' too).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};
use crate::frame::launches::{rows_of, Grouping};
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::parse::csv::{self, Keep, ParseError};
pub(crate) use crate::parse::ncu_rep::Bounds;
use crate::parse::ncu_rep::{self, ReadError, MAGIC, ZSTD_MAGIC};
use crate::parse::LaunchRecord;
use crate::results::{Provenance, Results, Source, SCHEMA};
use crate::tools::ncu::Ncu;
use crate::tools::ToolError;

/// What an input path holds, judged by content, not by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Csv,
    NcuRep,
    ResultsJson,
    RunDir,
}

pub(crate) fn kind(path: &Path) -> Result<Kind> {
    if path == Path::new("-") {
        return Ok(Kind::Csv);
    }
    // By name: a report that is not one (wrong magic, a directory, not zstd) gets the report
    // reader's error, which says what it should have been and where it is not.
    let named_report =
        path.extension().is_some_and(|e| e == "ncu-rep" || e == "ncu-repz" || e == "nsight-cuprof-report");
    if named_report {
        return Ok(Kind::NcuRep);
    }
    if path.is_dir() {
        return Ok(Kind::RunDir);
    }
    let mut head = [0u8; 64];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| Error::input_caused(path, "byte 0: cannot read", e))?;
    let head = &head[..n];
    if head.starts_with(MAGIC) || head.starts_with(ZSTD_MAGIC) {
        return Ok(Kind::NcuRep);
    }
    let text = String::from_utf8_lossy(head);
    if text.trim_start().starts_with('{') && text.contains("\"schema\"") {
        return Ok(Kind::ResultsJson);
    }
    Ok(Kind::Csv)
}

/// How `.ncu-rep` reports are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepReader {
    /// coalprof's own reader; `ncu --import` only for a format version it does not know.
    #[default]
    Native,
    /// `ncu --import R --csv --page raw --print-units base`, always.
    Ncu,
}

/// Finds the ncu to import with, only when one is needed (`analyze` of a report the native
/// reader reads never looks for ncu).
pub(crate) type FindNcu<'a> = &'a dyn Fn() -> std::result::Result<Ncu, ToolError>;

/// How [`open_report`] may read a report.
#[derive(Clone, Copy)]
pub(crate) enum Open<'a> {
    /// The native reader, and `ncu --import` for a format version it does not know (or
    /// always, under [`RepReader::Ncu`]); `ncu` is called only then.
    Fallback { reader: RepReader, ncu: FindNcu<'a> },
    /// The native reader only: for what needs the per-instruction counters, which only it
    /// reads (`lines`).
    NativeOnly,
}

/// An opened report: what it holds, and the rank its file name states ([`rank_of`]).
pub(crate) struct Opened {
    pub content: Content,
    pub rank: Option<u32>,
}

/// A report's launches as one of the two readers gives them.
pub(crate) enum Content {
    /// The native reader's stream (the caller chooses what it keeps of each launch); boxed, as
    /// it is the larger by far of the two.
    Native(Box<ncu_rep::LaunchStream>),
    /// `ncu --import R --csv --page raw --print-units base`'s text, and the ncu that wrote it.
    Csv { text: String, ncu: Ncu },
}

/// Open an `.ncu-rep` report: the one place every command does (natively, within `bounds`,
/// then through the ncu fallback with one warning, as `mode` allows). Errors name the report;
/// a stream's later read errors are the caller's, through [`read_error`].
pub(crate) fn open_report(path: &Path, mode: Open<'_>, bounds: Bounds) -> Result<Opened> {
    let rank = rank_of(path);
    let ncu = match mode {
        Open::Fallback { reader: RepReader::Ncu, ncu } => ncu,
        Open::Fallback { reader: RepReader::Native, ncu } => match ncu_rep::open(path, bounds) {
            Ok(launches) => return Ok(Opened { content: Content::Native(Box::new(launches)), rank }),
            Err(ReadError::UnknownVersion { version }) => {
                crate::messages::warning(format!(
                    "{}: report format version {version} is not one the native reader knows ({}); \
                     reading it with `ncu --import` instead",
                    path.display(),
                    ncu_rep::FORMAT_VERSION
                ));
                ncu
            }
            Err(e) => return Err(read_error(path, e)),
        },
        Open::NativeOnly => {
            let launches = ncu_rep::open(path, bounds).map_err(|e| match e {
                ReadError::UnknownVersion { .. } => {
                    read_error(path, e).with_hint("`lines` reads reports natively only; no ncu fallback")
                }
                e => read_error(path, e),
            })?;
            return Ok(Opened { content: Content::Native(Box::new(launches)), rank });
        }
    };
    let ncu = ncu().map_err(|e| {
        Error::unavailable(
            format!("reading `{}` with `ncu --import` needs ncu: {e}", path.display()),
            "run `coalprof setup ncu` or install Nsight Compute, or export CSV where ncu is \
             (`ncu --import REPORT --csv --page raw --print-units base > report.csv`) and analyze that",
        )
    })?;
    let text = ncu.import_raw(path)?;
    Ok(Opened { content: Content::Csv { text, ncu }, rank })
}

/// The native reader's error on `path` (a bound it ran into says how to lift it).
pub(crate) fn read_error(path: &Path, e: ReadError) -> Error {
    let error = Error::input(path, e.to_string());
    if matches!(e, ReadError::Bound { .. }) {
        return error.with_hint("for a report you trust, `--trust-input` lifts the bounds on what a report may claim");
    }
    error
}

/// How to read reports: the catalogue, grouping, and how to read `.ncu-rep`.
pub(crate) struct Reader<'a> {
    pub catalogue: &'a Catalogue,
    pub derivation: &'a Derivation,
    pub grouping: Grouping,
    pub rep_reader: RepReader,
    /// What a report may claim before it is believed (`--trust-input` lifts it).
    pub bounds: Bounds,
    /// Called only if a report needs ncu; `Err` says why there is none.
    pub ncu: FindNcu<'a>,
}

impl Reader<'_> {
    /// Read one input into results (derived metrics included).
    pub(crate) fn read(&self, path: &Path) -> Result<Results> {
        match kind(path)? {
            Kind::Csv if path == Path::new("-") => self.read_csv(BufReader::new(std::io::stdin().lock()), path, None),
            Kind::Csv => {
                let f = File::open(path).map_err(|e| Error::input_caused(path, "cannot read", e))?;
                // Smaller than the fast path's chunk reads (`parse::csv::chunks`), which then go
                // straight from the file into the chunk instead of through this buffer.
                self.read_csv(BufReader::with_capacity(64 << 10, f), path, rank_of(path))
            }
            Kind::NcuRep => self.read_rep(path),
            Kind::ResultsJson => read_results_json(path),
            Kind::RunDir => read_results_json(&results_file(path)?),
        }
    }

    fn keep(&self) -> Keep {
        Keep::Only(self.catalogue.ncu_names().into_keys().collect())
    }

    /// A report through [`open_report`]: the native reader's launches, or ncu's CSV of it.
    fn read_rep(&self, path: &Path) -> Result<Results> {
        let mode = Open::Fallback { reader: self.rep_reader, ncu: self.ncu };
        let Opened { content, rank } = open_report(path, mode, self.bounds)?;
        let mut launches = match content {
            Content::Native(launches) => (*launches).records_only(self.keep()),
            Content::Csv { text, ncu } => {
                let mut r = self.read_csv(text.as_bytes(), path, rank)?;
                r.provenance.ncu_version = ncu.version().ok();
                return Ok(r);
            }
        };
        let records = launches.by_ref().map(|l| l.map(|l| l.record));
        let mut r = self.results(records, path, rank).map_err(|e| match e {
            RowsError::Read(e) => read_error(path, e),
            RowsError::Other(e) => e,
        })?;
        r.provenance.ncu_version = launches.ncu_version().map(str::to_string);
        Ok(r)
    }

    fn read_csv(&self, input: impl BufRead, path: &Path, rank: Option<u32>) -> Result<Results> {
        let records = csv::open(input, self.keep()).map_err(|e| parse_error(path, e))?;
        for w in &records.warnings {
            crate::messages::warning(format!("{}: {w}", path.display()));
        }
        self.results(records, path, rank).map_err(|e| match e {
            RowsError::Read(e) => parse_error(path, e),
            RowsError::Other(e) => e,
        })
    }

    /// Records (from either parser) → rows ([`rows_of`]: sanity, grouping, derivation) →
    /// results; the first read error ends the records and is the error.
    fn results<E>(
        &self,
        records: impl Iterator<Item = std::result::Result<LaunchRecord, E>>,
        path: &Path,
        rank: Option<u32>,
    ) -> std::result::Result<Results, RowsError<E>> {
        let names = self.catalogue.ncu_names();
        let mut failed = None;
        let records = records.map_while(|r| r.map_err(|e| failed = Some(e)).ok());
        let ranked = records.map(|rec| LaunchRecord { rank, ..rec });
        let made = rows_of(ranked, &names, self.grouping, self.derivation, (Source::Measured, None));
        if let Some(e) = failed {
            return Err(RowsError::Read(e));
        }
        let (rows, notices, facts) = made.map_err(RowsError::Other)?;
        if rows.is_empty() {
            return Err(RowsError::Other(Error::nothing_matched(
                format!("{}: the report holds no kernel launches", path.display()),
                Some("check the profiler's filters (`--kernel`, `--launch-skip`)".into()),
            )));
        }
        let provenance = Provenance {
            coalprof: env!("CARGO_PKG_VERSION").into(),
            backend: crate::results::Backend::Import,
            gpu: facts.gpu,
            compute_capability: facts.cc,
            inputs: vec![path.display().to_string()],
            ..Provenance::default()
        };
        let mut results = Results::new(provenance, rows);
        results.notices = notices;
        Ok(results)
    }
}

/// A parser's error, or one of the steps after it.
enum RowsError<E> {
    Read(E),
    Other(Error),
}

fn parse_error(path: &Path, e: ParseError) -> Error {
    match e {
        ParseError::NoResults { reason, hint } => Error::input(path, reason).with_hint(hint),
        ParseError::Malformed { line, message } => Error::input(path, format!("line {line}: {message}")),
        ParseError::Io(e) => Error::input_caused(path, "cannot read", e),
    }
}

/// The rank a report's file name states: `rank-3.ncu-rep` (what `profile --per-rank` writes),
/// `report.rank_3.ncu-repz` or `rank3.csv`; `None` for any other name.
pub(crate) fn rank_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let digits = name.split('.').filter(|part| !part.is_empty()).find_map(|part| {
        let lower = part.to_ascii_lowercase();
        let at = lower.rfind("rank")?;
        let digits = lower[at + 4..].trim_start_matches(['-', '_']);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.to_string())
    })?;
    digits.parse().ok()
}

/// The `results.json` of a run folder; for a folder of runs (`profiles/`, where `run` saves),
/// the newest run's, saying on stderr which one was taken.
pub(crate) fn results_file(dir: &Path) -> Result<std::path::PathBuf> {
    let own = dir.join("results.json");
    if own.is_file() {
        return Ok(own);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| Error::input_caused(dir, "cannot read the folder", e))?;
    let newest = (entries.flatten())
        .map(|e| e.path().join("results.json"))
        .filter_map(|f| Some((f.metadata().ok()?.modified().ok()?, f)))
        .max();
    match newest {
        Some((_, file)) => {
            let run = file.parent().unwrap_or(dir);
            crate::messages::note(format!(
                "`{}` is a folder of runs: using the newest, `{}`",
                dir.display(),
                run.display()
            ));
            Ok(file)
        }
        None => Err(Error::input(dir, "no results.json here, nor in a run folder inside it")
            .with_hint("give a run folder (`profiles/<run>`) or its results.json")),
    }
}

/// A saved `results.json` (from `run`, `analyze --format json`, or a run folder).
pub(crate) fn read_results_json(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::input_caused(path, "cannot read", e))?;
    let r: Results =
        serde_json::from_str(&text).map_err(|e| Error::input_caused(path, "not a coalprof results file", e))?;
    if r.schema != SCHEMA {
        return Err(Error::input(
            path,
            format!("results schema `{}` is not the `{SCHEMA}` this coalprof reads", r.schema),
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::rank_of;
    use std::path::Path;

    #[test]
    fn a_rank_comes_from_the_file_name_only() {
        let rank = |n: &str| rank_of(Path::new(n));
        assert_eq!(rank("runs/x/rank-3.ncu-rep"), Some(3));
        assert_eq!(rank("report.rank_12.ncu-repz"), Some(12));
        assert_eq!(rank("RANK7.csv"), Some(7));
        assert_eq!(rank("rank-0.ncu-rep"), Some(0));
        for none in ["report.ncu-rep", "rank-.ncu-rep", "rank-x1.ncu-rep", "rank-3/report.ncu-rep", "frank"] {
            assert_eq!(rank(none), None, "{none}");
        }
    }
}
