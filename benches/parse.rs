//! In-process parse throughput of a raw page, ours beside the `csv` crate's own record
//! splitting on the same bytes in the same run: `parse::csv::open_with` on the fast path inline
//! (one core) and on two threads, and with the `csv` reader alone (the path before the fast
//! one), all with the catalogue's metric filter (what `analyze` does).
//!
//!   cargo bench --bench parse [-- MB | FILE]   (default 64 MB generated in memory by repeating
//!                                               the data row of a real ncu 2022.3 raw page;
//!                                               scripts/bench-parse.sh passes its file and runs
//!                                               the end-to-end comparison against pandas and polars)

#![allow(clippy::disallowed_methods, clippy::print_stderr, clippy::print_stdout)] // a benchmark: its own argv, its own report

use std::time::Instant;

use coalprof::metrics::Catalogue;
use coalprof::parse::csv::{open_with, Keep, Strategy};

const FIXTURE: &str = include_str!(
    "../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv"
);

fn generate(megabytes: usize) -> Vec<u8> {
    let lines: Vec<&str> = FIXTURE.lines().filter(|l| l.starts_with('"')).collect();
    let (header, units, row) = (lines[0], lines[1], lines[2]);
    let rest = row.split_once("\",\"").expect("an ID column").1;
    let mut out = Vec::with_capacity(megabytes << 20);
    out.extend_from_slice(format!("{header}\n{units}\n").as_bytes());
    let mut n = 0;
    while out.len() < megabytes << 20 {
        out.extend_from_slice(format!("\"{n}\",\"{rest}\n").as_bytes());
        n += 1;
    }
    out
}

/// Best of three wall times of `f`, which returns a count that must not change between runs.
fn best(mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::INFINITY;
    let mut count = None;
    for _ in 0..3 {
        let start = Instant::now();
        let n = f();
        best = best.min(start.elapsed().as_secs_f64());
        assert!(count.is_none_or(|c| c == n), "{n} rows, then {count:?}");
        count = Some(n);
    }
    (best, count.unwrap_or(0))
}

fn main() {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let data = match arg.as_deref() {
        Some(a) if a.parse::<usize>().is_err() => std::fs::read(a).expect("the input file reads"),
        a => generate(a.and_then(|a| a.parse().ok()).unwrap_or(64)),
    };
    let mb = data.len() as f64 / 1e6;
    let names = Catalogue::builtin().ncu_names();
    let keep = Keep::Only(names.keys().cloned().collect());
    let (split, rows) = best(|| {
        let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(&data[..]);
        let mut record = csv::ByteRecord::new();
        let mut n = 0;
        while rdr.read_byte_record(&mut record).expect("the csv crate reads it") {
            n += 1;
        }
        n
    });
    println!("input: {mb:.0} MB, {rows} CSV records");
    println!("csv crate, records split only:        {:7.0} MB/s", mb / split);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = match Strategy::default_fast() {
        Strategy::Fast { chunk, .. } => chunk,
        Strategy::Csv => 1 << 20,
    };
    let runs = [
        ("coalprof, csv reader (serial, before)", Strategy::Csv),
        ("coalprof, fast path inline (one core)", Strategy::Fast { threads: 0, chunk }),
        ("coalprof, fast path on 2 threads", Strategy::Fast { threads: 2, chunk }),
    ];
    for (label, strategy) in runs {
        let (t, n) = best(|| {
            let records = open_with(&data[..], keep.clone(), strategy).expect("the header parses");
            let mut n = 0;
            for r in records {
                r.expect("every row parses");
                n += 1;
            }
            n
        });
        println!("{label}: {:7.0} MB/s, {n} launch records, {:.2}x the csv crate's splitting", mb / t, split / t);
    }
    println!("({cores} cores available)");
}
