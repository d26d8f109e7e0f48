//! Robustness of the native `.ncu-rep` reader: generated bad reports (empty, a directory, an
//! unreadable file, fewer results than the block header says, a broken zstd stream, an item
//! running past its payload), every truncation point of a real report, and 500 deterministic
//! mutations of real reports (bit flips, truncations, framing-length edits) run through the
//! binary. Each outcome is success, or exit 3 with one `error:` line naming the file and a byte
//! offset (5 when no launch is left); never a panic, a hang or an out-of-memory. The committed
//! bad reports are in tests/fixtures/bad (robust.rs reads their EXPECTED.md rows).

use std::path::{Path, PathBuf};

use coalprof::parse::ncu_rep;
use serde_json::Value;

use crate::robust::{analyze, assert_failure, campaign, Mutant, Outcome, Rng, TIMEOUT};
use crate::util::fixture;

const SMALL: &str = "ncu-rep/NVIDIA-nsight-training_manual_nvtx_2022.3.0.ncu-rep";

/// Byte offsets of every u32 length field of a well-formed report, and the payload items
/// (offset of the length, its value) — walked from the layout in docs/ncu-rep-format.md.
fn length_fields(b: &[u8]) -> Vec<(usize, u32)> {
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let mut out = vec![(4, u32_at(4))];
    let mut o = 8 + u32_at(4) as usize;
    while o + 4 <= b.len() {
        let n = u32_at(o);
        out.push((o, n));
        let header = &b[o + 4..o + 4 + n as usize];
        o += 4 + n as usize;
        let payload = payload_size(header) as usize;
        let end = o + payload;
        while o < end {
            let m = u32_at(o);
            out.push((o, m));
            o += 4 + m as usize;
        }
        o = end;
    }
    out
}

/// Field 5 (PayloadSize) of a block header: a tiny varint walk, enough for the header's fields.
fn payload_size(h: &[u8]) -> u64 {
    let mut i = 0;
    let varint = |i: &mut usize| {
        let (mut v, mut s) = (0u64, 0);
        while *i < h.len() {
            let c = h[*i];
            *i += 1;
            v |= u64::from(c & 0x7f) << s;
            s += 7;
            if c < 0x80 {
                break;
            }
        }
        v
    };
    while i < h.len() {
        let key = varint(&mut i);
        match key & 7 {
            0 => {
                let v = varint(&mut i);
                if key >> 3 == 5 {
                    return v;
                }
            }
            2 => {
                let n = varint(&mut i) as usize;
                i += n;
            }
            1 => i += 8,
            5 => i += 4,
            _ => return 0,
        }
    }
    0
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A failure with a byte offset in the one error line, naming the file.
fn assert_offset_error(o: &Outcome, path: &Path, needle: &str) {
    assert_failure(o, &[3], needle, &path.display().to_string());
    let line = o.stderr.lines().find(|l| l.starts_with("error: ")).unwrap();
    assert!(line.contains(&path.display().to_string()) && line.contains("byte "), "{line}");
}

#[test]
fn generated_bad_reports_get_one_error_line_with_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let real = std::fs::read(fixture(SMALL)).unwrap();
    let args = ["--format", "json"];

    let p = write(d, "empty.ncu-rep", b"");
    assert_offset_error(&analyze(&p, &args, TIMEOUT), &p, "byte 0: the file is empty");

    let p = d.join("folder.ncu-rep");
    std::fs::create_dir(&p).unwrap();
    assert_offset_error(&analyze(&p, &args, TIMEOUT), &p, "byte 0: is a directory");

    // Unreadable: root reads a mode-000 file, so read something that fails to read instead.
    let p = d.join("unreadable.ncu-rep");
    std::os::unix::fs::symlink("/proc/self/mem", &p).unwrap();
    assert_offset_error(&analyze(&p, &args, TIMEOUT), &p, "byte 0: cannot read");

    // A block header that promises two results where its payload holds one.
    let fields = length_fields(&real);
    let (at, _) = *fields
        .iter()
        .find(|(o, n)| real[o + 4..o + 4 + *n as usize].starts_with(&[0x08, 0x00, 0x10, 0x01]))
        .expect("a block with one result");
    let mut b = real.clone();
    b[at + 4 + 3] = 0x02;
    let p = write(d, "fewer_results.ncu-rep", &b);
    assert_offset_error(
        &analyze(&p, &args, TIMEOUT),
        &p,
        &format!("byte {at}: the block header promises 2 × a result"),
    );

    // An item whose length runs past its block's payload (but not past the file).
    let (item, len) = *fields.iter().rev().find(|(o, _)| *o > at).unwrap();
    let mut b = real.clone();
    b[item..item + 4].copy_from_slice(&(len + 1).to_le_bytes());
    let p = write(d, "item_past_payload.ncu-rep", &b);
    let o = analyze(&p, &args, TIMEOUT);
    assert_offset_error(&o, &p, "byte ");

    // A zstd frame header, then garbage.
    let mut b = vec![0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x10];
    b.extend(real[..4000].iter().map(|x| x ^ 0x5A));
    let p = write(d, "broken.ncu-repz", &b);
    assert_offset_error(&analyze(&p, &args, TIMEOUT), &p, "byte ");
}

