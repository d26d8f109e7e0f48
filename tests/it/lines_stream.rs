//! `coalprof::lines::report` (the launches streamed into the per-line sums, records holding only
//! the catalogue's metrics) against the collecting path it replaced in `coalprof lines`
//! (`lines::build(lines::read(..))`, every metric of every launch kept): the same rows and
//! notices on every `.ncu-rep` fixture, per line, per instruction and per launch, and the same
//! error for a report cut short.

use std::path::PathBuf;

use coalprof::lines::source::Sources;
use coalprof::lines::{build, read, report, By, Options};
use coalprof::metrics::Catalogue;
use coalprof::parse::ncu_rep::Bounds;

use crate::util::{fixture, root};

fn reports() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture("ncu-rep"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ncu-rep" || x == "ncu-repz"))
        .collect();
    v.sort();
    assert!(v.len() >= 15, "{} fixture reports", v.len());
    v
}

/// Both paths' outcome as JSON text (rows, notices, arch, matched) or the error's text.
fn both(paths: &[PathBuf], opts: &Options) -> (String, String) {
    let catalogue = Catalogue::builtin();
    let show = |r: coalprof::Result<coalprof::lines::LineReport>| match r {
        Ok(r) => format!("{} {:?} {}", serde_json::to_string(&r).unwrap(), r.arch, r.matched),
        Err(e) => format!("error: {e}"),
    };
    let mut sources = Sources::new(root());
    let old = read(paths, Bounds::Untrusted).and_then(|l| build(l, opts, &catalogue, &mut sources, &mut |_| None));
    let mut sources = Sources::new(root());
    let new = report(paths, Bounds::Untrusted, opts, &catalogue, &mut sources, &mut |_| None);
    (show(old), show(new))
}

#[test]
fn streamed_lines_equal_the_collected_ones_on_every_fixture() {
    let all = reports();
    let options = [
        Options::default(),
        Options { by: By::Instruction, ..Options::default() },
        Options { per_launch: true, ..Options::default() },
        Options { kernel: Some(regex::Regex::new("^_?Z?.*[aA]").unwrap()), top: Some(3), ..Options::default() },
    ];
    let mut with_rows = 0;
    for path in &all {
        for opts in &options {
            let (old, new) = both(std::slice::from_ref(path), opts);
            assert_eq!(new, old, "{} with {opts:?}", path.display());
            with_rows += usize::from(old.contains("\"pc_offset\""));
        }
    }
    assert!(with_rows >= 3 * 9, "only {with_rows} runs had rows: the test would prove little");
    // Several reports at once: groups across reports, ranks from file names.
    let (old, new) = both(&all[..4], &Options::default());
    assert_eq!(new, old);
}

#[test]
fn a_report_cut_short_fails_the_same_way_after_the_launches_before_the_cut() {
    let src = std::fs::read(fixture("ncu-rep/bwd29-self-join-MiSTIC_profileHiggs.out_2022.4.0.ncu-rep")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [src.len() / 3, src.len() - 10] {
        let path = dir.path().join(format!("cut{cut}.ncu-rep"));
        std::fs::write(&path, &src[..cut]).unwrap();
        let (old, new) = both(std::slice::from_ref(&path), &Options::default());
        assert!(old.starts_with("error: "), "{old}");
        assert_eq!(new, old, "cut at {cut}");
    }
}
