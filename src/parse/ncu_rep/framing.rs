//! The container around the protobuf messages: magic, length-prefixed header, then blocks of a
//! length-prefixed header and a payload of length-prefixed items (`docs/ncu-rep-format.md`).
//!
//! Everything is read through one [`Framing`] that counts the bytes consumed, so every error
//! names the byte offset where the bad length or message starts. Lengths come from the file and
//! are never trusted: a buffer grows only as bytes actually arrive (a 4 GB length in a 1 kB file
//! costs 1 kB), a length longer than what is left of a plain file fails before any read, and a
//! message's first bytes must read as a protobuf field before the rest of it is buffered. A
//! compressed stream has no "bytes left" to check against: under [`Bounds::Untrusted`] it may
//! decompress to at most [`MAX_EXPANSION`] times its size (and [`EXPANSION_FLOOR`] whatever its
//! size), so a few kilobytes cannot claim gigabytes.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use prost::Message;
use ruzstd::decoding::{FrameDecoder, StreamingDecoder};

use super::{Bounds, ReadError};

/// The magic bytes every `.ncu-rep` (and 2019 `.nsight-cuprof-report`) starts with.
pub const MAGIC: &[u8; 4] = b"NVR\0";
/// A zstd frame's magic number, little-endian on disk (`.ncu-repz`).
pub const ZSTD_MAGIC: &[u8; 4] = &[0x28, 0xB5, 0x2F, 0xFD];

/// The largest single allocation made ahead of the data arriving (the buffer grows past it as
/// bytes are read): keeps a forged length from reserving memory in a compressed stream, where
/// the bytes left are unknown.
const RESERVE_CAP: u64 = 1 << 20;

/// How many times its own size a compressed report may decompress to, untrusted. The real
/// reports of `tests/fixtures/ncu-rep` compress 4× to 59× (`zstd -19`; 3× to 45× at zstd's
/// default level): four times the most seen, for room.
pub const MAX_EXPANSION: u64 = 256;
/// What any compressed report may decompress to, untrusted, however small it is.
pub const EXPANSION_FLOOR: u64 = 64 << 20;

/// The bound a compressed stream ran into: carried through `io::Error` from [`Capped`] to
/// [`Framing::io_error`], which turns it into [`ReadError::Bound`].
#[derive(Debug, Clone, Copy)]
struct Expanded {
    bound: u64,
    compressed: u64,
}

impl std::fmt::Display for Expanded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {}-byte compressed report decompresses to more than {} bytes ({MAX_EXPANSION}× its size, at \
             least {} MiB), more than any real report does",
            self.compressed,
            self.bound,
            EXPANSION_FLOOR >> 20
        )
    }
}

impl std::error::Error for Expanded {}

/// A reader that yields at most `bound` bytes, then fails with [`Expanded`].
struct Capped<R> {
    inner: R,
    left: u64,
    expanded: Expanded,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more than the bound is an error; exactly the bound is not.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(self.expanded)),
            };
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// A byte source that knows where it is.
pub(super) struct Framing {
    inner: Box<dyn Read + Send>,
    offset: u64,
    /// Bytes left in a plain file; `None` for a decompressed stream.
    left: Option<u64>,
    /// Offsets are into the decompressed stream (said in error messages).
    pub compressed: bool,
}

impl Framing {
    /// Open `path`: a plain report, or a zstd-compressed one (by its magic, whatever its name),
    /// decompressed within `bounds`.
    pub(super) fn open(path: &Path, bounds: Bounds) -> Result<Framing, ReadError> {
        let file = File::open(path).map_err(|e| ReadError::at(0, format!("cannot read: {e}")))?;
        let meta = file.metadata().map_err(|e| ReadError::at(0, format!("cannot read: {e}")))?;
        if meta.is_dir() {
            return Err(ReadError::at(0, "is a directory, not a report"));
        }
        let mut file = BufReader::with_capacity(1 << 16, file);
        let mut head = [0u8; 4];
        let n = read_full(&mut file, &mut head).map_err(|e| ReadError::at(0, format!("cannot read: {e}")))?;
        let zstd_name = path.extension().is_some_and(|e| e == "ncu-repz");
        if n == 0 {
            return Err(ReadError::at(0, "the file is empty"));
        }
        if n == 4 && &head == ZSTD_MAGIC {
            let chained = io::Cursor::new(head).chain(file);
            let decoder =
                Frames::new(chained).map_err(|e| ReadError::at(0, format!("not a readable zstd stream: {e}")))?;
            let inner: Box<dyn Read + Send> = match bounds {
                Bounds::Untrusted => {
                    let bound = meta.len().saturating_mul(MAX_EXPANSION).max(EXPANSION_FLOOR);
                    let expanded = Expanded { bound, compressed: meta.len() };
                    Box::new(Capped { inner: decoder, left: bound, expanded })
                }
                Bounds::Lifted => Box::new(decoder),
            };
            let mut f = Framing { inner, offset: 0, left: None, compressed: true };
            f.expect_magic()?;
            return Ok(f);
        }
        if zstd_name && &head[..n] != MAGIC {
            return Err(ReadError::at(0, "an .ncu-repz file that is not zstd-compressed (no zstd magic)"));
        }
        let mut f = Framing {
            inner: Box::new(io::Cursor::new(head[..n].to_vec()).chain(file)),
            offset: 0,
            left: Some(meta.len()),
            compressed: false,
        };
        f.expect_magic()?;
        Ok(f)
    }

