//! The native `.ncu-rep` reader against two independent readers, on every fixture report,
//! launch by launch: NVIDIA's `ncu_report` Python module (reads every version; dumped by
//! tests/oracle/ncu_report_dump.py) and ncu 2022.3's `--import --csv --page raw --print-units
//! base` (for the reports it can read). Both tools come from scripts/install-tools.sh; a test
//! whose tool is absent skips, saying so.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use coalprof::metrics::Catalogue;
use coalprof::parse::csv::{self, Keep};
use coalprof::parse::ncu_rep::{self, units::ncu_unit, NativeLaunch};
use coalprof::parse::units::{scale, Scale};
use coalprof::parse::{LaunchRecord, Value};
use serde_json::Value as Json;

use crate::util::{coalprof, ncu_rep_fixtures, real_ncu, real_ncu_report, root};

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
        s.extend(coalprof::parse::csv::DEVICE_METRICS.iter().map(|n| n.to_string()));
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
    let (mut embedded, mut cubins, mut instanced, mut function_pcs) = (0usize, 0usize, 0usize, 0usize);
    for path in &fixtures {
        let f = name(path);
        let out = Command::new(&python).arg(root().join("tests/oracle/ncu_report_dump.py")).arg(path).output().unwrap();
        assert!(out.status.success(), "{f}: ncu_report: {}", String::from_utf8_lossy(&out.stderr));
        let oracle: Json = serde_json::from_slice(&out.stdout).unwrap();
        let expected = oracle["launches"].as_array().unwrap();
        let got = native(path);
        assert_eq!(got.len(), expected.len(), "{f}: launch count");
        // The lean decode `analyze` uses gives the same records.
        let lean: Vec<LaunchRecord> = ncu_rep::open(path, ncu_rep::Bounds::Untrusted)
            .unwrap()
            .records_only(Keep::All)
            .map(|l| l.unwrap().record)
            .collect();
        assert!(lean.iter().eq(got.iter().map(|g| &g.record)), "{f}: records_only differs from the full read");
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
            if let (Some(x), Some(y), Some(z)) =
                (dim("launch__grid_dim_x"), dim("launch__grid_dim_y"), dim("launch__grid_dim_z"))
            {
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
            // The start PCs: the instances' values where ncu_report lists instances (from 2025.1
            // the scalar is the number of functions), else the scalar.
            if let Some(fpcs) = em.get("launch__function_pcs") {
                let mut want: Vec<(u64, f64)> = (fpcs["instances"].as_array().into_iter().flatten())
                    .map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap()))
                    .collect();
                want.sort_by_key(|p| p.0);
                let want: Vec<f64> = match want.is_empty() {
                    true => fpcs["value"].as_f64().into_iter().collect(),
                    false => want.into_iter().map(|p| p.1).collect(),
                };
                let got: Vec<f64> = g.source.function_pcs.iter().map(|&pc| pc as f64).collect();
                assert_eq!(got, want, "{at}: function start PCs");
                function_pcs += 1;
            }
        }
    }
    eprintln!(
        "{} reports, {values} metric values equal to ncu_report's; {label_mismatches} of {labels} count-unit labels \
         differ; {instanced} per-instruction metrics, {cubins} cubins, {embedded} embedded sources, \
         {function_pcs} launches' start PCs",
        fixtures.len()
    );
    assert!(values > 10_000 && instanced > 0 && cubins > 0 && embedded > 0, "{values} {instanced} {cubins} {embedded}");
    assert!(function_pcs > 100, "{function_pcs} launches with start PCs compared");
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
        let why: String =
            String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or_default().chars().take(120).collect();
        return Err(format!("exit {:?}: {why}", out.status.code()));
    }
    Ok(text)
}

/// The unit the CSV's units row gives the column `name`.
fn printed_unit<'a>(rows: &'a [Vec<String>], name: &str) -> &'a str {
    rows[0].iter().position(|c| c == name).map_or("", |i| rows[1][i].as_str())
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
    let (mut labels, mut label_mismatches) = (0usize, 0usize);
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
                } else if !printed_unit(&rows, n).is_empty() {
                    labels += 1;
                    label_mismatches += usize::from(mine != unit);
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
    eprintln!(
        "{} reports equal to ncu 2022.3's raw CSV ({values} values; {label_mismatches} of {labels} count-unit labels \
         differ): {compared:?}",
        compared.len()
    );
    assert!(label_mismatches * 20 < labels, "{label_mismatches} of {labels} unit labels differ from the CSV's");
    // 2019–2023.1 reports: ncu 2022.3 reads ten of the fifteen.
    assert!(compared.len() >= 10, "{compared:?}");
}

/// A fake ncu that records that it ran (and, for `--import`, prints `csv`).
fn marker_ncu(dir: &Path, csv: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let marker = dir.join("ncu-ran");
    let script = dir.join("ncu");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\ncase \"$1\" in --version) echo 'Version 2022.3.0.0 (build 0)';; \
             --import) cat '{}';; esac\n",
            marker.display(),
            csv.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, marker)
}

