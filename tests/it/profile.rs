//! `coalprof profile -- CMD…`: arguments pass through verbatim, and the GPU path runs end to end
//! through a fake ncu that replays a real report (a test seam: there is no GPU here). The report
//! is read natively: the fake refuses `--import`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::util::{coalprof, fixture, json, OkStdout};

/// A fake `ncu`: for a profiling run it records its arguments, prints real `==PROF==` lines
/// and copies a real `.ncu-rep` to the `--export` path (`%q{VAR}` in it expanded, as ncu does).
/// `--import` fails loudly: `profile` reads its export natively.
pub(crate) fn fake_ncu(dir: &Path, report: &Path) -> PathBuf {
    let script = format!(
        r#"#!/bin/sh
case "$1" in
  --import) echo "==ERROR== unexpected ncu --import" >&2; exit 99;;
  --version) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2022.3.0.0 (build 0)"; exit 0;;
esac
printf '%s\n' "$@" > "{args}"
out=""
while [ $# -gt 0 ]; do [ "$1" = "--export" ] && out="$2"; shift; done
# ncu expands `%q{{VAR}}` in the report name to the variable's value (a rank under a launcher).
var=$(printf '%s' "$out" | sed -n 's/.*%q{{\([A-Za-z_][A-Za-z0-9_]*\)}}.*/\1/p')
[ -n "$var" ] && out=$(printf '%s' "$out" | sed "s/%q{{$var}}/$(printenv "$var")/")
echo '==PROF== Connected to process 4242 (/app)'
echo '==PROF== Profiling "vecAdd" - 0: 0%....50%....100% - 9 passes'
echo '==PROF== Disconnected from process 4242'
# Through a temporary name: ranks that expand to the same report name (the rank variable
# unset) overwrite it, as ncu's --force-overwrite does, instead of racing in `cp`.
cp "{report}" "$out.$$" && mv -f "$out.$$" "$out"
"#,
        args = dir.join("args.txt").display(),
        report = report.display()
    );
    let p = dir.join("ncu");
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn fake_ncu_replaying_a_real_report_drives_the_profile_path_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), &fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"));
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--kernel", "vecAdd", "--format", "json", "--out"])
        .arg(dir.path().join("runs"))
        .args(["--", "/opt/app", "a b", "it's \"quoted\"", "-x", "--flag=1"])
        .ok_stdout();
    let v = json(&out);
    assert_eq!(v["rows"][0]["launches"], 5);
    assert_eq!(v["provenance"]["backend"], "ncu");
    // The program and its arguments reached ncu verbatim, last, after everything ncu parses.
    let args = std::fs::read_to_string(dir.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(&args[args.len() - 5..], ["/opt/app", "a b", "it's \"quoted\"", "-x", "--flag=1"]);
    assert!(args.windows(2).any(|w| w == ["--kernel-name", "regex:vecAdd"]), "{args:?}");
    assert!(
        args.windows(2).any(|w| w == ["--cache-control", "all"])
            && args.windows(2).any(|w| w == ["--clock-control", "base"])
    );
    // The run folder holds the report, the results and run.json, whose provenance is the
    // results' (one record) plus the program it profiled.
    let run = std::fs::read_dir(dir.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    assert!(run.join("report.ncu-rep").is_file() && run.join("results.json").is_file());
    let record = json(&std::fs::read(run.join("run.json")).expect("profile writes run.json"));
    assert_eq!(record["backend"], "ncu");
    assert_eq!(record["ncu_version"], v["provenance"]["ncu_version"]);
    assert_eq!(record["settings"], v["provenance"]["settings"]);
    assert_eq!(record["program"], "/opt/app");
    assert_eq!(record["args"][1], "it's \"quoted\"");
}

#[test]
fn an_ncu_with_the_source_counters_section_collects_it_and_the_sources() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), &fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"));
    let run = |with_section: bool| -> Vec<String> {
        let sections = dir.path().join("sections");
        let _ = std::fs::remove_dir_all(&sections);
        if with_section {
            std::fs::create_dir_all(&sections).unwrap();
            std::fs::write(sections.join("SourceCounters.section"), "Identifier: \"SourceCounters\"\n").unwrap();
        }
        coalprof()
            .env("COALPROF_NCU", &ncu)
            .args(["profile", "--out"])
            .arg(dir.path().join("runs"))
            .args(["--", "/opt/app"])
            .ok_stdout();
        std::fs::read_to_string(dir.path().join("args.txt")).unwrap().lines().map(str::to_string).collect()
    };
    let args = run(true);
    assert!(args.windows(2).any(|w| w == ["--section", "SourceCounters"]), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["--import-source", "yes"]), "{args:?}");
    // An ncu without the section file would refuse `--section SourceCounters`: not asked.
    let args = run(false);
    assert!(!args.iter().any(|a| a == "SourceCounters"), "{args:?}");
}

