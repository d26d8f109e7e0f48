//! The GitHub Action (`action.yml`) and the release workflow: both parse as YAML and name only
//! what exists, and the action's steps, run in order the way the Actions runner runs them
//! (`bash --noprofile --norc -eo pipefail`, each step with its own `GITHUB_OUTPUT` and
//! `GITHUB_STEP_SUMMARY`, `GITHUB_PATH` prepended to later steps' `PATH`) in a fake GitHub
//! environment, gate a real report of wasteful kernels: annotations, the markdown summary, the
//! outputs, and the step's failure. In source mode they set up a tool home (its cache step's
//! path and key checked), run `.cu` programs in GPGPU-Sim and a Triton kernel through its
//! interpreter, and annotate the strided store's line; hostile names and arguments stay data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;
use serde_norway::Value;

use crate::util::{coalprof, fixture, json, root};

/// A real ncu 2024.1 report of two CUTLASS GEMM kernels whose global loads take 15.5 and 16
/// sectors per request, with source counters (their loads' lines).
pub(crate) const WASTEFUL: &str = "ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep";

/// Kernels over 8 sectors per request fail; source lines over 8 warn.
pub(crate) const RULES: &str = r#"
[[gate]]
match = "*"
metric = "global_load_sectors_per_request"
max = 8

[[gate]]
match = "*"
metric = "line_sectors_per_request"
max = 8
severity = "warn"
"#;

fn yaml(rel: &str) -> Value {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not valid YAML: {e}"))
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn mapping(v: &Value, key: &str) -> BTreeMap<String, String> {
    let Some(m) = v.get(key).and_then(Value::as_mapping) else { return BTreeMap::new() };
    m.iter()
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => panic!("{key}.{k:?}: not a scalar: {other:?}"),
            };
            (k.as_str().expect("string keys").to_string(), value)
        })
        .collect()
}

/// Every `${{ … }}` expression in `s`, trimmed.
fn expressions(s: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\$\{\{(.*?)\}\}").unwrap();
    re.captures_iter(s).map(|c| c[1].trim().to_string()).collect()
}

/// One step of action.yml as the runner would see it.
struct Step {
    name: String,
    id: Option<String>,
    run: Option<String>,
    uses: Option<String>,
    shell: Option<String>,
    condition: Option<String>,
    env: BTreeMap<String, String>,
    with: BTreeMap<String, String>,
}

fn action_steps(action: &Value) -> Vec<Step> {
    let steps = action["runs"]["steps"].as_sequence().expect("runs.steps is a list");
    steps
        .iter()
        .map(|s| Step {
            name: text(s, "name").unwrap_or("(unnamed)").to_string(),
            id: text(s, "id").map(str::to_string),
            run: text(s, "run").map(str::to_string),
            uses: text(s, "uses").map(str::to_string),
            shell: text(s, "shell").map(str::to_string),
            condition: text(s, "if").map(str::to_string),
            env: mapping(s, "env"),
            with: mapping(s, "with"),
        })
        .collect()
}

/// What one step did.
#[derive(Debug)]
pub(crate) struct StepRun {
    pub name: String,
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub outputs: BTreeMap<String, String>,
    pub summary: String,
    /// For a `uses:` step (not run here): its `with:` values, evaluated.
    pub with: BTreeMap<String, String>,
}

/// A fake Actions runner for action.yml: a workspace, a runner temp folder, per-step output and
/// summary files, and the `PATH` that `GITHUB_PATH` grows.
pub(crate) struct FakeGithub {
    dir: tempfile::TempDir,
    pub workspace: PathBuf,
    path: Vec<PathBuf>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    /// The job's own `env:` (every step sees it, under the step's own).
    pub env: BTreeMap<String, String>,
}

impl FakeGithub {
    /// `path`: the folders before `/usr/bin:/bin` on the job's `PATH`.
    pub(crate) fn new(path: Vec<PathBuf>) -> FakeGithub {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        for sub in ["workspace", "runner-temp", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        FakeGithub { dir, workspace, path, outputs: BTreeMap::new(), env: BTreeMap::new() }
    }

    fn job_path(&self) -> String {
        // The runner prepends every line of GITHUB_PATH, the newest first.
        let added = std::fs::read_to_string(self.dir.path().join("github_path")).unwrap_or_default();
        let mut path: Vec<String> = added.lines().rev().map(str::to_string).collect();
        path.extend(self.path.iter().map(|p| p.display().to_string()));
        path.extend(["/usr/bin".to_string(), "/bin".to_string()]);
        path.join(":")
    }

    fn evaluate(&self, s: &str, inputs: &BTreeMap<String, String>) -> String {
        let re = regex::Regex::new(r"\$\{\{(.*?)\}\}").unwrap();
        re.replace_all(s, |c: &regex::Captures| {
            let e = c[1].trim();
            if let Some(name) = e.strip_prefix("inputs.") {
                inputs.get(name).cloned().unwrap_or_else(|| panic!("`{e}`: no such input in action.yml"))
            } else if let Some(rest) = e.strip_prefix("steps.") {
                let (id, name) =
                    rest.split_once(".outputs.").unwrap_or_else(|| panic!("`{e}`: not steps.ID.outputs.NAME"));
                self.outputs.get(id).and_then(|o| o.get(name)).cloned().unwrap_or_default()
            } else {
                panic!("`{e}`: an expression this fake runner does not know; keep action.yml's env simple")
            }
        })
        .into_owned()
    }

    /// Run action.yml's steps in order with `given` inputs (the rest take their defaults),
    /// stopping after the first run step that fails, as the runner does.
    pub(crate) fn run_action(&mut self, given: &[(&str, &str)]) -> Vec<StepRun> {
        self.run_action_until(given, None)
    }

    /// [`FakeGithub::run_action`], stopping after the step named `last` when one is given.
    pub(crate) fn run_action_until(&mut self, given: &[(&str, &str)], last: Option<&str>) -> Vec<StepRun> {
        let action = yaml("action.yml");
        let mut inputs: BTreeMap<String, String> = BTreeMap::new();
        for (name, spec) in action["inputs"].as_mapping().expect("inputs").iter() {
            let name = name.as_str().unwrap().to_string();
            inputs.insert(name, text(spec, "default").unwrap_or("").to_string());
        }
        for (name, value) in given {
            assert!(inputs.contains_key(*name), "action.yml has no input `{name}`");
            inputs.insert(name.to_string(), value.to_string());
        }
        let mut runs = Vec::new();
        for (i, step) in action_steps(&action).iter().enumerate() {
            if step.uses.is_some() {
                let with = step.with.iter().map(|(k, v)| (k.clone(), self.evaluate(v, &inputs))).collect();
                let skipped = StepRun::skipped(&step.name, with);
                runs.push(skipped);
                if last == Some(step.name.as_str()) {
                    break;
                }
                continue;
            }
            let script = step.run.as_deref().expect("a step runs or uses");
            let file = self.dir.path().join(format!("step-{i}.sh"));
            std::fs::write(&file, script).unwrap();
            let output_file = self.dir.path().join(format!("output-{i}"));
            let summary_file = self.dir.path().join(format!("summary-{i}.md"));
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&file)
                .current_dir(&self.workspace)
                .env_clear()
                .env("PATH", self.job_path())
                .env("HOME", self.dir.path().join("home"))
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("GITHUB_ACTION_PATH", root())
                .env("RUNNER_TEMP", self.dir.path().join("runner-temp"))
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_STEP_SUMMARY", &summary_file)
                .env("GITHUB_PATH", self.dir.path().join("github_path"))
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .envs(&self.env);
            for (k, v) in &step.env {
                cmd.env(k, self.evaluate(v, &inputs));
            }
            let out = cmd.output().unwrap();
            let outputs = parse_outputs(&std::fs::read_to_string(&output_file).unwrap_or_default());
            if let Some(id) = &step.id {
                self.outputs.insert(id.clone(), outputs.clone());
            }
            let run = StepRun {
                name: step.name.clone(),
                status: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                outputs,
                summary: std::fs::read_to_string(&summary_file).unwrap_or_default(),
                with: BTreeMap::new(),
            };
            let failed = run.status != 0;
            runs.push(run);
            if failed || last == Some(step.name.as_str()) {
                break;
            }
        }
        runs
    }
}

