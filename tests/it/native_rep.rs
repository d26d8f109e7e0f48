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

/// The metrics whose units must agree exactly: those coalprof reads, and the launch facts.
fn strict_names() -> HashSet<String> {
    let mut s: HashSet<String> = Catalogue::builtin().ncu_names().keys().cloned().collect();
    for n in coalprof::run::DEVICE_METRICS {
        s.insert(n.to_string());
    }
    s.insert("gpu__time_duration.sum".into());
    s
}

/// A unit that changes a number on its way to base units (a time, a size prefix, a rate).
fn dimensioned(s: Scale) -> bool {
    s.pow10 != 0 || matches!(s.base, "second" | "byte/second" | "hz" | "byte")
}

fn close(a: f64, b: f64, abs: f64) -> bool {
    a == b || (a - b).abs() <= abs + 1e-9 * a.abs().max(b.abs())
}

#[test]
fn every_fixture_reads_like_ncu_report() {
    let Some(python) = real_ncu_report("every_fixture_reads_like_ncu_report") else { return };
    let strict = strict_names();
    let fixtures = ncu_rep_fixtures();
    assert!(fixtures.len() >= 15, "{} fixture reports", fixtures.len());
    let (mut values, mut label_mismatches, mut labels) = (0usize, 0usize, 0usize);
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
            if let Some(pc) = g.source.function_pc {
                assert_eq!(Some(pc as f64), em["launch__function_pcs"]["value"].as_f64(), "{at}: function pc");
            }
        }
    }
    eprintln!(
        "{} reports, {values} metric values equal to ncu_report's; {label_mismatches} of {labels} count-unit labels differ",
        fixtures.len()
    );
    assert!(values > 10_000, "{values}");
    assert!(label_mismatches * 20 < labels, "{label_mismatches} of {labels} unit labels differ from ncu_report's");
}
