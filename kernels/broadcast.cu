// broadcast — `out[j] = 2 * in[w]` (spec.rs `Broadcast`), w = 0 (`per_warp=0`: every lane of
// every warp reads one word) or w = j / 32 (`per_warp=1`: each warp reads its own word, warps
// on consecutive words). One sector per request: broadcast is not pathological.
#include "common.cuh"

// Streaming convention: j = (b * ilp + k) * blockDim.x + t, j < m.
// `w = (j / 32) * per_warp` with per_warp a kernel argument (0 or 1), not a branch: the compiler
// cannot see that the ilp loads of in[0] hit one address, so it keeps all `ilp` loads per thread
// (one request each), exactly as the spec's convention counts them.
extern "C" __global__ void broadcast_read(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                          uint64_t per_warp, uint32_t ilp) {
    coalprof::stream_items(
        ilp, m, [&](uint64_t j) { return in[(j >> 5) * per_warp]; },
        [&](uint64_t j, float v) { out[j] = 2.0f * v; });
}

const coalprof::PatternInfo coalprof::kPattern = {"broadcast", {"broadcast_read", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const uint64_t m = get_u64(s, "elements");
    const bool per_warp = get_bool(s, "per_warp");
    const uint32_t ilp = get_u32(s, "ilp");
    if (m == 0 || ilp == 0) h.bad(s, "elements and ilp must be at least 1");
    if (h.validating) return;

    // `in` holds the words read: ceil(m / 32) (per warp) or one; `out` m floats.
    DeviceBuffer in = input_f32(4 * (per_warp ? (m + 31) / 32 : 1), 2);
    DeviceBuffer out = output(4 * m);
    const float* pin = in.at<float>();
    float* pout = out.at<float>();
    const uint64_t pw = per_warp ? 1 : 0;
    h.launch([&] { broadcast_read<<<h.grid(), h.block()>>>(pin, pout, m, pw, ilp); });
    h.finish(pout, m, false);
}
