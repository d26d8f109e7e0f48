//! One line of ncu's own CSV (every field quoted, `","` between fields) split into its fields,
//! 64 bytes at a time: the raw page's hot path, instead of the `csv` reader's byte-at-a-time
//! state machine.
//!
//! The trick is simdcsv's: classify 64 bytes at once into bit masks of quotes, commas, carriage
//! returns and newlines; the prefix XOR of the quote mask says which bytes are inside quotes
//! (a doubled quote toggles twice, so it needs no special case); the commas outside quotes are
//! the field boundaries. A line is split only when the result is provably what the `csv` crate
//! would make of it: every field `"…"`, doubled quotes only in pairs, no carriage return
//! outside quotes but the one before the newline, quotes balanced. Anything else (an unquoted
//! field, junk after a closing quote, a field left open across lines) is refused, and the
//! caller hands that line and the rest of the input to the `csv` reader, so the output stays
//! the reader's byte for byte (`csv.rs`'s proptests hold the two paths equal).

/// The fields of the last line split; reused from line to line so that splitting allocates
/// nothing once warm.
#[derive(Debug, Default)]
pub(super) struct Split {
    /// (start, end) of each field's content, quotes excluded: into the line, or into
    /// `unescaped` when `escaped` is set.
    spans: Vec<(usize, usize)>,
    /// The whole line's field contents with doubled quotes undone (only when one has them).
    unescaped: Vec<u8>,
    escaped: bool,
}

/// A split line's fields.
pub(super) struct Row<'a> {
    base: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl Row<'_> {
    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        self.spans.get(i).map(|&(s, e)| &self.base[s..e])
    }
}

impl Split {
    /// The fields of the line `split` last accepted (`line` is that line).
    pub(super) fn row<'a>(&'a self, line: &'a [u8]) -> Row<'a> {
        Row { base: if self.escaped { &self.unescaped } else { line }, spans: &self.spans }
    }
}

/// Split the line at the start of `buf`, which must start with a quote. Returns the line's
/// length (its newline included; all of `buf` when there is none) and whether `out` now holds
/// its fields (false: the line is not one this splitter reads exactly as the `csv` crate).
pub(super) fn split(buf: &[u8], out: &mut Split) -> (usize, bool) {
    debug_assert_eq!(buf.first(), Some(&b'"'));
    out.spans.clear();
    out.escaped = false;
    let mut inside = 0u64; // all ones when the block starts inside quotes
    let mut quotes = 0usize;
    let mut field_start = 0usize;
    // Carriage returns outside quotes: how many, and the last one's position.
    let (mut crs, mut last_cr) = (0usize, 0usize);
    let mut pos = 0usize;
    let (line_len, content_end) = loop {
        let block = &buf[pos..buf.len().min(pos + 64)];
        let [mut q, mut c, mut r, n] = masks(block);
        let newline = (n != 0).then(|| n.trailing_zeros() as usize);
        if let Some(k) = newline {
            let below = (1u64 << k) - 1; // k < 64
            q &= below;
            c &= below;
            r &= below;
        }
        let ins = prefix_xor(q) ^ inside;
        inside = ((ins as i64) >> 63) as u64;
        quotes += q.count_ones() as usize;
        let mut seps = c & !ins;
        while seps != 0 {
            let at = pos + seps.trailing_zeros() as usize;
            out.spans.push((field_start, at));
            field_start = at + 1;
            seps &= seps - 1;
        }
        let outside_cr = r & !ins;
        if outside_cr != 0 {
            crs += outside_cr.count_ones() as usize;
            last_cr = pos + 63 - outside_cr.leading_zeros() as usize;
        }
        match newline {
            Some(k) => break (pos + k + 1, pos + k),
            None if block.len() < 64 => break (buf.len(), buf.len()),
            None => pos += 64,
        }
    };
    // A carriage return outside quotes ends a record for the `csv` crate: fine right before
    // the newline (CRLF), anywhere else the line is not this splitter's.
    let content_end = match crs {
        0 => content_end,
        1 if last_cr + 1 == content_end => last_cr,
        _ => return (line_len, false),
    };
    if quotes % 2 != 0 {
        return (line_len, false); // a quote left open: the field runs on into the next line
    }
    out.spans.push((field_start, content_end));
    let mut plain = true;
    for span in &mut out.spans {
        let (s, e) = *span;
        if e < s + 2 || buf[s] != b'"' || buf[e - 1] != b'"' {
            plain = false;
            break;
        }
        *span = (s + 1, e - 1);
    }
    if !plain {
        return (line_len, false);
    }
    // Two quotes a field: none inside any of them.
    if quotes == 2 * out.spans.len() {
        return (line_len, true);
    }
    (line_len, unescape(buf, out))
}

