//! The address model over the whole built-in suite at default sizes (1 GiB arrays).
//!
//! `cargo bench --bench model`: prints the machine (cores, CPU model, load average), then the
//! suite `COALPROF_BENCH_RUNS` times (default 3): the time per variant and per pattern, the
//! total wall time and the CPU time of the process (user + system, all threads) for that run.
//! The summary takes the fastest run of each (other builds on a shared machine only add time).
//! Exits 0.

#![allow(clippy::disallowed_methods, clippy::print_stderr)] // a benchmark: its own argv, its own report

use std::time::Instant;

use coalprof::model::{predict, ModelSettings};
use coalprof::patterns::{variants, Pattern, Sizing};

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

fn main() {
    let runs: usize = std::env::var("COALPROF_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!("machine: {}", machine());
    println!(
        "model over Pattern::ALL at Sizing::default() ({} B arrays), {profile}, {runs} runs",
        Sizing::default().bytes
    );
    let settings = ModelSettings::default();
    let mut best_pattern = vec![f64::INFINITY; Pattern::ALL.len()];
    let (mut best_wall, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
    let mut count = 0;
    for run in 1..=runs {
        println!("run {run}");
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        count = 0;
        for (pi, p) in Pattern::ALL.into_iter().enumerate() {
            let t = Instant::now();
            let vs = variants(p, Sizing::default());
            let mut checksum = 0.0;
            for v in &vs {
                let tv = Instant::now();
                let pred = predict(v, &settings);
                let sum = pred.metrics.values().sum::<f64>();
                checksum += sum;
                count += 1;
                println!("    {:<28} {:>9.1} ms   (checksum {sum:.6e})", v.name, tv.elapsed().as_secs_f64() * 1e3);
            }
            let ms = t.elapsed().as_secs_f64() * 1e3;
            best_pattern[pi] = best_pattern[pi].min(ms);
            println!("  {:<16} {:>2} variants {:>9.1} ms   (checksum {checksum:.6e})", p.name(), vs.len(), ms);
        }
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let cpu = (cpu_seconds() - cpu0) * 1e3;
        best_wall = best_wall.min(wall);
        best_cpu = best_cpu.min(cpu);
        println!("  total            {count} variants {wall:>9.1} ms wall, {cpu:.1} ms CPU");
    }
    println!("best of {runs} runs, per pattern:");
    for (pi, p) in Pattern::ALL.into_iter().enumerate() {
        println!("  {:<16} {:>9.1} ms", p.name(), best_pattern[pi]);
    }
    println!("total            {count} variants {best_wall:>9.1} ms wall, {best_cpu:.1} ms CPU (best of {runs})");
    println!("machine: {}", machine());
}
