//! Robustness of `coalprof analyze` against bad input: the catalogue of bad files in
//! tests/fixtures/bad (its EXPECTED.md is the table this test reads), generated extremes (a 10 MB
//! field, 100,000 columns), and 500 deterministic mutations of the real ncu CSV fixtures run
//! through the real binary. Every outcome is either success or one `error:` line with exit 3
//! (5 for a header without launches); never a panic (exit 101), never a hang.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{fixture, json, root};

/// What one run of the binary did.
pub(crate) struct Outcome {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
    /// Its peak resident memory, in bytes, where it was measured (0 where not).
    pub(crate) peak_rss: u64,
    /// How long it ran.
    pub(crate) took: Duration,
}

impl Outcome {
    pub(crate) fn describe(&self) -> String {
        format!(
            "exit {:?}, timed out {}, {:.1} s, peak RSS {} MB, stderr:\n{}",
            self.code,
            self.timed_out,
            self.took.as_secs_f64(),
            self.peak_rss >> 20,
            self.stderr
        )
    }
}

/// `coalprof analyze PATH ARGS…`, killed after `timeout`.
pub(crate) fn analyze(path: &Path, args: &[&str], timeout: Duration) -> Outcome {
    let mut all = vec![OsStr::new("analyze"), path.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    bounded(&all, timeout, false)
}

/// Starts a program as a child of its own, waits for it and writes the child's peak RSS (KiB)
/// and exit status to `$COALPROF_TEST_RUSAGE`. Measured from the test process itself, a child's
/// `ru_maxrss` would include the test process's memory at the fork (Linux counts the copied page
/// tables, and exec keeps that high-water mark); forked from this small interpreter, it does not.
const RUSAGE_OF_CHILD: &str = "import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
open(os.environ['COALPROF_TEST_RUSAGE'], 'w').write(f'{usage.ru_maxrss} {code}')
";

/// `coalprof ARGS…`, killed after `timeout`; with `measure`, its peak resident memory measured
/// (through [`RUSAGE_OF_CHILD`], so python3 must be there). Output goes through files, so a
/// huge output cannot block the child on a full pipe while we wait.
pub(crate) fn bounded(args: &[&OsStr], timeout: Duration, measure: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let usage_path = dir.path().join("rusage");
    let bin = assert_cmd::cargo::cargo_bin("coalprof");
    let mut cmd = if measure {
        let mut c = Command::new("python3");
        c.args(["-c", RUSAGE_OF_CHILD]).arg(&bin).env("COALPROF_TEST_RUSAGE", &usage_path);
        c
    } else {
        Command::new(&bin)
    };
    let mut child = cmd
        .args(args)
        .env_remove("COALPROF_NCU")
        .env_remove("COALPROF_NVCC")
        .env_remove("COALPROF_LOG")
        .env_remove("CUDA_HOME")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NO_COLOR", "1")
        .current_dir(root())
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("coalprof starts");
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            // The whole group: the measuring interpreter and coalprof under it.
            // SAFETY: a plain kill(2) of the process group this child leads.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(3));
    };
    let took = start.elapsed();
    let (code, peak_rss) = match (measure, std::fs::read_to_string(&usage_path)) {
        (true, Ok(text)) => {
            let mut it = text.split_whitespace().map(|w| w.parse::<i64>().unwrap());
            let (kib, code) = (it.next().unwrap(), it.next().unwrap());
            ((code >= 0).then_some(code as i32), kib as u64 * 1024)
        }
        (true, Err(_)) if !timed_out => {
            panic!("python3 measured nothing: {}", std::fs::read_to_string(&err_path).unwrap())
        }
        _ => (status.code(), 0),
    };
    Outcome {
        code,
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned(),
        timed_out,
        peak_rss,
        took,
    }
}

pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// One mutated input: its bytes, the extension it is written under, and what was done to it.
pub(crate) struct Mutant {
    pub(crate) bytes: Vec<u8>,
    pub(crate) ext: &'static str,
    pub(crate) what: String,
}

