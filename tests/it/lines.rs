//! `coalprof lines` on the real fixture reports with source counters, against two oracles:
//! NVIDIA's `ncu_report` (every instruction of every launch: its source line from
//! `source_info(pc)`, its instanced counters; tests/oracle/ncu_report_lines.py) and ncu 2022.3's
//! own source page (`--page source --print-source cuda,sass`, per line, summed over launches;
//! the CSVs in tests/fixtures/ncu/2022/). Plus what a user sees: notes, exit codes, formats.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use coalprof::lines::cubin::base_name;
use coalprof::lines::frames::is_library;
use coalprof::parse::source_metrics as names;
use serde_json::Value;

use crate::util::{coalprof, fixture, json, real_ncu_report, root, OkStdout};

/// The fixture reports with per-instruction counters (SOURCES.md's `src` column).
const WITH_SOURCE_COUNTERS: &[&str] = &[
    "microgpusim_vectoradd_100_32_gtx1080_2019",
    "microgpusim_vectoradd_102400_32_gtx1080_2019",
    "bwd29-self-join-MiSTIC_profileBIGCROSS3.out_2020.3.0",
    "thedavidchu-speedy_scan_profile_2020.3.1",
    "eschnett-IndexSpaces.jl_profile_2022.1.1",
    "NVIDIA-nsight-training_manual_nvtx_2022.3.0",
    "bwd29-self-join-MiSTIC_profileHiggs.out_2022.4.0",
    "flyinglandlord-sglang_profile_2023.3.0",
    "panjd123-cutlass_report80_2024.1.1",
];

fn report(stem: &str) -> std::path::PathBuf {
    fixture(&format!("ncu-rep/{stem}.ncu-rep"))
}

fn lines_json(args: &[&str], path: &Path) -> Value {
    json(&coalprof().arg("lines").args(args).args(["--top", "0", "--format", "json"]).arg(path).ok_stdout())
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The first of `names` the oracle's entry has.
fn first(e: &serde_json::Map<String, Value>, names: &[&str]) -> Option<f64> {
    names.iter().find_map(|n| e.get(*n).and_then(Value::as_f64))
}

/// One instruction of the oracle's output.
type Entry = serde_json::Map<String, Value>;

/// The fields a row should have, by JSON name.
type Fields = BTreeMap<&'static str, Option<f64>>;

/// One access kind of an instruction and the fields it should have.
type Part = (String, Fields);

/// What one instruction of the oracle should give, per the per-line contract (README,
/// "`lines`"): a global part (requests = `inst_executed`, 0 where it moved no sector; tag
/// requests; sectors) and a shared part (wavefronts), each with its access kind. Written from
/// the contract, not from coalprof's code.
fn expected_parts(e: &serde_json::Map<String, Value>, has_access: bool) -> Vec<Part> {
    let space = e.get("memory_type").and_then(Value::as_u64).unwrap_or(0);
    let access = e.get("memory_access_type").and_then(Value::as_u64).unwrap_or(0);
    let (load, store) = (access & 2 != 0, access & 4 != 0);
    let executed = first(e, names::EXECUTIONS);
    let mut out = Vec::new();
    if space & 4 != 0 {
        let op = match (has_access, load, store) {
            (false, ..) => "global",
            (_, true, false) => "global load",
            (_, true, true) if space & 16 != 0 => "global load",
            (_, false, true) => "global store",
            _ => "global atomic",
        };
        let sectors = first(e, names::SECTORS);
        let requests = if sectors == Some(0.0) { Some(0.0) } else { executed };
        let fields = BTreeMap::from([
            ("executions", executed),
            ("requests", requests),
            ("tag_requests", first(e, names::TAG_REQUESTS)),
            ("sectors", sectors),
            ("ideal_sectors", first(e, names::IDEAL_SECTORS)),
            ("shared_wavefronts", None),
            ("shared_ideal_wavefronts", None),
        ]);
        out.push((op.to_string(), fields));
    }
    if space & 16 != 0 {
        let op = match (has_access, load, store) {
            (false, ..) => "shared",
            (_, _, true) if space & 4 != 0 => "shared store",
            (_, true, false) => "shared load",
            (_, false, true) => "shared store",
            _ => "shared atomic",
        };
        let fields = BTreeMap::from([
            ("executions", executed),
            ("requests", None),
            ("tag_requests", None),
            ("sectors", None),
            ("ideal_sectors", None),
            ("shared_wavefronts", first(e, names::SHARED_WAVEFRONTS)),
            ("shared_ideal_wavefronts", first(e, names::SHARED_IDEAL)),
        ]);
        out.push((op.to_string(), fields));
    }
    out
}

/// Every name the oracle is asked for.
fn oracle_names() -> Vec<&'static str> {
    [
        names::EXECUTIONS,
        names::TAG_REQUESTS,
        names::SECTORS,
        names::IDEAL_SECTORS,
        names::SHARED_WAVEFRONTS,
        names::SHARED_IDEAL,
        names::SPACE,
        names::ACCESS,
    ]
    .concat()
}

