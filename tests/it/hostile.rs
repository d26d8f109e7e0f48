//! Names stay text: a run, an ncu CSV and an `.ncu-rep` whose kernel names (and a run's variants
//! and notes) carry a newline followed by a GitHub workflow command, or terminal escapes. In every
//! human-readable format (table, markdown, CSV; `check --github`) no line that data wrote may
//! start a workflow command, and no raw ESC may reach stdout.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{coalprof, fake_report, fixture};

const INJECTED: &str = "evil\n::warning::injected";
const TERMINAL: &str = "\x1b]0;title\x07\x1b[2J";
/// In an ncu CSV: a carriage return (a terminal goes back to the start of the line, and some
/// readers split lines there). A quoted newline is not read as part of a field by the CSV
/// parser (it drops a line that does not start with a quote: exit 3, nothing printed).
const RETURNED: &str = "evil\r::warning::injected";

/// A run's results.json (the H200 stride fixture) whose rows are renamed: half become user
/// kernels named `INJECTED`/`TERMINAL`, the others keep their pattern with hostile variants; a
/// note and a notice carry the names too.
fn hostile_run(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("runs/stride-sm90.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let rows = doc["rows"].as_array_mut().unwrap();
    assert!(rows.len() >= 4);
    for (i, row) in rows.iter_mut().enumerate() {
        let name = if i % 2 == 0 { INJECTED } else { TERMINAL };
        row["kernel"] = json!(format!("{name}{i}"));
        if i < 2 {
            row["pattern"] = Value::Null;
            row["variant"] = Value::Null;
        } else {
            row["variant"] = json!(format!("{name}-{i}"));
        }
        row["notes"] = json!([format!("note on {name}")]);
    }
    doc["notices"] = json!([format!("a notice naming {INJECTED} and {TERMINAL}")]);
    // `schema` first, as coalprof writes it (a results.json is known by it near the start).
    let schema = doc.as_object_mut().unwrap().remove("schema").unwrap();
    let text = serde_json::to_string_pretty(&doc).unwrap().replacen('{', &format!("{{\n  \"schema\": {schema},"), 1);
    let run = dir.join("hostile-run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("results.json"), text).unwrap();
    run.join("results.json")
}

/// The vectoradd raw page of ncu 2022.3 with its one kernel renamed: launches 0–2 `RETURNED`,
/// 3–4 `TERMINAL`.
fn hostile_csv(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture(
        "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv",
    ))
    .unwrap();
    let kernel = "\"void vecAdd<float>(float*,float*,float*,int)\"";
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let id = line.split(',').next().unwrap_or_default().trim_matches('"').parse::<u32>().ok();
        match id {
            Some(id) if line.contains(kernel) => {
                let name = if id < 3 { RETURNED } else { TERMINAL };
                out.push_str(&line.replacen(kernel, &format!("\"{name}\""), 1));
            }
            _ => out.push_str(line),
        }
    }
    assert!(out.contains(RETURNED) && out.contains(TERMINAL), "the fixture's kernel name was replaced");
    let path = dir.join("hostile.csv");
    std::fs::write(&path, out).unwrap();
    path
}

/// An `.ncu-rep` from the fake ncu's writer (a named fake: tests/fake_gpu/ncu
/// `--fake-write-report`), two launches whose demangled names are the hostile ones, with counters
/// that fail a gate rule.
pub(crate) fn hostile_rep(dir: &Path) -> PathBuf {
    let launch = |name: &str, sectors: u32| crate::util::fake_load_launch("evil", name, sectors);
    let spec = json!({ "program": "evil", "layout": "2024", "launches": [launch(INJECTED, 32), launch(TERMINAL, 16)] });
    fake_report(&spec.to_string(), &dir.join("hostile.ncu-rep"))
}

/// A rule every hostile row fails (so annotations are printed) or at least is checked against.
fn rules(dir: &Path, metric: &str, max: f64) -> PathBuf {
    let path = dir.join(format!("{metric}.toml"));
    std::fs::write(&path, format!("[[gate]]\nmatch = \"*\"\nmetric = \"{metric}\"\nmax = {max}\n")).unwrap();
    path
}

/// The lines of `text` that start a workflow command, apart from coalprof's own: its
/// annotations and the fence around the table (`::stop-commands::T` … `::T::`).
fn foreign_commands(text: &str) -> Vec<String> {
    let mut token: Option<String> = None;
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("::stop-commands::") {
            assert!(token.is_none() && t.len() >= 16, "one fence, with a long token: {line}");
            token = Some(t.to_string());
            fenced = true;
            continue;
        }
        if fenced && token.as_ref().is_some_and(|t| line == format!("::{t}::")) {
            fenced = false;
            continue;
        }
        if !line.starts_with("::") {
            continue;
        }
        let own = !fenced
            && ["::error ", "::warning ", "::notice "].iter().any(|p| line.starts_with(p))
            && line.contains("title=coalprof");
        if !own {
            out.push(line.to_string());
        }
    }
    assert!(!fenced, "the fence is closed: {text}");
    out
}