impl StepRun {
    fn skipped(name: &str, with: BTreeMap<String, String>) -> StepRun {
        StepRun {
            name: name.to_string(),
            status: 0,
            stdout: String::new(),
            stderr: String::new(),
            outputs: BTreeMap::new(),
            summary: String::new(),
            with,
        }
    }
}

/// `name=value` lines, the later value winning (the only form scripts/action.sh writes).
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            assert!(!l.contains("<<"), "multi-line outputs are not expected: {l}");
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("not name=value: {l}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

pub(crate) fn step<'a>(runs: &'a [StepRun], name: &str) -> &'a StepRun {
    runs.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no step `{name}` ran: {runs:#?}"))
}

/// The workspace of a gate over the wasteful report: `reports/cutlass.ncu-rep` and `rules.toml`.
pub(crate) fn wasteful_workspace(gh: &FakeGithub, rules: &str) {
    std::fs::create_dir_all(gh.workspace.join("reports")).unwrap();
    std::fs::copy(fixture(WASTEFUL), gh.workspace.join("reports/cutlass.ncu-rep")).unwrap();
    std::fs::write(gh.workspace.join("rules.toml"), rules).unwrap();
}

/// (failed, warned, passed) of `coalprof check --format json`, counted here from the checks.
pub(crate) fn counts(inputs: &[&Path], rules: &Path) -> (usize, usize, usize) {
    let mut cmd = coalprof();
    cmd.arg("check").args(inputs).arg("--rules").arg(rules).args(["--format", "json", "--exit-zero"]);
    let doc = json(&cmd.output().unwrap().stdout);
    let n = |v: &str| doc["checks"].as_array().unwrap().iter().filter(|c| c["verdict"] == v).count();
    (n("fail"), n("warn"), n("pass"))
}

fn coalprof_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_coalprof")).parent().unwrap().to_path_buf()
}