fn oracle(python: &Path, path: &Path) -> Value {
    let out = Command::new(python)
        .arg(root().join("tests/oracle/ncu_report_lines.py"))
        .arg(path)
        .args(oracle_names())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: ncu_report: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether the oracle's launch reports access kinds at all.
fn has_access(launch: &Value) -> bool {
    launch["pcs"].as_object().unwrap().values().any(|e| e.get("memory_access_type").is_some())
}

/// The oracle's memory instructions of one launch by SASS offset (executed ones only).
fn oracle_instructions(launch: &Value) -> BTreeMap<u64, &serde_json::Map<String, Value>> {
    let fpc = launch["function_pc"].as_u64();
    let mut want = BTreeMap::new();
    for (pc, e) in launch["pcs"].as_object().unwrap() {
        let e = e.as_object().unwrap();
        let space = e.get("memory_type").and_then(Value::as_u64).unwrap_or(0);
        let executed = e.get("inst_executed").and_then(Value::as_f64).unwrap_or(1.0) > 0.0;
        if space & (4 | 16) != 0 && executed {
            want.insert(pc.parse::<u64>().unwrap() - fpc.unwrap(), e);
        }
    }
    want
}

#[test]
fn every_instruction_equals_ncu_report() {
    let Some(python) = real_ncu_report("lines: every_instruction_equals_ncu_report") else { return };
    let (mut compared, mut located, mut with_code, mut moved) = (0usize, 0usize, 0usize, 0usize);
    for stem in WITH_SOURCE_COUNTERS {
        let path = report(stem);
        let oracle = oracle(&python, &path);
        let ours = lines_json(&["--per-launch", "--by", "instruction"], &path);
        let mut by_launch: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
        for r in ours["rows"].as_array().unwrap() {
            by_launch.entry(r["launch"].as_u64().expect("--per-launch gives the launch id")).or_default().push(r);
        }
        // Launch ids are in file order, as ncu_report lists them; launches without memory
        // instructions have no rows, so match by id.
        for (i, expected) in oracle["launches"].as_array().unwrap().iter().enumerate() {
            let rows = by_launch.get(&(i as u64)).cloned().unwrap_or_default();
            let mut want: BTreeMap<(u64, String), (&Entry, Fields)> = BTreeMap::new();
            for (off, e) in oracle_instructions(expected) {
                for (op, fields) in expected_parts(e, has_access(expected)) {
                    want.insert((off, op), (e, fields));
                }
            }
            let got: BTreeMap<(u64, String), &Value> = rows
                .iter()
                .map(|r| ((r["pc_offset"].as_u64().unwrap(), r["op"].as_str().unwrap().to_string()), *r))
                .collect();
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{stem} launch {i}: memory instructions (offsets and access kinds)"
            );
            for ((off, op), (e, fields)) in &want {
                let r = got[&(*off, op.clone())];
                assert_eq!(r["kernel"].as_str(), expected["kernel"].as_str(), "{stem} launch {i}");
                for (field, oracle) in fields {
                    assert_eq!(num(&r[*field]), *oracle, "{stem} launch {i} +{off:#x} {op}: {field}");
                }
                let mut line = e.get("line").and_then(Value::as_u64).filter(|&l| l > 0);
                let mut file = e["file"].clone();
                if !r["via"].is_null() {
                    // Made inside a library, called from the user's code: ncu names a line of
                    // the chain (the library's, or the call site's where nvcc wrote it first at
                    // the address); coalprof the user's call site, the library's line beside it.
                    let (ours, theirs) = (r["file"].as_str().unwrap(), file.as_str().unwrap());
                    assert!(!is_library(ours), "{stem} launch {i} +{off:#x}: {ours} is a library's");
                    assert!(
                        is_library(theirs) || (theirs, line) == (ours, r["line"].as_u64()),
                        "{stem} launch {i} +{off:#x}: ncu's {theirs}:{line:?}, ours {ours} via {}",
                        r["via"]
                    );
                    (line, file) = (r["line"].as_u64(), r["file"].clone());
                    moved += 1;
                }
                assert_eq!(r["line"].as_u64(), line, "{stem} launch {i} +{off:#x}: line");
                if let Some(l) = line {
                    assert_eq!(r["file"], file, "{stem} launch {i} +{off:#x}: file");
                    located += 1;
                    // The code shown is the embedded source's line, where the report embeds it.
                    let text = file.as_str().and_then(|f| expected["sources"][f].as_str());
                    if let Some(text) = text {
                        let want = text.lines().nth(l as usize - 1).map(str::trim);
                        assert_eq!(r["source"].as_str(), want, "{stem} launch {i} +{off:#x}: source text");
                        with_code += 1;
                    }
                }
                compared += 1;
            }
        }
    }
    assert!(
        compared > 500 && located > 300 && with_code > 100,
        "compared {compared} instructions, {located} with a line, {with_code} with embedded code"
    );
    // The CUTLASS report's example kernel makes its accesses inside CUTLASS's headers.
    assert!(moved > 10, "{moved} instructions were put on the user's line that called a library");
}