/// No raw ESC, no line that data wrote starting with `::`.
fn assert_inert(what: &str, out: &std::process::Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.stdout.contains(&0x1b), "{what}: a raw ESC on stdout:\n{stdout}");
    assert!(!out.stdout.contains(&0x07), "{what}: a raw BEL on stdout:\n{stdout}");
    assert!(!out.stdout.contains(&b'\r'), "{what}: a raw CR on stdout:\n{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("::warning::injected")), "{what}:\n{stdout}");
    let foreign = foreign_commands(&stdout);
    assert!(foreign.is_empty(), "{what}: lines data wrote start a workflow command: {foreign:?}\n{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.lines().any(|l| l.starts_with("::")), "{what}: stderr:\n{stderr}");
    assert!(!out.stderr.contains(&0x1b), "{what}: a raw ESC on stderr:\n{stderr}");
}

/// Each human format of `analyze`/`report` on `input`, then `check --github` with `rules`.
fn every_format(input: &Path, rules: &Path, escaped: &[&str]) {
    let command = if input.extension().is_some_and(|e| e == "json") { "report" } else { "analyze" };
    for format in ["table", "markdown", "csv"] {
        let out = coalprof().arg(command).arg(input).args(["--format", format]).output().unwrap();
        assert!(out.status.success(), "{command} --format {format}: {}", String::from_utf8_lossy(&out.stderr));
        assert_inert(&format!("{command} --format {format}"), &out);
        let text = String::from_utf8_lossy(&out.stdout);
        for e in escaped {
            assert!(text.contains(e), "{command} --format {format} shows the name escaped, `{e}`:\n{text}");
        }
    }
    let summary = tempfile::NamedTempFile::new().unwrap();
    let out = coalprof()
        .arg("check")
        .arg(input)
        .arg("--rules")
        .arg(rules)
        .args(["--github", "--exit-zero"])
        .env("GITHUB_STEP_SUMMARY", summary.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "check --github: {}", String::from_utf8_lossy(&out.stderr));
    assert_inert("check --github", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("::error ")), "the rule fails, so there are annotations: {stdout}");
    assert!(stdout.contains(escaped[0]), "the table shows the name, escaped: {stdout}");
    let md = std::fs::read(summary.path()).unwrap();
    assert!(!md.contains(&0x1b), "the step summary carries no ESC");
    let md = String::from_utf8_lossy(&md);
    assert!(!md.lines().any(|l| l.starts_with("::")), "{md}");
}

#[test]
fn hostile_names_in_a_run_stay_text_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let run = hostile_run(dir.path());
    let rules = rules(dir.path(), "global_load_sectors_per_request", 4.5);
    every_format(&run, &rules, &["evil\\n::warning::injected", "\\x1b]0;title\\x07\\x1b[2J"]);
}

#[test]
fn hostile_names_in_an_ncu_csv_stay_text_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let csv = hostile_csv(dir.path());
    let rules = rules(dir.path(), "duration", 0.0);
    every_format(&csv, &rules, &["evil\\r::warning::injected", "\\x1b]0;title\\x07\\x1b[2J"]);
}

#[test]
fn hostile_names_in_a_fake_ncu_report_stay_text_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let rep = hostile_rep(dir.path());
    let rules = rules(dir.path(), "global_load_sectors_per_request", 4.5);
    every_format(&rep, &rules, &["evil\\n::warning::injected", "\\x1b]0;title\\x07\\x1b[2J"]);
}

/// A source whose name a shell would read (`$(…)`): nvcc runs its steps through `sh -c` with
/// file names in double quotes, so it would run the command. coalprof refuses the name before
/// nvcc starts: one error naming it, exit 3, and the command never runs.
#[test]
fn a_source_named_like_shell_code_is_refused_and_never_run() {
    let tools = crate::util::root().join(".tools");
    let need = [tools.join("gpgpu-sim/lib/libcudart.so"), tools.join("cuda11/bin/nvcc")];
    if let Some(p) = need.iter().find(|p| !p.exists()) {
        crate::util::skipped("a_source_named_like_shell_code", &format!("{} is missing", p.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let name = "k$(touch PWNED).cu";
    std::fs::write(dir.path().join(name), "__global__ void k() {}\nint main() { k<<<1, 32>>>(); }\n").unwrap();
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["profile", "--backend", "sim", name])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert_eq!(e.matches("error:").count(), 1, "{e}");
    assert!(e.contains("k$(touch PWNED).cu") && e.contains("shell"), "{e}");
    assert!(!dir.path().join("PWNED").exists(), "nvcc ran the file name as shell code");
}