/// Run `cases` mutants (`make(case)`, deterministic) through `analyze --format json` on two
/// threads. A panic, a hang or a crash fails the test; every other outcome goes to the tally
/// `classify` names (given the outcome and its `error:` lines), or fails with its reason. A
/// failing case is saved in `target/robust-failures/`. Returns the tally and the time taken.
pub(crate) fn campaign(
    cases: usize,
    make: impl Fn(usize) -> Mutant + Sync,
    classify: impl Fn(&Outcome, &[&str]) -> Result<usize, String> + Sync,
) -> ([usize; 3], Duration) {
    const THREADS: usize = 2;
    let failures_dir = root().join("target/robust-failures");
    let start = Instant::now();
    let tally = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (make, classify, failures_dir) = (&make, &classify, &failures_dir);
                scope.spawn(move || {
                    let mut tally = [0usize; 3];
                    let dir = tempfile::tempdir().unwrap();
                    for case in (t..cases).step_by(THREADS) {
                        let m = make(case);
                        let file = format!("case-{case}.{}", m.ext);
                        let path = dir.path().join(&file);
                        std::fs::write(&path, &m.bytes).unwrap();
                        let o = analyze(&path, &["--format", "json"], TIMEOUT);
                        let fail = |why: &str| -> ! {
                            std::fs::create_dir_all(failures_dir).ok();
                            let saved = failures_dir.join(&file);
                            std::fs::write(&saved, &m.bytes).ok();
                            panic!("case {case} ({}): {why}; saved in {}: {}", m.what, saved.display(), o.describe())
                        };
                        if o.timed_out || o.code == Some(101) || o.code.is_none() || o.stderr.contains("panicked") {
                            fail("a panic, a hang or a crash");
                        }
                        let errors: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("error: ")).collect();
                        match classify(&o, &errors) {
                            Ok(i) => tally[i] += 1,
                            Err(why) => fail(&why),
                        }
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).fold([0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]])
    });
    (tally, start.elapsed())
}

/// The contract for a failure: the exit code, exactly one `error: ` line (holding `needle`),
/// and no panic.
pub(crate) fn assert_failure(o: &Outcome, codes: &[i32], needle: &str, what: &str) {
    assert!(!o.timed_out, "{what}: hung: {}", o.describe());
    assert!(!o.stderr.contains("panicked"), "{what}: panicked: {}", o.describe());
    assert!(o.code.is_some_and(|c| codes.contains(&c)), "{what}: expected exit {codes:?}: {}", o.describe());
    let errors: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{what}: exactly one error line: {}", o.describe());
    assert!(errors[0].contains(needle), "{what}: expected `{needle}` in the error: {}", o.describe());
    assert!(o.stderr.len() < 4096, "{what}: {} bytes of stderr", o.stderr.len());
}

fn assert_success(o: &Outcome, what: &str) -> Value {
    assert!(!o.timed_out && o.code == Some(0), "{what}: {}", o.describe());
    assert!(!o.stderr.contains("panicked") && !o.stderr.contains("error: "), "{what}: {}", o.describe());
    json(&o.stdout)
}

fn metric(v: &Value, row: usize, key: &str) -> Option<f64> {
    v["rows"][row]["metrics"][key].as_f64()
}

/// `tests/fixtures/bad/EXPECTED.md`'s table: (file, exit code, fragment of the error line).
/// Exit 0 rows have no fragment: their values are checked by the tests below.
fn expected() -> Vec<(String, i32, String)> {
    let text = std::fs::read_to_string(fixture("bad/EXPECTED.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').map(str::trim).collect();
            let file = cells[0].trim_matches('`').to_string();
            let code = cells[1].parse().unwrap_or_else(|_| panic!("EXPECTED.md: exit code of {file}"));
            let fragment = cells[2].trim_matches('`').trim().to_string();
            (file, code, fragment)
        })
        .collect()
}

#[test]
fn every_bad_file_gives_its_documented_outcome() {
    let table = expected();
    let listed: Vec<&str> = table.iter().map(|(f, _, _)| f.as_str()).collect();
    for entry in std::fs::read_dir(fixture("bad")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(name == "EXPECTED.md" || listed.contains(&name.as_str()), "{name} is not in EXPECTED.md");
    }
    assert!(table.len() >= 10, "{} rows in EXPECTED.md", table.len());
    for (file, code, fragment) in &table {
        let o = analyze(&fixture(&format!("bad/{file}")), &["--format", "json"], TIMEOUT);
        if *code == 0 {
            assert_success(&o, file);
        } else {
            assert_failure(&o, &[*code], fragment, file);
        }
    }
}

