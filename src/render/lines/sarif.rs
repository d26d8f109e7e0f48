//! SARIF 2.1.0 for GitHub code scanning: one result per wasteful source line, on three rules
//! (uncoalesced global load, uncoalesced global store, shared-memory bank conflict), with the
//! numbers and the fix in the message, the repository-relative path and line, and a fingerprint
//! that survives re-runs (rule, kernel, op, path and the line's code; not its number, so an
//! edit above it does not turn it into a new alert). An instruction row of a kernel built
//! without `-lineinfo` is a result too, at a logical location (kernel + SASS offset).
//!
//! GitHub's accepted subset and limits are followed: `tool.driver.rules` with short, full and
//! help texts; one location per result; at most [`MAX_RESULTS`] results, worst first.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::lines::diagnose::Waste;
use crate::lines::{LineReport, LineRow};
use crate::text::{count, percent, thousands};

/// GitHub keeps only the top 5,000 results of a run.
pub(crate) const MAX_RESULTS: usize = 5000;

/// The SARIF level of a finding: `error` where a gate rule fails it, else `warning`.
pub(crate) type Level<'a> = &'a dyn Fn(&LineRow) -> &'static str;

/// The SARIF log of `report`'s findings as text (`--sarif FILE` of `lines` and `check`).
pub(crate) fn render(report: &LineReport, level: Level) -> Result<String> {
    let text = serde_json::to_string_pretty(&sarif(report, level)).map_err(|e| Error::encoding("SARIF", e))?;
    Ok(text + "\n")
}

/// The SARIF log of `report`'s findings (rows with a waste and a source line).
pub fn sarif(report: &LineReport, level: Level) -> Value {
    let rules: Vec<Value> = Waste::ALL
        .iter()
        .map(|w| {
            json!({
                "id": w.id(),
                "name": w.name(),
                "shortDescription": { "text": w.title() },
                "fullDescription": { "text": w.description() },
                "help": { "text": w.help(), "markdown": w.help() },
                "defaultConfiguration": { "level": "warning" },
                "properties": {
                    "tags": ["performance", "cuda", if *w == Waste::BankConflict { "shared-memory" } else { "memory-coalescing" }],
                    "precision": "high",
                    "problem.severity": "warning"
                }
            })
        })
        .collect();
    // Rows with a source line are physical locations; instruction rows of a kernel built
    // without `-lineinfo` keep a logical one (the kernel and the SASS offset), never dropped.
    let mut findings: Vec<&LineRow> = report
        .rows
        .iter()
        .filter(|r| r.waste.is_some() && ((r.line.is_some() && r.file.is_some()) || r.pc_offset.is_some()))
        .collect();
    findings.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
    let results: Vec<Value> = findings.into_iter().take(MAX_RESULTS).map(|r| result(r, level)).collect();
    let arch = report.arch.as_deref().unwrap_or("unknown");
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "coalprof",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/coalprof/coalprof",
                "rules": rules
            }},
            "automationDetails": { "id": format!("coalprof/{arch}/") },
            "results": results
        }]
    })
}

/// What ranks findings: excess sectors, else excess shared wavefronts.
fn weight(r: &LineRow) -> f64 {
    r.excess_sectors.filter(|&e| e > 0.0).or(r.shared_excess_wavefronts).unwrap_or(0.0)
}