/// The summed fields the per-line test compares.
const SUMMED: [&str; 4] = ["requests", "sectors", "tag_requests", "ideal_sectors"];

/// A kernel as a note names it: past 96 characters, its first 48 and last 47 around `…`.
fn noted_as(kernel: &str) -> String {
    let chars: Vec<char> = kernel.chars().collect();
    if chars.len() <= 96 {
        return kernel.to_string();
    }
    let (head, tail): (String, String) = (chars[..48].iter().collect(), chars[chars.len() - 47..].iter().collect());
    format!("{head}…{tail}")
}

/// The per-line contract on every fixture with source counters: a line's requests (per access
/// kind) are Σ `inst_executed` of its global instructions of that kind in ncu_report, its
/// sectors and tag requests their sums, and a launch's Σ load + store requests equals its
/// kernel-level request count, or the report says, once for the kernel, that they differ.
#[test]
fn every_lines_requests_are_its_instructions_executions_and_sum_to_the_kernels() {
    let Some(python) = real_ncu_report("lines: every_lines_requests_are_its_instructions_executions") else { return };
    let (mut lines, mut equal_launches, mut noted) = (0usize, 0usize, 0usize);
    // Launch, file, line (or SASS offset past 2^40 where there is none), access kind.
    type Key = (u64, Option<String>, Option<u64>, String);
    for stem in WITH_SOURCE_COUNTERS {
        let path = report(stem);
        let oracle = oracle(&python, &path);
        let ours = lines_json(&["--per-launch"], &path);
        let mut got: BTreeMap<Key, BTreeMap<&str, f64>> = BTreeMap::new();
        for r in ours["rows"].as_array().unwrap() {
            let key = (
                r["launch"].as_u64().unwrap(),
                r["file"].as_str().filter(|_| r["line"].is_u64()).map(str::to_string),
                r["line"].as_u64().or(r["pc_offset"].as_u64().map(|o| o + (1 << 40))),
                r["op"].as_str().unwrap().to_string(),
            );
            let e = got.entry(key).or_default();
            for f in SUMMED {
                if let Some(v) = r[f].as_f64() {
                    *e.entry(f).or_default() += v;
                }
            }
        }
        // An instruction made inside a library and called from the user's code stands on the
        // user's line (its place checked against ncu's in `every_instruction_equals_ncu_report`).
        let mut moved: BTreeMap<(u64, u64), (String, u64)> = BTreeMap::new();
        for r in lines_json(&["--per-launch", "--by", "instruction"], &path)["rows"].as_array().unwrap() {
            if !r["via"].is_null() {
                let place = (r["file"].as_str().unwrap().to_string(), r["line"].as_u64().unwrap());
                moved.insert((r["launch"].as_u64().unwrap(), r["pc_offset"].as_u64().unwrap()), place);
            }
        }
        let mut want: BTreeMap<Key, BTreeMap<&str, f64>> = BTreeMap::new();
        let notices = ours["notices"].to_string();
        let mut per_kernel: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for (i, launch) in oracle["launches"].as_array().unwrap().iter().enumerate() {
            let mut launch_requests = 0.0;
            for (off, e) in oracle_instructions(launch) {
                let mut line = e.get("line").and_then(Value::as_u64).filter(|&l| l > 0);
                let mut file = line.and(e.get("file").and_then(Value::as_str).map(str::to_string));
                if let Some((f, l)) = moved.get(&(i as u64, off)) {
                    (file, line) = (Some(f.clone()), Some(*l));
                }
                for (op, fields) in expected_parts(e, has_access(launch)) {
                    let w =
                        want.entry((i as u64, file.clone(), line.or(Some(off + (1 << 40))), op.clone())).or_default();
                    for f in SUMMED {
                        if let Some(v) = fields[f] {
                            *w.entry(f).or_default() += v;
                        }
                    }
                    if op == "global load" || op == "global store" {
                        launch_requests += fields["requests"].unwrap_or(0.0);
                    }
                }
            }
            if let Some(kernel) = launch["kernel_requests"].as_f64().filter(|&k| k > 0.0) {
                let k = per_kernel.entry(launch["kernel"].as_str().unwrap().to_string()).or_default();
                k.0 += launch_requests;
                k.1 += kernel;
                equal_launches += usize::from((launch_requests / kernel - 1.0).abs() <= 0.02);
            }
        }
        assert_eq!(got, want, "{stem}: per line and access kind");
        lines += want.len();
        for (kernel, (ours, theirs)) in per_kernel {
            let off = (ours / theirs - 1.0).abs() > 0.02;
            let said =
                notices.contains(&format!("`{}`: its global load and store instructions executed", noted_as(&kernel)));
            assert_eq!(said, off, "{stem} `{kernel}`: Σ requests {ours} vs the kernel's {theirs}; notices {notices}");
            noted += usize::from(said);
        }
    }
    eprintln!(
        "{lines} lines and access kinds equal ncu_report's; {equal_launches} launches' Σ requests within 2% of the \
         kernel's; {noted} kernels noted"
    );
    assert!(lines > 200 && equal_launches > 10, "{lines} lines, {equal_launches} launches");
}