#[test]
fn the_review_of_a_profile_shows_the_lines_that_lines_diagnoses() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixture("ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep");
    let ncu = fake_ncu(dir.path(), &report);
    coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--out"])
        .arg(dir.path().join("runs"))
        .args(["--", "/opt/app"])
        .ok_stdout();
    let run = std::fs::read_dir(dir.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let md = String::from_utf8(coalprof().args(["report", "--format", "markdown"]).arg(&run).ok_stdout()).unwrap();
    let lines = json(&coalprof().args(["lines", "--top", "3", "--format", "json"]).arg(&report).ok_stdout());
    let diagnosed: Vec<String> = lines["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["diagnosis"].is_null() && !r["line"].is_null())
        .map(|r| format!("{}:{}", r["file"].as_str().unwrap(), r["line"]))
        .collect();
    assert!(!diagnosed.is_empty());
    assert!(md.contains("**Worst lines**"), "{md}");
    for l in &diagnosed {
        assert!(md.contains(l.as_str()), "{l} missing from the review:\n{md}");
    }
}

#[test]
fn no_kernels_profiled_names_the_filter_and_exits_5() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = dir.path().join("ncu");
    std::fs::write(&ncu, "#!/bin/sh\necho '==WARNING== No kernels were profiled.'\nexit 0\n").unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--kernel", "nomatch", "--out"])
        .arg(dir.path())
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{e}");
    assert!(e.contains("the filter `nomatch`"), "{e}");
}

#[test]
fn counters_not_permitted_exits_4_with_how_to_enable_them() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = dir.path().join("ncu");
    let log =
        std::fs::read_to_string(fixture("ncu/unknown-version/log_ncu_err_nvgpuctrperm_target_processes_python.txt"))
            .unwrap();
    std::fs::write(dir.path().join("log.txt"), log).unwrap();
    std::fs::write(&ncu, format!("#!/bin/sh\ncat '{}'\nexit 1\n", dir.path().join("log.txt").display())).unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--out"])
        .arg(dir.path())
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("ERR_NVGPUCTRPERM") && e.contains("hint:"), "{e}");
}

/// The fake Open MPI launcher (tests/fake_gpu/mpirun): runs its command once per rank.
fn fake_mpirun() -> PathBuf {
    crate::util::root().join("tests/fake_gpu/mpirun")
}