    /// A framing over bytes in memory (tests).
    pub(super) fn from_bytes(bytes: Vec<u8>) -> Result<Framing, ReadError> {
        let left = Some(bytes.len() as u64);
        let mut f = Framing { inner: Box::new(io::Cursor::new(bytes)), offset: 0, left, compressed: false };
        f.expect_magic()?;
        Ok(f)
    }

    fn expect_magic(&mut self) -> Result<(), ReadError> {
        let mut m = [0u8; 4];
        let n = read_full(&mut self.inner, &mut m).map_err(|e| self.io_error(e))?;
        if n == 0 {
            return Err(ReadError::at(0, "the file is empty"));
        }
        if n < 4 || &m != MAGIC {
            return Err(ReadError::at(0, "not an ncu report (no `NVR` magic)"));
        }
        self.consumed(4);
        Ok(())
    }

    pub(super) fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether `len` bytes are more than what is left of a plain file (never, for a stream).
    pub(super) fn past_end(&self, len: u32) -> bool {
        self.left.is_some_and(|left| u64::from(len) > left)
    }

    fn consumed(&mut self, n: u64) {
        self.offset += n;
        if let Some(l) = self.left.as_mut() {
            *l = l.saturating_sub(n);
        }
    }

    fn io_error(&self, e: io::Error) -> ReadError {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<Expanded>()) {
            Some(x) => ReadError::Bound { offset: self.offset, message: x.to_string(), decompressed: true },
            None => ReadError::at(self.offset, format!("cannot read: {e}")),
        }
    }

    /// A little-endian u32 length; `Ok(None)` at a clean end of the input.
    pub(super) fn length(&mut self, what: &str) -> Result<Option<u32>, ReadError> {
        let mut b = [0u8; 4];
        let n = read_full(&mut self.inner, &mut b).map_err(|e| self.io_error(e))?;
        match n {
            0 => Ok(None),
            4 => {
                self.consumed(4);
                Ok(Some(u32::from_le_bytes(b)))
            }
            _ => Err(ReadError::at(self.offset, format!("the file ends inside the length of {what}"))),
        }
    }

    /// A length that must be there.
    pub(super) fn required_length(&mut self, what: &str) -> Result<u32, ReadError> {
        self.length(what)?.ok_or_else(|| ReadError::at(self.offset, format!("the file ends before {what}")))
    }

    /// `len` bytes, refusing a length past the end before reading, and growing the buffer only
    /// as the bytes arrive.
    pub(super) fn bytes(&mut self, len: u32, what: &str) -> Result<Vec<u8>, ReadError> {
        let start = self.offset;
        let len = u64::from(len);
        if let Some(left) = self.left {
            if len > left {
                return Err(ReadError::at(
                    start,
                    format!("{what} is {len} bytes long but only {left} bytes are left in the file"),
                ));
            }
        }
        // A plain file: `len` is at most what is left, so the buffer is made whole and read
        // into at once (past the `BufReader`'s buffer: `read_to_end` asks in small pieces,
        // each copied through it, 0.07 ms of a small report's `analyze`). A stream: its first
        // bytes must start a protobuf field before more is taken (zeros or noise behind a
        // forged length end here, not after gigabytes), then at most the cap up front, growing
        // as the bytes arrive.
        let (buf, got) = if self.left.is_some() {
            let mut buf = vec![0; len as usize];
            let got = read_full(&mut self.inner, &mut buf).map_err(|e| self.io_error(e))?;
            buf.truncate(got);
            (buf, got as u64)
        } else {
            let mut buf = vec![0; len.min(KEY_BYTES) as usize];
            let head = read_full(&mut self.inner, &mut buf).map_err(|e| self.io_error(e))?;
            buf.truncate(head);
            if let Some(why) = not_a_field(&buf, len) {
                self.consumed(head as u64);
                return Err(ReadError::at(start, format!("{what} does not parse: {why}")));
            }
            buf.reserve(len.min(RESERVE_CAP) as usize);
            let rest =
                (&mut self.inner).take(len - head as u64).read_to_end(&mut buf).map_err(|e| self.io_error(e))? as u64;
            (buf, head as u64 + rest)
        };
        self.consumed(got);
        if got < len {
            return Err(ReadError::at(start, format!("the file ends inside {what} ({got} of {len} bytes)")));
        }
        Ok(buf)
    }

    /// A length-prefixed message.
    pub(super) fn message<M: Message + Default>(&mut self, what: &str) -> Result<M, ReadError> {
        let len = self.required_length(what)?;
        self.message_of_len(len, what)
    }

    /// A message of `len` bytes (its length already read).
    pub(super) fn message_of_len<M: Message + Default>(&mut self, len: u32, what: &str) -> Result<M, ReadError> {
        self.decoded(len, what, |b| M::decode(b))
    }

    /// `len` bytes turned into a message by `decode` (a decoder of coalprof's own).
    pub(super) fn decoded<M>(
        &mut self,
        len: u32,
        what: &str,
        decode: impl FnOnce(&[u8]) -> Result<M, prost::DecodeError>,
    ) -> Result<M, ReadError> {
        let start = self.offset;
        let bytes = self.bytes(len, what)?;
        decode(&bytes).map_err(|e| ReadError::at(start, format!("{what} does not parse: {e}")))
    }

    /// Skip `len` bytes (payload items coalprof does not read).
    pub(super) fn skip(&mut self, len: u64, what: &str) -> Result<(), ReadError> {
        let start = self.offset;
        if let Some(left) = self.left {
            if len > left {
                return Err(ReadError::at(
                    start,
                    format!("{what} is {len} bytes long but only {left} bytes are left in the file"),
                ));
            }
        }
        let got = io::copy(&mut (&mut self.inner).take(len), &mut io::sink()).map_err(|e| self.io_error(e))?;
        self.consumed(got);
        if got < len {
            return Err(ReadError::at(start, format!("the file ends inside {what}")));
        }
        Ok(())
    }
}

