//! Reading what the user points coalprof at: an ncu CSV (any page, any version), an
//! `.ncu-rep` report (rendered through `ncu --import`), a `results.json`, or a run folder.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};
use crate::frame::launches::{Grouping, Launches};
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::report::csv::{self, Keep, ParseError};
use crate::results::{Provenance, Results, Source, SCHEMA};
use crate::tools::ncu::Ncu;
use crate::tools::ToolError;

/// What an input path holds, judged by content, not by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Csv,
    NcuRep,
    ResultsJson,
    RunDir,
}

/// The magic bytes every `.ncu-rep` (and 2019 `.nsight-cuprof-report`) starts with.
const NCU_REP_MAGIC: &[u8; 4] = b"NVR\0";

pub fn kind(path: &Path) -> Result<Kind> {
    if path == Path::new("-") {
        return Ok(Kind::Csv);
    }
    if path.is_dir() {
        return Ok(Kind::RunDir);
    }
    let mut head = [0u8; 64];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let head = &head[..n];
    if head.starts_with(NCU_REP_MAGIC) {
        return Ok(Kind::NcuRep);
    }
    let text = String::from_utf8_lossy(head);
    if text.trim_start().starts_with('{') && text.contains("\"schema\"") {
        return Ok(Kind::ResultsJson);
    }
    Ok(Kind::Csv)
}

/// How to read reports: the catalogue, grouping, and the ncu to import `.ncu-rep` with.
pub struct Reader<'a> {
    pub catalogue: &'a Catalogue,
    pub derivation: &'a Derivation,
    pub grouping: Grouping,
    /// `Err` holds why no ncu is available: only reported if a `.ncu-rep` needs it.
    pub ncu: std::result::Result<Ncu, ToolError>,
}

impl Reader<'_> {
    /// Read one input into results (derived metrics included).
    pub fn read(&self, path: &Path) -> Result<Results> {
        match kind(path)? {
            Kind::Csv if path == Path::new("-") => self.read_csv(BufReader::new(std::io::stdin().lock()), path),
            Kind::Csv => {
                let f = File::open(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
                self.read_csv(BufReader::with_capacity(1 << 20, f), path)
            }
            Kind::NcuRep => {
                let ncu = self.ncu.as_ref().map_err(|e| {
                    Error::unavailable(
                        format!("`{}` is an .ncu-rep report and reading it needs ncu: {e}", path.display()),
                        "install Nsight Compute or run `scripts/install-tools.sh`, or export CSV where ncu is \
                         (`ncu --import REPORT --csv --page raw --print-units base > report.csv`) and analyze that",
                    )
                })?;
                let csv_text = ncu.import_raw(path)?;
                let mut r = self.read_csv(csv_text.as_bytes(), path)?;
                r.provenance.ncu_version = ncu.version().ok();
                Ok(r)
            }
            Kind::ResultsJson => read_results_json(path),
            Kind::RunDir => read_results_json(&path.join("results.json")),
        }
    }

    fn read_csv(&self, input: impl BufRead, path: &Path) -> Result<Results> {
        let names = self.catalogue.ncu_names();
        let keep = Keep::Only(names.keys().cloned().collect());
        let records = csv::open(input, keep).map_err(|e| parse_error(path, e))?;
        for w in &records.warnings {
            tracing::warn!("{}: {w}", path.display());
        }
        let mut launches = Launches::new(&names, self.grouping);
        for rec in records {
            launches.push(rec.map_err(|e| parse_error(path, e))?)?;
        }
        let (frame, facts) = launches.finish()?;
        if frame.height() == 0 {
            return Err(Error::nothing_matched(
                format!("{}: the report holds no kernel launches", path.display()),
                Some("check the profiler's filters (`--kernel`, `--launch-skip`)".into()),
            ));
        }
        let mut rows = self.derivation.derive(frame)?.into_rows(Source::Measured)?;
        let notices = self.derivation.notices(&mut rows);
        let provenance = Provenance {
            coalprof: env!("CARGO_PKG_VERSION").into(),
            backend: "import".into(),
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

fn parse_error(path: &Path, e: ParseError) -> Error {
    match e {
        ParseError::NoResults { reason, hint } => Error::input(path, reason).with_hint(hint),
        ParseError::Malformed { line, message } => Error::input(path, format!("line {line}: {message}")),
        ParseError::Io(e) => Error::input(path, format!("cannot read: {e}")),
    }
}

/// A saved `results.json` (from `run`, `analyze --format json`, or a run folder).
pub fn read_results_json(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let r: Results =
        serde_json::from_str(&text).map_err(|e| Error::input(path, format!("not a coalprof results file: {e}")))?;
    if r.schema != SCHEMA {
        return Err(Error::input(
            path,
            format!("results schema `{}` is not the `{SCHEMA}` this coalprof reads", r.schema),
        ));
    }
    Ok(r)
}