fn result(r: &LineRow, level: Level) -> Value {
    let waste = r.waste.expect("only findings are results");
    let index = Waste::ALL.iter().position(|w| *w == waste).unwrap_or(0);
    let uri = match (&r.path, &r.file, r.line) {
        (Some(p), _, Some(_)) => Some(p.clone()),
        (None, Some(f), Some(_)) => Some(file_uri(f)),
        _ => None,
    };
    let mut numbers = Vec::new();
    if let (Some(spr), Some(ideal)) = (r.sectors_per_request, r.ideal_sectors_per_request) {
        let lines = r.lines_per_request.map(|l| format!(", {l:.1} lines/request")).unwrap_or_default();
        numbers.push(format!("{spr:.1} sectors/request (ideal {ideal:.1}{lines})"));
    }
    if let Some(e) = r.excess_sectors.filter(|&e| e > 0.0) {
        let share = r.excess_share.map(|s| format!(" ({} of the kernel's excess)", percent(s))).unwrap_or_default();
        numbers.push(format!("{} excess L2 sectors{share}", count(e)));
    }
    if let (Some(w), Some(i)) = (r.shared_wavefronts, r.shared_ideal_wavefronts) {
        if w > i {
            numbers.push(format!("{} shared wavefronts for an ideal {}", thousands(w as i128), thousands(i as i128)));
        }
    }
    let op = r.op.as_deref().map(|op| format!(" ({op})")).unwrap_or_default();
    let inside = crate::render::lines::via(r).map(|v| format!(" (made inside {v}, called here)")).unwrap_or_default();
    let text = format!(
        "{}{op}{inside}: {}. {}. Fix: {}",
        r.kernel,
        numbers.join("; "),
        r.diagnosis.as_deref().unwrap_or(waste.title()),
        waste.help()
    );
    let fingerprint = {
        let mut h = Sha256::new();
        let place = uri.clone().unwrap_or_else(|| format!("+{:#x}", r.pc_offset.unwrap_or(0)));
        let code = r.source.as_deref().or(r.sass.as_deref()).unwrap_or_default();
        for part in [waste.id(), &r.kernel, r.op.as_deref().unwrap_or_default(), &place, code] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let logical = json!([{
        "name": format!("+{:#x}", r.pc_offset.unwrap_or(0)),
        "fullyQualifiedName": format!("{}+{:#x}", r.kernel, r.pc_offset.unwrap_or(0)),
        "kind": "function"
    }]);
    let location = match &uri {
        Some(uri) => json!({ "physicalLocation": {
            "artifactLocation": { "uri": uri },
            "region": { "startLine": r.line.unwrap_or(1) }
        }}),
        None => json!({ "logicalLocations": logical }),
    };
    let mut result = json!({
        "ruleId": waste.id(),
        "ruleIndex": index,
        "level": level(r),
        "message": { "text": text },
        "locations": [location],
        "partialFingerprints": { "coalprofLine/v2": fingerprint },
        "properties": {
            "kernel": r.kernel,
            "op": r.op,
            "pc_offset": r.pc_offset,
            "excess_sectors": r.excess_sectors,
            "sectors_per_request": r.sectors_per_request,
            "shared_wavefronts": r.shared_wavefronts,
            "shared_ideal_wavefronts": r.shared_ideal_wavefronts
        }
    });
    // An access made inside a library (a CUDA header, CUB, CUTLASS) stands on the user's line
    // that called it; where in the library it was made is a related location.
    if !r.via.is_empty() {
        let related: Vec<Value> = (r.via.iter().enumerate())
            .map(|(i, (file, line))| {
                json!({
                    "id": i + 1,
                    "physicalLocation": {
                        "artifactLocation": { "uri": file_uri(file) },
                        "region": { "startLine": line }
                    },
                    "message": { "text": "where the access is made, inside a library the result's line calls" }
                })
            })
            .collect();
        result["relatedLocations"] = Value::Array(related);
        result["properties"]["via"] = json!(crate::lines::aggregate::via_text(&r.via));
    }
    result
}

/// An absolute path the checkout does not hold, as a `file://` URI (GitHub rewrites those
/// under its checkout path); a relative one stays as it is.
fn file_uri(path: &str) -> String {
    if path.starts_with('/') {
        let escaped: String = path
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        format!("file://{escaped}")
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: Option<u32>, path: Option<&str>) -> LineRow {
        LineRow {
            kernel: "k".into(),
            file: Some("/build/my kernels/k.cu".into()),
            line,
            path: path.map(str::to_string),
            sectors: Some(3200.0),
            requests: Some(100.0),
            excess_sectors: Some(2800.0),
            waste: Some(Waste::UncoalescedLoad),
            source: Some("x = a[i * n];".into()),
            ..LineRow::default()
        }
    }

    fn report(rows: Vec<LineRow>) -> LineReport {
        LineReport { rows, arch: Some("sm_90".into()), ..LineReport::empty() }
    }

    #[test]
    fn rows_without_a_line_get_a_logical_location_and_paths_outside_the_checkout_are_file_uris() {
        let offset = LineRow { pc_offset: Some(0x1a0), ..row(None, None) };
        let log = sarif(&report(vec![row(None, None), offset, row(Some(7), None)]), &|_| "error");
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "a row with neither line nor offset has no place: {results:?}");
        let logical = results.iter().find_map(|r| r["locations"][0].get("logicalLocations")).unwrap();
        assert_eq!(logical[0]["fullyQualifiedName"], "k+0x1a0");
        let loc = results.iter().find_map(|r| r["locations"][0].get("physicalLocation")).unwrap();
        assert_eq!(loc["artifactLocation"]["uri"], "file:///build/my%20kernels/k.cu");
        assert_eq!((loc["region"]["startLine"].as_u64(), results[1]["level"].as_str()), (Some(7), Some("error")));
    }

    #[test]
    fn a_fingerprint_survives_the_line_moving_but_not_the_code_changing() {
        let print = |r: LineRow| {
            sarif(&report(vec![r]), &|_| "warning")["runs"][0]["results"][0]["partialFingerprints"].clone()
        };
        let at7 = print(row(Some(7), Some("kernels/k.cu")));
        assert_eq!(at7, print(row(Some(9), Some("kernels/k.cu"))));
        let mut edited = row(Some(7), Some("kernels/k.cu"));
        edited.source = Some("x = a[i];".into());
        assert_ne!(at7, print(edited));
    }

    #[test]
    fn an_access_made_inside_a_library_names_the_library_line_as_a_related_location() {
        let header = "/usr/local/cuda/include/sm_32_intrinsics.hpp";
        let moved = LineRow { via: vec![(header.into(), 302)], ..row(Some(5), Some("src/k.cu")) };
        let log = sarif(&report(vec![moved, row(Some(9), Some("src/k.cu"))]), &|_| "warning");
        let results = log["runs"][0]["results"].as_array().unwrap();
        let on = |line: u64| {
            results.iter().find(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == line).unwrap()
        };
        let (moved, plain) = (on(5), on(9));
        assert_eq!(moved["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "src/k.cu");
        let related = &moved["relatedLocations"][0]["physicalLocation"];
        assert_eq!(related["artifactLocation"]["uri"], "file:///usr/local/cuda/include/sm_32_intrinsics.hpp");
        assert_eq!(related["region"]["startLine"], 302);
        assert_eq!(moved["properties"]["via"], format!("{header}:302"));
        assert!(moved["message"]["text"].as_str().unwrap().contains("made inside sm_32_intrinsics.hpp:302"));
        assert!(plain.get("relatedLocations").is_none() && plain["properties"].get("via").is_none(), "{plain:#}");
    }
}