#[test]
fn action_and_release_workflows_parse_and_name_what_exists() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let script = std::fs::read_to_string(root().join("scripts/action.sh")).unwrap();
    let declared: Vec<String> =
        action["inputs"].as_mapping().unwrap().keys().map(|k| k.as_str().unwrap().to_string()).collect();
    let mut used = Vec::new();
    let steps = action_steps(&action);
    for s in &steps {
        match (&s.run, &s.uses) {
            (Some(run), None) => {
                assert_eq!(
                    s.shell.as_deref(),
                    Some("bash"),
                    "step `{}`: a composite run step needs shell: bash",
                    s.name
                );
                // Inputs are data: they reach the script through env, never pasted into it.
                assert!(!run.contains("${{"), "step `{}` interpolates an expression into its script: {run}", s.name);
                let sub = run.trim().strip_prefix(r#"bash "$GITHUB_ACTION_PATH/scripts/action.sh" "#);
                let sub = sub.unwrap_or_else(|| panic!("step `{}` does not call scripts/action.sh: {run}", s.name));
                assert!(script.contains(&format!("\n{sub}() {{")), "scripts/action.sh has no `{sub}` step");
            }
            (None, Some(uses)) => assert!(uses.contains('@'), "step `{}`: `{uses}` is not pinned to a version", s.name),
            _ => panic!("step `{}` must either run or use", s.name),
        }
        let texts = s.env.values().chain(s.with.values()).chain(s.condition.iter());
        for e in texts.flat_map(|t| expressions(t)) {
            for name in declared.iter() {
                if e.contains(&format!("inputs.{name}")) {
                    used.push(name.clone());
                }
            }
            assert!(
                !e.contains("inputs.") || declared.iter().any(|d| e.contains(&format!("inputs.{d}"))),
                "`{e}`: undeclared input"
            );
        }
    }
    for d in &declared {
        assert!(used.contains(d), "input `{d}` is declared but no step uses it");
    }
    let check_id = steps.iter().any(|s| s.id.as_deref() == Some("check"));
    assert!(check_id, "the outputs come from a step with id `check`");
    for (name, spec) in action["outputs"].as_mapping().unwrap() {
        let value = text(spec, "value").unwrap();
        let name = name.as_str().unwrap();
        assert_eq!(value, format!("${{{{ steps.check.outputs.{name} }}}}"), "output `{name}`");
        assert!(script.contains(&format!("output {name} ")), "scripts/action.sh never writes output `{name}`");
    }

    let release = yaml(".github/workflows/release.yml");
    let tags: Vec<&str> =
        release["on"]["push"]["tags"].as_sequence().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(tags, ["v*"]);
    let jobs = release["jobs"].as_mapping().unwrap();
    let mut uses = Vec::new();
    let mut runs = String::new();
    for (id, job) in jobs {
        let needs: Vec<&str> = match job.get("needs") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Sequence(v)) => v.iter().map(|n| n.as_str().unwrap()).collect(),
            _ => vec![],
        };
        for n in needs {
            assert!(jobs.contains_key(n), "job {id:?} needs `{n}`, which is not a job");
        }
        for s in job["steps"].as_sequence().unwrap() {
            if let Some(u) = text(s, "uses") {
                assert!(u.contains('@'), "`{u}` is not pinned");
                uses.push(u.to_string());
            }
            runs.push_str(text(s, "run").unwrap_or(""));
        }
    }
    for wanted in
        ["PyO3/maturin-action@v1", "pypa/gh-action-pypi-publish@release/v1", "rust-lang/crates-io-auth-action@v1"]
    {
        assert!(uses.iter().any(|u| u == wanted), "release.yml does not use {wanted}: {uses:?}");
    }
    assert!(runs.contains("cargo publish --locked"), "release.yml publishes the crate");
    assert_eq!(release["jobs"]["pypi"]["permissions"]["id-token"].as_str(), Some("write"), "PyPI trusted publishing");
    let wheels = &release["jobs"]["wheels"]["steps"];
    let maturin =
        wheels.as_sequence().unwrap().iter().find(|s| text(s, "uses") == Some("PyO3/maturin-action@v1")).unwrap();
    assert!(text(&maturin["with"], "manylinux").is_some(), "release wheels are built in a manylinux container");

    // The example workflow gates with this action.
    let example = yaml("scripts/ci-example.yml");
    let gate = example["jobs"]["check"]["steps"].as_sequence().unwrap().iter().find(|s| text(s, "id") == Some("gate"));
    let gate = gate.expect("the example's check job has the gate step");
    assert!(text(gate, "uses").unwrap().contains("/coalprof@"));
    assert!(text(&gate["with"], "inputs").is_some());
}

/// The whole action on the wasteful report, with `extra` inputs: (runs, the counts the CLI gives).
fn gate_wasteful(extra: &[(&str, &str)], rules: &str) -> (Vec<StepRun>, (usize, usize, usize)) {
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    wasteful_workspace(&gh, rules);
    let mut inputs = vec![
        ("inputs", "reports/*.ncu-rep"),
        ("rules", "rules.toml"),
        ("junit", "junit.xml"),
        ("sarif", "coalprof.sarif"),
        ("install", "none"),
    ];
    inputs.extend_from_slice(extra);
    let runs = gh.run_action(&inputs);
    let expected = counts(&[&gh.workspace.join("reports/cutlass.ncu-rep")], &gh.workspace.join("rules.toml"));
    // Files the check step wrote, checked while the workspace exists.
    if step(&runs, "Check").outputs.get("exit-code").is_some_and(|c| c == "0" || c == "1") {
        assert!(gh.workspace.join("junit.xml").is_file(), "junit.xml was not written");
        let sarif: Json =
            serde_json::from_str(&std::fs::read_to_string(gh.workspace.join("coalprof.sarif")).unwrap()).unwrap();
        assert_eq!(sarif["version"], "2.1.0");
    }
    (runs, expected)
}

#[test]
fn action_annotates_summarises_and_fails_on_a_wasteful_kernel_with_a_fake_github() {
    let (runs, (failed, warned, passed)) = gate_wasteful(&[], RULES);
    assert!(failed > 0 && warned > 0, "the fixture must fail and warn under RULES: {failed} failed, {warned} warned");

    let install = step(&runs, "Install coalprof");
    assert_eq!(install.status, 0, "{install:#?}");
    assert!(install.stdout.starts_with("coalprof "), "the install step prints the version: {install:#?}");

    let check = step(&runs, "Check");
    assert_eq!(check.status, 0, "the check step records the verdict and leaves failing to the last step: {check:#?}");
    let errors = check.stdout.lines().filter(|l| l.starts_with("::error ")).count();
    let warnings = check.stdout.lines().filter(|l| l.starts_with("::warning ")).count();
    assert_eq!(errors, failed.min(10), "one ::error per failed check (at most 10): {}", check.stdout);
    assert!(warnings >= 1 && errors + warnings <= 10, "::warning annotations too, at most 10 in all: {}", check.stdout);
    assert!(check.stdout.contains("::error file=/root/cutlass/"), "annotations point at the kernels' source lines");
    assert!(
        check.summary.starts_with("## coalprof check:") && check.summary.contains("gate failed"),
        "{}",
        check.summary
    );
    assert!(check.summary.contains("| fail |"), "the summary's table lists the failures: {}", check.summary);
    let out = &check.outputs;
    assert_eq!(out["verdict"], "fail");
    assert_eq!(out["exit-code"], "1");
    assert_eq!(
        (out["failed"].as_str(), out["warned"].as_str()),
        (failed.to_string().as_str(), warned.to_string().as_str())
    );
    assert_eq!(out["passed"], passed.to_string());
    assert_eq!(out["sarif"], "coalprof.sarif");

    // The upload step would run on the file the check step named.
    let upload = step(&runs, "Upload SARIF to code scanning");
    assert_eq!(upload.with["sarif_file"], "coalprof.sarif");
    assert_eq!(upload.with["category"], "coalprof");

    let verdict = runs.last().unwrap();
    assert_eq!(verdict.name, "Verdict");
    assert_eq!(verdict.status, 1, "a failed gate fails the action: {verdict:#?}");
    assert!(verdict.stdout.contains("::error title=coalprof::the gate failed"), "{verdict:#?}");
}