/// `profile --per-rank -- mpirun -np 2 PROGRAM`: ncu runs under the launcher, one report per
/// rank, and every row, worst line and output says its rank; `analyze` and `lines` read the
/// rank reports with the same rank column.
#[test]
fn fake_mpirun_per_rank_profile_writes_a_report_per_rank_and_every_row_says_its_rank() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixture("ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep");
    let ncu = fake_ncu(dir.path(), &report);
    let runs = dir.path().join("runs");
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--per-rank", "--format", "json", "--out"])
        .arg(&runs)
        .arg("--")
        .arg(fake_mpirun())
        .args(["-np", "2", "/bin/true", "--app-flag"])
        .ok_stdout();
    let v = json(&out);
    let rows = v["rows"].as_array().unwrap();
    let ranks = |rank: u64| rows.iter().filter(|r| r["rank"] == rank).count();
    assert!(ranks(0) > 0 && ranks(0) == ranks(1) && ranks(0) * 2 == rows.len(), "{v:#}");
    assert_eq!(v["provenance"]["settings"]["ranks"], 2);
    let worst = v["worst_lines"].as_array().unwrap();
    assert!(worst.iter().any(|w| w["rank"] == 0) && worst.iter().any(|w| w["rank"] == 1), "{worst:?}");
    // ncu ran under the launcher: the program and its arguments last, after ncu's own, and the
    // report named by the rank variable Open MPI sets.
    let args = std::fs::read_to_string(dir.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(&args[args.len() - 2..], ["/bin/true", "--app-flag"]);
    let export = args.windows(2).find(|w| w[0] == "--export").map(|w| w[1]).unwrap();
    assert!(export.ends_with(".partial-rank-%q{OMPI_COMM_WORLD_RANK}.ncu-rep"), "{export}");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
    let rank_files: Vec<PathBuf> = ["rank-0.ncu-rep", "rank-1.ncu-rep"].iter().map(|f| run.join(f)).collect();
    assert!(rank_files.iter().all(|f| f.is_file()), "{:?}", std::fs::read_dir(&run).unwrap().collect::<Vec<_>>());

    // The terminal table and the markdown have a rank column.
    let table = String::from_utf8(coalprof().arg("report").arg(&run).ok_stdout()).unwrap();
    assert!(table.lines().any(|l| l.contains("kernel") && l.contains("rank")), "{table}");
    let md = String::from_utf8(coalprof().args(["report", "--format", "markdown"]).arg(&run).ok_stdout()).unwrap();
    assert!(md.contains("| kernel | rank | launches |"), "{md}");
    // `analyze` and `lines` of the rank reports: the same rows, each with its rank.
    let analyzed = json(&coalprof().args(["analyze", "--format", "json"]).args(&rank_files).ok_stdout());
    assert_eq!(analyzed["rows"].as_array().unwrap().len(), rows.len());
    assert!(analyzed["rows"].as_array().unwrap().iter().all(|r| r["rank"] == 0 || r["rank"] == 1));
    let csv = String::from_utf8(coalprof().args(["analyze", "--format", "csv"]).args(&rank_files).ok_stdout()).unwrap();
    assert!(csv.starts_with("pattern,variant,kernel,rank,id,"), "{csv}");
    let lines = json(&coalprof().args(["lines", "--format", "json"]).args(&rank_files).ok_stdout());
    let line_rows = lines["rows"].as_array().unwrap();
    let per = |rank: u64| line_rows.iter().filter(|r| r["rank"] == rank).count();
    assert!(per(0) > 0 && per(0) == per(1) && per(0) * 2 == line_rows.len());
    let text = String::from_utf8(coalprof().arg("lines").args(&rank_files).ok_stdout()).unwrap();
    assert!(text.contains("[rank 0]") && text.contains("[rank 1]"), "{text}");
    // `compare` of the run: a column group per rank, every kernel matched across them.
    let c = json(&coalprof().args(["compare", "--format", "json"]).arg(&run).ok_stdout());
    let labels: Vec<&str> = c["inputs"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.len() == 2 && labels[0].ends_with("rank 0") && labels[1].ends_with("rank 1"), "{labels:?}");
    let matched = c["rows"].as_array().unwrap();
    assert_eq!(matched.len(), ranks(0), "{c:#}");
    assert!(matched.iter().all(|r| r["values"].as_array().unwrap().iter().all(|v| !v.is_null())), "{c:#}");
}

/// A launcher whose ranks lack the rank variable leaves unnumbered reports: one `error:` line
/// that names the variable, exit 3; and a launcher coalprof does not know needs `--rank-env`.
#[test]
fn fake_mpirun_per_rank_without_the_rank_variable_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = fake_ncu(dir.path(), &fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"));
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--per-rank", "--rank-env", "NO_SUCH_RANK", "--out"])
        .arg(dir.path().join("runs"))
        .arg("--")
        .arg(fake_mpirun())
        .args(["-np", "2", "--", "/opt/app"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert!(errors.len() == 1 && errors[0].contains("`NO_SUCH_RANK`"), "{err}");
    let out = coalprof().args(["profile", "--per-rank", "--", "/bin/env", "/bin/true"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`env`") && err.contains("--rank-env"), "{err}");
}
