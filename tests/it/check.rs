//! `commands::check::run` end to end on fixture runs: every exit code, every output, and the
//! promise that `exit_zero` changes the exit code and nothing else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use coalprof::exit::Exit;
use coalprof::gate::{parse_rules, Rule};
use coalprof::results::Results;
use coalprof::Error;
use coalprof::{baseline, check};
use quick_xml::events::Event;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs").join(name)
}

fn stride_run() -> Results {
    let text = std::fs::read_to_string(fixture("stride-sm90.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn rules(toml: &str) -> Vec<Rule> {
    parse_rules(toml, Path::new("metrics.toml"), &coalprof::metrics::Catalogue::builtin().directions()).unwrap()
}

fn max_rule(pattern: &str) -> Vec<Rule> {
    rules(&format!("[[gate]]\nmatch = \"{pattern}\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n"))
}

/// Everything one `check` run produced.
#[derive(Debug, PartialEq)]
struct Outcome {
    exit: Result<Exit, Exit>,
    stdout: String,
    junit: String,
    summary: String,
}

fn check_with(mut settings: check::CheckSettings, inputs: &[Results]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    settings.junit = Some(dir.path().join("reports/junit.xml"));
    settings.step_summary = Some(dir.path().join("step_summary.md"));
    let mut stdout = Vec::new();
    let exit = check::run(&settings, inputs, false, &mut stdout, &mut std::io::sink()).map_err(|e| e.exit());
    let read = |p: &Option<PathBuf>| std::fs::read_to_string(p.as_ref().unwrap()).unwrap_or_default();
    Outcome {
        exit,
        stdout: String::from_utf8(stdout).unwrap(),
        junit: read(&settings.junit),
        summary: read(&settings.step_summary),
    }
}

fn check(rules: Vec<Rule>) -> Outcome {
    check_with(check::CheckSettings { rules, ..Default::default() }, &[stride_run()])
}

/// (classname, failure count) for every testcase with a `<failure>`, read back with quick-xml.
fn junit_failures(xml: &str) -> BTreeMap<String, usize> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut classname = String::new();
    let mut failures = BTreeMap::new();
    loop {
        match reader.read_event().expect("valid XML") {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                let attr = e.try_get_attribute("classname").unwrap().expect("testcase has a classname");
                classname = attr.unescape_value().unwrap().into_owned();
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"failure" => {
                let kind = e.try_get_attribute("type").unwrap().unwrap();
                assert_eq!(kind.unescape_value().unwrap(), "threshold");
                *failures.entry(classname.clone()).or_default() += 1;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    failures
}

#[test]
fn a_max_rule_fails_when_the_stride_rows_are_included() {
    let out = check(max_rule("*"));
    assert_eq!(out.exit, Ok(Exit::GateFailed));
    assert!(out.stdout.starts_with("coalprof check: gate failed (5 failed, 2 passed)"), "{}", out.stdout);
}

#[test]
fn the_same_rule_passes_on_the_coalesced_rows_alone() {
    let out = check(max_rule("coalesced/*"));
    assert_eq!(out.exit, Ok(Exit::Ok));
    assert!(out.stdout.starts_with("coalprof check: gate passed (1 passed)"), "{}", out.stdout);
    assert!(junit_failures(&out.junit).is_empty());
}

#[test]
fn exit_zero_changes_the_exit_code_and_nothing_else() {
    let failing = check(max_rule("stride/*"));
    let settings = check::CheckSettings { rules: max_rule("stride/*"), exit_zero: true, ..Default::default() };
    let report_only = check_with(settings, &[stride_run()]);
    assert_eq!(failing.exit, Ok(Exit::GateFailed));
    assert_eq!(report_only.exit, Ok(Exit::Ok));
    assert_eq!(report_only.stdout, failing.stdout);
    assert_eq!(report_only.junit, failing.junit);
    assert_eq!(report_only.summary, failing.summary);
}

#[test]
fn junit_has_exactly_one_failure_per_failing_row() {
    let out = check(max_rule("*"));
    let failures = junit_failures(&out.junit);
    let expected: BTreeMap<String, usize> =
        [2, 4, 8, 16, 32].iter().map(|s| (format!("coalprof.sm_90.stride/stride_{s}"), 1)).collect();
    assert_eq!(failures, expected);
    assert!(
        out.junit
            .contains(r#"<testsuite name="coalprof/sm_90" tests="7" failures="5" errors="0" skipped="0" time="0">"#),
        "{}",
        out.junit
    );
    assert!(
        out.junit.contains("kernel: stride_read(const float*, float*, int, int)"),
        "the whole explanation is in the body"
    );
}

#[test]
fn nothing_matched_exits_5_after_writing_the_outputs() {
    let out = check(max_rule("transpose/*"));
    assert_eq!(out.exit, Err(Exit::NothingMatched));
    assert!(out.junit.contains("<testsuites name=\"coalprof\" tests=\"0\""), "{}", out.junit);
    assert!(out.summary.contains("nothing matched"), "{}", out.summary);
    let no_rules = check(Vec::new());
    assert_eq!(no_rules.exit, Err(Exit::NothingMatched));
}

#[test]
fn nothing_matched_names_the_rows_it_saw() {
    let mut sink = Vec::new();
    let settings = check::CheckSettings { rules: max_rule("transpose/*"), ..Default::default() };
    let err = check::run(&settings, &[stride_run()], false, &mut sink, &mut std::io::sink()).unwrap_err();
    assert!(err.hint().unwrap().contains("`stride/stride_1`"), "{:?}", err.hint());
}

#[test]
fn an_unreadable_baseline_exits_3() {
    for name in ["no-such-baseline.json", "baseline-truncated.json"] {
        let settings =
            check::CheckSettings { rules: max_rule("*"), baseline: Some(fixture(name)), ..Default::default() };
        let mut sink = Vec::new();
        let err = check::run(&settings, &[stride_run()], false, &mut sink, &mut std::io::sink()).unwrap_err();
        assert_eq!(err.exit(), Exit::Input, "{name}: {err}");
        assert!(err.to_string().contains(name), "the message names the file: {err}");
    }
}

#[test]
fn a_bad_rules_file_is_a_usage_error() {
    let text = "[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\nregres = \"+5%\"\n";
    let err = parse_rules(text, Path::new("metrics.toml"), &coalprof::metrics::Catalogue::builtin().directions())
        .unwrap_err();
    assert_eq!(err.exit(), Exit::Usage);
    assert!(err.to_string().contains("regres") && err.to_string().contains("metrics.toml"), "{err}");
    let err = parse_rules(
        "[[gate]]\nmatch = \"re:stride_(\"\nmetric = \"m\"\nmax = 1\n",
        Path::new("metrics.toml"),
        &coalprof::metrics::Catalogue::builtin().directions(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Usage { .. }));
}

#[test]
fn an_output_that_cannot_be_written_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let settings =
        check::CheckSettings { rules: max_rule("*"), junit: Some(blocker.join("junit.xml")), ..Default::default() };
    let mut sink = Vec::new();
    let err = check::run(&settings, &[stride_run()], false, &mut sink, &mut std::io::sink()).unwrap_err();
    assert_eq!(err.exit(), Exit::Input);
    assert!(!sink.is_empty(), "the table is still printed");
}

const GATE: &str = r#"
# A broad default, then one kernel tightened and one reference kernel demoted to a warning.
[[gate]]
match = "*"
metric = "global_load_sectors_per_request"
regress = "+5%"
min_delta = 0.05

[[gate]]
match = "coalesced/*"
metric = "global_load_sectors_per_request"
max = 4.5

[[gate]]
match = "stride/stride_32"
metric = "global_load_sectors_per_request"
severity = "warn"
max = 16

[[gate]]
match = "stride/*"
metric = "l2_sectors_per_request"
max = 8
"#;

fn regress_outcome(github: bool) -> Outcome {
    let settings = check::CheckSettings {
        rules: rules(GATE),
        baseline: Some(fixture("baseline-sm90.json")),
        github,
        ..Default::default()
    };
    check_with(settings, &[stride_run()])
}

#[test]
fn regression_against_the_baseline_verdict_table() {
    let out = regress_outcome(false);
    assert_eq!(out.exit, Ok(Exit::GateFailed));
    insta::assert_snapshot!("verdict_table", out.stdout);
}

#[test]
fn regression_against_the_baseline_step_summary() {
    insta::assert_snapshot!("step_summary", regress_outcome(false).summary);
}

#[test]
fn regression_against_the_baseline_junit() {
    insta::assert_snapshot!("junit", regress_outcome(false).junit);
}

#[test]
fn regression_against_the_baseline_annotations() {
    let out = regress_outcome(true);
    // The table is fenced (`::stop-commands::TOKEN` … `::TOKEN::`), the annotations follow it.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let token = lines[0].strip_prefix("::stop-commands::").expect("the table is fenced");
    let end = lines.iter().position(|l| *l == format!("::{token}::")).expect("the fence closes");
    assert!(lines[1].starts_with("coalprof check: gate failed"), "{}", out.stdout);
    let annotations: Vec<&str> = lines[end + 1..].iter().copied().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 2, "{annotations:#?}");
    assert!(
        annotations[0].starts_with("::error file=metrics.toml,line=3,title=coalprof sm_90 stride/stride_8%3A"),
        "{}",
        annotations[0]
    );
    assert!(annotations[1].starts_with("::warning file=metrics.toml,line=14,"), "{}", annotations[1]);
}

#[test]
fn baseline_update_then_check_passes_and_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coalprof.baseline.json");
    std::fs::copy(fixture("baseline-sm90.json"), &path).unwrap();
    baseline::update_for_rules(&[stride_run()], &path, &rules(GATE)).unwrap();
    let first = std::fs::read_to_string(&path).unwrap();
    assert!(first.ends_with("}\n"));
    assert!(first.contains("\"sm_80\""), "other architectures are kept");
    assert!(!first.contains("stride_64"), "the sm_90 section is rewritten whole");
    assert!(!first.contains("dram_amplification"), "only metrics a regress rule compares");
    baseline::update_for_rules(&[stride_run()], &path, &rules(GATE)).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first, "a second update is a no-op");

    let settings = check::CheckSettings { rules: rules(GATE), baseline: Some(path.clone()), ..Default::default() };
    let out = check_with(settings, &[stride_run()]);
    assert!(!out.stdout.contains("FAIL ") && !out.stdout.contains("NEW "), "{}", out.stdout);

    baseline::update(&[stride_run()], &path).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().contains("\"dram_amplification\": 2.003"));
}

