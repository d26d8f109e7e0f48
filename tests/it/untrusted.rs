//! A report carried by a pull request cannot take the gate's runner down: reports *built* from a
//! small grammar of their container (counts, lengths, payloads, compression, strings), CSVs,
//! `results.json` files and run folders, each run through `coalprof check` as a gate would, with
//! its time and peak resident memory measured (wait4's `ru_maxrss` of that one child). The byte
//! flips of real reports are `robust_rep.rs`'s; these shape hostile ones: what they claim is
//! what costs, so every claim must be bounded before it is believed.
//!
//! The zstd frames are written here by hand (raw and RLE blocks, RFC 8878): an RLE block of
//! 128 KiB is four bytes, which is how a few kilobytes claim gigabytes.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::robust::{bounded, Outcome, Rng};

/// What any input may cost `check`, the gate a hosted runner (7 to 16 GB) runs.
const MAX_RSS: u64 = 512 << 20;
const MAX_TIME: Duration = Duration::from_secs(20);

// ---- protobuf and the container (docs/ncu-rep-format.md) ---------------------------------------

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field.
fn num(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

/// A length-delimited field (string, bytes, message).
fn bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A `ProfileResult`: the kernel's demangled name, grid and block, and `(name index, value)`
/// metrics as doubles.
fn result(kernel: &str, grid: [u64; 3], metrics: &[(u64, f64)]) -> Vec<u8> {
    let dims = |d: [u64; 3]| {
        let mut m = Vec::new();
        (1..).zip(d).for_each(|(f, v)| num(&mut m, f, v));
        m
    };
    let mut r = Vec::new();
    bytes(&mut r, 7, kernel.as_bytes());
    bytes(&mut r, 10, &dims(grid));
    bytes(&mut r, 11, &dims([256, 1, 1]));
    for &(id, v) in metrics {
        let mut value = Vec::new();
        varint(&mut value, 3 << 3 | 1);
        value.extend(v.to_le_bytes());
        let mut m = Vec::new();
        num(&mut m, 1, id);
        bytes(&mut m, 2, &value);
        bytes(&mut r, 13, &m);
    }
    r
}

/// A block header: its counts, payload size and (optionally) a string table.
fn header(sources: u32, results: u32, payload: u32, names: &[&str]) -> Vec<u8> {
    header_with_ranges(sources, results, 0, payload, names)
}

/// A block header that also counts range results (items every reader skips unread).
fn header_with_ranges(sources: u32, results: u32, ranges: u32, payload: u32, names: &[&str]) -> Vec<u8> {
    let mut h = Vec::new();
    num(&mut h, 1, sources.into());
    num(&mut h, 2, results.into());
    num(&mut h, 7, ranges.into());
    if !names.is_empty() {
        let mut t = Vec::new();
        names.iter().for_each(|n| bytes(&mut t, 1, n.as_bytes()));
        bytes(&mut h, 4, &t);
    }
    num(&mut h, 5, payload.into());
    h
}

fn framed(out: &mut Vec<u8>, item: &[u8]) {
    out.extend((item.len() as u32).to_le_bytes());
    out.extend_from_slice(item);
}

/// The magic and the file header of format version 7.
fn file_start() -> Vec<u8> {
    let mut out = b"NVR\0".to_vec();
    let mut fh = Vec::new();
    num(&mut fh, 1, 7);
    framed(&mut out, &fh);
    out
}

/// A whole block: its header, then its payload items.
fn block(out: &mut Vec<u8>, names: &[&str], sources: &[Vec<u8>], results: &[Vec<u8>]) {
    let payload: usize = sources.iter().chain(results).map(|i| 4 + i.len()).sum();
    framed(out, &header(sources.len() as u32, results.len() as u32, payload as u32, names));
    sources.iter().chain(results).for_each(|i| framed(out, i));
}

/// The metrics a gate reads of a launch, by their index in [`NAMES`].
const NAMES: &[&str] = &[
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "launch__grid_size",
    "launch__block_size",
];

// ---- zstd frames of raw and RLE blocks --------------------------------------------------------

/// What a zstd frame decompresses to: bytes as they are, or one byte repeated.
#[derive(Clone)]
enum Part {
    Raw(Vec<u8>),
    Repeat(u8, u64),
}

/// One zstd frame holding `parts` (RFC 8878: a 128 KiB window, blocks of at most 128 KiB).
fn zstd(parts: &[Part]) -> Vec<u8> {
    const MAX_BLOCK: u64 = 128 << 10;
    let mut blocks: Vec<(u8, u64, Option<&[u8]>, u8)> = Vec::new();
    for p in parts {
        match p {
            Part::Raw(b) => b.chunks(MAX_BLOCK as usize).for_each(|c| blocks.push((0, c.len() as u64, Some(c), 0))),
            Part::Repeat(byte, n) => {
                let mut left = *n;
                while left > 0 {
                    let k = left.min(MAX_BLOCK);
                    blocks.push((1, k, None, *byte));
                    left -= k;
                }
            }
        }
    }
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    let last = blocks.len().saturating_sub(1);
    if blocks.is_empty() {
        out.extend([1, 0, 0]);
    }
    for (i, (kind, size, raw, byte)) in blocks.into_iter().enumerate() {
        let h = u32::from(i == last) | u32::from(kind) << 1 | (size as u32) << 3;
        out.extend(&h.to_le_bytes()[..3]);
        match raw {
            Some(b) => out.extend_from_slice(b),
            None => out.push(byte),
        }
    }
    out
}

// ---- running the gate on an input --------------------------------------------------------------

fn check(path: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec![OsStr::new("check"), path.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    bounded(&args, MAX_TIME + Duration::from_secs(10), true)
}

fn error_lines(o: &Outcome) -> Vec<&str> {
    o.stderr.lines().filter(|l| l.starts_with("error: ")).collect()
}

/// Exit 3 within the time and memory bounds, and one `error:` line holding `needle`.
fn assert_refused(o: &Outcome, what: &str, needle: &str) {
    assert!(!o.timed_out && o.took <= MAX_TIME, "{what}: too slow: {}", o.describe());
    assert!(o.peak_rss <= MAX_RSS, "{what}: too much memory: {}", o.describe());
    assert_eq!(o.code, Some(3), "{what}: {}", o.describe());
    let errors = error_lines(o);
    assert_eq!(errors.len(), 1, "{what}: {}", o.describe());
    assert!(errors[0].contains(needle), "{what}: expected `{needle}`: {}", o.describe());
}

fn write(dir: &Path, name: &str, b: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

/// The issue's first report, `scale` times over: a block declaring 50,000,000 × `scale` results,
/// its payload zeros (each result an empty item), compressed to a few kilobytes.
fn many_empty_results(scale: u64) -> Vec<u8> {
    let n = 50_000_000 * scale;
    let mut head = file_start();
    let payload = (4 * n).min(u64::from(u32::MAX)) as u32;
    framed(&mut head, &header(0, n.min(u64::from(u32::MAX)) as u32, payload, NAMES));
    zstd(&[Part::Raw(head), Part::Repeat(0, 4 * n)])
}

/// The issue's second report: results whose length says 4,000,000,000 bytes (`count` of them,
/// one per block), then zeros.
fn huge_result_length(count: u64) -> Vec<u8> {
    const CLAIM: u32 = 4_000_000_000;
    let mut parts = Vec::new();
    let mut head = file_start();
    for i in 0..count {
        if i > 0 {
            head = Vec::new();
        }
        framed(&mut head, &header(0, 1, CLAIM + 4, if i == 0 { NAMES } else { &[] }));
        head.extend(CLAIM.to_le_bytes());
        parts.push(Part::Raw(head.clone()));
        parts.push(Part::Repeat(0, u64::from(CLAIM) / 32));
    }
    zstd(&parts)
}

#[test]
fn the_forged_reports_of_the_issue_end_in_seconds_and_megabytes() {
    let dir = tempfile::tempdir().unwrap();
    for scale in [1, 10] {
        let bytes = many_empty_results(scale);
        assert!(bytes.len() < 100_000 * scale as usize, "{} bytes", bytes.len());
        let p = write(dir.path(), &format!("empty-results-{scale}x.ncu-repz"), &bytes);
        let o = check(&p, &[]);
        assert_refused(&o, &format!("empty results ×{scale}"), "a result with no kernel name");
        eprintln!("{} bytes, ×{scale}: {}", bytes.len(), o.describe().lines().next().unwrap_or_default());

        let bytes = huge_result_length(scale);
        let p = write(dir.path(), &format!("huge-length-{scale}x.ncu-repz"), &bytes);
        let o = check(&p, &[]);
        assert_refused(
            &o,
            &format!("a 4 GB result ×{scale}"),
            "a result claims 4000000000 bytes, over the 16 MiB bound",
        );
        assert!(o.stderr.contains("--trust-input"), "the hint names the flag: {}", o.describe());
        eprintln!("{} bytes, ×{scale}: {}", bytes.len(), o.describe().lines().next().unwrap_or_default());
    }
}

#[test]
fn a_compressed_report_cannot_expand_past_its_bound_unless_trusted() {
    let dir = tempfile::tempdir().unwrap();
    // A range result of 200 MB of zeros (an item every reader skips without buffering it), then
    // one good launch: 200 MB from a file of a few kilobytes.
    let mut head = file_start();
    let module = 200u64 << 20;
    framed(&mut head, &header_with_ranges(0, 0, 1, (module + 4) as u32, NAMES));
    head.extend((module as u32).to_le_bytes());
    let mut tail = Vec::new();
    let launch = result("k", [4, 1, 1], &[(0, 8.0), (1, 1.0), (2, 4.0), (3, 256.0)]);
    block(&mut tail, &[], &[], &[launch]);
    let bytes = zstd(&[Part::Raw(head), Part::Repeat(0, module), Part::Raw(tail)]);
    let p = write(dir.path(), "expands.ncu-repz", &bytes);
    let o = check(&p, &[]);
    let bound = format!("decompresses to more than {} bytes", 64u64 << 20);
    assert_refused(&o, "a 200 MB module", &bound);
    assert!(o.stderr.contains(&format!("the {}-byte compressed report", bytes.len())), "{}", o.describe());
    // Trusted, the same file reads: its one launch is the table's one row.
    let o = check(&p, &["--trust-input", "--format", "json"]);
    assert!(o.code == Some(0) || o.code == Some(1), "{}", o.describe());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.describe()));
    assert!(v["checks"].as_array().is_some_and(|c| c.iter().any(|c| c["row"].as_str() == Some("k"))), "{v}");
}

/// A report of `n` well-formed launches of one kernel (the string table in the first block, one
/// result per block as ncu writes them), each with 8 sectors over 1 request.
fn launches_of_one_kernel(n: usize) -> Vec<u8> {
    let mut out = file_start();
    block(&mut out, NAMES, &[], &[]);
    let launch = result("copy_kernel(float*, float const*)", [4, 1, 1], &[(0, 8.0), (1, 1.0), (2, 4.0), (3, 256.0)]);
    let mut one = Vec::new();
    block(&mut one, &[], &[], &[launch]);
    out.reserve(one.len() * n);
    (0..n).for_each(|_| out.extend_from_slice(&one));
    out
}

/// A million launches of one kernel cost what one does: one row, summed as they arrive. The
/// time is printed (`scripts/bench-untrusted.sh` runs this in the release build).
#[test]
fn a_million_launches_of_one_kernel_read_in_a_hundred_megabytes() {
    const N: usize = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let plain = launches_of_one_kernel(N);
    let zipped = zstd(&[Part::Raw(plain.clone())]);
    for (name, bytes) in [("million.ncu-rep", &plain), ("million.ncu-repz", &zipped)] {
        let p = write(dir.path(), name, bytes);
        let o = bounded(
            &[OsStr::new("analyze"), p.as_os_str(), OsStr::new("--format"), OsStr::new("json")],
            MAX_TIME * 6,
            true,
        );
        assert_eq!(o.code, Some(0), "{name}: {}", o.describe());
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{name}: one kernel, one shape, one row");
        assert_eq!(rows[0]["launches"], N as u64, "{name}");
        let m = &rows[0]["metrics"];
        assert_eq!(m["global_load_sectors"], 8.0 * N as f64, "{name}: {m}");
        assert_eq!(m["global_load_sectors_per_request"], 8.0, "{name}: {m}");
        eprintln!(
            "BENCH {name}: {} launches, {} MB, {:.2} s, peak RSS {} MB",
            N,
            bytes.len() >> 20,
            o.took.as_secs_f64(),
            o.peak_rss >> 20
        );
        assert!(o.peak_rss <= 100 << 20, "{name}: {}", o.describe());
    }
}

// ---- the grammar ---------------------------------------------------------------------------------

/// A length or count as a forger picks it: right, off by a little, zero, huge, or the largest.
fn claim(rng: &mut Rng, right: u64) -> u64 {
    match rng.below(6) {
        0 | 1 => right,
        2 => right + 1 + rng.below(8) as u64,
        3 => 0,
        4 => 1 << (20 + rng.below(12)),
        _ => u64::from(u32::MAX - rng.below(4) as u32),
    }
}

/// A string as a forger picks it: plain, empty, a workflow command, a terminal escape, long.
fn text(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!("kernel_{}", rng.below(4)),
        1 => String::new(),
        2 => "evil\n::error::injected".into(),
        3 => "\x1b]0;t\x07\x1b[2J".into(),
        _ => "k".repeat(1 + rng.below(1 << 16)),
    }
}