/// Undo doubled quotes into `out.unescaped`; false if a field holds a quote not doubled.
fn unescape(buf: &[u8], out: &mut Split) -> bool {
    out.unescaped.clear();
    for span in &mut out.spans {
        let (s, e) = *span;
        let start = out.unescaped.len();
        let mut i = s;
        while i < e {
            if buf[i] == b'"' {
                if i + 1 >= e || buf[i + 1] != b'"' {
                    return false;
                }
                i += 1;
            }
            out.unescaped.push(buf[i]);
            i += 1;
        }
        *span = (start, out.unescaped.len());
    }
    out.escaped = true;
    true
}

/// Each bit of the result is the XOR of the input's bits at and below it: 1 inside quotes.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Bit masks of quotes, commas, carriage returns and newlines in `block` (at most 64 bytes;
/// bits past its end are 0).
#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8]) -> [u64; 4] {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let mut padded = [0u8; 64];
    let bytes: &[u8] = if block.len() == 64 {
        block
    } else {
        padded[..block.len()].copy_from_slice(block);
        &padded
    };
    let mut out = [0u64; 4];
    for (i, lane) in bytes.chunks_exact(16).enumerate() {
        let word = |at: usize| i64::from_le_bytes(lane[at..at + 8].try_into().expect("8 bytes"));
        // SSE2 is part of x86_64, so these intrinsics are safe to call (Rust 1.87+); the
        // block keeps the crate's rust-version (1.85), where they were still `unsafe`, building.
        #[allow(unused_unsafe)]
        let found = unsafe {
            let v = _mm_set_epi64x(word(8), word(0));
            [b'"', b',', b'\r', b'\n']
                .map(|ch| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(ch as i8))) as u16 as u64)
        };
        for (o, m) in out.iter_mut().zip(found) {
            *o |= m << (16 * i);
        }
    }
    out
}

/// The same masks, a byte at a time: other architectures, and the oracle of the SSE2 one.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn masks_scalar(block: &[u8]) -> [u64; 4] {
    let mut out = [0u64; 4];
    for (i, &b) in block.iter().enumerate().take(64) {
        let k = match b {
            b'"' => 0,
            b',' => 1,
            b'\r' => 2,
            b'\n' => 3,
            _ => continue,
        };
        out[k] |= 1 << i;
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8]) -> [u64; 4] {
    masks_scalar(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fields(line: &[u8]) -> Option<(usize, Vec<Vec<u8>>)> {
        let mut s = Split::default();
        let (len, ok) = split(line, &mut s);
        let row = s.row(line);
        ok.then(|| (len, (0..row.len()).map(|i| row.get(i).unwrap().to_vec()).collect()))
    }

    #[test]
    fn quoted_fields_commas_doubled_quotes_and_crlf() {
        let got = fields(b"\"a\",\"b,c\",\"\",\"d\"\"e\"\r\n\"next\"").unwrap();
        assert_eq!(got.0, 21);
        assert_eq!(got.1, [b"a".to_vec(), b"b,c".to_vec(), b"".to_vec(), b"d\"e".to_vec()]);
        assert_eq!(fields(b"\",\"").unwrap().1, [b",".to_vec()]);
    }

    #[test]
    fn what_the_csv_reader_must_read_is_refused() {
        for line in [
            &b"\"a\",b\n"[..],  // an unquoted field
            b"\"a\"x,\"b\"\n",  // junk after a closing quote
            b"\"a\",\"b\n",     // a quote left open
            b"\"a\"\r,\"b\"\n", // a carriage return outside quotes
            b"\"a\",,\"b\"\n",  // an empty unquoted field
            b"\"a\"b\"\"\n",    // a lone quote inside
            b"\"\n",
        ] {
            assert!(fields(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_line_longer_than_a_block() {
        let line: Vec<u8> = (0..100).map(|i| format!("\"{i},{i}\"")).collect::<Vec<_>>().join(",").into_bytes();
        let (len, got) = fields(&line).unwrap();
        assert_eq!(len, line.len());
        assert_eq!(got.len(), 100);
        assert_eq!(got[99], b"99,99");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn sse2_masks_equal_the_byte_loop(block in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b','), Just(b'\r'), Just(b'\n'), any::<u8>()], 0..=64)) {
            prop_assert_eq!(masks(&block), masks_scalar(&block));
        }
    }
}