#[test]
fn action_exit_zero_passes_the_step_and_still_reports_the_failure() {
    let (runs, _) = gate_wasteful(&[("exit-zero", "true")], RULES);
    assert!(runs.iter().all(|r| r.status == 0), "{runs:#?}");
    assert_eq!(step(&runs, "Check").outputs["verdict"], "fail");
    assert_eq!(runs.last().unwrap().name, "Verdict");
}

#[test]
fn action_verdicts_for_a_passing_gate_and_for_nothing_matched() {
    let generous = RULES.replace("max = 8", "max = 32");
    let (runs, (failed, warned, passed)) = gate_wasteful(&[], &generous);
    assert_eq!((failed, warned), (0, 0));
    let check = step(&runs, "Check");
    assert_eq!(check.outputs["verdict"], "pass", "{check:#?}");
    assert_eq!(check.outputs["passed"], passed.to_string());
    assert!(!check.stdout.contains("::error ") && !check.stdout.contains("::warning "), "{check:#?}");
    assert!(check.summary.contains("gate passed"), "{}", check.summary);
    assert!(runs.iter().all(|r| r.status == 0), "{runs:#?}");

    let nothing = RULES.replace("match = \"*\"", "match = \"no-such-kernel\"");
    let (runs, _) = gate_wasteful(&[], &nothing);
    let check = step(&runs, "Check");
    assert_eq!((check.outputs["verdict"].as_str(), check.outputs["exit-code"].as_str()), ("nothing-matched", "5"));
    let verdict = runs.last().unwrap();
    assert_eq!(verdict.status, 5, "nothing checked is not a pass: {verdict:#?}");
    assert!(verdict.stdout.contains("::error title=coalprof::nothing was checked"));
}

#[test]
fn action_verdict_for_a_check_whose_rules_all_skip_is_nothing_checked() {
    // A rule on a metric the report cannot give: every check skips, exit 0, but no pass.
    let absent = "[[gate]]\nmatch = \"*\"\nmetric = \"dram_amplification\"\nmax = 2\n";
    let (runs, (failed, warned, passed)) = gate_wasteful(&[], absent);
    assert_eq!((failed, warned, passed), (0, 0, 0));
    let check = step(&runs, "Check");
    assert_eq!((check.outputs["verdict"].as_str(), check.outputs["exit-code"].as_str()), ("nothing-checked", "0"));
    assert!(check.stdout.contains("::warning title=coalprof%3A nothing checked::nothing was checked"), "{check:#?}");
    assert!(!check.summary.contains("gate passed"), "{}", check.summary);
    assert!(runs.iter().all(|r| r.status == 0), "{runs:#?}");
}

#[test]
fn action_names_a_missing_input_and_a_missing_coalprof() {
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let runs = gh.run_action(&[("inputs", "reports/*.ncu-rep"), ("install", "none")]);
    let check = step(&runs, "Check");
    assert_eq!((check.outputs["verdict"].as_str(), check.outputs["exit-code"].as_str()), ("error", "3"), "{check:#?}");
    assert!(check.stderr.contains("reports/*.ncu-rep"), "coalprof names the input that matched nothing: {check:#?}");
    assert_eq!(runs.last().unwrap().status, 3);

    let mut bare = FakeGithub::new(vec![]);
    let runs = bare.run_action(&[("inputs", "x.ncu-rep"), ("install", "none")]);
    assert_eq!(runs.len(), 1, "nothing runs after a failed install: {runs:#?}");
    assert_ne!(runs[0].status, 0);
    assert!(
        runs[0].stdout.contains("::error title=coalprof::install is 'none' but coalprof is not on PATH"),
        "{runs:#?}"
    );
}

// --- source mode: `.cu` files gated GPU-free -------------------------------------------------

/// Floats between neighbouring threads' stores in [`STRIDED`].
const STRIDE: u64 = 32;
/// Threads [`STRIDED`] and [`COALESCED`] launch (a few thousand: the simulator is slow here).
const THREADS: u64 = 2048;

/// A coalesced load and a store whose lanes are `STRIDE` floats apart (`-DSTRIDE=…`, an nvcc
/// flag of the `sources` line); `n` from argv[1], and every further argument echoed on a line of
/// its own (the hostile test's arguments).
const STRIDED: &str = r#"// One coalesced load, one strided store.
#include <cstdio>
#include <cstdlib>

__global__ void scatter(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i * STRIDE] = in[i] + 1.0f; // STRIDED STORE
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 256;
    for (int a = 2; a < argc; a++) puts(argv[a]);
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, (size_t)n * STRIDE * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    scatter<<<(n + 255) / 256, 256>>>(in, out, n);
    float last = 0;
    cudaMemcpy(&last, out + (size_t)(n - 1) * STRIDE, sizeof(float), cudaMemcpyDeviceToHost);
    if (last != 1.0f) { printf("wrong: %f\n", last); return 1; }
    return 0;
}
"#;

/// The same copy with each lane storing next to its neighbour; `n` from argv[1].
const COALESCED: &str = r#"// One coalesced load, one coalesced store.
#include <cstdio>
#include <cstdlib>

__global__ void copy(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] + 1.0f; // COALESCED STORE
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 256;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    copy<<<(n + 255) / 256, 256>>>(in, out, n);
    float last = 0;
    cudaMemcpy(&last, out + n - 1, sizeof(float), cudaMemcpyDeviceToHost);
    if (last != 1.0f) { printf("wrong: %f\n", last); return 1; }
    return 0;
}
"#;

/// 1-based line of `marker` in `source`.
fn line_of(source: &str, marker: &str) -> usize {
    source.lines().position(|l| l.contains(marker)).expect("the marker is in the program") + 1
}

/// 32-byte sectors one warp's 4-byte stores at `lane * stride` floats touch, over the sectors a
/// warp of contiguous 4-byte stores needs: the store's sectors over its ideal.
fn store_sectors_over_ideal(stride: u64) -> u64 {
    let sectors: std::collections::BTreeSet<u64> = (0..32u64).map(|lane| lane * stride * 4 / 32).collect();
    let ideal = (32 * 4u64).div_ceil(32);
    sectors.len() as u64 / ideal
}

