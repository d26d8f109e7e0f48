// offset — `out[j] = 2 * in[j * stride + offset]` (spec.rs `Strided`):
// in[j + offset]: a base not on a 32-byte boundary touches 5 sectors instead of 4.
#include "common.cuh"

// Streaming convention (common.cuh `stream_items`): j = (b * ilp + k) * blockDim.x + t, j < m.
extern "C" __global__ void offset_copy(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                       uint64_t stride, uint64_t offset, uint32_t ilp) {
    coalprof::stream_items(
        ilp, m, [&](uint64_t j) { return in[j * stride + offset]; },
        [&](uint64_t j, float v) { out[j] = 2.0f * v; });
}

const coalprof::PatternInfo coalprof::kPattern = {"offset", {"offset_copy", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const uint64_t m = get_u64(s, "m");
    const uint64_t stride = get_u64(s, "stride");
    const uint64_t offset = get_u64(s, "offset");
    const uint32_t ilp = get_u32(s, "ilp");
    if (m == 0 || stride == 0 || ilp == 0) h.bad(s, "m, stride and ilp must be at least 1");
    if (h.validating) return;

    // `in` holds m * stride + offset floats (rounded up to 256 bytes), `out` m floats.
    DeviceBuffer in = input_f32(4 * (m * stride + offset), 1);
    DeviceBuffer out = output(4 * m);
    const float* pin = in.at<float>();
    float* pout = out.at<float>();
    h.launch([&] { offset_copy<<<h.grid(), h.block()>>>(pin, pout, m, stride, offset, ilp); });
    h.finish(pout, m, false);
}