/// An item's bytes: a good result, one missing a part, zeros, noise, or a long valid prefix.
fn item(rng: &mut Rng) -> Part {
    let metrics: Vec<(u64, f64)> = (0..rng.below(6)).map(|i| (i as u64 % 6, rng.below(1000) as f64)).collect();
    match rng.below(6) {
        0 | 1 => Part::Raw(result(&text(rng), [1 + rng.below(8) as u64, 1, 1], &metrics)),
        2 => Part::Raw(result("", [1, 1, 1], &metrics)),
        3 => Part::Repeat(0, rng.below(1 << 22) as u64),
        4 => Part::Raw((0..rng.below(512)).map(|_| rng.next() as u8).collect()),
        _ => {
            let mut b = Vec::new();
            bytes(&mut b, 7, text(rng).as_bytes());
            Part::Raw(b)
        }
    }
}

fn len(p: &Part) -> u64 {
    match p {
        Part::Raw(b) => b.len() as u64,
        Part::Repeat(_, n) => *n,
    }
}

/// A report from the grammar: blocks whose counts, payload sizes and item lengths are claims
/// (right or forged), items from [`item`], plain or compressed. Half the reports are honest:
/// every claim right and every item a launch (with hostile names), as a real report is.
fn report(rng: &mut Rng) -> (Vec<u8>, &'static str) {
    let honest = rng.below(2) == 0;
    let claim = |rng: &mut Rng, right: u64| if honest { right } else { claim(rng, right) };
    let mut parts = vec![Part::Raw(file_start())];
    for b in 0..1 + rng.below(4) {
        let items: Vec<Part> = (0..rng.below(4))
            .map(|_| match honest {
                true => {
                    let name = format!("{}k", text(rng));
                    Part::Raw(result(
                        &name,
                        [1 + rng.below(8) as u64, 1, 1],
                        &[(0, 8.0), (1, 2.0), (2, 4.0), (3, 256.0)],
                    ))
                }
                false => item(rng),
            })
            .collect();
        let right_payload: u64 = items.iter().map(|i| 4 + len(i)).sum();
        let (sources, results) = match rng.below(3) {
            0 => (1.min(items.len()) as u64, items.len().saturating_sub(1) as u64),
            _ => (0, items.len() as u64),
        };
        let names = if b == 0 || rng.below(4) == 0 { NAMES } else { &[] };
        let h = header(
            claim(rng, sources).min(u64::from(u32::MAX)) as u32,
            claim(rng, results).min(u64::from(u32::MAX)) as u32,
            claim(rng, right_payload).min(u64::from(u32::MAX)) as u32,
            names,
        );
        let mut framing = Vec::new();
        framed(&mut framing, &h);
        parts.push(Part::Raw(framing));
        for i in items {
            let claimed = claim(rng, len(&i)).min(u64::from(u32::MAX)) as u32;
            parts.push(Part::Raw(claimed.to_le_bytes().to_vec()));
            parts.push(i);
        }
    }
    if rng.below(2) == 0 {
        return (zstd(&parts), "ncu-repz");
    }
    // Plain: repeats written out, but never more than a few megabytes on disk.
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Raw(b) => out.extend(b),
            Part::Repeat(byte, n) => out.extend(std::iter::repeat_n(byte, n.min(4 << 20) as usize)),
        }
    }
    (out, "ncu-rep")
}