#[test]
fn baseline_update_refuses_to_clobber_a_broken_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.json");
    std::fs::copy(fixture("baseline-truncated.json"), &path).unwrap();
    let err = baseline::update(&[stride_run()], &path).unwrap_err();
    assert_eq!(err.exit(), Exit::Input);
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(fixture("baseline-truncated.json")).unwrap());
}

/// `--format json` takes the same path as the table: the JUnit file is written, the exit code
/// is the gate's, annotations go to stderr (stdout stays JSON), and no matching rule is exit 5.
#[test]
fn check_as_json_writes_every_output_and_keeps_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (rules, junit) = (dir.path().join("rules.toml"), dir.path().join("junit.xml"));
    std::fs::write(&rules, "[[gate]]\nmatch = \"stride/*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n")
        .unwrap();
    let out = crate::util::coalprof()
        .args(["check", "--format", "json", "--github", "--rules"])
        .arg(&rules)
        .arg("--junit")
        .arg(&junit)
        .arg(fixture("stride-sm90.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = crate::util::json(&out.stdout);
    assert!(report.is_object(), "stdout is one JSON document");
    assert!(junit_failures(&std::fs::read_to_string(&junit).unwrap()).values().sum::<usize>() > 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("::error"), "annotations on stderr");
    std::fs::write(
        &rules,
        "[[gate]]\nmatch = \"nothing/*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n",
    )
    .unwrap();
    let out = crate::util::coalprof()
        .args(["check", "--format", "json", "--rules"])
        .arg(&rules)
        .arg(fixture("stride-sm90.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `check profiles/`, the folder `run` saves into, checks its newest run and says which.
#[test]
fn check_of_a_folder_of_runs_takes_the_newest_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("profiles");
    for id in ["older", "newer"] {
        crate::util::coalprof()
            .args(["run", "--pattern", "coalesced", "--backend", "model", "--size", "1M", "--run-id", id, "--out"])
            .arg(&out_dir)
            .assert()
            .success();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = crate::util::coalprof().arg("check").arg(&out_dir).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("using the newest") && e.contains("newer"), "{e}");
    let out = crate::util::coalprof().args(["report", "--format", "json"]).arg(&out_dir).output().unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("newer"));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = crate::util::coalprof().arg("check").arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_check_whose_rules_all_skip_is_no_pass() {
    // A rule on a metric no row has: every check skipped, so the gate must not read as passed,
    // in the table or the step summary, and it exits 0 (no rule failed).
    let out = check(rules("[[gate]]\nmatch = \"*\"\nmetric = \"l2_amplification\"\nmax = 2\n"));
    assert_eq!(out.exit, Ok(Exit::Ok));
    assert!(out.stdout.starts_with("coalprof check: nothing checked (7 skipped)"), "{}", out.stdout);
    assert!(!out.stdout.contains("gate passed") && !out.summary.contains("gate passed"), "{}", out.summary);
    assert!(out.summary.contains("nothing was checked"), "{}", out.summary);
    // One check that ran is a check: the rest may skip.
    let mixed = check(rules(
        "[[gate]]\nmatch = \"*\"\nmetric = \"l2_amplification\"\nmax = 2\n[[gate]]\nmatch = \"coalesced/*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n",
    ));
    assert!(mixed.stdout.starts_with("coalprof check: gate passed (1 passed, 7 skipped)"), "{}", mixed.stdout);
}

/// The default gate on a real report with neither kernel counters for coalescing nor
/// per-instruction counters (ncu 2024.3, RTX 4080): every rule skips, and instead of
/// `gate passed` it warns that nothing was checked, naming the counters the report lacks by
/// their ncu names and how to record them, on stderr, in the annotations and in the JSON.
#[test]
fn the_default_gate_on_a_report_without_counters_says_nothing_was_checked() {
    let report = crate::util::fixture("ncu-rep/muellernico_raytracing_baseline1_rtx4080_ncu2024_3.ncu-rep");
    let out = crate::util::coalprof().args(["--wide", "check", "--github"]).arg(&report).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("coalprof check: nothing checked (")), "{stdout}");
    assert!(!stdout.contains("gate passed"), "{stdout}");
    let warning = stderr.split("warning: ").nth(1).unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.starts_with("nothing was checked"), "{warning}");
    // The catalogue's names and ncu's for what is missing, and the ways to record it.
    let catalogue = std::fs::read_to_string(crate::util::root().join("metrics.toml")).unwrap();
    let ncu_name = catalogue
        .split("[raw.global_load_bytes_requested]")
        .nth(1)
        .and_then(|t| t.split('"').nth(1))
        .expect("metrics.toml names the counter");
    for needed in ["global_load_bytes_requested", ncu_name, "SourceCounters", "--set full", "line_sectors_over_ideal"] {
        assert!(warning.contains(needed), "{needed}: {warning}");
    }
    let annotation = (stdout.lines())
        .find(|l| l.starts_with("::warning ") && l.contains("nothing checked"))
        .unwrap_or_else(|| panic!("no annotation: {stdout}"));
    assert!(annotation.contains("global_load_bytes_requested"), "{annotation}");
    let json = crate::util::json(
        &crate::util::coalprof().args(["--format", "json", "check"]).arg(&report).output().unwrap().stdout,
    );
    assert!(json["nothing_checked"].as_str().unwrap().contains("global_load_bytes_requested"), "{json}");
    assert!(json["checks"].as_array().unwrap().iter().all(|c| c["verdict"] == "skipped"), "{json}");
}
