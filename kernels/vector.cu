// vector — float / float2 / float4 / half8 loads (spec.rs `Vector`): `out[j] = 2 * in[j]` with
// `in` and `out` viewed as vectors of `width` bytes, m vectors, streaming convention
// (j = (b * ilp + k) * blockDim.x + t, j < m), `in` starting `base_offset` bytes past the
// 256-byte aligned cudaMalloc base, `out` at its base.
//
// The wide kernels (float2, float4, half8) check at run time that `in` and `out` are aligned to
// the vector width. When they are not, they fall back to scalar 32-bit loads over the same
// m * width / 4 words. DECISION (spec ambiguity): the spec says the fallback uses the streaming
// convention "with `ilp` floats"; taken literally (ilp = 1 for float4) the given grid, sized for
// m vectors, would cover only a quarter of the m * 4 floats. The fallback therefore takes
// ilp * width / 4 floats per thread (4 for float4): j = (b * (ilp * width/4) + k) * blockDim.x + t,
// j < m * width / 4. Every block then covers the same bytes as in the vector path, and the given
// grid covers every float. For half8 the fallback's 32-bit word is a half2 (doubled as such):
// the same 4-byte loads as fp32, so the address model need not tell them apart.
#include "common.cuh"

namespace {

__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
__device__ __forceinline__ float2 twice(float2 v) { return make_float2(2.0f * v.x, 2.0f * v.y); }
__device__ __forceinline__ float4 twice(float4 v) {
    return make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
}
__device__ __forceinline__ uint32_t twice(uint32_t half2) { return coalprof::half2_twice(half2); }
// Eight halves in one 16-byte load.
__device__ __forceinline__ uint4 twice(uint4 v) {
    return make_uint4(twice(v.x), twice(v.y), twice(v.z), twice(v.w));
}

// The vector path: one `V` load and one `V` store per item.
template <typename V>
__device__ __forceinline__ void copy_vectors(const void* in, void* out, uint64_t m, uint32_t ilp) {
    const V* __restrict__ vin = static_cast<const V*>(in);
    V* __restrict__ vout = static_cast<V*>(out);
    coalprof::stream_items(
        ilp, m, [&](uint64_t j) { return vin[j]; }, [&](uint64_t j, V v) { vout[j] = twice(v); });
}

// Vector path when aligned, else scalar 32-bit words of type `W` (float, or half2 bits).
template <typename V, typename W>
__device__ __forceinline__ void copy_checked(const void* in, void* out, uint64_t m, uint32_t ilp) {
    constexpr uint32_t kWords = sizeof(V) / 4;
    const uintptr_t misaligned = (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) % sizeof(V);
    if (misaligned == 0) {
        copy_vectors<V>(in, out, m, ilp);
    } else {
        copy_vectors<W>(in, out, m * kWords, ilp * kWords);
    }
}

}  // namespace

// Scalar fp32: 4 bytes per lane, 4 sectors per request. No width check (never .128).
extern "C" __global__ void vector_float(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                        uint32_t ilp) {
    copy_vectors<float>(in, out, m, ilp);
}

extern "C" __global__ void vector_float2(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                         uint32_t ilp) {
    copy_checked<float2, float>(in, out, m, ilp);
}

// LDG.E.128 when `in` is 16-byte aligned, scalar LDG.E otherwise (float4_offset4_fallback).
extern "C" __global__ void vector_float4(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                         uint32_t ilp) {
    copy_checked<float4, float>(in, out, m, ilp);
}

// `in` / `out` are fp16; 8 halves per uint4.
extern "C" __global__ void vector_half8(const coalprof::half_bits* __restrict__ in, coalprof::half_bits* __restrict__ out,
                                        uint64_t m, uint32_t ilp) {
    copy_checked<uint4, uint32_t>(in, out, m, ilp);
}

const coalprof::PatternInfo coalprof::kPattern = {
    "vector", {"vector_float", "vector_float2", "vector_float4", "vector_half8", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const std::string& width = get_str(s, "width");
    const uint64_t m = get_u64(s, "vectors");
    const uint64_t base_offset = get_u64(s, "base_offset_bytes");
    const uint32_t ilp = get_u32(s, "ilp");
    const std::string& k = h.kernel();
    if (k != "vector_" + width) h.bad(s, "width does not name the kernel's vector type (float, float2, float4, half8)");
    if (m == 0 || ilp == 0) h.bad(s, "vectors and ilp must be at least 1");
    if (base_offset % 4 != 0) h.bad(s, "base_offset_bytes must be a multiple of 4 (the scalar fallback's width)");
    const bool half = width == "half8";
    const uint64_t vector_bytes = width == "float" ? 4 : width == "float2" ? 8 : 16;
    if (h.validating) return;

    const uint64_t bytes = m * vector_bytes;
    DeviceBuffer in = half ? input_f16(base_offset + bytes, 5) : input_f32(base_offset + bytes, 5);
    DeviceBuffer out = output(bytes);
    void* pout = out.at<void>();
    if (k == "vector_float") {
        const float* pin = in.at<float>(base_offset);
        h.launch([&] { vector_float<<<h.grid(), h.block()>>>(pin, static_cast<float*>(pout), m, ilp); });
    } else if (k == "vector_float2") {
        const float* pin = in.at<float>(base_offset);
        h.launch([&] { vector_float2<<<h.grid(), h.block()>>>(pin, static_cast<float*>(pout), m, ilp); });
    } else if (k == "vector_float4") {
        const float* pin = in.at<float>(base_offset);
        h.launch([&] { vector_float4<<<h.grid(), h.block()>>>(pin, static_cast<float*>(pout), m, ilp); });
    } else {
        const half_bits* pin = in.at<half_bits>(base_offset);
        h.launch([&] {
            vector_half8<<<h.grid(), h.block()>>>(pin, static_cast<half_bits*>(pout), m, ilp);
        });
    }
    h.finish(pout, half ? bytes / 2 : bytes / 4, half);
}
