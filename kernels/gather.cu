// gather — random scalar gather vs embedding-row gather vs a sequential read of the same rows
// (spec.rs `Gather` and `EmbeddingRows`). Indices come from coalprof_hash32 (spec.rs `hash32`).
#include "common.cuh"

// `out[j] = in[hash32(j, seed) % table]` for j < m, streaming convention (no factor 2: the spec
// says a plain gather). hash32 takes j truncated to 32 bits, as spec.rs does.
extern "C" __global__ void gather_random(const float* __restrict__ in, float* __restrict__ out, uint64_t m,
                                         uint64_t table, uint32_t seed, uint32_t ilp) {
    // The hash is < 2^32, so a table of 2^32 or more elements never wraps it; below that a 32-bit
    // modulo gives the same value as the 64-bit one, at a fraction of the cost.
    const bool wraps = table < (1ULL << 32);
    const uint32_t table32 = static_cast<uint32_t>(table);
    coalprof::stream_items(
        ilp, m,
        [&](uint64_t j) {
            const uint32_t h = coalprof::coalprof_hash32(static_cast<uint32_t>(j), seed);
            return in[wraps ? h % table32 : h];
        },
        [&](uint64_t j, float v) { out[j] = v; });
}

// Embedding rows: fp32 table [rows, dim], one warp per lookup, 8 warps per block (block 256).
// Lookup i = blockIdx.x * 8 + warp reads row r = hash32(i, seed) % rows (random) or r = i
// (sequential); lane l copies in[r * dim + c * 32 + l] to out[i * dim + c * 32 + l] for c in
// 0..dim/32, one load instruction per c. dim is a multiple of 32 (checked on the host).
extern "C" __global__ void __launch_bounds__(256)
gather_rows(const float* __restrict__ in, float* __restrict__ out, uint64_t lookups, uint64_t rows, uint64_t dim,
            uint32_t seed, uint32_t random) {
    const uint64_t i = static_cast<uint64_t>(blockIdx.x) * 8 + (threadIdx.x >> 5);
    const uint32_t lane = threadIdx.x & 31;
    if (i >= lookups) return;
    const uint32_t h = coalprof::coalprof_hash32(static_cast<uint32_t>(i), seed);
    const uint64_t r = random ? (rows < (1ULL << 32) ? h % static_cast<uint32_t>(rows) : h) : i;
    const float* __restrict__ src = in + r * dim + lane;
    float* __restrict__ dst = out + i * dim + lane;
    const uint64_t chunks = dim / 32;
#pragma unroll 4
    for (uint64_t c = 0; c < chunks; ++c) dst[c * 32] = src[c * 32];
}

const coalprof::PatternInfo coalprof::kPattern = {"gather", {"gather_random", "gather_rows", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    if (h.kernel() == "gather_random") {
        const uint64_t m = get_u64(s, "lookups");
        const uint64_t table = get_u64(s, "table_elements");
        const uint32_t seed = get_u32(s, "seed");
        const uint32_t ilp = get_u32(s, "ilp");
        if (m == 0 || table == 0 || ilp == 0) h.bad(s, "lookups, table_elements and ilp must be at least 1");
        if (h.validating) return;

        DeviceBuffer in = input_f32(4 * table, 3);
        DeviceBuffer out = output(4 * m);
        const float* pin = in.at<float>();
        float* pout = out.at<float>();
        h.launch([&] { gather_random<<<h.grid(), h.block()>>>(pin, pout, m, table, seed, ilp); });
        h.finish(pout, m, false);
    } else {
        const uint64_t lookups = get_u64(s, "lookups");
        const uint64_t rows = get_u64(s, "rows");
        const uint64_t dim = get_u64(s, "dim");
        const uint32_t seed = get_u32(s, "seed");
        const bool random = get_bool(s, "random");
        if (lookups == 0 || rows == 0) h.bad(s, "lookups and rows must be at least 1");
        if (dim == 0 || dim % 32 != 0) h.bad(s, "dim must be a positive multiple of 32 (one warp per row)");
        if (!random && lookups > rows) h.bad(s, "sequential lookups read rows 0..lookups: need lookups <= rows");
        h.require_block(s, 256, 1, 1);
        if (h.validating) return;

        DeviceBuffer in = input_f32(4 * rows * dim, 4);
        DeviceBuffer out = output(4 * lookups * dim);
        const float* pin = in.at<float>();
        float* pout = out.at<float>();
        const uint32_t rnd = random ? 1 : 0;
        h.launch([&] { gather_rows<<<h.grid(), h.block()>>>(pin, pout, lookups, rows, dim, seed, rnd); });
        h.finish(pout, lookups * dim, false);
    }
}