fn rows_of(path: &Path, per_launch: bool) -> Value {
    let args: &[&str] = if per_launch { &["--format", "json", "--per-launch"] } else { &["--format", "json"] };
    assert_success(&analyze(path, args, TIMEOUT), &path.display().to_string())
}

#[test]
fn a_bom_and_crlf_line_ends_parse_like_the_originals() {
    let raw = "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv";
    let details = "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_details_base.csv";
    for (bad, original) in [("bad/bom_raw.csv", raw), ("bad/crlf_details.csv", details)] {
        let got = rows_of(&fixture(bad), true);
        let want = rows_of(&fixture(original), true);
        assert_eq!(got["rows"], want["rows"], "{bad}");
        assert_eq!(got["rows"][0]["kernel"], "void vecAdd<float>(float*,float*,float*,int)");
    }
    assert_eq!(metric(&rows_of(&fixture("bad/bom_raw.csv"), true), 0, "dram_bytes_read"), Some(820_928.0));
}

#[test]
fn mixed_unit_scales_of_one_metric_convert_per_launch() {
    // The same 7.52 µs printed as usecond, nsecond (with a separator), msecond and second.
    let per_launch = rows_of(&fixture("bad/mixed_unit_scales_details.csv"), true);
    assert_eq!(per_launch["rows"].as_array().unwrap().len(), 4);
    for i in 0..4 {
        let d = metric(&per_launch, i, "duration").unwrap();
        assert!((d - 7.52e-6).abs() < 1e-18, "launch {i}: {d}");
    }
    let per_kernel = rows_of(&fixture("bad/mixed_unit_scales_details.csv"), false);
    assert_eq!(per_kernel["rows"][0]["launches"], 4);
    let d = metric(&per_kernel, 0, "duration").unwrap();
    assert!((d - 4.0 * 7.52e-6).abs() < 1e-17, "{d}");
}

#[test]
fn a_value_of_bare_warning_mark_or_latin1_text_is_not_an_error() {
    // `(!)` with no value: the metric is absent (with a notice), the rest of the row stands.
    let v = rows_of(&fixture("bad/bang_without_value.csv"), true);
    assert_eq!(metric(&v, 0, "dram_bytes_read"), None);
    assert_eq!(metric(&v, 0, "dram_bytes_write"), Some(331_264.0));
    // A process name in Latin-1 (a Windows capture) does not hide the numbers.
    let v = rows_of(&fixture("bad/latin1_process_name.csv"), true);
    assert_eq!(metric(&v, 0, "dram_bytes_read"), Some(820_928.0));
}

/// The lines of the real 102400-thread raw page: header, units, one launch.
fn raw_lines() -> Vec<String> {
    let text = std::fs::read_to_string(fixture(
        "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv",
    ))
    .unwrap();
    text.lines().map(str::to_string).collect()
}

fn write_temp(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f
}

#[test]
fn a_ten_megabyte_field_is_read_or_refused_in_one_short_line() {
    let l = raw_lines();
    let huge = "x".repeat(10 << 20);
    // In a text column (Process Name): read, the numbers unharmed.
    let row = l[2].replacen("\"vectoradd_l1_enabled\"", &format!("\"{huge}\""), 1);
    let f = write_temp(format!("{}\n{}\n{}\n", l[0], l[1], row).as_bytes());
    let v = rows_of(f.path(), true);
    assert_eq!(metric(&v, 0, "dram_bytes_read"), Some(820_928.0));
    // In the ID column: refused, and the message quotes a bounded piece of it.
    let row = l[2].replacen("\"0\"", &format!("\"{huge}\""), 1);
    let f = write_temp(format!("{}\n{}\n{}\n", l[0], l[1], row).as_bytes());
    let o = analyze(f.path(), &[], TIMEOUT);
    assert_failure(&o, &[3], "is not a number", "10 MB ID");
}

#[test]
fn a_hundred_thousand_columns_parse() {
    let l = raw_lines();
    let extra = 100_000 - l[0].split("\",\"").count();
    let mut text = String::with_capacity(4 << 20);
    text.push_str(&l[0]);
    (0..extra).for_each(|i| text.push_str(&format!(",\"filler__metric_{i}.sum\"")));
    text.push('\n');
    text.push_str(&l[1]);
    (0..extra).for_each(|_| text.push_str(",\"Kbyte\""));
    text.push('\n');
    text.push_str(&l[2]);
    (0..extra).for_each(|i| text.push_str(&format!(",\"{i}\"")));
    text.push('\n');
    let f = write_temp(text.as_bytes());
    let v = rows_of(f.path(), true);
    assert_eq!(metric(&v, 0, "dram_bytes_read"), Some(820_928.0));
    assert_eq!(metric(&v, 0, "dram_bytes_write"), Some(331_264.0));
}

