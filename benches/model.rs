//! The address model over the whole built-in suite at default sizes (1 GiB arrays).
//! `cargo bench --bench model`: prints the time per pattern and the total; exits 0.

use std::time::Instant;

use coalprof::model::{predict, ModelSettings};
use coalprof::patterns::{variants, Pattern, Sizing};

fn main() {
    let settings = ModelSettings::default();
    let start = Instant::now();
    let mut count = 0;
    for p in Pattern::ALL {
        let t = Instant::now();
        let vs = variants(p, Sizing::default());
        let mut checksum = 0.0;
        for v in &vs {
            let pred = predict(v, &settings);
            checksum += pred.metrics.values().sum::<f64>();
            count += 1;
        }
        println!("{:<16} {:>2} variants {:>9.1} ms   (checksum {checksum:.3e})", p.name(), vs.len(), t.elapsed().as_secs_f64() * 1e3);
    }
    println!("total            {count} variants {:>9.1} ms", start.elapsed().as_secs_f64() * 1e3);
}
