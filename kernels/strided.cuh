// strided.cuh — the one streaming copy behind the coalesced, offset and stride patterns:
// `out[j] = 2 * in[j * stride + offset]` (spec.rs `Strided`). Each pattern's .cu defines
// COALPROF_STRIDED_PATTERN (its own name) and includes this file, so every executable keeps its
// own kernel name (`coalesced_copy`, `offset_copy`, `stride_copy`) for ncu's kernel filter and the
// manifest while the address arithmetic exists once.
#include "common.cuh"

#ifndef COALPROF_STRIDED_PATTERN
#error "define COALPROF_STRIDED_PATTERN (coalesced, offset or stride) before including strided.cuh"
#endif

#define COALPROF_CAT2(a, b) a##b
#define COALPROF_CAT(a, b) COALPROF_CAT2(a, b)
#define COALPROF_STR2(a) #a
#define COALPROF_STR(a) COALPROF_STR2(a)
#define COALPROF_STRIDED_KERNEL COALPROF_CAT(COALPROF_STRIDED_PATTERN, _copy)

// Streaming convention (common.cuh `stream_items`): j = (b * ilp + k) * blockDim.x + t, j < m.
extern "C" __global__ void COALPROF_STRIDED_KERNEL(const float* __restrict__ in, float* __restrict__ out,
                                                   uint64_t m, uint64_t stride, uint64_t offset, uint32_t ilp) {
    coalprof::stream_items(
        ilp, m, [&](uint64_t j) { return in[j * stride + offset]; },
        [&](uint64_t j, float v) { out[j] = 2.0f * v; });
}

const coalprof::PatternInfo coalprof::kPattern = {COALPROF_STR(COALPROF_STRIDED_PATTERN),
                                                  {COALPROF_STR(COALPROF_STRIDED_KERNEL), nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const uint64_t m = get_u64(s, "elements");
    const uint64_t stride = get_u64(s, "stride");
    const uint64_t offset = get_u64(s, "offset");
    const uint32_t ilp = get_u32(s, "ilp");
    if (m == 0 || stride == 0 || ilp == 0) h.bad(s, "elements, stride and ilp must be at least 1");
    if (h.validating) return;

    // `in` holds m * stride + offset floats (rounded up to 256 bytes), `out` m floats.
    DeviceBuffer in = input_f32(4 * (m * stride + offset), 1);
    DeviceBuffer out = output(4 * m);
    const float* pin = in.at<float>();
    float* pout = out.at<float>();
    h.launch([&] { COALPROF_STRIDED_KERNEL<<<h.grid(), h.block()>>>(pin, pout, m, stride, offset, ilp); });
    h.finish(pout, m, false);
}