// ---- 500 mutated real reports -------------------------------------------------------------

/// The real CSV fixtures the mutations start from: small ones, every page and era.
const SOURCES: &[&str] = &[
    "ncu/2019/details_csv_nvnsightcucli2019_v100_lassen_hotspot_stdout.txt",
    "ncu/2019/raw_page_nvnsightcucli2019_gtx1080_units_base_fp_stdout.txt",
    "ncu/2020/details_csv_ncu2020_2_rtx3070_nvtx_appstdout.csv",
    "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv",
    "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_summary_per_kernel.csv",
    "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_details_base.csv",
    "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_auto.csv",
    "ncu/2025/details_csv_ncu2025_b200_cc10_setfull_base_units_appstdout.log",
];

/// xorshift64*: deterministic, no crate.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "\"",
    ",",
    "\"\"",
    "nan",
    "-nan",
    "inf",
    "(!)",
    "(!) n/a",
    "n/a",
    "1e309",
    "1e300",
    "-1",
    "0",
    "99999999999999999999999999",
    "18446744073709551616",
    "1,2,3",
    "\n==PROF== Profiling \"k\" - 0: 0%....50%....100% - 9 passes\n",
    "\n==ERROR== something failed\n",
    "\r",
    "\0",
    "\u{feff}",
    "\"ID\",\"Process ID\"",
    "\t",
    "(1, 2)",
    "(0, 0, 0)",
];

/// Names (prefixes) of metrics coalprof converts: raw-page columns and details-page rows.
const READ: &[&str] = &[
    "dram__read_bytes",
    "dram__write_bytes",
    "dram__bytes_read",
    "gpu__time_duration",
    "Duration",
    "l1tex__t_",
    "lts__t_sectors",
    "smsp__sass",
    "Invocations",
];

/// The byte ranges of `b`'s lines, newline included.
fn lines(b: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push(s..i + 1);
            s = i + 1;
        }
    }
    if s < b.len() {
        out.push(s..b.len());
    }
    out
}

