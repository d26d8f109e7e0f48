//! Help texts checked against behaviour where they state a fact: the sentence is in the help,
//! and the command does what it says (a help that drifts from the code fails here).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::util::{coalprof, fixture, ncu_rep_fixtures};

/// `coalprof ARGS --help`'s text.
fn help(args: &[&str]) -> String {
    let out = coalprof().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of `analyze --format json` over `input` (a path, or `-` with `stdin`).
fn rows(input: &str, stdin: Option<Vec<u8>>, ncu: &Path) -> serde_json::Value {
    let mut c = coalprof();
    c.env("COALPROF_NCU", ncu).env("PATH", "/usr/bin:/bin").args(["analyze", "--format", "json", input]);
    if let Some(bytes) = stdin {
        c.write_stdin(bytes);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "analyze {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["rows"].clone()
}

/// `analyze --help` on its inputs: `.ncu-rep` reports are read natively (no ncu runs: the ncu
/// it is given leaves a mark if it does, and none is on `PATH`), and `-` reads stdin (the same
/// rows as the file).
#[test]
fn analyze_help_says_how_it_reads_its_inputs_and_does_so() {
    let text = help(&["analyze"]);
    let said = "`.ncu-rep` reports (read natively: no ncu needed; see `--reader`), or `-` for stdin";
    assert!(text.replace('\n', " ").split_whitespace().collect::<Vec<_>>().join(" ").contains(said), "{text}");
    assert!(!text.contains("read through `ncu --import`"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let (ncu, mark) = (dir.path().join("ncu"), dir.path().join("ncu-ran"));
    std::fs::write(&ncu, format!("#!/bin/sh\necho \"$@\" > '{}'\nexit 1\n", mark.display())).unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reports = ncu_rep_fixtures();
    assert!(!reports.is_empty(), "the .ncu-rep fixtures are there");
    for report in &reports {
        let r = rows(report.to_str().unwrap(), None, &ncu);
        assert!(!r.as_array().unwrap().is_empty(), "{}: no rows", report.display());
    }
    assert!(!mark.exists(), "ncu ran: {}", std::fs::read_to_string(&mark).unwrap_or_default());

    let csv = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let from_file = rows(csv.to_str().unwrap(), None, &ncu);
    assert!(!from_file.as_array().unwrap().is_empty());
    assert_eq!(rows("-", Some(std::fs::read(&csv).unwrap()), &ncu), from_file, "`-` reads stdin like the file");
}

/// Every help text of the command line: `coalprof --help` and each visible subcommand's.
fn every_help() -> Vec<(String, String)> {
    let top = help(&[]);
    let mut names: Vec<Vec<&str>> = vec![vec![]];
    let commands = top.split("Commands:").nth(1).unwrap().split("\n\n").next().unwrap();
    // A command's line is indented two spaces; a wrapped description, more.
    for line in commands.lines().filter(|l| l.starts_with("  ") && !l.starts_with("   ")) {
        let name = line.split_whitespace().next().unwrap();
        match name {
            "help" => {}
            "baseline" => names.push(vec!["baseline", "update"]),
            _ => names.push(vec![name]),
        }
    }
    assert!(names.len() > 10, "the subcommands are listed: {commands}");
    names.iter().map(|n| (n.join(" "), words(&help(n)))).collect()
}

/// `text` with its line breaks and indentation as single spaces (clap wraps the help).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A file a help text names (`docs/guide/commands/model.md`) is in the repository, and the
/// section it names after it ("Modelling your own layout") is a heading of that file; no help
/// sends a reader to a section of the README that the README no longer has.
#[test]
fn every_file_and_section_a_help_names_is_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = regex::Regex::new(r"`((?:docs|scripts|kernels|tests|python)/[^`\s]+)`").unwrap();
    let section = regex::Regex::new(r#"`([^`\s]+\.md)`, "([^"]+)""#).unwrap();
    let readme = regex::Regex::new(r#"README's "([^"]+)""#).unwrap();
    let heading = |file: &Path, title: &str| {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        text.lines().any(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == title)
    };
    let mut named = 0;
    for (cmd, text) in every_help() {
        for c in path.captures_iter(&text) {
            assert!(root.join(&c[1]).exists(), "`{cmd} --help` names `{}`, which is not there", &c[1]);
            named += 1;
        }
        for c in section.captures_iter(&text) {
            assert!(heading(&root.join(&c[1]), &c[2]), "`{cmd} --help`: `{}` has no section \"{}\"", &c[1], &c[2]);
        }
        for c in readme.captures_iter(&text) {
            assert!(heading(&root.join("README.md"), &c[1]), "`{cmd} --help`: the README has no \"{}\"", &c[1]);
        }
    }
    assert!(named > 0, "the check found the files the helps name");
    let model = words(&help(&["model"]));
    assert!(model.contains(r#"`docs/guide/commands/model.md`, "Modelling your own layout""#), "{model}");
}

/// `--trust-input`'s help states the bounds it lifts; they are the reader's (`untrusted::`
/// tests hold the reader to them).
#[test]
fn trust_input_help_states_the_readers_bounds() {
    use coalprof::parse::ncu_rep::{EXPANSION_FLOOR, MAX_EXPANSION, MAX_MODULE, MAX_RESULT};
    let said = format!(
        "a compressed report expanding past {MAX_EXPANSION}× its size (at least {} MiB), a result item over {} MiB, \
         a module over {} MiB",
        EXPANSION_FLOOR >> 20,
        MAX_RESULT >> 20,
        MAX_MODULE >> 20
    );
    for (cmd, text) in every_help() {
        assert!(text.contains(&said), "`{cmd} --help` states other bounds than the reader's: {text}");
    }
}

/// `profile FILE.cu`'s help states how coalprof compiles it for the simulator: the flags the
/// simulator's build is given (`tools::gpgpusim`, which `sim_programs::` runs).
#[test]
fn profile_help_states_the_simulators_nvcc_flags() {
    use coalprof::tools::gpgpusim::{ARCH, NVCC_FLAGS};
    let text = words(&help(&["profile"]));
    let (cudart, arch) = (NVCC_FLAGS[..2].join(" "), format!("-arch={ARCH}"));
    assert_eq!(cudart, "-cudart shared");
    assert!(text.contains(&format!("(CUDA 11.8, `{cudart} -lineinfo {arch}`)")), "{text}");
}

/// `setup --help` names the tool home in the order it is found: `COALPROF_HOME`, else
/// `$XDG_DATA_HOME/coalprof`, else `~/.local/share/coalprof`; `setup --dry-run` installs there.
#[test]
fn setup_help_names_the_tool_home_in_the_order_it_is_found() {
    let text = words(&help(&["setup"]));
    assert!(
        text.contains("(`COALPROF_HOME`, else `$XDG_DATA_HOME/coalprof`, else `~/.local/share/coalprof`)"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (own, xdg, home) = (dir.path().join("own"), dir.path().join("xdg"), dir.path().join("home"));
    let target = |own: Option<&Path>, xdg: Option<&Path>| {
        let mut c = coalprof();
        c.env_remove("COALPROF_HOME").env_remove("XDG_DATA_HOME").env("HOME", &home);
        if let Some(o) = own {
            c.env("COALPROF_HOME", o);
        }
        if let Some(x) = xdg {
            c.env("XDG_DATA_HOME", x);
        }
        let out = c.args(["setup", "triton", "--dry-run"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let says =
        |out: String, at: &Path| assert!(out.contains(&at.display().to_string()), "not in {}: {out}", at.display());
    says(target(Some(&own), Some(&xdg)), &own);
    says(target(None, Some(&xdg)), &xdg.join("coalprof"));
    says(target(None, None), &home.join(".local/share/coalprof"));
}

/// `--format`'s help says which commands write which formats; each command writes those (exit
/// 0, or 1 for a failed gate) and refuses the others with a usage error naming the format.
#[test]
fn format_help_says_which_command_writes_which_format_and_each_does() {
    let top = help(&[]);
    let block = top.split("--format <FORMAT>").nth(1).unwrap().split("[default:").next().unwrap();
    let formats: Vec<String> =
        (block.lines()).filter_map(|l| l.trim().strip_prefix("- ")?.split(':').next().map(str::to_string)).collect();
    assert!(formats.len() >= 9 && formats.contains(&"svg".to_string()), "{formats:?}");
    let said = "`run`, `profile`, `analyze` and `report` write all but svg; `lines`, `triton` and `check` table, \
                markdown, json, csv, html, summary and summary-md; `compare` table, markdown, json, csv and html; \
                `history` those and svg. A format a command does not write is refused (exit 2)";
    assert!(words(&top).contains(said), "{top}");
    /// Which formats each kind of report is written in, as the sentence says.
    type Writes = fn(&str) -> bool;
    let results: Writes = |f| f != "svg";
    let tables: Writes = |f| ["table", "markdown", "json", "csv", "html"].contains(&f);
    let lines: Writes = |f| ["table", "markdown", "json", "csv", "html", "summary", "summary-md"].contains(&f);
    let history: Writes = |f| ["table", "markdown", "json", "csv", "html", "svg"].contains(&f);

    // Two saved runs (the model, small), for `report` and `history`.
    let dir = tempfile::tempdir().unwrap();
    for id in ["a", "b"] {
        let run = ["run", "--pattern", "coalesced", "--backend", "model", "--size", "64K", "--format", "json"];
        let out = coalprof().args(run).args(["--run-id", id, "--out"]).arg(dir.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let csv = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let rep = fixture("ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep");
    let (csv, rep, runs) = (csv.to_str().unwrap(), rep.to_str().unwrap(), dir.path().to_str().unwrap());
    let run_a = dir.path().join("a");
    let commands: Vec<(Vec<&str>, Writes)> = vec![
        (vec!["analyze", csv], results),
        (vec!["report", run_a.to_str().unwrap()], results),
        (vec!["lines", rep], lines),
        (vec!["check", csv], lines),
        (vec!["compare", csv, csv], tables),
        (vec!["history", runs], history),
    ];
    for (args, writes) in &commands {
        for f in &formats {
            let out = coalprof().args(args).args(["--format", f]).output().unwrap();
            let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
            if writes(f) {
                assert!(matches!(code, Some(0 | 1)), "{args:?} --format {f}: {code:?} {err}");
                assert!(!out.stdout.is_empty(), "{args:?} --format {f} wrote nothing");
            } else {
                assert_eq!(code, Some(2), "{args:?} --format {f} should be refused: {err}");
                assert!(err.contains(&format!("--format {f}")), "{args:?} --format {f}: {err}");
            }
        }
    }
}
