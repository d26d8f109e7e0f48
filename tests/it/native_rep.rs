//! The native `.ncu-rep` reader against two independent readers, on every fixture report,
//! launch by launch: NVIDIA's `ncu_report` Python module (reads every version; dumped by
//! tests/oracle/ncu_report_dump.py) and ncu 2022.3's `--import --csv --page raw --print-units
//! base` (for the reports it can read). Both tools come from scripts/install-tools.sh; a test
//! whose tool is absent skips, saying so.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use coalprof::metrics::Catalogue;
use coalprof::report::csv::{self, Keep};
use coalprof::report::ncu_rep::{self, units::ncu_unit, NativeLaunch};
use coalprof::report::units::{scale, Scale};
use coalprof::report::{LaunchRecord, Value};
use serde_json::Value as Json;

use crate::util::{ncu_rep_fixtures, real_ncu, real_ncu_report, root};

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn native(p: &Path) -> Vec<NativeLaunch> {
    ncu_rep::read_launches(p).unwrap_or_else(|e| panic!("{}: {e}", name(p))).launches
}

/// The metrics whose units must agree exactly: those coalprof reads (and, against the CSV,
/// the launch facts; ncu_report's newer database labels a few of those differently, `pass`).
fn strict_names(launch_facts: bool) -> HashSet<String> {
    let mut s: HashSet<String> = Catalogue::builtin().ncu_names().keys().cloned().collect();
    if launch_facts {
        s.extend(coalprof::run::DEVICE_METRICS.iter().map(|n| n.to_string()));
    }
    s
}

/// A unit that changes a number on its way to coalprof's base units (`nsecond`, `cycle/nsecond`).
fn dimensioned(s: Scale) -> bool {
    s.pow10 != 0
}

fn close(a: f64, b: f64, abs: f64) -> bool {
    a == b || (a - b).abs() <= abs + 1e-9 * a.abs().max(b.abs())
}

