//! The address model over the whole built-in suite at default sizes (1 GiB arrays), against its
//! peer: the same predictions made by the CTA-by-CTA replay (`predict_by_replay`, the closed
//! forms' test oracle), timed in the same run on the same machine.
//!
//! `cargo bench --bench model`: prints the machine (cores, CPU model, load average), then
//! `COALPROF_BENCH_RUNS` rounds (default 3) of the suite (`predict`) and the peer, each with its
//! time per variant and pattern, wall and CPU time (user + system, all threads). The summary
//! takes the fastest round of each (other builds on a shared machine only add time) and prints
//! the ratio peer / suite per pattern and in total. It also checks that both give the same
//! numbers for every variant, and exits 1 if not. `COALPROF_BENCH_PEER=0` skips the peer.

#![allow(clippy::disallowed_methods, clippy::print_stderr, clippy::print_stdout)] // a benchmark: its own argv, its own report

use std::time::Instant;

use coalprof::model::{predict, predict_by_replay, ModelSettings, Prediction};
use coalprof::patterns::{variants, Pattern, Sizing, Variant};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!("{cores} cores (nproc), {model}, load average {}", load.join(" "))
}

/// The best (smallest) wall time per pattern and in total, and CPU time in total, over rounds.
struct Best {
    pattern: Vec<f64>,
    wall: f64,
    cpu: f64,
}

impl Best {
    fn new() -> Best {
        Best { pattern: vec![f64::INFINITY; Pattern::ALL.len()], wall: f64::INFINITY, cpu: f64::INFINITY }
    }
}

/// One round of `f` over every variant; returns the predictions in suite order.
fn round(
    label: &str,
    suite: &[(Pattern, Vec<Variant>)],
    best: &mut Best,
    f: impl Fn(&Variant) -> Prediction,
) -> Vec<Prediction> {
    println!("  {label}");
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let mut out = Vec::new();
    for (pi, (p, vs)) in suite.iter().enumerate() {
        let t = Instant::now();
        for v in vs {
            let tv = Instant::now();
            let pred = f(v);
            println!("      {:<28} {:>9.2} ms", v.name, tv.elapsed().as_secs_f64() * 1e3);
            out.push(pred);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        best.pattern[pi] = best.pattern[pi].min(ms);
        println!("    {:<16} {:>2} variants {:>9.2} ms", p.name(), vs.len(), ms);
    }
    let wall = start.elapsed().as_secs_f64() * 1e3;
    let cpu = (cpu_seconds() - cpu0) * 1e3;
    best.wall = best.wall.min(wall);
    best.cpu = best.cpu.min(cpu);
    println!("    total            {wall:>9.2} ms wall, {cpu:.2} ms CPU");
    out
}

fn main() {
    let runs: usize = std::env::var("COALPROF_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let peer = std::env::var("COALPROF_BENCH_PEER").as_deref() != Ok("0");
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!("machine: {}", machine());
    let suite: Vec<(Pattern, Vec<Variant>)> =
        Pattern::ALL.into_iter().map(|p| (p, variants(p, Sizing::default()))).collect();
    let count: usize = suite.iter().map(|(_, vs)| vs.len()).sum();
    println!(
        "model over Pattern::ALL at Sizing::default() ({} B arrays, {count} variants), {profile}, {runs} rounds",
        Sizing::default().bytes
    );
    let settings = ModelSettings::default();
    let (mut ours, mut theirs) = (Best::new(), Best::new());
    let mut mismatches = 0;
    for r in 1..=runs {
        println!("round {r}");
        let fast =
            round("suite (predict: closed forms, gather fast path)", &suite, &mut ours, |v| predict(v, &settings));
        if peer {
            let slow = round("peer (predict_by_replay: CTA-by-CTA replay)", &suite, &mut theirs, |v| {
                predict_by_replay(v, &settings)
            });
            let all = suite.iter().flat_map(|(_, vs)| vs);
            for ((v, a), b) in all.zip(&fast).zip(&slow) {
                if a != b {
                    mismatches += 1;
                    println!("MISMATCH {}: {:?} vs {:?}", v.id(), a.metrics, b.metrics);
                }
            }
        }
    }
    println!("best of {runs} rounds, per pattern (suite, peer, peer / suite):");
    for (pi, p) in Pattern::ALL.into_iter().enumerate() {
        let (a, b) = (ours.pattern[pi], theirs.pattern[pi]);
        if peer {
            println!("  {:<16} {a:>9.2} ms {b:>9.2} ms {:>8.1}x", p.name(), b / a);
        } else {
            println!("  {:<16} {a:>9.2} ms", p.name());
        }
    }
    println!("suite  {count} variants {:>9.2} ms wall, {:.2} ms CPU (best of {runs})", ours.wall, ours.cpu);
    if peer {
        println!("peer   {count} variants {:>9.2} ms wall, {:.2} ms CPU (best of {runs})", theirs.wall, theirs.cpu);
        println!(
            "ratio  peer / suite: {:.1}x wall, {:.1}x CPU; predictions equal: {}",
            theirs.wall / ours.wall,
            theirs.cpu / ours.cpu,
            if mismatches == 0 { "yes".to_string() } else { format!("NO ({mismatches} differ)") }
        );
    }
    println!("machine: {}", machine());
    if mismatches > 0 {
        std::process::exit(1);
    }
}