/// An ncu CSV (raw page, base units) from the grammar: a header of claimed columns, rows that
/// hold fewer or more, huge fields and hostile names; half honest (every row as its header says).
fn csv(rng: &mut Rng) -> Vec<u8> {
    let honest = rng.below(2) == 0;
    let columns = ["ID", "Process ID", "Process Name", "Kernel Name", "Grid Size", "Block Size"]
        .into_iter()
        .chain(NAMES.iter().copied())
        .collect::<Vec<_>>();
    let keep = if !honest && rng.below(3) == 0 { 1 + rng.below(columns.len()) } else { columns.len() };
    let quoted = |fields: &[String]| fields.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(",") + "\n";
    let mut out = quoted(&columns[..keep].iter().map(|c| c.to_string()).collect::<Vec<_>>());
    let units: Vec<String> = columns[..keep]
        .iter()
        .map(|c| match *c {
            c if c.contains("sectors") => "sector".into(),
            c if c.contains("requests") => "request".into(),
            _ => String::new(),
        })
        .collect();
    out += &quoted(&units);
    for id in 0..rng.below(50) {
        // A quoted line break is no field ncu writes (the parser refuses it): a carriage return.
        let name = format!("{}k", text(rng).replace('"', "'").replace('\n', "\r"));
        let mut fields: Vec<String> =
            vec![id.to_string(), "1".into(), "app".into(), name, "(4, 1, 1)".into(), "(256, 1, 1)".into()];
        fields.extend((0..NAMES.len()).map(|_| (1 + rng.below(100)).to_string()));
        let n = match (honest, rng.below(4)) {
            (true, _) | (false, 2 | 3) => keep,
            (false, 0) => rng.below(fields.len()),
            (false, _) => fields.len() + rng.below(1000),
        };
        fields.resize(n, "7".into());
        out += &quoted(&fields);
    }
    out.into_bytes()
}

