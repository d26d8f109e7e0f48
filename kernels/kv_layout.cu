// kv-layout — decode-attention K read under four KV-cache layouts (spec.rs `Kv`, `KvLayout`).
// Dimensions: B blocks, S tokens per block (block_size), H KV heads, D head_dim, x = 16 / sizeof.
//
// DECISION (spec ambiguity): the spec writes the sum as `q[d] * K`, but reading q from global
// memory would add a load the spec does not list (and change sectors/request). q[d] is therefore
// synthesised in registers from d (`query_weight`); the only global loads are the K reads.
#include "common.cuh"

namespace {

__device__ __forceinline__ float query_weight(uint32_t d) { return 0.5f + 0.0078125f * static_cast<float>(d & 127); }

}  // namespace

// NHD / HND / HDN: blocks of D threads (one per d, a warp per 32 consecutive d); block i handles
// the pair (b = i / H, h = i % H), loops over the S tokens o, reads K[b, o, h, d] at
//   b * sB + o * sO + h * sH + d * sD      (element strides, set on the host per layout:
//   NHD ((b*S + o)*H + h)*D + d, HND ((b*H + h)*S + o)*D + d, HDN ((b*H + h)*D + d)*S + o)
// and writes sum_o q[d] * K to out[(b * H + h) * D + d]. `dtype_bytes` 2 (fp16) or 4 (fp32).
extern "C" __global__ void kv_read(const void* __restrict__ k, float* __restrict__ out, uint64_t pairs, uint64_t heads,
                                   uint64_t block_size, uint64_t sB, uint64_t sO, uint64_t sH, uint64_t sD,
                                   uint32_t dtype_bytes) {
    const uint64_t i = blockIdx.x;
    if (i >= pairs) return;
    const uint32_t d = threadIdx.x;
    const uint64_t b = i / heads, h = i % heads;
    const uint64_t base = b * sB + h * sH + d * sD;
    const float q = query_weight(d);
    float acc = 0.0f;
    if (dtype_bytes == 2) {
        const coalprof::half_bits* __restrict__ kh = static_cast<const coalprof::half_bits*>(k) + base;
#pragma unroll 8
        for (uint64_t o = 0; o < block_size; ++o) acc += q * coalprof::half_to_float(kh[o * sO]);
    } else {
        const float* __restrict__ kf = static_cast<const float*>(k) + base;
#pragma unroll 8
        for (uint64_t o = 0; o < block_size; ++o) acc += q * kf[o * sO];
    }
    out[i * blockDim.x + d] = acc;
}

// vLLM's split K layout [B, H, D/x, S, x], fp16 (x = 8), vLLM's legacy PagedAttention mapping:
// blocks of 128 threads; warp w of block i handles pair p = i * 4 + w (b = p / H, h = p % H);
// lane l reads 8 bytes (4 halves) at token o = l / 2, element (l % 2) * 4 of each x-chunk
// c in 0..D/x, i.e. halves (((b*H + h) * (D/x) + c) * S + o) * x + (l % 2) * 4, one 64-bit load
// per chunk, and writes sum_c sum_e q * K to out[p * 32 + l].
// DECISION: the mapping covers S = 16 tokens (the catalogue's block_size); lanes whose token
// o = l / 2 is >= S make no load and write 0; tokens >= 16 are not read when S > 16.
extern "C" __global__ void __launch_bounds__(128)
kv_read_vllm(const coalprof::half_bits* __restrict__ k, float* __restrict__ out, uint64_t pairs,
             uint64_t block_size, uint64_t head_dim) {
    constexpr uint64_t x = 8;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t p = static_cast<uint64_t>(blockIdx.x) * 4 + (threadIdx.x >> 5);
    if (p >= pairs) return;
    const uint64_t o = lane / 2;
    const uint64_t chunks = head_dim / x;
    float acc = 0.0f;
    if (o < block_size) {
        // (b * H + h) == p.
        const uint2* __restrict__ src =
            reinterpret_cast<const uint2*>(k + (p * chunks * block_size + o) * x + (lane % 2) * 4);
        const uint64_t step = block_size * x / 4;  // one chunk, in uint2 units
        const float q = query_weight(lane);
#pragma unroll 8
        for (uint64_t c = 0; c < chunks; ++c) {
            const uint2 v = src[c * step];
            acc += q * (coalprof::half_to_float(static_cast<uint16_t>(v.x)) +
                        coalprof::half_to_float(static_cast<uint16_t>(v.x >> 16)) +
                        coalprof::half_to_float(static_cast<uint16_t>(v.y)) +
                        coalprof::half_to_float(static_cast<uint16_t>(v.y >> 16)));
        }
    }
    out[p * 32 + lane] = acc;
}

const coalprof::PatternInfo coalprof::kPattern = {"kv-layout", {"kv_read", "kv_read_vllm", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const std::string& layout = get_str(s, "layout");
    const std::string& dtype_name = get_str(s, "dtype");
    const uint64_t dtype = dtype_name == "fp16" ? 2 : dtype_name == "fp32" ? 4 : 0;
    const uint64_t B = get_u64(s, "blocks");
    const uint64_t S = get_u64(s, "block_size");
    const uint64_t H = get_u64(s, "kv_heads");
    const uint64_t D = get_u64(s, "head_dim");
    if (dtype != 2 && dtype != 4) h.bad(s, "dtype must be fp16 or fp32");
    if (B == 0 || S == 0 || H == 0 || D == 0) h.bad(s, "blocks, block_size, kv_heads and head_dim must be >= 1");
    const bool vllm = h.kernel() == "kv_read_vllm";
    uint64_t sB = 0, sO = 0, sH = 0, sD = 0;
    if (vllm) {
        if (layout != "vllm") h.bad(s, "kv_read_vllm reads the `vllm` layout only");
        if (dtype != 2) h.bad(s, "the vllm layout is fp16 only");
        if (D % 8 != 0) h.bad(s, "head_dim must be a multiple of x = 8");
        h.require_block(s, 128, 1, 1);
    } else {
        if (layout == "nhd") {
            sB = S * H * D, sO = H * D, sH = D, sD = 1;
        } else if (layout == "hnd") {
            sB = H * S * D, sH = S * D, sO = D, sD = 1;
        } else if (layout == "hdn") {
            sB = H * D * S, sH = D * S, sD = S, sO = 1;
        } else {
            h.bad(s, "layout must be nhd, hnd or hdn (vllm goes with kv_read_vllm)");
        }
        if (D > 1024) h.bad(s, "head_dim must be at most 1024 (one thread per d)");
        h.require_block(s, static_cast<unsigned>(D), 1, 1);
    }
    if (h.validating) return;

    const uint64_t pairs = B * H;
    DeviceBuffer k = dtype == 2 ? input_f16(B * S * H * D * 2, 6) : input_f32(B * S * H * D * 4, 6);
    const uint64_t nout = vllm ? pairs * 32 : pairs * D;
    DeviceBuffer out = output(4 * nout);
    float* pout = out.at<float>();
    if (vllm) {
        const half_bits* pk = k.at<half_bits>();
        h.launch([&] { kv_read_vllm<<<h.grid(), h.block()>>>(pk, pout, pairs, S, D); });
    } else {
        const void* pk = k.at<void>();
        const uint32_t db = static_cast<uint32_t>(dtype);
        h.launch([&] { kv_read<<<h.grid(), h.block()>>>(pk, pout, pairs, H, S, sB, sO, sH, sD, db); });
    }
    h.finish(pout, nout, false);
}