#[test]
fn analyze_reads_every_fixture_without_ncu_and_never_looks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let (ncu, marker) = marker_ncu(dir.path(), Path::new("/dev/null"));
    for path in ncu_rep_fixtures() {
        let out = coalprof()
            .env("COALPROF_NCU", &ncu)
            .env("PATH", "/usr/bin:/bin")
            .current_dir(dir.path())
            .args(["-v", "analyze", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {e}", name(&path));
        assert!(!e.contains("using ncu"), "{}: looked for ncu: {e}", name(&path));
        let v: Json = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!v["rows"].as_array().unwrap().is_empty(), "{}", name(&path));
    }
    assert!(!marker.exists(), "ncu ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
}

/// `analyze --format json --per-launch` rows of `path` with one reader.
fn analyzed(path: &Path, ncu: &Path, reader: &str) -> Json {
    let out = coalprof()
        .env("COALPROF_NCU", ncu)
        .args(["analyze", "--per-launch", "--format", "json", "--reader", reader])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{} ({reader}): {}", name(path), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Json>(&out.stdout).unwrap()["rows"].clone()
}

#[test]
fn both_readers_give_the_same_analysis() {
    let Some(ncu) = real_ncu("both_readers_give_the_same_analysis") else { return };
    let mut compared = 0;
    for path in ncu_rep_fixtures() {
        if ncu_raw_csv(&ncu, &path).is_err() {
            continue; // too new for ncu 2022.3 (every_fixture_ncu_2022_3… says which)
        }
        let (native, imported) = (analyzed(&path, &ncu, "native"), analyzed(&path, &ncu, "ncu"));
        let (native, imported) = (native.as_array().unwrap(), imported.as_array().unwrap());
        assert_eq!(native.len(), imported.len(), "{}", name(&path));
        for (a, b) in native.iter().zip(imported) {
            let at = format!("{} {}", name(&path), a["kernel"]);
            assert_eq!((&a["kernel"], &a["launches"], &a["id"]), (&b["kernel"], &b["launches"], &b["id"]), "{at}");
            if !b["grid"].is_null() {
                assert_eq!((&a["grid"], &a["block"]), (&b["grid"], &b["block"]), "{at}");
            }
            let (am, bm) = (a["metrics"].as_object().unwrap(), b["metrics"].as_object().unwrap());
            assert_eq!(am.keys().collect::<Vec<_>>(), bm.keys().collect::<Vec<_>>(), "{at}: metric keys");
            for (k, x) in am {
                let (x, y) = (x.as_f64().unwrap(), bm[k].as_f64().unwrap());
                // The CSV rounds to two decimals in ncu's base unit; derived metrics carry that.
                assert!(close(x, y, 0.0) || (x - y).abs() <= 1e-3 * x.abs().max(y.abs()), "{at}: {k} {x} vs {y}");
            }
        }
        compared += 1;
    }
    assert!(compared >= 10, "{compared}");
}

#[test]
fn an_unknown_format_version_falls_back_to_ncu_import_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes =
        std::fs::read(crate::util::fixture("ncu-rep/microgpusim_vectoradd_102400_32_gtx1080_2019.ncu-rep")).unwrap();
    // The file header `08 07` (field 1 = version 7) right after the magic and its length.
    assert_eq!(&bytes[8..10], &[0x08, 0x07]);
    bytes[9] = 0x08;
    let report = dir.path().join("v8.ncu-rep");
    std::fs::write(&report, &bytes).unwrap();
    let csv =
        crate::util::fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let (ncu, marker) = marker_ncu(dir.path(), &csv);
    let out = coalprof().env("COALPROF_NCU", &ncu).args(["analyze", "--format", "json"]).arg(&report).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{e}");
    assert!(e.contains("format version 8") && e.contains("ncu --import"), "{e}");
    assert!(std::fs::read_to_string(&marker).unwrap().contains("--import"));
    let v: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"][0]["kernel"], "void vecAdd<float>(float*,float*,float*,int)");
    // Without any ncu: exit 4, saying why ncu was wanted.
    let out =
        coalprof().env("PATH", "/usr/bin:/bin").current_dir(dir.path()).arg("analyze").arg(&report).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("format version 8") && e.contains("needs ncu"), "{e}");
}

#[test]
fn a_zstd_compressed_report_reads_like_the_plain_one() {
    let plain = crate::util::fixture("ncu-rep/NVIDIA-nsight-training_manual_nvtx_2022.3.0.ncu-rep");
    let repz = plain.with_extension("ncu-repz");
    let (a, b) = (native(&plain), native(&repz));
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.record, b.record);
        assert_eq!(a.source.cubin, b.source.cubin);
    }
    let no_ncu = Path::new("/nonexistent/ncu");
    assert_eq!(analyzed(&plain, no_ncu, "native"), analyzed(&repz, no_ncu, "native"));
}

#[test]
fn a_report_compressed_as_several_zstd_frames_reads_whole() {
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};
    let plain = crate::util::fixture("ncu-rep/NVIDIA-nsight-training_manual_nvtx_2022.3.0.ncu-rep");
    let bytes = std::fs::read(&plain).unwrap();
    let (a, b) = bytes.split_at(bytes.len() / 3);
    let mut frames = compress_to_vec(a, CompressionLevel::Fastest);
    frames.extend(compress_to_vec(b, CompressionLevel::Fastest));
    let dir = tempfile::tempdir().unwrap();
    let repz = dir.path().join("two_frames.ncu-repz");
    std::fs::write(&repz, frames).unwrap();
    let (x, y) = (native(&plain), native(&repz));
    assert_eq!(x.len(), y.len());
    assert!(x.iter().zip(&y).all(|(x, y)| x.record == y.record));
}