#[test]
fn every_fixture_reads_like_ncu_report() {
    let Some(python) = real_ncu_report("every_fixture_reads_like_ncu_report") else { return };
    let strict = strict_names(false);
    let fixtures = ncu_rep_fixtures();
    assert!(fixtures.len() >= 15, "{} fixture reports", fixtures.len());
    let (mut values, mut label_mismatches, mut labels) = (0usize, 0usize, 0usize);
    let (mut embedded, mut cubins, mut instanced) = (0usize, 0usize, 0usize);
    for path in &fixtures {
        let f = name(path);
        let out = Command::new(&python).arg(root().join("tests/oracle/ncu_report_dump.py")).arg(path).output().unwrap();
        assert!(out.status.success(), "{f}: ncu_report: {}", String::from_utf8_lossy(&out.stderr));
        let oracle: Json = serde_json::from_slice(&out.stdout).unwrap();
        let expected = oracle["launches"].as_array().unwrap();
        let got = native(path);
        assert_eq!(got.len(), expected.len(), "{f}: launch count");
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            let at = format!("{f} launch {i}");
            let r = &g.record;
            assert_eq!(r.kernel, e["demangled"].as_str().unwrap(), "{at}: kernel");
            assert_eq!(r.launches, 1, "{at}");
            let em = e["metrics"].as_object().unwrap();
            let names: HashSet<&str> = r.metrics.iter().map(|(n, _)| &**n).collect();
            let enames: HashSet<&str> = em.keys().map(String::as_str).collect();
            assert_eq!(names, enames, "{at}: metric names");
            for (n, v) in &r.metrics {
                let o = &em[&**n];
                let mine = scale(ncu_unit(n));
                let theirs = scale(o["unit"].as_str().unwrap());
                if !o["unit"].as_str().unwrap().is_empty() {
                    if strict.contains(&**n) || dimensioned(mine) || dimensioned(theirs) {
                        assert_eq!(mine, theirs, "{at}: unit of {n} (ncu_report: {})", o["unit"]);
                    } else {
                        labels += 1;
                        label_mismatches += usize::from(mine != theirs);
                    }
                }
                match (&o["value"], v) {
                    (Json::Null, Value::Missing(_)) => {}
                    (Json::String(s), v) => assert_eq!(v, &Value::parse_scaled(s, mine), "{at}: {n}"),
                    (Json::Number(x), Value::Number { value, unit }) => {
                        let want = mine.apply(x.as_f64().unwrap());
                        assert!(close(*value, want, 0.0), "{at}: {n} = {value}, ncu_report {want}");
                        assert_eq!(*unit, mine.base, "{at}: {n}");
                    }
                    (o, v) => panic!("{at}: {n}: native {v:?}, ncu_report {o}"),
                }
                values += 1;
            }
            // Grid and block as the launch metrics give them.
            let dim = |k: &str| em.get(k).and_then(|m| m["value"].as_u64()).map(|v| v as u32);
            let product = |d: Option<[u32; 3]>| d.map(|d| d.iter().map(|&x| u64::from(x)).product::<u64>());
            if let Some(size) = em.get("launch__grid_size").and_then(|m| m["value"].as_f64()) {
                assert_eq!(product(r.grid), Some(size as u64), "{at}: grid {:?}", r.grid);
            }
            if let Some(size) = em.get("launch__block_size").and_then(|m| m["value"].as_f64()) {
                assert_eq!(product(r.block), Some(size as u64), "{at}: block {:?}", r.block);
            }
            if let (Some(x), Some(y), Some(z)) = (dim("launch__grid_dim_x"), dim("launch__grid_dim_y"), dim("launch__grid_dim_z")) {
                assert_eq!(r.grid, Some([x, y, z]), "{at}: grid");
            }
            // Instanced metrics: every PC-correlated one, element by element.
            instanced += g.source.instanced.len();
            for (n, pairs) in &g.source.instanced {
                let inst = em[&**n]["instances"].as_array().unwrap_or_else(|| panic!("{at}: {n} has no instances"));
                let want: Vec<(u64, f64)> =
                    inst.iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap_or(f64::NAN))).collect();
                assert_eq!(pairs.len(), want.len(), "{at}: {n} instances");
                for (a, b) in pairs.iter().zip(&want) {
                    let same = close(a.1, b.1, 0.0) || (a.1.is_nan() && b.1.is_nan());
                    assert!(a.0 == b.0 && same, "{at}: {n}: {a:?} vs {b:?}");
                }
            }
            let sources: HashMap<&str, &str> = g.source.sources.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
            let esources: HashMap<&str, &str> =
                e["sources"].as_object().unwrap().iter().map(|(p, t)| (p.as_str(), t.as_str().unwrap())).collect();
            assert_eq!(sources, esources, "{at}: embedded source files");
            embedded += sources.len();
            if let Some(cubin) = &g.source.cubin {
                assert!(cubin.starts_with(b"\x7fELF"), "{at}: the cubin is not an ELF");
                cubins += 1;
            }
            if let Some(pc) = g.source.function_pc {
                assert_eq!(Some(pc as f64), em["launch__function_pcs"]["value"].as_f64(), "{at}: function pc");
            }
        }
    }
    eprintln!(
        "{} reports, {values} metric values equal to ncu_report's; {label_mismatches} of {labels} count-unit labels \
         differ; {instanced} per-instruction metrics, {cubins} cubins, {embedded} embedded sources",
        fixtures.len()
    );
    assert!(values > 10_000 && instanced > 0 && cubins > 0 && embedded > 0, "{values} {instanced} {cubins} {embedded}");
    assert!(label_mismatches * 20 < labels, "{label_mismatches} of {labels} unit labels differ from ncu_report's");
}