/// The tool home `tests/it/sim_programs.rs` uses (`.tools`), or `None`, said loudly.
fn sim_tools(test: &str) -> Option<PathBuf> {
    let tools = root().join(".tools");
    let need = [tools.join("gpgpu-sim/lib/libcudart.so"), tools.join("cuda11/bin/nvcc")];
    match need.iter().find(|p| !p.exists()) {
        Some(p) => {
            crate::util::skipped(
                test,
                &format!("{} is missing; run `coalprof setup sim` with COALPROF_HOME=.tools", p.display()),
            );
            None
        }
        None => Some(tools),
    }
}

/// A fake runner whose workspace holds `kernels/strided.cu` and `kernels/coalesced.cu`, and a
/// tool home (`tool-home` input) at `home`: GPGPU-Sim linked in from `.tools`, as a restored
/// cache holds it (building it takes most of an hour on this machine), and the CUDA 11.8 toolkit
/// named by `CUDA11_HOME`, which `coalprof setup sim` links into the home itself.
fn source_workspace(tools: &Path, home: &Path) -> FakeGithub {
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let kernels = gh.workspace.join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    std::fs::write(kernels.join("strided.cu"), STRIDED).unwrap();
    std::fs::write(kernels.join("coalesced.cu"), COALESCED).unwrap();
    if !home.join("gpgpu-sim").exists() {
        std::fs::create_dir_all(home).unwrap();
        std::os::unix::fs::symlink(tools.join("gpgpu-sim"), home.join("gpgpu-sim")).unwrap();
    }
    gh.env.insert("CUDA11_HOME".into(), tools.join("cuda11").display().to_string());
    gh
}

/// The input `name` of the action's step in the workflow example of
/// `docs/guide/action-sources.md`: the tests run what the guide shows.
fn guide_input(name: &str) -> String {
    let page = std::fs::read_to_string(root().join("docs/guide/action-sources.md")).unwrap();
    let block = page.split("```yaml\n").nth(1).and_then(|b| b.split("```").next()).expect("a yaml block");
    let workflow: Value = serde_norway::from_str(block).expect("the guide's workflow is YAML");
    let steps = workflow["jobs"]["kernels"]["steps"].as_sequence().expect("jobs.kernels.steps");
    let gate = steps.iter().find(|s| text(s, "uses").is_some_and(|u| u.contains("/coalprof@"))).expect("the action");
    text(&gate["with"], name).unwrap_or_else(|| panic!("the guide's example has no `{name}`")).to_string()
}

/// The workflow commands the runner would act on in `log`: every line starting with `::`
/// outside a `::stop-commands::TOKEN` … `::TOKEN::` block (the two lines themselves included).
fn active_commands(log: &str) -> Vec<&str> {
    let mut stopped: Option<String> = None;
    let mut commands = Vec::new();
    for line in log.lines() {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
                commands.push(line);
            }
            continue;
        }
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_string());
        }
        if line.starts_with("::") {
            commands.push(line);
        }
    }
    commands
}

fn timed<T>(test: &str, what: &str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let t = f();
    eprintln!("{test}: {what} in {:.1} s", start.elapsed().as_secs_f64());
    t
}

#[test]
fn action_source_mode_warns_on_a_strided_store_line_with_a_fake_github() {
    let test = "action_source_mode_warns_on_a_strided_store_line";
    let Some(tools) = sim_tools(test) else { return };
    let home = tempfile::tempdir().unwrap();
    let mut gh = source_workspace(&tools, home.path());
    // The guide's inputs: nvcc flags (the stride) and program arguments (`n`, the threads).
    let sources = guide_input("sources");
    let lines: Vec<&str> = sources.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [format!("kernels/strided.cu -DSTRIDE={STRIDE} -- {THREADS}"), format!("kernels/coalesced.cu -- {THREADS}")]
    );
    let home_input = home.path().display().to_string();
    let runs = timed(test, "the action (2 sources)", || {
        gh.run_action(&[("sources", &sources), ("tool-home", &home_input), ("install", "none")])
    });
    let profile = step(&runs, "Profile the sources");
    assert_eq!(profile.status, 0, "{profile:#?}");
    let check = step(&runs, "Check");
    let line = line_of(STRIDED, "STRIDED STORE");
    let ratio = store_sectors_over_ideal(STRIDE);
    assert_eq!(ratio, 8, "32 lanes 128 B apart touch 32 sectors where 4 would do");
    let warnings: Vec<&str> = check.stdout.lines().filter(|l| l.starts_with("::warning ")).collect();
    let on_line = format!("::warning file=kernels/strided.cu,line={line},");
    let store = warnings.iter().find(|w| w.starts_with(&on_line) && w.contains("global_store_sectors_over_ideal"));
    let store = store.unwrap_or_else(|| panic!("no store warning on kernels/strided.cu:{line}: {warnings:#?}"));
    assert!(store.contains(&format!("global_store_sectors_over_ideal {ratio} > 2")), "{store}");
    // The guide shows this annotation, up to the rule's place in metrics.toml.
    let guide = std::fs::read_to_string(root().join("docs/guide/action-sources.md")).unwrap();
    let shown = guide.lines().find(|l| l.starts_with("::warning ")).expect("the guide shows the annotation");
    let shown = shown.split(" (max,").next().unwrap();
    assert!(store.starts_with(shown), "the guide shows `{shown}`, the action printed `{store}`");
    // The coalesced file and the strided file's coalesced load are clean.
    assert!(warnings.iter().all(|w| !w.contains("coalesced.cu") && !w.contains("load")), "{warnings:#?}");
    assert_eq!(check.outputs["verdict"], "warn", "{check:#?}");
    // Both runs were checked: the load rule passes in each.
    assert!(check.outputs["passed"].parse::<usize>().unwrap() >= 2, "{check:#?}");
    let runs_dir = PathBuf::from(&check.outputs["runs"]);
    assert_eq!(std::fs::read_dir(&runs_dir).unwrap().count(), 2, "one run folder per source in {runs_dir:?}");
    assert!(check.summary.contains("gate passed with warnings"), "{}", check.summary);
    assert!(runs.iter().all(|r| r.status == 0), "warnings do not fail the step: {runs:#?}");
}