/// ncu's source page, per (kernel base name, file, line): the memory columns summed over
/// every launch it lists.
fn ncu_source_page(csv_path: &Path) -> BTreeMap<(String, String, u64), BTreeMap<&'static str, f64>> {
    let columns: &[(&str, &[&str])] = &[
        ("tag_requests", &["L1 Tag Requests Global"]),
        ("sectors", &["L2 Theoretical Sectors Global", "L2 Sectors Global", "Memory L2 Transactions Global"]),
        ("ideal_sectors", &["L2 Theoretical Sectors Global Ideal", "L2 Sectors Global Ideal"]),
        ("excess_sectors", &["L2 Theoretical Sectors Global Excessive", "L2 Sectors Global Excessive"]),
        ("shared_wavefronts", &["L1 Wavefronts Shared", "L1 Sectors Shared"]),
        ("shared_ideal_wavefronts", &["L1 Wavefronts Shared Ideal", "L1 Sectors Shared Ideal"]),
    ];
    let text = std::fs::read_to_string(csv_path).unwrap();
    let mut out: BTreeMap<(String, String, u64), BTreeMap<&'static str, f64>> = BTreeMap::new();
    let (mut file, mut function, mut header): (String, String, Vec<String>) = Default::default();
    for line in text.lines().filter(|l| l.starts_with('"')) {
        let cells: Vec<String> = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(line.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap()
            .iter()
            .map(str::to_string)
            .collect();
        match cells[0].as_str() {
            "File Path" => file = cells[1].clone(),
            "Function Name" => function = base_name(&cells[1]).to_string(),
            "Line No" => header = cells,
            n if !n.is_empty() => {
                let line: u64 = n.parse().unwrap();
                let entry = out.entry((function.clone(), file.clone(), line)).or_default();
                for (field, labels) in columns {
                    let col = labels.iter().find_map(|l| header.iter().position(|h| h == l));
                    if let Some(v) = col.and_then(|c| cells.get(c)).and_then(|v| v.replace(',', "").parse::<f64>().ok())
                    {
                        *entry.entry(field).or_default() += v;
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|_, v| v.values().any(|&x| x > 0.0));
    out
}

#[test]
fn every_line_equals_ncu_2022_3_source_page() {
    for stem in [
        "microgpusim_vectoradd_100_32_gtx1080_2019",
        "NVIDIA-nsight-training_manual_nvtx_2022.3.0",
        "eschnett-IndexSpaces.jl_profile_2022.1.1",
    ] {
        let expected = ncu_source_page(&fixture(&format!("ncu/2022/import_ncu2022_3_{stem}_source_cuda_sass.csv")));
        assert!(!expected.is_empty(), "{stem}: the source page has no memory line");
        let ours = lines_json(&[], &report(stem));
        let mut got: BTreeMap<(String, String, u64), BTreeMap<&'static str, f64>> = BTreeMap::new();
        for r in ours["rows"].as_array().unwrap() {
            let (Some(file), Some(line)) = (r["file"].as_str(), r["line"].as_u64()) else { continue };
            let e =
                got.entry((base_name(r["kernel"].as_str().unwrap()).to_string(), file.to_string(), line)).or_default();
            for f in [
                "tag_requests",
                "sectors",
                "ideal_sectors",
                "excess_sectors",
                "shared_wavefronts",
                "shared_ideal_wavefronts",
            ] {
                if let Some(v) = r[f].as_f64() {
                    *e.entry(f).or_default() += v;
                }
            }
        }
        got.retain(|_, v| v.values().any(|&x| x > 0.0));
        assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "{stem}: lines");
        for (k, want) in &expected {
            for (f, v) in want {
                // ncu prints 0 where the report has no such counter; coalprof says null.
                assert_eq!(got[k].get(f).copied().unwrap_or(0.0), *v, "{stem} {k:?}: {f}");
            }
        }
    }
}

#[test]
fn a_report_without_line_info_says_so_and_keeps_instruction_rows() {
    let out = coalprof()
        .args(["lines", "--format", "json"])
        .arg(report("thedavidchu-speedy_scan_profile_2020.3.1"))
        .ok_stdout();
    let v = json(&out);
    let notices = v["notices"].to_string();
    assert!(notices.contains("-lineinfo"), "{notices}");
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["line"].is_null() && r["pc_offset"].is_u64()));
}

#[test]
fn a_report_without_source_counters_says_how_to_get_them() {
    let out = coalprof()
        .args(["lines", "--format", "json"])
        .arg(report("muellernico_raytracing_baseline1_rtx4080_ncu2024_3"))
        .ok_stdout();
    let v = json(&out);
    assert!(v["rows"].as_array().unwrap().is_empty());
    assert!(v["notices"].to_string().contains("SourceCounters"), "{}", v["notices"]);
}

#[test]
fn bad_inputs_are_one_error_and_an_exit_code() {
    let csv = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_source_sass.csv");
    let a = coalprof().arg("lines").arg(&csv).assert().code(3);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.starts_with("error: ") && err.contains("not an .ncu-rep"), "{err}");
    coalprof()
        .args(["lines", "--kernel", "("])
        .arg(report("NVIDIA-nsight-training_manual_nvtx_2022.3.0"))
        .assert()
        .code(2);
    coalprof()
        .args(["lines", "--kernel", "^nope$"])
        .arg(report("NVIDIA-nsight-training_manual_nvtx_2022.3.0"))
        .assert()
        .code(5);
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.ncu-rep");
    let bytes = std::fs::read(report("NVIDIA-nsight-training_manual_nvtx_2022.3.0")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let a = coalprof().arg("lines").arg(&cut).assert().code(3);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).starts_with("error: "));
}

