//! The wheel (`pyproject.toml`, maturin `bindings = "bin"`): built with `pip wheel`, installed
//! into fresh virtual environments whose `PATH` is that environment's `bin` and `/usr/bin:/bin`
//! only (no Rust, no CUDA), it gives a `coalprof` that runs the commands needing no external
//! tool, an `import coalprof` whose DataFrames hold the CLI's JSON rows, a `[cuda]` extra whose
//! nvdisasm `doctor` finds, and the GitHub Action's default install.
//!
//! Heavy: the wheel is a release build (minutes from clean; seconds when `target/release` is
//! fresh, which maturin reuses). These tests run when `COALPROF_WHEEL_TESTS` is set or in CI
//! (`COALPROF_REQUIRE_TOOLS`), and say SKIPPED otherwise. `COALPROF_WHEEL=FILE` tests a wheel
//! built elsewhere (the release workflow's) instead of building one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::action::{step, wasteful_workspace, FakeGithub, RULES, WASTEFUL};
use crate::util::{coalprof, fixture, json, root, skipped, tool_path, OkStdout};

/// Say a timing on stderr, where a test run shows it (`--nocapture` not needed).
fn timing(what: &str, since: Instant) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "wheel: {what} in {:.1} s", since.elapsed().as_secs_f64());
}

fn opted_in(test: &str) -> bool {
    let set = |v: &str| std::env::var_os(v).is_some_and(|v| !v.is_empty());
    if set("COALPROF_WHEEL_TESTS") || set("COALPROF_REQUIRE_TOOLS") {
        return true;
    }
    skipped(test, "builds and installs the wheel (a release build); set COALPROF_WHEEL_TESTS=1 to run it (CI does)");
    false
}

/// The Python that builds the wheel and makes the test environments (`.tools/maturin`, from
/// scripts/install-tools.sh), and the wheelhouse pandas, polars and NVIDIA's wheels come from.
fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    let python = tool_path(test, ".tools/maturin/bin/python")?;
    let wheelhouse = tool_path(test, ".tools/wheelhouse/STAMP")?;
    Some((python, wheelhouse.parent().unwrap().to_path_buf()))
}

