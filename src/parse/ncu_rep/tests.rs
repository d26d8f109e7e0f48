//! The reader on small synthetic reports, built with its own message structs: what the fixtures
//! show only once or not at all (names added after the result that uses them, items a newer ncu
//! may append, a name that never comes, a version it does not know).

use prost::Message;

use super::proto::{
    BlockHeader, FileHeader, ListElement, MetricResult, MetricValue, ProfileResult, StringTable, Uint64x3,
};
use super::{from_bytes, ReadError, MAX_RESULT};
use crate::parse::Value;

/// A block: its header (payload size filled in) and payload items.
fn block(mut h: BlockHeader, items: &[Vec<u8>], trailing: &[u8]) -> Vec<u8> {
    let payload: Vec<u8> = items
        .iter()
        .flat_map(|i| (i.len() as u32).to_le_bytes().into_iter().chain(i.iter().copied()))
        .chain(trailing.iter().copied())
        .collect();
    h.payload_size = payload.len() as u32;
    let h = h.encode_to_vec();
    let mut out = (h.len() as u32).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(payload);
    out
}

fn report(version: u32, blocks: &[Vec<u8>]) -> Vec<u8> {
    let fh = FileHeader { version }.encode_to_vec();
    let mut out = b"NVR\0".to_vec();
    out.extend((fh.len() as u32).to_le_bytes());
    out.extend(fh);
    blocks.iter().for_each(|b| out.extend(b));
    out
}

fn names(n: &[&str]) -> BlockHeader {
    BlockHeader {
        string_table: Some(StringTable { strings: n.iter().map(|s| s.to_string()).collect() }),
        ..Default::default()
    }
}

/// The grid every result has (ncu writes one for every launch).
fn grid() -> Option<Uint64x3> {
    Some(Uint64x3 { x: 4, y: 1, z: 1 })
}

fn result(kernel: &str, metrics: &[(u32, f64)]) -> Vec<u8> {
    ProfileResult {
        demangled: kernel.into(),
        grid: grid(),
        metrics: metrics
            .iter()
            .map(|&(name_id, v)| MetricResult {
                name_id,
                value: Some(MetricValue { double: Some(v), ..Default::default() }),
                instances: Vec::new(),
            })
            .collect(),
        ..Default::default()
    }
    .encode_to_vec()
}

fn results_header(n: u32) -> BlockHeader {
    BlockHeader { num_results: n, ..Default::default() }
}

#[test]
fn names_a_later_block_adds_resolve_and_the_order_is_kept() {
    let bytes = report(
        7,
        &[
            block(names(&["dram__bytes_read.sum"]), &[], &[]),
            block(results_header(1), &[result("k0", &[(0, 1.0), (1, 2000.0)])], &[]),
            block(results_header(1), &[result("k1", &[(0, 3.0)])], &[]),
            block(names(&["gpu__time_duration.sum"]), &[], &[]),
        ],
    );
    let got: Vec<_> = from_bytes(bytes).unwrap().map(|l| l.unwrap().record).collect();
    assert_eq!(got.iter().map(|r| (r.kernel.as_str(), r.id)).collect::<Vec<_>>(), [("k0", Some(0)), ("k1", Some(1))]);
    // ns → s on the way to base units, as the CSV parser does with `nsecond`.
    assert_eq!(got[0].metric("gpu__time_duration.sum"), Some(&Value::Number { value: 2e-6, unit: "second" }));
    assert_eq!(got[0].metric("dram__bytes_read.sum"), Some(&Value::Number { value: 1.0, unit: "byte" }));
}

#[test]
fn a_name_that_never_comes_is_an_error_at_the_result() {
    let head = report(7, &[block(names(&["a.sum"]), &[], &[])]);
    let at = head.len() as u64;
    let bytes =
        report(7, &[block(names(&["a.sum"]), &[], &[]), block(results_header(1), &[result("k", &[(5, 1.0)])], &[])]);
    let err = from_bytes(bytes).unwrap().find_map(Result::err).unwrap();
    // The result item's length field: after the block's length and header.
    match err {
        ReadError::Malformed { offset, message, .. } => {
            assert!(
                offset > at && message.contains("metric #5") && message.contains("only 1 names"),
                "{offset} {message}"
            )
        }
        e => panic!("{e}"),
    }
}

#[test]
fn payload_bytes_after_the_known_items_are_skipped() {
    let bytes = report(
        7,
        &[
            block(names(&["a.sum"]), &[], &[]),
            block(results_header(1), &[result("k", &[(0, 1.0)])], b"items a newer ncu may add"),
            block(results_header(1), &[result("k2", &[(0, 1.0)])], &[]),
        ],
    );
    assert_eq!(from_bytes(bytes).unwrap().filter(Result::is_ok).count(), 2);
}

#[test]
fn another_format_version_is_not_an_error_of_the_file() {
    assert!(matches!(from_bytes(report(8, &[])), Err(ReadError::UnknownVersion { version: 8 })));
}

#[test]
fn a_huge_length_allocates_nothing_and_names_its_offset() {
    let mut bytes = report(7, &[]);
    let at = bytes.len();
    bytes.extend(u32::MAX.to_le_bytes());
    bytes.extend([0u8; 16]);
    let err = from_bytes(bytes).unwrap().next().unwrap().unwrap_err().to_string();
    assert_eq!(
        err,
        format!("byte {}: a block header is {} bytes long but only 16 bytes are left in the file", at + 4, u32::MAX)
    );
}

