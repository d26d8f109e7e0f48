//! The built-in pattern catalogue: the one source of truth for every variant's parameters.
//!
//! A [`Variant`] carries everything that defines a launch: the kernel name, the launch shape and
//! a typed `Spec` with the sizes, strides, offsets and layouts. The kernel executables receive
//! these values as arguments (see `kernels/README.md`), and the address model (`crate::model`)
//! replays the same values, so the two cannot drift. Each spec's doc comment states the address
//! arithmetic the `.cu` file implements; keep them side by side when editing either.

mod catalogue;
mod spec;

pub use catalogue::{parse_size, sim_variants, variants, SizeError, Sizing};
#[cfg(test)]
pub(crate) use spec::Dtype;
pub(crate) use spec::{hash32, AttentionStep, KvLayout, SharedAccess, Spec, TransposeTile, VecWidth};
pub use spec::{LaunchShape, Variant};
pub(crate) use spec::{ATTENTION_HEAD_DIM, ATTENTION_TILE, SOFTMAX_BLOCK};

use std::fmt;
use std::str::FromStr;

/// One built-in pattern: a `.cu` file in `kernels/`, built into one executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// Contiguous copy: the ideal.
    Coalesced,
    /// Contiguous copy, misaligned by an element offset.
    Offset,
    /// Strided reads: one sector per lane beyond stride 8.
    Stride,
    /// Every lane reads the same word.
    Broadcast,
    /// Random lookups into a table.
    Gather,
    /// 32-, 64- and 128-bit loads of one array.
    Vector,
    /// A paged KV cache read in NHD and HND layouts.
    KvLayout,
    /// Shared-memory accesses with n-way bank conflicts.
    BankConflicts,
    /// Row-major matrix walked by row or by column.
    Column,
    /// Reuse through shared memory: attention with the S×S scores through DRAM or kept on chip
    /// (FlashAttention's tiling), and a staging copy whose words are used once.
    Reuse,
}

impl Pattern {
    /// Every pattern, in the order `--all` runs them.
    pub const ALL: [Pattern; 10] = [
        Pattern::Coalesced,
        Pattern::Offset,
        Pattern::Stride,
        Pattern::Broadcast,
        Pattern::Gather,
        Pattern::Vector,
        Pattern::KvLayout,
        Pattern::BankConflicts,
        Pattern::Column,
        Pattern::Reuse,
    ];

    /// The name users type and the stem of the `.cu` file (`kernels/<name>.cu`).
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Coalesced => "coalesced",
            Pattern::Offset => "offset",
            Pattern::Stride => "stride",
            Pattern::Broadcast => "broadcast",
            Pattern::Gather => "gather",
            Pattern::Vector => "vector",
            Pattern::KvLayout => "kv-layout",
            Pattern::BankConflicts => "bank-conflicts",
            Pattern::Column => "column",
            Pattern::Reuse => "reuse",
        }
    }

    /// The `.cu` source file stem (pattern names with `-` become `_`).
    pub fn source_stem(self) -> String {
        self.name().replace('-', "_")
    }

    /// What the pattern shows, in one line.
    pub fn lesson(self) -> &'static str {
        match self {
            Pattern::Coalesced => "out[i] = in[i] * 2: 4 sectors/request, the bandwidth a good copy reaches",
            Pattern::Offset => "in[i + k]: a base not on a 32-byte boundary touches 5 sectors instead of 4",
            Pattern::Stride => "in[i * s]: sectors/request grows to 32 and useful bandwidth falls with s",
            Pattern::Broadcast => "every lane reads one word: 1 sector/request, not pathological",
            Pattern::Gather => "random in[hash(i)] vs embedding rows vs a sequential read of the same bytes",
            Pattern::Vector => "float / float2 / float4 / half8 loads; misaligned float4 falls back to scalar",
            Pattern::KvLayout => {
                "decode-attention K read: [blocks, block, heads, dim] vs [blocks, heads, dim, block]: 16x in fp16"
            }
            Pattern::BankConflicts => "t[tid][0] on [32][32] is 32-way, [32][33] is conflict-free; tiled transpose",
            Pattern::Column => "row-major matrix: summing along rows (one thread per row) vs along columns",
            Pattern::Reuse => {
                "attention: naive DRAM bytes x4 per doubling of S (the SxS scores), flash x2; staging used once gains nothing"
            }
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for a pattern name that is not in the catalogue; lists the known ones.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown pattern `{0}` (known: {known})", known = Pattern::ALL.map(|p| p.name()).join(", "))]
pub struct UnknownPattern(pub String);

/// A pattern is written by its name (the Slurm task file), and read back as `--pattern` reads it.
impl serde::Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Pattern {
    type Err = UnknownPattern;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().replace('_', "-");
        Pattern::ALL.into_iter().find(|p| p.name() == wanted).ok_or_else(|| UnknownPattern(s.to_string()))
    }
}
