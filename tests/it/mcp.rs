//! `coalprof mcp` driven by the official MCP Python SDK's client (PyPI `mcp`, in the venv
//! scripts/install-tools.sh makes: `.tools/mcp`; tests/mcp/client.py drives, these tests
//! assert): initialize, the tools and their schemas, each tool on fixtures (a report with waste,
//! a `.cu` file with a strided line whose numbers are derived here from its addresses, a Triton
//! kernel), bad input as tool errors in coalprof's words, hostile names as text, progress and
//! cancellation. And, without the SDK, the server's stdout: JSON-RPC lines only.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{coalprof, fake_report, fixture, json as parse_json, root, skipped, OkStdout};

/// The venv's Python with the `mcp` SDK, or `None` (said loudly).
fn sdk(test: &str) -> Option<PathBuf> {
    let python = root().join(".tools/mcp/bin/python");
    let ok = python.exists()
        && std::process::Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        skipped(
            test,
            &format!("{} with the `mcp` SDK is missing; run scripts/install-tools.sh (CI does)", python.display()),
        );
        return None;
    }
    Some(python)
}

/// GPGPU-Sim and its CUDA 11.8 in the project's tool home, or `None` (said loudly).
fn simulator(test: &str) -> bool {
    let tools = root().join(".tools");
    let need = [tools.join("gpgpu-sim/lib/libcudart.so"), tools.join("cuda11/bin/nvcc")];
    match need.iter().find(|p| !p.exists()) {
        Some(p) => {
            skipped(test, &format!("{} is missing; run `coalprof setup sim` with COALPROF_HOME=.tools", p.display()));
            false
        }
        None => true,
    }
}

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_coalprof"))
}

/// The server's environment as tests/it/util.rs's `coalprof()` sets it: no tool home of the
/// machine's user (inside the checkout the project's `.tools/` is found), no colour.
fn server_env() -> Value {
    let mut env = json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
        "COALPROF_HOME": root().join("target/no-tool-home"),
        "NO_COLOR": "1",
    });
    let triton = root().join(".tools/triton/bin/python3");
    if triton.exists() {
        env["COALPROF_PYTHON"] = json!(triton);
    }
    env
}

/// The server docs/guide/agents.md configures (its ```json block's `mcpServers.coalprof`), as
/// the command line the client starts: `coalprof` is the binary under test.
fn documented_server() -> Vec<Value> {
    let page = std::fs::read_to_string(root().join("docs/guide/agents.md")).unwrap();
    let block = page.split("```json\n").nth(1).and_then(|b| b.split("\n```").next()).expect("a ```json block");
    let config: Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("the page's config is not JSON ({e})"));
    let server = &config["mcpServers"]["coalprof"];
    assert_eq!(server["command"], "coalprof", "{config:#}");
    let mut command = vec![json!(exe())];
    command.extend(server["args"].as_array().expect("args").iter().cloned());
    command
}

/// Run the client on `calls` and return its report.
fn drive(python: &Path, calls: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let doc = json!({ "command": documented_server(), "env": server_env(), "cwd": root(), "calls": calls });
    std::fs::write(&plan, doc.to_string()).unwrap();
    let out = std::process::Command::new(python)
        .arg(root().join("tests/mcp/client.py"))
        .arg(&plan)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    parse_json(&out.stdout)
}

/// The `i`th call's entry, which must have succeeded, and its structured content.
fn ok(report: &Value, i: usize) -> &Value {
    let call = &report["calls"][i];
    assert_eq!(call["is_error"], false, "call {i} failed: {call:#}");
    // The text twin is the same document.
    let text: Value = serde_json::from_str(call["texts"][0].as_str().unwrap()).unwrap();
    assert_eq!(text, call["structured"], "call {i}: the text and the structured content differ");
    &call["structured"]
}

/// The `i`th call's entry, which must be a tool error, and its structured content.
fn failed(report: &Value, i: usize) -> &Value {
    let call = &report["calls"][i];
    assert_eq!(call["is_error"], true, "call {i} did not fail: {call:#}");
    &call["structured"]
}

/// Every string in a document, to check none carries a raw control character.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

