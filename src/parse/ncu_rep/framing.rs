//! The container around the protobuf messages: magic, length-prefixed header, then blocks of a
//! length-prefixed header and a payload of length-prefixed items (`docs/ncu-rep-format.md`).
//!
//! Everything is read through one [`Framing`] that counts the bytes consumed, so every error
//! names the byte offset where the bad length or message starts. Lengths come from the file and
//! are never trusted: a buffer grows only as bytes actually arrive (a 4 GB length in a 1 kB file
//! costs 1 kB), and a length longer than what is left of a plain file fails before any read.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use prost::Message;
use ruzstd::decoding::{FrameDecoder, StreamingDecoder};

use super::ReadError;

/// The magic bytes every `.ncu-rep` (and 2019 `.nsight-cuprof-report`) starts with.
pub const MAGIC: &[u8; 4] = b"NVR\0";
/// A zstd frame's magic number, little-endian on disk (`.ncu-repz`).
pub const ZSTD_MAGIC: &[u8; 4] = &[0x28, 0xB5, 0x2F, 0xFD];

/// The largest single allocation made ahead of the data arriving (the buffer grows past it as
/// bytes are read): keeps a forged length from reserving memory in a compressed stream, where
/// the bytes left are unknown.
const RESERVE_CAP: u64 = 1 << 20;

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
    /// Open `path`: a plain report, or a zstd-compressed one (by its magic, whatever its name).
    pub(super) fn open(path: &Path) -> Result<Framing, ReadError> {
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
            let mut f = Framing { inner: Box::new(decoder), offset: 0, left: None, compressed: true };
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

    fn consumed(&mut self, n: u64) {
        self.offset += n;
        if let Some(l) = self.left.as_mut() {
            *l = l.saturating_sub(n);
        }
    }

    fn io_error(&self, e: io::Error) -> ReadError {
        ReadError::at(self.offset, format!("cannot read: {e}"))
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
        // each copied through it, 0.07 ms of a small report's `analyze`). A stream: at most
        // the cap up front, growing as the bytes arrive.
        let (buf, got) = if self.left.is_some() {
            let mut buf = vec![0; len as usize];
            let got = read_full(&mut self.inner, &mut buf).map_err(|e| self.io_error(e))?;
            buf.truncate(got);
            (buf, got as u64)
        } else {
            let mut buf = Vec::with_capacity(len.min(RESERVE_CAP) as usize);
            let got = (&mut self.inner).take(len).read_to_end(&mut buf).map_err(|e| self.io_error(e))? as u64;
            (buf, got)
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