/// A metric whose instances are (PC, value) pairs.
fn instanced(name_id: u32, pairs: &[(u64, f64)]) -> MetricResult {
    MetricResult {
        name_id,
        value: Some(MetricValue { double: Some(pairs.len() as f64), ..Default::default() }),
        instances: pairs
            .iter()
            .map(|&(pc, v)| ListElement {
                correlation_id: Some(MetricValue { uint64: Some(pc), ..Default::default() }),
                value: Some(MetricValue { double: Some(v), ..Default::default() }),
            })
            .collect(),
    }
}

#[test]
fn source_counters_decode_the_instances_of_the_per_instruction_metrics_only() {
    let pcs = [(0x1000, 2.0), (0x1010, 5.0)];
    let launch = ProfileResult {
        demangled: "k".into(),
        grid: grid(),
        metrics: vec![
            instanced(0, &[(0, 0x1000 as f64)]),
            instanced(1, &pcs),
            // Per-PC instances, but not a metric the per-line sums read.
            instanced(2, &pcs),
            // Named by a later block: not known while the result is decoded.
            instanced(3, &pcs),
        ],
        ..Default::default()
    }
    .encode_to_vec();
    let bytes = report(
        7,
        &[
            block(names(&["launch__function_pcs", "inst_executed", "smsp__pcsamp_sample_count"]), &[], &[]),
            block(results_header(1), &[launch], &[]),
            block(names(&["memory_type"]), &[], &[]),
        ],
    );
    let read = |l: super::LaunchStream| l.map(|l| l.unwrap().source).next().unwrap();
    let names = |sc: &crate::parse::SourceCounters| sc.instanced.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>();
    let all = read(from_bytes(bytes.clone()).unwrap());
    assert_eq!(names(&all), ["inst_executed", "smsp__pcsamp_sample_count", "memory_type"]);
    let keep = crate::parse::csv::Keep::Only(Default::default());
    let lines = read(from_bytes(bytes).unwrap().source_counters_only(keep));
    assert_eq!(names(&lines), ["inst_executed", "memory_type"]);
    assert_eq!(lines.function_pcs, [0x1000]);
    for (name, pairs) in &lines.instanced {
        assert_eq!(pairs, &pcs, "{name}");
    }
}

#[test]
fn a_result_without_a_name_a_grid_or_metrics_is_an_error_at_its_offset() {
    let table = block(names(&["dram__bytes_read.sum"]), &[], &[]);
    let named = ProfileResult { demangled: "k".into(), ..Default::default() };
    let cases = [
        (ProfileResult { grid: grid(), ..Default::default() }, "no kernel name"),
        (named.clone(), "no grid"),
        (ProfileResult { grid: grid(), ..named }, "no metrics"),
    ];
    for (r, missing) in cases {
        let bytes = report(7, &[table.clone(), block(results_header(1), &[r.encode_to_vec()], &[])]);
        // The result's length field: after the magic, the file header, the first block and the
        // second block's header.
        let at = bytes.len() - 4 - r.encoded_len();
        let err = from_bytes(bytes).unwrap().find_map(Result::err).expect(missing).to_string();
        assert!(err.starts_with(&format!("byte {at}: a result with {missing}")), "{err}");
    }
}

#[test]
fn a_block_of_many_results_streams_one_result_at_a_time() {
    // A header promising a million results: each is yielded as it is read, so the first comes
    // before the rest of the block is looked at, and the error (the payload ends) comes last.
    let r = result("k", &[(0, 1.0)]);
    let mut b = block(results_header(1_000_000), &[r.clone(), r], &[]);
    let bytes = report(7, &[block(names(&["dram__bytes_read.sum"]), &[], &[]), std::mem::take(&mut b)]);
    let mut it = from_bytes(bytes).unwrap();
    assert!(it.next().unwrap().is_ok());
    assert_eq!(it.pending.len(), 0, "a ready result is not held");
    assert!(it.next().unwrap().is_ok());
    let err = it.next().unwrap().unwrap_err().to_string();
    assert!(err.contains("promises 1000000 × a result, but its"), "{err}");
    assert!(it.next().is_none());
}

#[test]
fn a_result_item_longer_than_the_bound_is_refused_before_it_is_read() {
    let mut b = block(results_header(1), &[vec![0x2a, 0x01, b'k']], &[]);
    // The item's length says one byte more than the bound; the payload size is left as it is.
    let at = b.len() - 3 - 4;
    b[at..at + 4].copy_from_slice(&(MAX_RESULT + 1).to_le_bytes());
    let bytes = report(7, &[b]);
    let err = from_bytes(bytes).unwrap().find_map(Result::err).unwrap();
    assert!(matches!(err, ReadError::Bound { .. }) || err.to_string().contains("runs past"), "{err}");
}

#[test]
fn results_waiting_for_names_are_bounded() {
    // Each result names metric #5, which no string table ever gives: they wait, up to the bound.
    let big = |k: usize| {
        let mut r = ProfileResult::decode(&*result(&format!("k{k}"), &[(5, 1.0)])).unwrap();
        r.mangled = "m".repeat(1 << 20);
        r.encode_to_vec()
    };
    let blocks: Vec<Vec<u8>> = (0..80).map(|k| block(results_header(1), &[big(k)], &[])).collect();
    let err = from_bytes(report(7, &blocks)).unwrap().find_map(Result::err).unwrap().to_string();
    assert!(err.contains("wait for metric names no string table has given yet"), "{err}");
}