/// The `coalprof setup` lines of a setup step's log: `sim: STEP: already there (…)` or
/// `sim: STEP: installed in N s (…)`.
fn setup_lines(run: &StepRun) -> Vec<&str> {
    run.stdout.lines().filter(|l| l.starts_with("sim: ")).collect()
}

#[test]
fn action_source_mode_passes_a_coalesced_kernel_and_a_second_run_reuses_the_tool_home() {
    let test = "action_source_mode_passes_a_coalesced_kernel_and_a_second_run_reuses_the_tool_home";
    let Some(tools) = sim_tools(test) else { return };
    let home = tempfile::tempdir().unwrap();
    let home_input = home.path().display().to_string();
    let sources = format!("kernels/coalesced.cu -- {THREADS}");
    let given = [("sources", sources.as_str()), ("tool-home", home_input.as_str()), ("install", "none")];

    let mut first = source_workspace(&tools, home.path());
    let runs = timed(test, "the first run", || first.run_action(&given));
    let setup = step(&runs, "Set up the simulator");
    assert_eq!(setup.status, 0, "{setup:#?}");
    let lines = setup_lines(setup);
    assert_eq!(lines.len(), 4, "setup sim has four steps: {lines:#?}");
    // The first run installs what the home lacks: the toolkit, linked from CUDA11_HOME.
    assert!(lines.iter().any(|l| l.starts_with("sim: the CUDA 11.8 toolkit: installed in ")), "{lines:#?}");
    let linked = std::fs::symlink_metadata(home.path().join("cuda11")).unwrap();
    assert!(linked.file_type().is_symlink(), "setup linked the toolkit into the tool home");
    let check = step(&runs, "Check");
    assert_eq!(check.outputs["verdict"], "pass", "{check:#?}");
    assert!(!check.stdout.contains("::warning ") && !check.stdout.contains("::error "), "{check:#?}");
    assert!(check.summary.contains("gate passed"), "{}", check.summary);
    assert!(runs.iter().all(|r| r.status == 0), "{runs:#?}");
    assert_eq!(runs.last().unwrap().name, "Verdict");

    // A later run restores the cache into the same path: setup finds every step done.
    let stamp = |p: &Path| std::fs::symlink_metadata(p).unwrap().modified().unwrap();
    let before = (stamp(&home.path().join("cuda11")), stamp(&home.path().join("gpgpu-sim/lib/libcudart.so")));
    let mut second = source_workspace(&tools, home.path());
    let runs = timed(test, "the second run", || second.run_action(&given));
    let setup = step(&runs, "Set up the simulator");
    assert_eq!(setup.status, 0, "{setup:#?}");
    let lines = setup_lines(setup);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines.iter().all(|l| l.contains(": already there (")), "nothing rebuilt: {lines:#?}");
    let after = (stamp(&home.path().join("cuda11")), stamp(&home.path().join("gpgpu-sim/lib/libcudart.so")));
    assert_eq!(before, after, "the tool home is untouched");
    assert_eq!(step(&runs, "Check").outputs["verdict"], "pass");
}

#[test]
fn action_caches_the_tool_home_the_scripts_use_keyed_by_coalprofs_version() {
    let action = yaml("action.yml");
    let steps = action_steps(&action);
    let cache = steps.iter().find(|s| s.uses.as_deref() == Some("actions/cache@v4")).expect("a cache step");
    // The cache path, COALPROF_HOME of every step that runs coalprof in the home, one output.
    let path = &cache.with["path"];
    let users: Vec<&Step> = steps.iter().filter(|s| s.env.contains_key("COALPROF_HOME")).collect();
    assert_eq!(users.len(), 2, "setup and the sources step run in the tool home");
    for s in users {
        assert_eq!(&s.env["COALPROF_HOME"], path, "step `{}`", s.name);
    }
    assert!(
        cache.condition.as_deref().is_some_and(|c| c.contains("steps.home.outputs.key")),
        "cache only in source mode"
    );

    // Evaluated: the key names coalprof's version, the runner's OS and architecture.
    let version = String::from_utf8(coalprof().arg("--version").output().unwrap().stdout).unwrap();
    let version = version.trim().strip_prefix("coalprof ").expect("coalprof VERSION").to_string();
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let given = [("sources", "kernels/a.cu\n"), ("tool-home", "ci/tools"), ("install", "none")];
    let runs = gh.run_action_until(&given, Some("Cache the tool home"));
    let with = &step(&runs, "Cache the tool home").with;
    let home = gh.workspace.join("ci/tools").display().to_string();
    assert_eq!(with["path"], home, "a relative tool home is the workspace's: {runs:#?}");
    assert_eq!(with["key"], format!("coalprof-home-{version}-Linux-X64-sim"));
    assert!(with["key"].starts_with(&with["restore-keys"]), "{with:?}");
    assert!(with["restore-keys"].contains(&version), "never a tool home of another version: {with:?}");
    // With Triton kernels the key names both components; without sources, no cache at all.
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let given = [("sources", "a.cu"), ("triton", "k.py::add --grid 4"), ("install", "none")];
    let runs = gh.run_action_until(&given, Some("Cache the tool home"));
    let with = &step(&runs, "Cache the tool home").with;
    assert_eq!(with["key"], format!("coalprof-home-{version}-Linux-X64-sim+triton"));
    assert_eq!(with["path"], gh.workspace.parent().unwrap().join("home/.local/share/coalprof").display().to_string());
    // `~/` is the runner's home, as actions/cache reads it.
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let runs = gh.run_action_until(
        &[("sources", "a.cu"), ("tool-home", "~/tools"), ("install", "none")],
        Some("Cache the tool home"),
    );
    let home = gh.workspace.parent().unwrap().join("home/tools").display().to_string();
    assert_eq!(step(&runs, "Cache the tool home").with["path"], home, "{runs:#?}");
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let runs = gh.run_action_until(&[("inputs", "x.ncu-rep"), ("install", "none")], Some("Cache the tool home"));
    assert_eq!(step(&runs, "Cache the tool home").with["key"], "", "{runs:#?}");
}

