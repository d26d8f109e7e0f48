//! In-process parse throughput: `parse::csv::open` over a raw page generated in memory by
//! repeating the data row of a real ncu 2022.3 raw page (fresh IDs), with the catalogue's
//! metric filter (what `analyze` does) and with every metric kept.
//!
//!   cargo bench --bench parse [-- MB]      (default 64 MB; scripts/bench-parse.sh runs the
//!                                           end-to-end comparison against pandas)

#![allow(clippy::disallowed_methods, clippy::print_stderr)] // a benchmark: its own argv, its own report

use std::time::Instant;

use coalprof::metrics::Catalogue;
use coalprof::parse::csv::{open, Keep};

const FIXTURE: &str = include_str!(
    "../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv"
);

fn generate(megabytes: usize) -> (Vec<u8>, usize) {
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
    (out, n)
}

fn main() {
    let megabytes: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(64);
    let (data, launches) = generate(megabytes);
    let names = Catalogue::builtin().ncu_names();
    let only = Keep::Only(names.keys().cloned().collect());
    for (label, keep) in [("catalogue metrics", only), ("every metric", Keep::All)] {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let start = Instant::now();
            let records = open(&data[..], keep.clone()).expect("the header parses");
            let mut n = 0;
            for r in records {
                r.expect("every row parses");
                n += 1;
            }
            assert_eq!(n, launches);
            best = best.min(start.elapsed().as_secs_f64());
        }
        let mb = data.len() as f64 / 1e6;
        println!("parse {label:>17}: {mb:.0} MB, {launches} launches, best of 3 {best:.3} s = {:.0} MB/s", mb / best);
    }
}
