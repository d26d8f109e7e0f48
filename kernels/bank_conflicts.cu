// bank-conflicts — shared-memory bank conflicts (spec.rs `Shared`) and the tiled transpose
// (spec.rs `Transpose`): t[l][r] on float[32][32] is 32-way, on float[32][33] conflict-free.
#include "common.cuh"

// Shared-memory micro-benchmark: blocks of 256 threads fill the tile conflict-free (consecutive
// threads, consecutive words), then every warp makes 32 loads r in 0..32, `reps` times over,
// of word `l * lane_mul + r * r_mul` (lane l) through a volatile pointer, so each is one 32-bit
// LDS that the compiler can neither merge nor hoist:
//   row32 t[l][r] on [32][32]: (32, 1)   col32 t[r][l] on [32][32]: (1, 32)
//   row33 t[l][r] on [32][33]: (33, 1)   bcast t[r][0] on [32][32]: (0, 32)
// and writes its sum to out[global thread]. The tile array is 32 * 33 floats for every access
// (only its first `words` are filled and read); bank = word % 32 from a 128-byte aligned base.
extern "C" __global__ void __launch_bounds__(256)
shared_access(float* __restrict__ out, uint32_t lane_mul, uint32_t r_mul, uint32_t words, uint32_t reps) {
    __shared__ __align__(128) float tile[32 * 33];
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) tile[w] = static_cast<float>(w);
    __syncthreads();
    const volatile float* vt = tile;
    const uint32_t base = (threadIdx.x & 31) * lane_mul;
    float sum = 0.0f;
    for (uint32_t rep = 0; rep < reps; ++rep) {
#pragma unroll
        for (uint32_t r = 0; r < 32; ++r) sum += vt[base + r * r_mul];
    }
    out[static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

// Transpose of an n x n fp32 matrix, tile 32, blocks of 32 x 8 threads, each thread handling rows
// ty, ty+8, ty+16, ty+24 of its tile: out[x * n + y] = in[y * n + x]. Tiled: coalesced global
// reads into tile[ty + j][tx] (conflict-free), then coalesced global writes from tile[tx][ty + j]
// (word tx * (32 + PAD) + ty + j: 32-way with PAD 0, conflict-free with PAD 1).
template <int PAD>
__device__ __forceinline__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, uint64_t n) {
    __shared__ float tile[32][32 + PAD];
    const uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint64_t x = static_cast<uint64_t>(blockIdx.x) * 32 + tx;
    uint64_t y = static_cast<uint64_t>(blockIdx.y) * 32 + ty;
#pragma unroll
    for (uint32_t j = 0; j < 32; j += 8)
        if (x < n && y + j < n) tile[ty + j][tx] = in[(y + j) * n + x];
    __syncthreads();
    x = static_cast<uint64_t>(blockIdx.y) * 32 + tx;
    y = static_cast<uint64_t>(blockIdx.x) * 32 + ty;
#pragma unroll
    for (uint32_t j = 0; j < 32; j += 8)
        if (x < n && y + j < n) out[(y + j) * n + x] = tile[tx][ty + j];
}

extern "C" __global__ void __launch_bounds__(256)
transpose_tile32(const float* __restrict__ in, float* __restrict__ out, uint64_t n) {
    transpose_tiled<0>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(256)
transpose_tile33(const float* __restrict__ in, float* __restrict__ out, uint64_t n) {
    transpose_tiled<1>(in, out, n);
}

// No shared memory: coalesced reads in[(y + j) * n + x], stores out[x * n + y + j] 32 sectors
// per request (lanes n floats apart).
extern "C" __global__ void __launch_bounds__(256)
transpose_naive(const float* __restrict__ in, float* __restrict__ out, uint64_t n) {
    const uint64_t x = static_cast<uint64_t>(blockIdx.x) * 32 + threadIdx.x;
    const uint64_t y = static_cast<uint64_t>(blockIdx.y) * 32 + threadIdx.y;
#pragma unroll
    for (uint32_t j = 0; j < 32; j += 8)
        if (x < n && y + j < n) out[x * n + y + j] = in[(y + j) * n + x];
}

const coalprof::PatternInfo coalprof::kPattern = {
    "bank-conflicts", {"shared_access", "transpose_tile32", "transpose_tile33", "transpose_naive", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    if (h.kernel() == "shared_access") {
        const std::string& access = get_str(s, "access");
        const uint64_t blocks = get_u64(s, "blocks");
        const uint32_t reps = get_u32(s, "reps");
        uint32_t lane_mul = 0, r_mul = 0, words = 32 * 32;
        if (access == "row32") {
            lane_mul = 32, r_mul = 1;
        } else if (access == "col32") {
            lane_mul = 1, r_mul = 32;
        } else if (access == "row33") {
            lane_mul = 33, r_mul = 1, words = 32 * 33;
        } else if (access == "bcast") {
            lane_mul = 0, r_mul = 32;
        } else {
            h.bad(s, "access must be row32, col32, row33 or bcast");
        }
        h.require_block(s, 256, 1, 1);
        if (blocks == 0 || h.grid().x != blocks || h.grid().y != 1 || h.grid().z != 1)
            h.bad(s, "grid must be blocks,1,1 (one output per thread)");
        if (h.validating) return;

        const uint64_t n = blocks * 256;
        DeviceBuffer out = output(4 * n);
        float* pout = out.at<float>();
        h.launch([&] { shared_access<<<h.grid(), h.block()>>>(pout, lane_mul, r_mul, words, reps); });
        h.finish(pout, n, false);
    } else {
        const std::string& tile = get_str(s, "tile");
        const uint64_t n = get_u64(s, "n");
        const char* want = h.kernel() == "transpose_tile32" ? "32" : h.kernel() == "transpose_tile33" ? "33" : "naive";
        if (tile != want) h.bad(s, "tile does not match the kernel (32, 33 or naive)");
        if (n == 0) h.bad(s, "n must be at least 1");
        h.require_block(s, 32, 8, 1);
        if (h.validating) return;

        DeviceBuffer in = input_f32(4 * n * n, 7);
        DeviceBuffer out = output(4 * n * n);
        const float* pin = in.at<float>();
        float* pout = out.at<float>();
        if (h.kernel() == "transpose_tile32")
            h.launch([&] { transpose_tile32<<<h.grid(), h.block()>>>(pin, pout, n); });
        else if (h.kernel() == "transpose_tile33")
            h.launch([&] { transpose_tile33<<<h.grid(), h.block()>>>(pin, pout, n); });
        else
            h.launch([&] { transpose_naive<<<h.grid(), h.block()>>>(pin, pout, n); });
        h.finish(pout, n * n, false);
    }
}