#[test]
fn action_source_mode_keeps_hostile_names_and_arguments_as_data() {
    let test = "action_source_mode_keeps_hostile_names_and_arguments_as_data";
    let Some(tools) = sim_tools(test) else { return };
    let home = tempfile::tempdir().unwrap();
    let mut gh = source_workspace(&tools, home.path());
    // A name made of workflow-command syntax (`,` `:` `%` end a property or escape one).
    let hostile = "kernels/x,line=1::%0A::error::pwned.cu";
    std::fs::write(gh.workspace.join(hostile), "__global__ void broken( {\n").unwrap();
    // nvcc hands file names and flags to `sh -c`: these would run (words split at whitespace,
    // so `${IFS}` stands for the space).
    let shell = "kernels/$(touch${IFS}PWNED).cu";
    std::fs::write(gh.workspace.join(shell), COALESCED).unwrap();
    // Program arguments (the program prints them, each on a line of its own).
    let args = ["64", "::warning::injected", "::add-mask::x", "$(touch${IFS}PWNED)", ";touch", "PWNED", "%0A"];
    let sources = format!(
        "kernels/strided.cu -DSTRIDE={STRIDE} -- {}\n{hostile}\n{shell}\nkernels/coalesced.cu -DX=$(touch${{IFS}}PWNED) -- 64\n",
        args.join(" ")
    );
    let home_input = home.path().display().to_string();
    let runs = timed(test, "the action (4 sources, 3 refused or failing)", || {
        gh.run_action(&[("sources", &sources), ("tool-home", &home_input), ("install", "none")])
    });
    assert!(!gh.workspace.join("PWNED").exists(), "nothing in an input ran");
    let profile = step(&runs, "Profile the sources");
    assert_eq!(profile.status, 3, "a failing source fails the step: {profile:#?}");
    assert_eq!(runs.last().unwrap().name, "Profile the sources", "the runner stops there");
    // The program got its arguments as given, words of data.
    let run = std::fs::read_dir(PathBuf::from(&profile.outputs["runs"]).join("001")).unwrap().next().unwrap();
    let recorded = json(&std::fs::read(run.unwrap().path().join("run.json")).unwrap());
    assert_eq!(recorded["args"], serde_json::json!(args), "{recorded:#}");
    let log = format!("{}{}", profile.stdout, profile.stderr);
    let commands = active_commands(&log);
    let errors: Vec<&&str> = commands.iter().filter(|c| c.starts_with("::error ")).collect();
    for c in &commands {
        assert!(
            c.starts_with("::stop-commands::coalprof-") || c.starts_with("::coalprof-") || c.starts_with("::error "),
            "a command the action did not mean: {c}\n{log}"
        );
    }
    assert_eq!(errors.len(), 4, "one per failed source and the step's own: {errors:#?}");
    // The broken file: coalprof's own error line, on the file, its name escaped as a property.
    let escaped = "kernels/x%2Cline=1%3A%3A%250A%3A%3Aerror%3A%3Apwned.cu";
    let broken = errors.iter().find(|e| e.starts_with(&format!("::error file={escaped},title=coalprof::")));
    let broken = broken.unwrap_or_else(|| panic!("no error on the broken file: {errors:#?}"));
    // A comma in a file name is one coalprof itself refuses for nvcc (fatbinary splits there).
    assert!(broken.contains("nvcc cannot be given"), "{broken}");
    // Its message is coalprof's `error:` line; in a message only `%` (and line breaks) are escaped.
    assert!(broken.contains("::error: nvcc") && broken.contains("x,line=1::%250A::error::pwned.cu"), "{broken}");
    // The shell words: refused before nvcc sees them.
    let refused: Vec<&&&str> = errors.iter().filter(|e| e.contains("nvcc would hand to a shell")).collect();
    assert_eq!(refused.len(), 2, "{errors:#?}");
    assert!(refused.iter().any(|e| e.starts_with("::error file=kernels/$(touch${IFS}PWNED).cu,")), "{refused:#?}");
    assert!(refused.iter().any(|e| e.contains("`-DX=$(touch${IFS}PWNED)`")), "{refused:#?}");
    assert!(errors.iter().any(|e| e.contains("3 of 4 sources could not be profiled")), "{errors:#?}");
}

/// A Triton kernel: a coalesced load and a store `STRIDE` elements apart (a `tl.constexpr`).
const TRITON_SCATTER: &str = r#"import triton
import triton.language as tl


@triton.jit
def scatter(x_ptr, y_ptr, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs * STRIDE, x)  # STRIDED STORE
"#;

#[test]
fn action_source_mode_warns_on_a_strided_triton_store_line_with_a_fake_github() {
    let test = "action_source_mode_warns_on_a_strided_triton_store_line";
    let venv = root().join(".tools/triton");
    if !venv.join("bin/python3").exists() {
        crate::util::skipped(test, "no .tools/triton: run `coalprof setup triton` with COALPROF_HOME=.tools");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&venv, home.path().join("triton")).unwrap();
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    std::fs::create_dir_all(gh.workspace.join("kernels")).unwrap();
    std::fs::write(gh.workspace.join("kernels/scatter.py"), TRITON_SCATTER).unwrap();
    let (block, programs) = (1024u64, 4u64);
    let n = block * programs;
    let launch = format!(
        "kernels/scatter.py::scatter --grid {programs} --arg x_ptr=f32[{n}] --arg y_ptr=f32[{}] --meta STRIDE={STRIDE} --meta BLOCK={block}",
        n * STRIDE
    );
    assert_eq!(guide_input("triton").trim_end(), launch, "the guide shows this launch");
    let home_input = home.path().display().to_string();
    let runs = timed(test, "the action (1 Triton kernel)", || {
        gh.run_action(&[("triton", &launch), ("tool-home", &home_input), ("install", "none")])
    });
    let setup = step(&runs, "Set up the simulator");
    assert!(setup.stdout.contains("triton: Triton and numpy (no torch): already there"), "{setup:#?}");
    assert!(!setup.stdout.contains("sim: "), "no simulator for Triton kernels alone: {setup:#?}");
    let check = step(&runs, "Check");
    let line = line_of(TRITON_SCATTER, "STRIDED STORE");
    let ratio = store_sectors_over_ideal(STRIDE);
    let warnings: Vec<&str> = check.stdout.lines().filter(|l| l.starts_with("::warning ")).collect();
    let on_line = format!("::warning file=kernels/scatter.py,line={line},");
    let store = warnings.iter().find(|w| w.starts_with(&on_line) && w.contains("(global store)"));
    let store = store.unwrap_or_else(|| panic!("no store warning on kernels/scatter.py:{line}: {runs:#?}"));
    assert!(store.contains(&format!("sectors_over_ideal {ratio} > 2")), "{store}");
    assert!(warnings.iter().all(|w| !w.contains("(global load)")), "the load is coalesced: {warnings:#?}");
    assert_eq!(check.outputs["verdict"], "warn", "{check:#?}");
    assert!(runs.iter().all(|r| r.status == 0), "{runs:#?}");
}