#[test]
fn every_truncation_of_a_real_report_is_an_error_with_an_offset_or_fewer_launches() {
    let real = std::fs::read(fixture(SMALL)).unwrap();
    let full = ncu_rep::from_bytes(real.clone()).unwrap().count();
    // Every length field's neighbourhood, and a point every 61 bytes.
    let mut cuts: Vec<usize> =
        length_fields(&real).iter().flat_map(|(o, _)| (*o..*o + 6).chain(o.saturating_sub(2)..*o)).collect();
    cuts.extend((0..real.len()).step_by(61));
    cuts.sort_unstable();
    cuts.dedup();
    let mut errors = 0;
    for &cut in cuts.iter().filter(|&&c| c < real.len()) {
        let outcome = ncu_rep::from_bytes(real[..cut].to_vec()).map(|l| l.collect::<Result<Vec<_>, _>>());
        match outcome.and_then(|r| r) {
            Ok(launches) => assert!(launches.len() <= full, "cut at {cut}"),
            Err(e) => {
                let msg = e.to_string();
                let offset: usize = msg
                    .strip_prefix("byte ")
                    .and_then(|m| m.split(':').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("cut at {cut}: no offset in `{msg}`"));
                assert!(offset <= cut, "cut at {cut}: offset {offset} past the end: {msg}");
                errors += 1;
            }
        }
    }
    assert!(errors > cuts.len() / 2, "{errors} of {} cuts were errors", cuts.len());
}

const SOURCES: &[&str] = &[
    SMALL,
    "ncu-rep/microgpusim_vectoradd_102400_32_gtx1080_2019.ncu-rep",
    "ncu-rep/thedavidchu-speedy_scan_profile_2020.3.1.ncu-rep",
    "ncu-rep/skycs97-darknet_profile_unknown.ncu-rep",
    "ncu-rep/NVIDIA-nsight-training_manual_nvtx_2022.3.0.ncu-repz",
];

/// One random edit of a report: what it did.
fn mutate(b: &mut Vec<u8>, fields: &[(usize, u32)], rng: &mut Rng) -> &'static str {
    let len = b.len().max(1);
    match rng.below(6) {
        0 => {
            let at = rng.below(len);
            b[at] ^= 1 << rng.below(8);
            "bit flip"
        }
        1 => {
            for _ in 0..1 + rng.below(16) {
                let at = rng.below(len);
                b[at] = rng.next() as u8;
            }
            "random bytes"
        }
        2 => {
            b.truncate(rng.below(len));
            "truncation"
        }
        3 | 4 if !fields.is_empty() => {
            let (at, n) = fields[rng.below(fields.len())];
            let v = match rng.below(5) {
                0 => u32::MAX - rng.below(16) as u32,
                1 => n.wrapping_add(1 + rng.below(8) as u32),
                2 => n.saturating_sub(1 + rng.below(8) as u32),
                3 => 0,
                _ => rng.next() as u32,
            };
            if at + 4 <= b.len() {
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            "framing length"
        }
        _ => {
            let at = rng.below(len);
            let n = 1 + rng.below(64);
            b.drain(at..(at + n).min(b.len()));
            "delete bytes"
        }
    }
}

#[test]
fn five_hundred_mutated_real_reports_never_panic_or_hang() {
    const CASES: usize = 500;
    let sources: Vec<Vec<u8>> = SOURCES.iter().map(|s| std::fs::read(fixture(s)).unwrap()).collect();
    let fields: Vec<Vec<(usize, u32)>> =
        sources.iter().map(|b| if b.starts_with(b"NVR\0") { length_fields(b) } else { Vec::new() }).collect();
    let make = |case: usize| {
        let mut rng = Rng::new(0x5EED_0BAD ^ case as u64);
        let src = case % sources.len();
        let mut bytes = sources[src].clone();
        let edits: Vec<&str> = (0..1 + rng.below(3)).map(|_| mutate(&mut bytes, &fields[src], &mut rng)).collect();
        let ext = if SOURCES[src].ends_with('z') { "ncu-repz" } else { "ncu-rep" };
        Mutant { bytes, ext, what: format!("{} ← {edits:?}", SOURCES[src]) }
    };
    // Tallies: read, refused with an offset (exit 3), other (version, no launch).
    let classify = |o: &Outcome, errors: &[&str]| match o.code {
        Some(0) if serde_json::from_slice::<Value>(&o.stdout).is_ok() && errors.is_empty() => Ok(0),
        // A malformed report: one line, naming the file and where.
        Some(3) if errors.len() == 1 && errors[0].contains("byte ") => Ok(1),
        // A flipped version byte sends the file to ncu (absent: exit 4, or ncu's own error); a
        // cut at a block boundary may leave no launch.
        Some(3 | 4) if errors.len() == 1 && o.stderr.contains("format version") => Ok(2),
        Some(5) if errors.len() == 1 => Ok(2),
        _ => Err("not success, nor one error line with an offset".to_string()),
    };
    let (tally, took) = campaign(CASES, make, classify);
    eprintln!(
        "{CASES} mutated reports in {:.1} s: {} read, {} refused with an offset (exit 3), {} other (version, no launch)",
        took.as_secs_f64(),
        tally[0],
        tally[1],
        tally[2]
    );
    // Most edits break a protobuf (ncu refuses those too); some land in values or skipped fields.
    assert!(tally[0] > 10 && tally[1] > 100, "{tally:?}");
}
