//! The protobuf messages of a `.ncu-rep`, with only the fields coalprof reads.
//!
//! Written from the public facts in `docs/ncu-rep-format.md` and from what real reports hold
//! (`protoc --decode_raw`), not from NVIDIA's `.proto` files (their licence forbids derivative
//! works). Every other field is skipped by the decoder, which is what lets one field list read
//! reports from ncu 2019 to 2025: fields are added, never renumbered.
//!
//! Scalars are declared proto3-style (absent = 0): the reader never needs to tell "absent" from
//! 0 for them. A field whose wire type differs from the declaration fails the decode (a corrupt
//! or foreign file), which the framing reports with the item's byte offset.

/// The file header after the magic: the format version (7 in every report seen).
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct FileHeader {
    #[prost(uint32, tag = "1")]
    pub version: u32,
}

/// One block's header: what its payload holds, and per-process context.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct BlockHeader {
    #[prost(uint32, tag = "1")]
    pub num_sources: u32,
    #[prost(uint32, tag = "2")]
    pub num_results: u32,
    #[prost(message, optional, tag = "3")]
    pub session_details: Option<SessionDetails>,
    /// Metric names. The indices are cumulative over the whole file, and a block may add names
    /// that an earlier block's results already use (the 2023.3 fixture does).
    #[prost(message, optional, tag = "4")]
    pub string_table: Option<StringTable>,
    #[prost(uint32, tag = "5")]
    pub payload_size: u32,
    #[prost(message, optional, tag = "6")]
    pub process: Option<Process>,
    #[prost(uint32, tag = "7")]
    pub num_range_results: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct StringTable {
    #[prost(string, repeated, tag = "1")]
    pub strings: Vec<String>,
}

/// Spread over several blocks, one part per block (versions in one, devices in another).
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct SessionDetails {
    #[prost(message, repeated, tag = "8")]
    pub version_info: Vec<VersionInfo>,
}

/// `("Nsight Compute Target", "2024.3.2.0 (build …)")`, `("CUDA Version", "12.6")`, ….
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct VersionInfo {
    #[prost(string, tag = "1")]
    pub provider: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

/// Field 2 (host name) is a string in most reports and a message in some 2019 ones: not read.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct Process {
    #[prost(uint32, optional, tag = "1")]
    pub id: Option<u32>,
    /// The executable's path.
    #[prost(string, tag = "3")]
    pub name: String,
}

/// One profiled kernel launch.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct ProfileResult {
    #[prost(string, tag = "5")]
    pub mangled: String,
    #[prost(string, tag = "6")]
    pub function: String,
    #[prost(string, tag = "7")]
    pub demangled: String,
    #[prost(message, optional, tag = "10")]
    pub grid: Option<Uint64x3>,
    #[prost(message, optional, tag = "11")]
    pub block: Option<Uint64x3>,
    #[prost(message, repeated, tag = "13")]
    pub metrics: Vec<MetricResult>,
    /// A [`SourceData`], decoded on its own like `nvtx`: a surprise there costs the launch's
    /// module, not the launch.
    #[prost(bytes = "vec", optional, tag = "15")]
    pub source: Option<Vec<u8>>,
    /// An [`NvtxState`], decoded on its own: a surprise in this rarely-used, deeply nested part
    /// costs the NVTX label, not the launch.
    #[prost(bytes = "vec", optional, tag = "21")]
    pub nvtx: Option<Vec<u8>>,
}

/// [`ProfileResult`] without what only source counters need (instances, the module): the
/// decoder skips those bytes without allocating, which is most of the work for `analyze`.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct ProfileResultLean {
    #[prost(string, tag = "5")]
    pub mangled: String,
    #[prost(string, tag = "6")]
    pub function: String,
    #[prost(string, tag = "7")]
    pub demangled: String,
    #[prost(message, optional, tag = "10")]
    pub grid: Option<Uint64x3>,
    #[prost(message, optional, tag = "11")]
    pub block: Option<Uint64x3>,
    #[prost(message, repeated, tag = "13")]
    pub metrics: Vec<MetricResultLean>,
    #[prost(bytes = "vec", optional, tag = "21")]
    pub nvtx: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct MetricResultLean {
    #[prost(uint32, tag = "1")]
    pub name_id: u32,
    #[prost(message, optional, tag = "2")]
    pub value: Option<MetricValue>,
}

impl From<ProfileResultLean> for ProfileResult {
    fn from(r: ProfileResultLean) -> ProfileResult {
        ProfileResult {
            mangled: r.mangled,
            function: r.function,
            demangled: r.demangled,
            grid: r.grid,
            block: r.block,
            metrics: r
                .metrics
                .into_iter()
                .map(|m| MetricResult { name_id: m.name_id, value: m.value, instances: Vec::new() })
                .collect(),
            source: None,
            nvtx: r.nvtx,
        }
    }
}

/// A [`MetricResult`]'s instances alone (the other fields skipped): read after the lean
/// message for a metric whose instances are wanted.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct MetricInstances {
    #[prost(message, repeated, tag = "3")]
    pub instances: Vec<ListElement>,
}