/// A `results.json` from the grammar: half a real run's (its rows renamed with hostile names,
/// its values scaled, long notes), half forged (rows that claim fields of the wrong type or
/// size, a schema this coalprof does not read). `schema` first, as coalprof writes it.
fn results_json(rng: &mut Rng) -> Vec<u8> {
    let mut doc: Value = match rng.below(2) {
        0 => {
            let mut doc: Value =
                serde_json::from_slice(&std::fs::read(crate::util::fixture("runs/stride-sm90.json")).unwrap()).unwrap();
            for row in doc["rows"].as_array_mut().unwrap() {
                row["kernel"] = Value::from(format!("{}k", text(rng)));
                row["notes"] = Value::from((0..rng.below(3)).map(|_| text(rng)).collect::<Vec<_>>());
                for v in row["metrics"].as_object_mut().unwrap().values_mut() {
                    *v = Value::from(v.as_f64().unwrap() * (1 + rng.below(4)) as f64);
                }
            }
            doc
        }
        _ => {
            let rows: Vec<Value> = (0..rng.below(40))
                .map(|_| {
                    let source = ["measured", "model", "simulated", "bogus"][rng.below(4)];
                    let launches =
                        [Value::from(1), Value::from(u64::MAX), Value::from(-1), Value::Null][rng.below(4)].clone();
                    let metrics: serde_json::Map<String, Value> = (0..rng.below(20))
                        .map(|i| (format!("global_load_sectors_{i}"), Value::from(rng.below(1 << 20))))
                        .collect();
                    serde_json::json!({"kernel": text(rng), "source": source, "launches": launches, "metrics": metrics})
                })
                .collect();
            serde_json::json!({"rows": rows, "notices": [text(rng)]})
        }
    };
    let schema = if rng.below(4) == 0 { "coalprof/0" } else { coalprof::results::SCHEMA };
    let body = doc.as_object_mut().map(|o| {
        o.remove("schema");
        serde_json::to_string(o).unwrap()
    });
    format!("{{\"schema\": \"{schema}\", {}", &body.unwrap()[1..]).into_bytes()
}