/// `ncu --import R --csv --page raw --print-units base`, or why not.
fn ncu_raw_csv(ncu: &Path, report: &Path) -> Result<String, String> {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(ncu)
        .env("HOME", home.path())
        .args(["--import".as_ref(), report.as_os_str()])
        .args(["--csv", "--page", "raw", "--print-units", "base"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !text.contains("\"ID\"") {
        let why: String = String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or_default().chars().take(120).collect();
        return Err(format!("exit {:?}: {why}", out.status.code()));
    }
    Ok(text)
}

/// The absolute tolerance of a number the CSV printed: ncu rounds to two decimals, in the
/// printed unit (`scale` takes it to base units).
fn printed_tolerance(s: Scale) -> f64 {
    s.apply(0.005) * 1.000_001
}

#[test]
fn every_fixture_ncu_2022_3_can_import_reads_like_its_raw_csv() {
    let Some(ncu) = real_ncu("every_fixture_ncu_2022_3_can_import_reads_like_its_raw_csv") else { return };
    let strict = strict_names(true);
    let (mut compared, mut values) = (Vec::new(), 0usize);
    for path in ncu_rep_fixtures() {
        let f = name(&path);
        let text = match ncu_raw_csv(&ncu, &path) {
            Ok(t) => t,
            Err(why) => {
                eprintln!("{f}: ncu 2022.3 cannot import it ({why}); ncu_report alone checks it");
                continue;
            }
        };
        let csv_records: Vec<LaunchRecord> =
            csv::open(text.as_bytes(), Keep::All).unwrap().collect::<Result<_, _>>().unwrap();
        // The units row, to know each column's printed scale.
        let rows: Vec<Vec<String>> = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.lines().filter(|l| l.starts_with('"')).collect::<Vec<_>>().join("\n").as_bytes())
            .records()
            .take(2)
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        let printed: HashMap<&str, Scale> = rows[0].iter().zip(&rows[1]).map(|(n, u)| (n.as_str(), scale(u))).collect();
        let got = native(&path);
        assert_eq!(got.len(), csv_records.len(), "{f}: launch count");
        for (i, (g, c)) in got.iter().zip(&csv_records).enumerate() {
            let at = format!("{f} launch {i}");
            let r = &g.record;
            assert_eq!((r.id, &r.process, &r.kernel), (c.id, &c.process, &c.kernel), "{at}");
            assert_eq!((&r.device, &r.cc, &r.nvtx, r.launches), (&c.device, &c.cc, &c.nvtx, c.launches), "{at}");
            // The raw page of a 2019 report has no launch__grid_dim_*: the CSV knows no shape.
            if c.grid.is_some() || c.block.is_some() {
                assert_eq!((r.grid, r.block), (c.grid, c.block), "{at}: grid, block");
            }
            for (n, cv) in &c.metrics {
                let Some(v) = r.metric(n) else {
                    // A column of some other launch: empty in this row.
                    assert!(matches!(cv, Value::Missing(t) if t.is_empty()), "{at}: {n} = {cv:?} only in the CSV");
                    continue;
                };
                let unit = printed[&**n];
                let mine = scale(ncu_unit(n));
                if strict.contains(&**n) || dimensioned(mine) || dimensioned(unit) {
                    assert_eq!(mine, unit, "{at}: unit of {n}");
                }
                match (v, cv) {
                    (Value::Number { value: a, .. }, Value::Number { value: b, .. }) => {
                        assert!(close(*a, *b, printed_tolerance(unit)), "{at}: {n} = {a}, CSV {b}")
                    }
                    // No value: the CSV says how it printed it (`no data`, empty).
                    (Value::Missing(_), Value::Missing(_)) => {}
                    (a, b) => assert_eq!(a, b, "{at}: {n}"),
                }
                values += 1;
            }
        }
        compared.push(f);
    }
    eprintln!("{} reports equal to ncu 2022.3's raw CSV ({values} values): {compared:?}", compared.len());
    // 2019–2023.1 reports: ncu 2022.3 reads ten of the fifteen.
    assert!(compared.len() >= 10, "{compared:?}");
}