/// zstd frames one after another, decoded in turn: a compressor that streams (or `cat a.zst
/// b.zst`) writes several, and the content is their concatenation.
struct Frames<R: BufRead> {
    frame: Option<StreamingDecoder<R, FrameDecoder>>,
}

impl<R: BufRead> Frames<R> {
    fn new(source: R) -> Result<Frames<R>, ruzstd::decoding::errors::FrameDecoderError> {
        Ok(Frames { frame: Some(StreamingDecoder::new(source)?) })
    }
}

impl<R: BufRead> Read for Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(frame) = self.frame.as_mut() else { return Ok(0) };
            let n = frame.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This frame is done: the input ends here, or the next frame starts.
            let Some(done) = self.frame.take() else { return Ok(0) };
            let (mut source, decoder) = done.into_parts();
            if source.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.frame = Some(StreamingDecoder::new_with_decoder(source, decoder).map_err(io::Error::other)?);
        }
    }
}

/// The most bytes a protobuf field's key takes (a varint of a 32-bit field number and its wire
/// type).
const KEY_BYTES: u64 = 5;

/// Why `head`, the first bytes of a `len`-byte message, cannot start one: a key whose field
/// number is 0 or whose wire type protobuf does not have (3 and 4, groups, are not in proto3).
/// `None` when it can, or when too few bytes arrived to say (the read that follows fails then).
fn not_a_field(head: &[u8], len: u64) -> Option<String> {
    if len == 0 {
        return None;
    }
    let mut key = 0u64;
    for (i, b) in head.iter().enumerate() {
        key |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return match (key >> 3, key & 7) {
                (0, _) => Some(format!("invalid tag value: 0 (bytes {:02x?})", &head[..=i])),
                (_, 0 | 1 | 2 | 5) => None,
                (_, wire) => Some(format!("invalid wire type value: {wire}")),
            };
        }
    }
    (head.len() as u64 == KEY_BYTES).then(|| "a field key longer than five bytes".to_string())
}

/// Read until `buf` is full or the input ends; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