/// A fake `coalprof` whose `setup --dry-run` blocks on packages as a non-root coalprof names
/// them (`listing` in src/commands/setup.rs, `apt_install` in src/tools/setup/mod.rs), one of
/// them hostile; `setup` itself succeeds. With a fake `id` (the user) and a fake `sudo` that
/// logs its arguments.
fn fake_setup_tools(dir: &Path, uid: u32) {
    let write = |name: &str, text: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write("id", &format!("#!/bin/sh\necho {uid}\n"));
    write("sudo", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$FAKE_SUDO_LOG\"\n");
    let blocked = "sim: GPGPU-Sim's build dependencies: cannot: GPGPU-Sim's build dependencies are missing: \
                   bison g++-11 (fix: run `sudo apt-get install -y --no-install-recommends bison g++-11`, then \
                   `coalprof setup sim` again)";
    let hostile = "sim: the CUDA 11.8 toolkit: cannot: no keyring (fix: run `sudo apt-get install -y \
                   --no-install-recommends $(touch${IFS}PWNED) -oAPT::Get::x=1 debian-archive-keyring`, or …)";
    write(
        "coalprof",
        &format!(
            "#!/bin/sh\ncase \"$*\" in\n--version) echo 'coalprof 0.1.0' ;;\n*--dry-run*) cat <<'EOF'\n{blocked}\n{hostile}\n\
             sim: GPGPU-Sim: would build it\nEOF\n;;\nsetup*) echo \"sim: set up $*\" ;;\nesac\n"
        ),
    );
}

#[test]
fn action_setup_installs_the_system_packages_setup_names_with_sudo_with_fake_tools() {
    for (uid, sudo) in [(1001, true), (0, false)] {
        let bin = tempfile::tempdir().unwrap();
        fake_setup_tools(bin.path(), uid);
        let mut gh = FakeGithub::new(vec![bin.path().to_path_buf()]);
        let log = gh.workspace.join("sudo.log");
        gh.env.insert("FAKE_SUDO_LOG".into(), log.display().to_string());
        let runs = gh.run_action_until(&[("sources", "a.cu"), ("install", "none")], Some("Set up the simulator"));
        let setup = step(&runs, "Set up the simulator");
        assert_eq!(setup.status, 0, "{setup:#?}");
        assert!(setup.stdout.contains("sim: set up setup sim"), "setup ran after: {setup:#?}");
        assert!(!gh.workspace.join("PWNED").exists());
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        if !sudo {
            assert_eq!(calls, "", "root needs no sudo: coalprof setup installs the packages itself");
            continue;
        }
        // Package names only: the hostile words of the hint are dropped.
        let install = "-n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                       bison g++-11 debian-archive-keyring";
        assert_eq!(calls.lines().collect::<Vec<_>>(), ["-n true", "-n apt-get -qq update", install], "{setup:#?}");
    }
}

#[test]
fn action_without_inputs_sources_or_triton_kernels_is_a_usage_error() {
    let mut gh = FakeGithub::new(vec![coalprof_dir()]);
    let runs = gh.run_action(&[("sources", "# only a comment\n\n"), ("install", "none")]);
    let check = step(&runs, "Check");
    assert_eq!(check.status, 2, "{runs:#?}");
    assert!(check.stdout.contains("::error title=coalprof::the action needs inputs"), "{check:#?}");
    assert_eq!(step(&runs, "Tool home").outputs.get("key"), None, "no source, no tool home: {runs:#?}");
}

#[test]
fn action_source_mode_fails_the_step_when_given_rules_fail_the_gate() {
    let test = "action_source_mode_fails_the_step_when_given_rules_fail_the_gate";
    let Some(tools) = sim_tools(test) else { return };
    let home = tempfile::tempdir().unwrap();
    let mut gh = source_workspace(&tools, home.path());
    // Twice the ideal at most, as the built-in rule, but failing.
    let rules = "[[gate]]\nmatch = \"*\"\nmetric = \"global_store_sectors_over_ideal\"\nmax = 2\n";
    std::fs::write(gh.workspace.join("rules.toml"), rules).unwrap();
    let sources = format!("kernels/strided.cu -DSTRIDE={STRIDE} -- {THREADS}");
    let home_input = home.path().display().to_string();
    let runs = timed(test, "the action (1 source)", || {
        gh.run_action(&[
            ("sources", &sources),
            ("rules", "rules.toml"),
            ("tool-home", &home_input),
            ("install", "none"),
        ])
    });
    let check = step(&runs, "Check");
    assert_eq!((check.outputs["verdict"].as_str(), check.outputs["failed"].as_str()), ("fail", "1"), "{check:#?}");
    let line = line_of(STRIDED, "STRIDED STORE");
    let error = format!("::error file=kernels/strided.cu,line={line},");
    assert!(check.stdout.lines().any(|l| l.starts_with(&error)), "{check:#?}");
    let verdict = runs.last().unwrap();
    assert_eq!((verdict.name.as_str(), verdict.status), ("Verdict", 1), "a failed gate fails the action: {runs:#?}");
}