/// The summary's size bound by default (`render/summary.rs`: 4 KB of JSON).
const SUMMARY_BYTES: usize = 4096;

/// A report of one kernel whose loads take `sectors` sectors per request, written by the fake
/// ncu's writer (a named fake): 512 requests of 128 bytes (32 lanes × 4 B, so 4 sectors ideal).
fn report_with(dir: &Path, name: &str, sectors: u32, file: &str) -> PathBuf {
    let launch = crate::util::fake_load_launch("k", name, sectors);
    let spec = json!({ "program": "k", "layout": "2024", "launches": [launch] });
    fake_report(&spec.to_string(), &dir.join(file))
}

#[test]
fn reports_the_model_and_the_gate_answer_as_summaries_and_mistakes_as_tool_errors() {
    let test = "reports_the_model_and_the_gate_answer_as_summaries_and_mistakes_as_tool_errors";
    let Some(python) = sdk(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    // 32 sectors per request where 4 would do: the fake report's arithmetic above.
    let wasteful = report_with(dir.path(), "wasteful(float const*)", 32, "wasteful.ncu-rep");
    let hostile_name = "evil\n::warning::injected\x1b]0;title\x07";
    let hostile = report_with(dir.path(), hostile_name, 16, "hostile.ncu-rep");
    let higgs = fixture("ncu-rep/bwd29-self-join-MiSTIC_profileHiggs.out_2022.4.0.ncu-rep");
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 8\n").unwrap();
    let calls = json!([
        { "tool": "analyze", "arguments": { "reports": [wasteful] } },
        { "tool": "lines", "arguments": { "report": higgs, "limit": 1 } },
        // The element index of lane `lane` in warp-sized blocks, 3 elements apart.
        { "tool": "model", "arguments": { "expr": "(block * 32 + lane) * s", "bindings": ["s=3"] } },
        { "tool": "check", "arguments": { "inputs": [wasteful], "rules": rules } },
        { "tool": "analyze", "arguments": { "reports": ["no/such/report.ncu-rep"] } },
        { "tool": "model", "arguments": { "expr": "lane * (", "bindings": [] } },
        { "tool": "analyze", "arguments": { "reports": [hostile] } },
        { "tool": "lines", "arguments": { "report": "-rf" } },
    ]);
    let r = drive(&python, calls);

    // initialize: quick even through Python and a loaded machine (the release build's own
    // latency is measured in docs/guide/agents.md), and the server says who it is.
    assert_eq!(r["server_name"], "coalprof");
    assert!(r["initialize_ms"].as_f64().unwrap() <= 1000.0, "initialize took {} ms", r["initialize_ms"]);
    assert!(r["instructions"].as_str().unwrap().contains("32.00 (ideal 4.00)"));
    // Six tools, each with a description that says when to use it and a typed input schema.
    let mut names: Vec<&str> = r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["analyze", "check", "lines", "model", "profile_sim", "triton"]);
    for t in r["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 80, "{t:#}");
        let schema = &t["input_schema"];
        assert_eq!(schema["type"], "object", "{t:#}");
        for (field, spec) in schema["properties"].as_object().unwrap() {
            assert!(
                spec["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{} {field}: no description",
                t["name"]
            );
        }
    }
    let required = |tool: &str| {
        let t = r["tools"].as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
        let mut names: Vec<String> =
            t["input_schema"]["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        names.sort_unstable();
        names
    };
    assert_eq!(required("profile_sim"), ["source"]);
    assert_eq!(required("triton"), ["grid", "kernel"]);

    // analyze: the kernel's loads at 32 sectors per request against 4.
    let s = ok(&r, 0);
    assert_eq!(s["schema"], "coalprof-summary/1");
    let m = &s["kernels"][0]["metrics"]["global_load_sectors_per_request"];
    assert_eq!((m["value"].as_f64(), m["ideal"].as_f64()), (Some(512.0 * 32.0 / 512.0), Some(128.0 / 32.0)));
    assert!(r["calls"][0]["texts"][0].as_str().unwrap().len() <= SUMMARY_BYTES);

    // lines on a real report with waste (its kernel built without -lineinfo, so the waste is
    // on SASS rows the summary does not list as source lines; the sim test below names a
    // line): the same summary the command line gives, the kernel and why there are no lines.
    let s = ok(&r, 1);
    let cli = coalprof().args(["lines", "--format", "summary", "--summary-limit", "1"]).arg(&higgs).ok_stdout();
    assert_eq!(s, &parse_json(&cli));
    assert_eq!(s["kernels"][0]["name"], "nodeByPoint5", "{s:#}");
    assert!(s["notices"][0].as_str().unwrap().contains("-lineinfo"), "{s:#}");
    assert!(r["calls"][1]["texts"][0].as_str().unwrap().len() <= SUMMARY_BYTES);

    // model: lanes 3 × 4 B apart, a warp's 32 lanes over 384 bytes = 12 sectors; ideal 4.
    let s = ok(&r, 2);
    let m = &s["kernels"][0]["metrics"]["global_load_sectors_per_request"];
    let sectors: std::collections::BTreeSet<u64> = (0..32u64).map(|lane| lane * 3 * 4 / 32).collect();
    assert_eq!((m["value"].as_f64(), m["ideal"].as_f64()), (Some(sectors.len() as f64), Some(4.0)));

    // check: 32 > 8 fails the gate; a failed gate is an answer, not a tool error.
    let s = ok(&r, 3);
    assert_eq!(s["gate"]["verdict"], "fail", "{s:#}");
    assert_eq!(s["gate"]["checks"][0]["value"], 32.0);
    assert!(r["calls"][3]["texts"].as_array().unwrap().iter().any(|t| t.as_str().unwrap().starts_with("gate_failed")));

    // A bad path and a bad expression: tool errors with coalprof's own words and exit codes.
    let e = failed(&r, 4);
    assert_eq!(e["exit_code"], 3);
    assert!(e["error"].as_str().unwrap().contains("no/such/report.ncu-rep"), "{e:#}");
    assert!(r["calls"][4]["texts"][0].as_str().unwrap().contains("error: "), "{:#}", r["calls"][4]);
    let e = failed(&r, 5);
    assert_eq!(e["exit_code"], 2, "{e:#}");
    assert!(e["error"].as_str().is_some_and(|m| !m.is_empty()), "{e:#}");

    // A hostile kernel name is text: escaped where the summary shows it, no raw control
    // character anywhere in the result.
    let s = ok(&r, 6);
    let mut all = Vec::new();
    strings(s, &mut all);
    strings(&r["calls"][6]["texts"], &mut all);
    assert!(all.iter().all(|t| !t.chars().any(|c| c.is_control())), "{all:?}");
    assert!(s["kernels"][0]["name"].as_str().unwrap().starts_with("evil\\n::warning::injected\\x1b"), "{s:#}");

    // A path that looks like a flag is a path (`./-rf`): not found, not an option.
    let e = failed(&r, 7);
    assert_eq!(e["exit_code"], 3, "{e:#}");
    assert!(e["error"].as_str().unwrap().contains("-rf"), "{e:#}");
}

#[test]
fn a_cu_file_runs_gpu_free_its_strided_line_named_and_a_long_call_ticks_and_cancels() {
    let test = "a_cu_file_runs_gpu_free_its_strided_line_named_and_a_long_call_ticks_and_cancels";
    let Some(python) = sdk(test) else { return };
    if !simulator(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let broken = dir.path().join("broken.cu");
    std::fs::write(&broken, "__global__ void k(float *x) { x[0] = undefined_name; }\nint main() { return 0; }\n")
        .unwrap();
    // A program that sleeps, under a name no other process has: what a cancelled call must stop.
    let marker = format!("mcp_sleepy_{}", std::process::id());
    let sleepy = dir.path().join(format!("{marker}.cu"));
    std::fs::write(&sleepy, "#include <unistd.h>\nint main() { sleep(60); return 0; }\n").unwrap();
    let (threads, stride) = (16384u64, 3u64);
    let source = root().join("tests/programs/mcp/strided.cu");
    let calls = json!([
        { "tool": "profile_sim", "progress": true, "arguments": {
            "source": source, "nvcc_args": [format!("-DTHREADS={threads}")], "args": [stride.to_string()],
            "out": out } },
        { "tool": "lines", "arguments": { "report": "@run_folder:0" } },
        { "tool": "check", "arguments": { "inputs": ["@run_folder:0"] } },
        { "tool": "profile_sim", "arguments": { "source": broken, "out": out } },
        { "tool": "profile_sim", "progress": true, "cancel_after": 4, "watch": marker,
          "arguments": { "source": sleepy, "out": out } },
    ]);
    let started = Instant::now();
    let r = drive(&python, calls);
    eprintln!("mcp: profile_sim on {threads} threads took {:.2} s", r["calls"][0]["seconds"].as_f64().unwrap());

    // The strided line, its numbers from the addresses: lane l of warp w reads float
    // (32w + l)·stride; the buffer is 256-byte aligned, so each warp's sectors are the distinct
    // (32w + l)·stride·4 / 32, the same for every warp; one request per warp.
    let s = ok(&r, 0);
    let per_warp: std::collections::BTreeSet<u64> = (0..32u64).map(|l| l * stride * 4 / 32).collect();
    let (requests, sectors) = (threads / 32, (threads / 32) * per_warp.len() as u64);
    let ideal = 32.0 * 4.0 / 32.0;
    let line = s["lines"].as_array().unwrap().iter().find(|l| l["op"] == "global load").unwrap();
    let text = std::fs::read_to_string(&source).unwrap();
    let n = text.lines().position(|l| l.contains("// STRIDED")).unwrap() + 1;
    assert_eq!(line["location"], format!("tests/programs/mcp/strided.cu:{n}"), "{s:#}");
    assert_eq!(line["sectors_per_request"].as_f64(), Some(sectors as f64 / requests as f64));
    assert_eq!(line["ideal_sectors_per_request"].as_f64(), Some(ideal));
    assert_eq!(line["excess_sectors"].as_f64(), Some(sectors as f64 - ideal * requests as f64));
    let k = &s["kernels"][0]["metrics"]["global_load_sectors_per_request"];
    assert_eq!((k["value"].as_f64(), k["ideal"].as_f64()), (Some(per_warp.len() as f64), Some(ideal)));
    assert!(r["calls"][0]["texts"][0].as_str().unwrap().len() <= SUMMARY_BYTES);
    assert!(Path::new(s["run_folder"].as_str().unwrap()).join("results.json").exists(), "{s:#}");

    // lines on the run folder names the same line with the same numbers; the default gate
    // warns on it (8 sectors over ideal > 2) and passes.
    let l = ok(&r, 1);
    assert_eq!(l["lines"][0]["location"], line["location"], "{l:#}");
    assert_eq!(l["lines"][0]["sectors_per_request"], line["sectors_per_request"], "{l:#}");
    let c = ok(&r, 2);
    assert_eq!(c["gate"]["verdict"], "pass", "{c:#}");
    let warned = c["gate"]["checks"].as_array().unwrap();
    assert!(warned.iter().any(|k| k["verdict"] == "warn" && k["line"] == line["location"]), "{c:#}");

    // A .cu that does not compile: a tool error with nvcc's words under coalprof's.
    let e = failed(&r, 3);
    assert_eq!(e["exit_code"], 3, "{e:#}");
    assert!(e["error"].as_str().unwrap().contains("does not compile"), "{e:#}");
    assert!(e["message"].as_str().unwrap().contains("undefined_name"), "{e:#}");

    // The sleeping program: progress ticks while it runs, and the cancelled call leaves no
    // process behind (neither the coalprof child nor the program under the simulator).
    let c = &r["calls"][4];
    assert_eq!(c["cancelled"], true, "{c:#}");
    let ticks = c["progress"].as_array().unwrap();
    assert!(ticks.len() >= 2, "{c:#}");
    assert!(ticks.windows(2).all(|w| w[0]["progress"].as_f64() < w[1]["progress"].as_f64()), "{c:#}");
    assert_eq!(c["survivors"], json!([]), "{c:#}");
    assert!(started.elapsed() < Duration::from_secs(50), "the cancelled call ran on");
}

#[test]
fn a_triton_kernel_gets_the_same_summary_as_the_command_line() {
    let test = "a_triton_kernel_gets_the_same_summary_as_the_command_line";
    let Some(python) = sdk(test) else { return };
    if !root().join(".tools/triton/bin/python3").exists() {
        skipped(test, "no Python with Triton: run scripts/install-triton.sh (CI does)");
        return;
    }
    let kernels = "tests/fixtures/triton/kernels.py";
    let (args, meta) = (["x_ptr=f32[65536]", "y_ptr=f32[16384]", "stride=2"], ["BLOCK=1024"]);
    let calls = json!([
        { "tool": "triton", "progress": true, "arguments": {
            "kernel": format!("{kernels}::strided"), "grid": "16", "args": args, "meta": meta } },
    ]);
    let r = drive(&python, calls);
    let s = ok(&r, 0);
    let mut cli = coalprof();
    cli.env("COALPROF_PYTHON", root().join(".tools/triton/bin/python3")).args([
        "triton",
        &format!("{kernels}::strided"),
        "--grid",
        "16",
        "--format",
        "summary",
    ]);
    for a in args {
        cli.args(["--arg", a]);
    }
    cli.args(["--meta", meta[0]]);
    assert_eq!(s, &parse_json(&cli.ok_stdout()));
    // The strided load's line is the worst.
    let text = std::fs::read_to_string(root().join(kernels)).unwrap();
    let n = text.lines().position(|l| l.contains("x_ptr + offs * stride")).unwrap() + 1;
    assert_eq!(s["lines"][0]["location"], format!("{kernels}:{n}"), "{s:#}");
}

/// One JSON-RPC request line.
fn request(id: u64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string() + "\n"
}

fn initialize(id: u64) -> String {
    request(
        id,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "0" } }),
    )
}

/// Without the SDK: the server's stdout carries JSON-RPC 2.0 messages only, one per line, even
/// when a tool's child fails loudly; and `initialize` is answered quickly (from spawn to the
/// answer; loosely bounded here, a machine under load; the release build's range is in
/// docs/guide/agents.md).
#[test]
fn stdout_carries_only_json_rpc_and_initialize_is_answered_quickly() {
    let mut child = std::process::Command::new(exe())
        .arg("mcp")
        .env("COALPROF_HOME", root().join("target/no-tool-home"))
        .env("NO_COLOR", "1")
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(initialize(1).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let latency = started.elapsed();
    eprintln!("mcp: initialize answered {:.1} ms after spawn", latency.as_secs_f64() * 1000.0);
    assert!(latency <= Duration::from_secs(1), "initialize took {latency:?}");
    let answer: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "coalprof");

    let call =
        |id, tool: &str, arguments: Value| request(id, "tools/call", json!({ "name": tool, "arguments": arguments }));
    let rest = [
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string() + "\n",
        request(2, "tools/list", json!({})),
        call(3, "analyze", json!({ "reports": ["no/such.ncu-rep"] })),
        call(4, "model", json!({ "expr": "lane * 2", "bindings": [] })),
        call(5, "lines", json!({ "report": fixture("bad/report_truncated.ncu-rep") })),
        call(6, "no_such_tool", json!({})),
    ];
    for line in rest {
        stdin.write_all(line.as_bytes()).unwrap();
    }
    // Wait for the answers before closing: the server ends when its input does.
    let mut answers = Vec::new();
    let mut line = String::new();
    while answers.len() < 5 {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        answers.push(v);
    }
    drop(stdin);
    let mut tail = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut tail).unwrap();
    for l in tail.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {l:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "{l}");
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the server exited with {status}");
    let by_id =
        |id: u64| answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {answers:#?}"));
    assert_eq!(by_id(2)["result"]["tools"].as_array().unwrap().len(), 6);
    assert_eq!(by_id(3)["result"]["isError"], true);
    assert_eq!(by_id(4)["result"]["isError"], false);
    assert_eq!(by_id(5)["result"]["isError"], true);
    // An unknown tool is the protocol's error, not a result.
    assert!(by_id(6)["error"].is_object(), "{:#}", by_id(6));
}