/// Hostile inputs of every kind `check` reads, built from the grammar (deterministic seeds):
/// each ends in time and memory, with success, a gate verdict or one `error:` line; never a
/// panic, a hang or more than the memory bound. Prints how many ran and the worst seen.
#[test]
fn inputs_built_from_the_grammar_stay_within_time_and_memory() {
    const CASES: usize = 200;
    const THREADS: usize = 2;
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    // Per thread: the tally by kind and outcome, the worst time and the worst peak RSS.
    type Seen = (std::collections::BTreeMap<String, usize>, Duration, u64);
    let run_case = |case: usize, seen: &mut Seen| {
        let mut rng = Rng::new(0x0B0D_5EED ^ case as u64);
        let (bytes, name) = match case % 5 {
            0..=2 => {
                let (b, ext) = report(&mut rng);
                (b, format!("case-{case}.{ext}"))
            }
            3 => (csv(&mut rng), format!("case-{case}.csv")),
            _ => {
                let b = results_json(&mut rng);
                // Half as a run folder holding the file, half as the file itself.
                if rng.below(2) == 0 {
                    let run = dir.path().join(format!("run-{case}"));
                    std::fs::create_dir_all(&run).unwrap();
                    std::fs::write(run.join("results.json"), &b).unwrap();
                    (Vec::new(), format!("run-{case}"))
                } else {
                    (b, format!("case-{case}.json"))
                }
            }
        };
        let p = dir.path().join(&name);
        if !p.is_dir() {
            std::fs::write(&p, &bytes).unwrap();
        }
        let o = check(&p, &["--format", "json"]);
        let saved = || {
            let keep = crate::util::root().join("target/untrusted-failures");
            std::fs::create_dir_all(&keep).ok();
            if p.is_file() {
                std::fs::copy(&p, keep.join(&name)).ok();
            }
            format!("case {case} ({name}, saved in {}): {}", keep.display(), o.describe())
        };
        assert!(!o.timed_out && o.took <= MAX_TIME, "too slow: {}", saved());
        assert!(o.peak_rss <= MAX_RSS, "too much memory: {}", saved());
        assert!(!o.stderr.contains("panicked") && o.code.is_some(), "a crash: {}", saved());
        let errors = error_lines(&o);
        let outcome = match o.code {
            Some(0 | 1) if errors.is_empty() => "read",
            Some(3 | 5) if errors.len() == 1 => "refused",
            _ => panic!("neither a verdict nor one error line: {}", saved()),
        };
        let kind = if p.is_dir() { "run" } else { name.rsplit('.').next().unwrap_or_default() };
        if std::env::var_os("COALPROF_TEST_SHOW").is_some() {
            eprintln!("{name}: {}", errors.first().unwrap_or(&"read"));
        }
        *seen.0.entry(format!("{kind} {outcome}")).or_default() += 1;
        seen.1 = seen.1.max(o.took);
        seen.2 = seen.2.max(o.peak_rss);
    };
    let (tally, worst_time, worst_rss) = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let run_case = &run_case;
                scope.spawn(move || {
                    let mut seen = Seen::default();
                    (t..CASES).step_by(THREADS).for_each(|case| run_case(case, &mut seen));
                    seen
                })
            })
            .collect();
        threads.into_iter().map(|h| h.join().unwrap()).fold(Seen::default(), |mut all, (tally, time, rss)| {
            tally.into_iter().for_each(|(k, n)| *all.0.entry(k).or_default() += n);
            (all.0, all.1.max(time), all.2.max(rss))
        })
    });
    eprintln!(
        "{CASES} inputs from the grammar in {:.1} s: worst {:.2} s, worst peak RSS {} MB; {tally:?}",
        started.elapsed().as_secs_f64(),
        worst_time.as_secs_f64(),
        worst_rss >> 20
    );
    // The grammar must reach both ends: reports read and reports refused.
    let count = |what: &str| tally.iter().filter(|(k, _)| k.ends_with(what)).map(|(_, n)| n).sum::<usize>();
    assert!(count("read") > 10 && count("refused") > 50, "{tally:?}");
}