/// Apply one random mutation; return its name (for the failure message).
fn mutate(b: &mut Vec<u8>, rng: &mut Rng) -> &'static str {
    let ls = lines(b);
    if b.is_empty() || ls.is_empty() {
        b.extend_from_slice(TOKENS[rng.below(TOKENS.len())].as_bytes());
        return "insert into empty";
    }
    let line = ls[rng.below(ls.len())].clone();
    match rng.below(11) {
        0 => {
            b.drain(line);
            "delete line"
        }
        1 => {
            let copy = b[line.clone()].to_vec();
            b.splice(line.start..line.start, copy);
            "duplicate line"
        }
        2 => {
            let other = ls[rng.below(ls.len())].clone();
            let (a, c) = if line.start <= other.start { (line, other) } else { (other, line) };
            if a.end <= c.start {
                let (x, y) = (b[a.clone()].to_vec(), b[c.clone()].to_vec());
                b.splice(c, x);
                b.splice(a, y);
            }
            "swap lines"
        }
        3 => {
            let at = rng.below(b.len());
            b.truncate(at);
            "truncate"
        }
        4 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len());
                b[at] ^= 1 << rng.below(8);
            }
            "flip bits"
        }
        5 => {
            let at = rng.below(b.len() + 1);
            let t = TOKENS[rng.below(TOKENS.len())];
            b.splice(at..at, t.bytes());
            "insert token"
        }
        6 | 7 => {
            // Drop a field, or replace its content, on one line.
            let commas: Vec<usize> = b[line.clone()]
                .windows(3)
                .enumerate()
                .filter(|(_, w)| w == b"\",\"")
                .map(|(i, _)| line.start + i + 1)
                .collect();
            if commas.len() < 2 {
                return "field edit (no fields)";
            }
            let k = rng.below(commas.len() - 1);
            let (s, e) = (commas[k], commas[k + 1]);
            if rng.below(2) == 0 {
                b.drain(s..e);
                "drop field"
            } else {
                let t = format!("\"{}\"", TOKENS[rng.below(TOKENS.len())]);
                b.splice(s + 1..e, t.bytes());
                "replace field"
            }
        }
        9 | 10 => {
            // Poison a value coalprof reads (most columns it never converts): on a raw page the
            // column of a catalogue metric, on a details page the value of a catalogue row.
            let t = format!("\"{}\"", TOKENS[rng.below(TOKENS.len())]);
            let fields = |r: &std::ops::Range<usize>, b: &[u8]| -> Vec<usize> {
                std::iter::once(r.start)
                    .chain(
                        b[r.clone()]
                            .windows(3)
                            .enumerate()
                            .filter(|(_, w)| w == b"\",\"")
                            .map(|(i, _)| r.start + i + 2),
                    )
                    .collect()
            };
            let header = ls.iter().find(|r| b[(*r).clone()].starts_with(b"\"ID\",")).cloned();
            let col = header.as_ref().and_then(|h| {
                let text = String::from_utf8_lossy(&b[h.clone()]).into_owned();
                let cols: Vec<&str> = text.split("\",\"").collect();
                let wanted: Vec<usize> = cols
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| READ.iter().any(|m| c.starts_with(m)))
                    .map(|(i, _)| i)
                    .collect();
                (!wanted.is_empty()).then(|| wanted[rng.below(wanted.len())])
            });
            let targets: Vec<std::ops::Range<usize>> = ls
                .iter()
                .filter(|r| READ.iter().any(|m| b[(*r).clone()].windows(m.len()).any(|w| w == m.as_bytes())))
                .cloned()
                .collect();
            match col {
                Some(j)
                    if header.as_ref().is_some_and(|h| !b[h.clone()].windows(13).any(|w| w == b"\"Metric Name\"")) =>
                {
                    let f = fields(&line, b);
                    if j + 1 < f.len() {
                        b.splice(f[j]..f[j + 1] - 1, t.bytes());
                    }
                    "poison a raw metric"
                }
                _ if !targets.is_empty() => {
                    let r = targets[rng.below(targets.len())].clone();
                    let f = fields(&r, b);
                    let end = b[r.clone()].iter().rposition(|&c| c == b'"').map_or(r.end, |p| r.start + p + 1);
                    let start = *f.last().unwrap();
                    if start < end {
                        b.splice(start..end, t.bytes());
                    }
                    "poison a details value"
                }
                _ => "poison (nothing read)",
            }
        }
        _ => {
            let at = rng.below(b.len());
            let n = 1 + rng.below(200);
            b.drain(at..(at + n).min(b.len()));
            "delete bytes"
        }
    }
}

#[test]
fn five_hundred_mutated_real_reports_never_panic_or_hang() {
    const CASES: usize = 500;
    let sources: Vec<Vec<u8>> = SOURCES.iter().map(|s| std::fs::read(fixture(s)).unwrap()).collect();
    let make = |case: usize| {
        let mut rng = Rng::new(0xC0A1_5EED ^ case as u64);
        let src = case % sources.len();
        let mut bytes = sources[src].clone();
        let edits: Vec<&str> = (0..1 + rng.below(4)).map(|_| mutate(&mut bytes, &mut rng)).collect();
        Mutant { bytes, ext: "csv", what: format!("{} ← {edits:?}", SOURCES[src]) }
    };
    // Tallies: parsed, refused (exit 3), without launches (exit 5).
    let classify = |o: &Outcome, errors: &[&str]| match o.code {
        Some(0) if serde_json::from_slice::<Value>(&o.stdout).is_err() || o.stderr.contains("error: ") => {
            Err("success without JSON, or with an error line".to_string())
        }
        Some(0) => Ok(0),
        Some(c @ (3 | 5)) if errors.len() == 1 => Ok(if c == 3 { 1 } else { 2 }),
        Some(3 | 5) => Err(format!("{} error lines", errors.len())),
        _ => Err("unexpected exit".to_string()),
    };
    let (tally, took) = campaign(CASES, make, classify);
    eprintln!(
        "{CASES} mutated reports in {:.1} s: {} parsed, {} refused (exit 3), {} without launches (exit 5)",
        took.as_secs_f64(),
        tally[0],
        tally[1],
        tally[2]
    );
    // The mutations reach both sides of the contract.
    assert!(tally[0] > 50 && tally[1] > 50, "{tally:?}");
}