/// The wheel, built once per test run: `pip wheel --no-deps -w DIR .` with the pinned maturin
/// (no build isolation, so nothing is fetched), into `target/wheel-test/`, with this build's
/// target folder so a fresh `cargo build --release` is reused.
pub(crate) fn wheel(test: &str) -> Option<PathBuf> {
    if !opted_in(test) {
        return None;
    }
    if let Some(given) = std::env::var_os("COALPROF_WHEEL") {
        let given = PathBuf::from(given);
        assert!(given.is_file(), "COALPROF_WHEEL={} is not a file", given.display());
        return Some(given);
    }
    let (python, _) = tools(test)?;
    static WHEEL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = WHEEL.get_or_init(|| {
        let target = Path::new(env!("CARGO_BIN_EXE_coalprof")).parent().unwrap().parent().unwrap().to_path_buf();
        let out = target.join("wheel-test");
        let _ = std::fs::remove_dir_all(&out);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![python.parent().unwrap().to_path_buf()]; // maturin's backend runs `maturin`
        dirs.extend(std::env::split_paths(&path));
        let start = Instant::now();
        let run = Command::new(&python)
            .args(["-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--disable-pip-version-check", "-w"])
            .arg(&out)
            .arg(root())
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap();
        if !run.status.success() {
            return Err(format!(
                "pip wheel failed:\n{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
        let found = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "whl"));
        let found = found.ok_or("pip wheel made no .whl")?;
        let size = std::fs::metadata(&found).unwrap().len() as f64 / 1e6;
        timing(&format!("built {} ({size:.1} MB)", found.file_name().unwrap().to_string_lossy()), start);
        Ok(found)
    });
    Some(built.clone().unwrap_or_else(|e| panic!("{e}")))
}

/// A fresh virtual environment in `dir` (from the tools' Python), run with `PATH` holding only
/// its `bin` and the system's.
struct Venv {
    dir: PathBuf,
    home: PathBuf,
}

impl Venv {
    fn new(python: &Path, dir: &Path) -> Venv {
        let venv = dir.join("venv");
        let made = Command::new(python).args(["-m", "venv"]).arg(&venv).output().unwrap();
        assert!(made.status.success(), "venv: {}", String::from_utf8_lossy(&made.stderr));
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Venv { dir: venv, home }
    }

    fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// `bash -c script` in `cwd`, the environment cleared but for `PATH` and `HOME`.
    fn sh(&self, cwd: &Path, script: &str) -> Output {
        Command::new("/bin/bash")
            .args(["-c", script])
            .current_dir(cwd)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin().display()))
            .env("HOME", &self.home)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    fn ok(&self, cwd: &Path, script: &str) -> String {
        let out = self.sh(cwd, script);
        assert!(
            out.status.success(),
            "`{script}` failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// pip from the wheelhouse only: nothing fetched.
    fn install(&self, wheelhouse: &Path, what: &str) {
        let start = Instant::now();
        self.ok(&self.home, &format!("pip install -q --no-index --find-links '{}' {what}", wheelhouse.display()));
        timing(&format!("pip install {}", what.replace('\'', "").rsplit('/').next().unwrap()), start);
    }
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display())
}

#[test]
fn wheel_gives_a_coalprof_that_runs_without_rust() {
    let test = "wheel_gives_a_coalprof_that_runs_without_rust";
    let Some(wheel) = wheel(test) else { return };
    let Some((python, wheelhouse)) = tools(test) else { return };
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let venv = Venv::new(&python, dir.path());
    venv.install(&wheelhouse, &q(&wheel));
    let cwd = dir.path(); // outside the checkout: nothing of its .tools/ is found by accident

    let found = venv.ok(cwd, "command -v coalprof; command -v cargo rustc || true");
    assert_eq!(
        found.trim(),
        venv.bin().join("coalprof").display().to_string(),
        "coalprof is the environment's, and no Rust is on PATH"
    );

    // The agent skill file ships in the package, as the repository has it.
    let skill = venv.ok(cwd, "python -c 'import importlib.util as u; print(u.find_spec(\"coalprof\").origin)'");
    let skill = Path::new(skill.trim()).with_file_name("SKILL.md");
    assert_eq!(
        std::fs::read_to_string(&skill).ok(),
        std::fs::read_to_string(root().join("python/coalprof/SKILL.md")).ok(),
        "{} is the repository's SKILL.md",
        skill.display()
    );

    // A held-out report, read by the wheel's binary: the same JSON as this build's.
    let report = fixture(WASTEFUL);
    for command in ["analyze", "lines"] {
        let from_wheel = json(venv.ok(cwd, &format!("coalprof {command} {} --format json", q(&report))).as_bytes());
        let here = json(&coalprof().args([command, &report.display().to_string(), "--format", "json"]).ok_stdout());
        assert_eq!(from_wheel["rows"], here["rows"], "{command}");
        assert!(!from_wheel["rows"].as_array().unwrap().is_empty(), "{command} found rows");
    }

    // Every command that needs no external tool.
    let profiles = cwd.join("profiles");
    let run =
        json(venv.ok(cwd, "coalprof run --pattern stride --backend model --out profiles --format json").as_bytes());
    assert!(run["rows"].as_array().unwrap().iter().all(|r| r["source"] == "predicted"));
    venv.ok(cwd, &format!("coalprof report {} --format html > review.html && test -s review.html", q(&profiles)));
    venv.ok(cwd, &format!("coalprof history {} --format json > /dev/null", q(&profiles)));
    venv.ok(
        cwd,
        &format!(
            "coalprof compare {} {} --format json > /dev/null",
            q(&report),
            q(&fixture("ncu-rep/AveryClapp-ESMM-Research_profile_2023.1.1.ncu-rep"))
        ),
    );
    let gate = venv.sh(cwd, &format!("coalprof check {} --format json", q(&profiles)));
    assert!(matches!(gate.status.code(), Some(0 | 1)), "check ran its gate: {gate:?}");
    venv.ok(cwd, "coalprof model 'lane * 32' --format json > /dev/null");
    assert!(venv.ok(cwd, "python -m coalprof --version").starts_with("coalprof "));
    timing("the CLI from the wheel", start);
}

/// A JSON row flattened by the rule the README states for `import coalprof`: fields stay
/// columns, `metrics` spread into columns of their own (`metrics.KEY` where a field has that
/// name), other objects into `field.key`, lists kept.
fn flatten(row: &Map<String, Value>) -> Map<String, Value> {
    fn nested(out: &mut Map<String, Value>, prefix: &str, v: &Map<String, Value>) {
        for (k, x) in v {
            match x {
                Value::Object(o) => nested(out, &format!("{prefix}{k}."), o),
                _ => {
                    out.insert(format!("{prefix}{k}"), x.clone());
                }
            }
        }
    }
    let mut out = Map::new();
    for (k, v) in row {
        match v {
            Value::Object(m) if k == "metrics" => {
                for (name, x) in m {
                    let column = if row.contains_key(name) { format!("metrics.{name}") } else { name.clone() };
                    out.insert(column, x.clone());
                }
            }
            Value::Object(o) => nested(&mut out, &format!("{k}."), o),
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Whether a DataFrame cell holds a JSON value: numbers as f64 (an integer column with nulls is
/// a float column), null as null or NaN.
fn same(cell: &Value, want: &Value) -> bool {
    match (cell, want) {
        (Value::Null, Value::Null) => true,
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        _ => cell == want,
    }
}

/// The frame's records equal the CLI's rows, flattened: same count, every flattened value in
/// its column, every other column of the row null.
fn assert_rows(what: &str, frame: &Value, rows: &Value) {
    let frame = frame.as_array().unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(frame.len(), rows.len(), "{what}: one DataFrame row per JSON row");
    assert!(!rows.is_empty(), "{what}: the fixture gives rows");
    for (i, (got, row)) in frame.iter().zip(rows).enumerate() {
        let got = got.as_object().unwrap();
        let want = flatten(row.as_object().unwrap());
        for (column, value) in &want {
            let cell = got.get(column).unwrap_or_else(|| panic!("{what}: row {i} has no column `{column}`"));
            assert!(
                same(cell, value),
                "{what}: row {i} `{column}`: DataFrame {:.300}, JSON {:.300}",
                cell.to_string(),
                value.to_string()
            );
        }
        for (column, cell) in got {
            assert!(
                want.contains_key(column) || cell.is_null(),
                "{what}: row {i} `{column}` is {cell}, absent from its JSON row"
            );
        }
    }
}

/// `compare`'s JSON in the long form the README gives the module: one record per compared row
/// and input that has it (`input`, its `label`, `gpu`, `arch`, `shape`, then its metrics).
fn compare_records(doc: &Value) -> Value {
    let inputs = doc["inputs"].as_array().unwrap();
    let mut out = Vec::new();
    for row in doc["rows"].as_array().unwrap() {
        for (i, values) in row["values"].as_array().unwrap().iter().enumerate() {
            if values.is_null() {
                continue;
            }
            out.push(serde_json::json!({
                "key": row["key"], "kernel": row["kernel"], "name": row["name"], "input": i,
                "label": inputs[i]["label"], "gpu": inputs[i]["gpu"], "arch": inputs[i]["arch"],
                "shape": row["shapes"][i], "metrics": values,
            }));
        }
    }
    Value::Array(out)
}

const MODULE_SCRIPT: &str = r#"
import json, math, sys
import coalprof

report, other, rules = sys.argv[1], sys.argv[2], sys.argv[3]

def records(frame):
    rows = frame.to_dicts() if hasattr(frame, "to_dicts") else frame.to_dict(orient="records")
    def clean(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        return v.tolist() if hasattr(v, "tolist") else v
    return [{k: clean(v) for k, v in r.items()} for r in rows]

out = {}
for lib in ("pandas", "polars"):
    analyzed = coalprof.analyze(report, frame=lib)
    out[lib] = {
        "type": type(analyzed).__mro__[1].__module__.split(".")[0],
        "analyze": records(analyzed),
        "lines": records(coalprof.lines(report, top=0, frame=lib)),
        "check": records(coalprof.check(report, rules=rules, frame=lib)),
        "compare": records(coalprof.compare(report, other, frame=lib)),
        "run": records(coalprof.run(pattern="stride", backend="model", out="runs", run_id=lib, frame=lib)),
        "html": analyzed._repr_html_(),
    }
gate = coalprof.check(report, rules=rules).coalprof
out["gate"] = [gate.verdict, gate.failed, gate.warned, gate.exit_code]
for name, call in [("missing", lambda: coalprof.analyze("missing.ncu-rep")),
                   ("usage", lambda: coalprof.run(pattern="no-such-pattern", backend="model"))]:
    try:
        call()
        out[name] = None
    except coalprof.CoalprofError as e:
        out[name] = [e.exit_code, e.error, str(e)]
print(json.dumps(out))
"#;

#[test]
fn python_module_returns_the_cli_json_as_dataframes() {
    let test = "python_module_returns_the_cli_json_as_dataframes";
    let Some(wheel) = wheel(test) else { return };
    let Some((python, wheelhouse)) = tools(test) else { return };
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let venv = Venv::new(&python, dir.path());
    venv.install(&wheelhouse, &format!("{} pandas polars", q(&wheel)));
    std::fs::write(dir.path().join("module.py"), MODULE_SCRIPT).unwrap();
    std::fs::write(dir.path().join("rules.toml"), RULES).unwrap();
    let report = fixture(WASTEFUL);
    let other = fixture("ncu-rep/AveryClapp-ESMM-Research_profile_2023.1.1.ncu-rep");
    let out =
        json(venv.ok(dir.path(), &format!("python module.py {} {} rules.toml", q(&report), q(&other))).as_bytes());

    let cli = |args: &[&str]| json(&coalprof().args(args).arg("--format").arg("json").ok_stdout());
    let path = report.display().to_string();
    let analyzed = cli(&["analyze", &path]);
    let lines = cli(&["lines", &path, "--top", "0"]);
    let compared = compare_records(&cli(&["compare", &path, &other.display().to_string()]));
    let runs = dir.path().join("runs").display().to_string();
    let ran = cli(&["run", "--pattern", "stride", "--backend", "model", "--out", &runs, "--run-id", "cli"]);
    // From the script's folder, so the rule's location (`rules.toml:2`) in the checks reads the same.
    let checked = coalprof()
        .current_dir(dir.path())
        .args(["check", &path, "--rules", "rules.toml", "--format", "json"])
        .output()
        .unwrap();
    let checked = json(&checked.stdout);
    for lib in ["pandas", "polars"] {
        assert_eq!(out[lib]["type"], lib, "a {lib} DataFrame when {lib} is asked for");
        assert_rows(&format!("{lib} analyze"), &out[lib]["analyze"], &analyzed["rows"]);
        assert_rows(&format!("{lib} lines"), &out[lib]["lines"], &lines["rows"]);
        assert_rows(&format!("{lib} check"), &out[lib]["check"], &checked["checks"]);
        assert_rows(&format!("{lib} compare"), &out[lib]["compare"], &compared);
        assert_rows(&format!("{lib} run"), &out[lib]["run"], &ran["rows"]);
        let html = out[lib]["html"].as_str().unwrap();
        assert!(
            html.starts_with("<iframe")
                && html.contains("srcdoc=\"&lt;!DOCTYPE html&gt;")
                && html.contains("&lt;table"),
            "{lib}: Jupyter shows coalprof's page: {}",
            &html[..200.min(html.len())]
        );
    }
    let verdicts = checked["checks"].as_array().unwrap();
    let n = |v: &str| verdicts.iter().filter(|c| c["verdict"] == v).count();
    assert_eq!(
        out["gate"],
        serde_json::json!(["fail", n("fail"), n("warn"), 1]),
        "a failed gate is a result with exit code 1"
    );
    let missing = out["missing"].as_array().expect("a missing report raises CoalprofError");
    assert_eq!(missing[0], 3);
    assert!(
        missing[1].as_str().unwrap().contains("missing.ncu-rep") && missing[2].as_str().unwrap().starts_with("error: "),
        "{missing:?}"
    );
    let usage = out["usage"].as_array().expect("an unknown pattern raises CoalprofError");
    assert_eq!(usage[0], 2);
    assert!(usage[1].as_str().unwrap().contains("no-such-pattern"), "{usage:?}");
    timing("the Python module (pandas and polars)", start);
}

/// Depends on coalprof's discovery of NVIDIA's PyPI tools beside its own executable
/// (`<prefix>/lib/python3*/site-packages/nvidia/cu*/bin/`), which `doctor` reports with where
/// each tool was found.
#[test]
fn cuda_extra_puts_nvdisasm_where_doctor_finds_it() {
    let test = "cuda_extra_puts_nvdisasm_where_doctor_finds_it";
    let Some(wheel) = wheel(test) else { return };
    let Some((python, wheelhouse)) = tools(test) else { return };
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let venv = Venv::new(&python, dir.path());
    venv.install(&wheelhouse, &format!("'{}[cuda]'", wheel.display()));
    let tool = venv.ok(
        dir.path(),
        "ls \"$(dirname \"$(command -v python)\")\"/../lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm",
    );
    assert!(!tool.trim().is_empty(), "the [cuda] extra installs nvdisasm into the environment");
    let doctor = venv.sh(dir.path(), "coalprof doctor 2>&1");
    let text = String::from_utf8_lossy(&doctor.stdout);
    let venv_dir = venv.dir.display().to_string();
    assert!(
        text.lines().any(|l| l.contains("nvdisasm") && l.contains(&venv_dir)),
        "doctor names the environment's nvdisasm (no PATH, no CUDA_HOME):\n{text}"
    );
    timing("the [cuda] extra", start);
}

/// The action's default install (`install: pip`), given the wheel: a venv in the runner's temp
/// folder, its `bin` on the job's `PATH` for the check step.
#[test]
fn action_installs_the_wheel_with_pip_and_gates_with_it() {
    let test = "action_installs_the_wheel_with_pip_and_gates_with_it";
    let Some(wheel) = wheel(test) else { return };
    let start = Instant::now();
    let mut gh = FakeGithub::new(vec![]); // no coalprof on PATH until the install step
    wasteful_workspace(&gh, RULES);
    let version = wheel.display().to_string();
    let runs = gh.run_action(&[("inputs", "reports/cutlass.ncu-rep"), ("rules", "rules.toml"), ("version", &version)]);
    let install = step(&runs, "Install coalprof");
    assert_eq!(install.status, 0, "{install:#?}");
    let check = step(&runs, "Check");
    assert_eq!(check.outputs["verdict"], "fail", "{check:#?}");
    assert!(check.stdout.lines().any(|l| l.starts_with("::error ")), "{check:#?}");
    assert_eq!(runs.last().unwrap().status, 1);
    timing("the action's pip install", start);
}

/// The `[triton]` extra in a fresh environment: Triton and numpy come with it (from PyPI, or
/// pip's cache), torch does not (`import torch` fails), and `coalprof triton` works there with
/// the environment's own Python found by discovery (no `COALPROF_PYTHON`). The kernel file
/// imports torch at its top, as users' files do: the counter reads its `@triton.jit` functions
/// from the syntax tree instead of importing it.
#[test]
fn triton_extra_installs_no_torch_and_coalprof_triton_runs() {
    let test = "triton_extra_installs_no_torch_and_coalprof_triton_runs";
    let Some(wheel) = wheel(test) else { return };
    let Some((python, wheelhouse)) = tools(test) else { return };
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let venv = Venv::new(&python, dir.path());
    // Triton is not in the wheelhouse: pip takes it from its index (its cache, after CI's
    // scripts/install-triton.sh), the rest from the wheelhouse.
    venv.ok(
        &venv.home,
        &format!(
            "pip install -q --disable-pip-version-check --find-links {} '{}[triton]'",
            q(&wheelhouse),
            wheel.display()
        ),
    );
    timing("pip install [triton]", start);
    let torch = venv.sh(dir.path(), "python -c 'import torch'");
    assert!(!torch.status.success(), "the [triton] extra must not install torch");
    let out = venv.ok(
        &root(),
        "coalprof triton tests/fixtures/triton/kernels.py::copy --grid 4 --arg x_ptr=f32[4096] \
         --arg y_ptr=f32[4096] --arg n=4096 --meta BLOCK=1024 --arch sm_80 --format json --top 0",
    );
    let doc = json(out.as_bytes());
    let rows = doc["rows"].as_array().unwrap();
    // 1024 f32 over 4 warps: 8 per lane in two ld.global.v4 (16 bytes each), 32 lanes × 16
    // contiguous bytes = 512 bytes = 16 sectors per request, all of them needed.
    for op in ["global load", "global store"] {
        let r = rows.iter().find(|r| r["op"] == op).unwrap_or_else(|| panic!("no {op}: {doc:#}"));
        assert_eq!(r["sectors_per_request"].as_f64(), Some(512.0 / 32.0), "{r:#}");
        assert_eq!(r["ideal_sectors_per_request"].as_f64(), Some(16.0), "{r:#}");
    }
    timing("the [triton] extra", start);
}