/// Decode a [`ProfileResult`] with each metric's instances only where `instances(name_id)`
/// says so. A report with source counters holds a few metrics with an instance per
/// instruction among hundreds of others with instances per unit or sample; decoding every
/// one of those was most of `lines`' time. The other metrics are read as the lean message
/// reads them (the instances skipped without allocating), so a metric reads the same either
/// way, but for its instances.
pub(super) fn decode_result(
    mut buf: &[u8],
    instances: impl Fn(u32) -> bool,
) -> Result<ProfileResult, prost::DecodeError> {
    use prost::encoding::{check_wire_type, decode_key, decode_varint, DecodeContext, WireType};
    use prost::Message;
    let mut r = ProfileResult::default();
    while !buf.is_empty() {
        let (tag, wire_type) = decode_key(&mut buf)?;
        if tag != 13 {
            r.merge_field(tag, wire_type, &mut buf, DecodeContext::default())?;
            continue;
        }
        check_wire_type(WireType::LengthDelimited, wire_type)?;
        let len = usize::try_from(decode_varint(&mut buf)?).unwrap_or(usize::MAX);
        if len > buf.len() {
            return Err(prost::DecodeError::new("buffer underflow"));
        }
        let (metric, rest) = buf.split_at(len);
        buf = rest;
        let lean = MetricResultLean::decode(metric)?;
        let instances = if instances(lean.name_id) { MetricInstances::decode(metric)?.instances } else { Vec::new() };
        r.metrics.push(MetricResult { name_id: lean.name_id, value: lean.value, instances });
    }
    Ok(r)
}

#[derive(Clone, Copy, PartialEq, prost::Message)]
pub(super) struct Uint64x3 {
    #[prost(uint64, tag = "1")]
    pub x: u64,
    #[prost(uint64, tag = "2")]
    pub y: u64,
    #[prost(uint64, tag = "3")]
    pub z: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct MetricResult {
    /// Index into the file's cumulative string table.
    #[prost(uint32, tag = "1")]
    pub name_id: u32,
    #[prost(message, optional, tag = "2")]
    pub value: Option<MetricValue>,
    /// Instanced values; for per-instruction metrics the correlation id is the absolute PC.
    #[prost(message, repeated, tag = "3")]
    pub instances: Vec<ListElement>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct ListElement {
    #[prost(message, optional, tag = "1")]
    pub correlation_id: Option<MetricValue>,
    #[prost(message, optional, tag = "2")]
    pub value: Option<MetricValue>,
}

/// One of a string, a float, a double, a uint32 or a uint64.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct MetricValue {
    #[prost(string, optional, tag = "1")]
    pub string: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub float: Option<f32>,
    #[prost(double, optional, tag = "3")]
    pub double: Option<f64>,
    #[prost(uint32, optional, tag = "4")]
    pub uint32: Option<u32>,
    #[prost(uint64, optional, tag = "5")]
    pub uint64: Option<u64>,
}

impl MetricValue {
    /// The value as a number, if it is one.
    pub(super) fn number(&self) -> Option<f64> {
        if let Some(v) = self.double {
            Some(v)
        } else if let Some(v) = self.float {
            Some(f64::from(v))
        } else if let Some(v) = self.uint64 {
            Some(v as f64)
        } else {
            self.uint32.map(f64::from)
        }
    }

    /// The value as an integer (a correlation id / PC), if it is a whole number.
    pub(super) fn integer(&self) -> Option<u64> {
        if let Some(v) = self.uint64 {
            return Some(v);
        }
        if let Some(v) = self.uint32 {
            return Some(u64::from(v));
        }
        let f = self.double.or(self.float.map(f64::from))?;
        (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
    }
}

/// The kernel's module. A result's copy often holds only `reference`, naming a source stored
/// whole in an earlier block.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct SourceData {
    #[prost(uint64, tag = "1")]
    pub reference: u64,
    /// The cubin, an ELF.
    #[prost(bytes = "vec", optional, tag = "4")]
    pub binary: Option<Vec<u8>>,
    /// `major << 16 | minor` in every report seen (`0x60001` for a GTX 1080).
    #[prost(uint32, optional, tag = "6")]
    pub sm_revision: Option<u32>,
    /// Source files embedded with `--import-source yes`.
    #[prost(message, optional, tag = "8")]
    pub files: Option<SourceFiles>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct SourceFiles {
    #[prost(message, repeated, tag = "1")]
    pub files: Vec<SourceFile>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct SourceFile {
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(string, tag = "2")]
    pub text: String,
}

/// The NVTX state at the launch: domains, and per thread the push/pop range stacks.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxState {
    #[prost(message, repeated, tag = "1")]
    pub domains: Vec<NvtxDomain>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<NvtxThread>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxDomain {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxThread {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(message, repeated, tag = "2")]
    pub domains: Vec<NvtxThreadDomain>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxThreadDomain {
    #[prost(uint64, tag = "1")]
    pub domain_id: u64,
    /// Push/pop ranges, outermost first.
    #[prost(message, repeated, tag = "3")]
    pub ranges: Vec<NvtxRange>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxRange {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub attributes: Option<NvtxAttributes>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxAttributes {
    #[prost(message, optional, tag = "3")]
    pub color: Option<NvtxColor>,
    #[prost(message, optional, tag = "5")]
    pub message: Option<NvtxMessage>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxColor {
    /// 1: ARGB.
    #[prost(uint32, tag = "1")]
    pub kind: u32,
    #[prost(uint32, tag = "2")]
    pub value: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct NvtxMessage {
    /// 1: ASCII.
    #[prost(uint32, tag = "1")]
    pub kind: u32,
    #[prost(string, tag = "2")]
    pub text: String,
}