#[test]
fn every_format_renders_the_same_rows() {
    let path = report("panjd123-cutlass_report80_2024.1.1");
    let v = lines_json(&[], &path);
    let n = v["rows"].as_array().unwrap().len();
    assert!(n > 0);
    let csv = coalprof().args(["lines", "--top", "0", "--format", "csv"]).arg(&path).ok_stdout();
    assert_eq!(String::from_utf8(csv).unwrap().lines().count(), n + 1, "csv: header + one line per row");
    let md = String::from_utf8(coalprof().args(["lines", "--format", "markdown"]).arg(&path).ok_stdout()).unwrap();
    assert!(md.contains("| location |") && md.contains("## `"), "{md}");
    let table = String::from_utf8(coalprof().args(["lines"]).arg(&path).ok_stdout()).unwrap();
    assert!(table.contains("location") && table.contains("sect/req"), "{table}");
}

#[test]
fn instruction_rows_carry_nvdisasm_sass_of_their_op() {
    if crate::util::real_nvdisasm("instruction_rows_carry_nvdisasm_sass").is_none() {
        return;
    }
    let v = lines_json(&["--by", "instruction"], &report("NVIDIA-nsight-training_manual_nvtx_2022.3.0"));
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        let sass = r["sass"].as_str().unwrap_or_else(|| panic!("no SASS: {r}"));
        let op = r["op"].as_str().unwrap();
        let want = if op.contains("load") { "LDG" } else { "STG" };
        assert!(sass.starts_with(want), "{op}: `{sass}`");
    }
}

/// nvdisasm runs once per cubin: a second `lines` of the same report reads its listing back from
/// the cache (`<kernel cache>/sass/`) and prints the same SASS. The nvdisasm found is a wrapper
/// that logs each run and then runs the real one; coalprof runs outside the checkout, so the
/// cache is under `XDG_CACHE_HOME`, private to the test.
#[test]
fn nvdisasm_listings_are_cached_by_cubin() {
    let Some(real) = crate::util::real_nvdisasm("nvdisasm_listings_are_cached_by_cubin") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (bin, log) = (dir.path().join("bin"), dir.path().join("runs.log"));
    std::fs::create_dir(&bin).unwrap();
    let wrapper = bin.join("nvdisasm");
    std::fs::write(&wrapper, format!("#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.display()))
        .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let rep = report("NVIDIA-nsight-training_manual_nvtx_2022.3.0");
    let run = || {
        let mut c = coalprof();
        c.current_dir(dir.path()).env("PATH", &path).env("XDG_CACHE_HOME", dir.path().join("cache"));
        c.args(["lines", "--by", "instruction", "--top", "0", "--format", "json"]).arg(&rep).ok_stdout()
    };
    let runs = || std::fs::read_to_string(&log).unwrap_or_default().lines().count();
    let first = run();
    let after_first = runs();
    assert!(after_first >= 1, "the wrapper nvdisasm did not run");
    let v = json(&first);
    assert!(v["rows"].as_array().unwrap().iter().all(|r| r["sass"].is_string()), "SASS on every row: {v}");
    let second = run();
    assert_eq!(runs(), after_first, "nvdisasm ran again for a cached cubin");
    assert_eq!(second, first, "the cached listing gives the same rows");
    let cached = std::fs::read_dir(dir.path().join("cache/coalprof/kernels/sass")).unwrap().count();
    assert_eq!(cached, after_first, "one listing per cubin disassembled");
}

#[test]
fn numbers_a_report_lacks_are_null_not_zero() {
    // A 2019 report: L2 transactions and executions per instruction, but no L1 tag requests
    // and no ideal. Requests are the executions; what needs the missing counters is null.
    let v = lines_json(&["--by", "instruction"], &report("microgpusim_vectoradd_100_32_gtx1080_2019"));
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        assert!(r["sectors"].is_u64() && r["requests"].is_u64(), "{r}");
        assert_eq!(r["requests"], r["executions"], "a request is one warp-level execution: {r}");
        let spr = r["sectors"].as_f64().unwrap() / r["requests"].as_f64().unwrap();
        assert_eq!(r["sectors_per_request"].as_f64(), Some(spr), "{r}");
        for absent in [
            "tag_requests",
            "lines_per_request",
            "ideal_sectors",
            "ideal_sectors_per_request",
            "excess_sectors",
            "excess_share",
        ] {
            assert!(r[absent].is_null(), "{absent} should be null: {r}");
        }
        // 100 threads in 32-lane warps: at most the width's 4 sectors per request, no waste.
        assert!(spr <= 4.0 && r["diagnosis"].is_null(), "{r}");
    }
}

/// The CUTLASS report's example kernel (`examples/13_two_tensor_op_fusion`, the user's code)
/// makes its accesses inside CUTLASS's headers (`cp_async`, `ldmatrix`): each stands on the
/// example's line that called them, with the header's line beside it (`via`) in the JSON, the
/// CSV and the gate's rows; the library's own GEMM kernel, with no
/// frame of the user's, stays on the header's lines.
#[test]
fn accesses_inside_library_headers_stand_on_the_users_line_with_the_header_beside() {
    let path = report("panjd123-cutlass_report80_2024.1.1");
    let ours = lines_json(&[], &path);
    let rows = ours["rows"].as_array().unwrap();
    let moved: Vec<&Value> = rows.iter().filter(|r| !r["via"].is_null()).collect();
    assert!(!moved.is_empty(), "no row was made inside a library");
    for r in &moved {
        let file = r["file"].as_str().unwrap();
        assert!(!is_library(file) && file.contains("/examples/"), "{file}");
        for place in r["via"].as_str().unwrap().split(", ") {
            let (f, line) = place.rsplit_once(':').unwrap();
            assert!(is_library(f) && f.contains("/include/cutlass/"), "{place}");
            assert!(line.parse::<u32>().unwrap() > 0, "{place}");
        }
    }
    assert!(moved.iter().all(|r| r["kernel"].as_str().unwrap().contains("B2bGemm")));
    let gemm: Vec<&Value> = rows.iter().filter(|r| !r["kernel"].as_str().unwrap().contains("B2bGemm")).collect();
    assert!(!gemm.is_empty() && gemm.iter().all(|r| r["via"].is_null() && is_library(r["file"].as_str().unwrap())));

    // The CSV says the same in its `via` column.
    let csv_text = coalprof().args(["--format", "csv", "lines", "--top", "0"]).arg(&path).ok_stdout();
    let mut reader = csv::Reader::from_reader(csv_text.as_slice());
    let via = reader.headers().unwrap().iter().position(|h| h == "via").expect("a via column");
    let vias: Vec<String> = reader.records().map(|r| r.unwrap()[via].to_string()).filter(|v| !v.is_empty()).collect();
    let want: Vec<String> = moved.iter().map(|r| r["via"].as_str().unwrap().to_string()).collect();
    assert_eq!(vias, want);

    // The markdown review and the page say it beside the user's line.
    let first = moved[0]["via"].as_str().unwrap().split(", ").next().unwrap().rsplit('/').next().unwrap();
    let markdown =
        String::from_utf8(coalprof().args(["--format", "markdown", "lines"]).arg(&path).ok_stdout()).unwrap();
    assert!(markdown.contains(&format!("made inside {first}, counted on the line that called it")), "{markdown}");
    let page = String::from_utf8(coalprof().args(["--format", "html", "lines"]).arg(&path).ok_stdout()).unwrap();
    assert!(page.contains(&format!("(made inside <code>{first}</code>)")), "the page's worst line names {first}");

    // The gate's line rows are the same lines (so an annotation lands on the user's code), and
    // say where in the library the access was made.
    let check = json(&coalprof().args(["--format", "json", "check"]).arg(&path).output().unwrap().stdout);
    let checks = check["checks"].as_array().unwrap();
    // (The gate checks the worst lines of each kernel, not all.)
    let mut checked = 0;
    for r in &moved {
        let place = format!("{}:{} ({})", r["file"].as_str().unwrap(), r["line"], r["op"].as_str().unwrap());
        let Some(c) = checks.iter().find(|c| c["row"].as_str().unwrap().ends_with(&place)) else { continue };
        checked += 1;
        let via = r["via"].as_str().unwrap().split(", ").map(|p| p.rsplit('/').next().unwrap()).collect::<Vec<_>>();
        let note = format!("row note: made inside {}, counted on the line that called it", via.join(", "));
        assert!(c["details"].as_str().unwrap().contains(&note), "{note}: {c:#}");
    }
    assert!(checked > 0, "the gate checked none of the rows made inside a library");
    assert!(
        checks.iter().all(|c| !c["row"].as_str().unwrap().contains("B2bGemm")
            || !c["row"].as_str().unwrap().contains("/include/cutlass/")),
        "a gate row of the example kernel stands on a CUTLASS header"
    );
}
