// reuse — what shared memory is for (spec.rs `Attention`, `Staging`): single-head attention
// (d = 64, fp32) with the S x S scores through global memory (three kernels) or kept on chip
// (FlashAttention's tiling, one kernel), and a streaming copy staged through shared memory with
// every word used once.
//
// The kernels are written to be read, not tuned: CUDA cores, one thread per row or column of a
// 64 x 64 tile. What they show is where the bytes go. Broadcast reads of a shared tile (every
// lane the same word) go through a `volatile` pointer so that each is one 32-bit LDS: without it
// nvcc merges four of them into one 128-bit load, which the memory system serves differently.
#include "common.cuh"

namespace {

constexpr uint32_t kT = 64;   // tile: rows of Q and of K/V per tile, threads per block
constexpr uint32_t kD = 64;   // head dimension
constexpr uint32_t kP = 65;   // padded row of a tile read one row per thread (conflict-free)
constexpr uint32_t kSoftmaxBlock = 256;
constexpr uint32_t kSoftmaxWarps = kSoftmaxBlock / 32;
constexpr float kScale = 0.125f;  // 1 / sqrt(64)
constexpr uint32_t kFull = 0xffffffffu;

}  // namespace

// Scores: block (kt, qt) computes the 64 x 64 tile Sc[qt*64 + i][kt*64 + t] = Q_i . K_t / 8.
// Thread t holds key row kt*64 + t in registers and walks the 64 query rows of the tile.
extern "C" __global__ void __launch_bounds__(64)
attn_scores(const float* __restrict__ q, const float* __restrict__ k, float* __restrict__ sc, uint64_t seq) {
    __shared__ float qs[kT * kD];
    __shared__ float ks[kT * kP];
    const uint32_t t = threadIdx.x;
    const uint64_t kt = blockIdx.x, qt = blockIdx.y;
    for (uint32_t r = 0; r < kT; ++r) {
        qs[r * kD + t] = q[(qt * kT + r) * kD + t];
        ks[r * kP + t] = k[(kt * kT + r) * kD + t];
    }
    __syncthreads();
    float kr[kD];
#pragma unroll
    for (uint32_t d = 0; d < kD; ++d) kr[d] = ks[t * kP + d];
    const volatile float* vq = qs;
    float* out = sc + qt * kT * seq + kt * kT + t;
#pragma unroll 1
    for (uint32_t i = 0; i < kT; ++i) {
        float s = 0.0f;
#pragma unroll
        for (uint32_t d = 0; d < kD; ++d) s += vq[i * kD + d] * kr[d];
        out[i * seq] = s * kScale;
    }
}

namespace {

// Block-wide max or sum of 256 threads: warp shuffles, then lane 0 of each warp stores its
// value in red[warp] and every thread loads all eight (broadcasts).
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* red) {
#pragma unroll
    for (uint32_t o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(kFull, v, o);
        v = kMax ? fmaxf(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    const volatile float* vr = red;
    v = vr[0];
#pragma unroll
    for (uint32_t w = 1; w < kSoftmaxWarps; ++w) v = kMax ? fmaxf(v, vr[w]) : v + vr[w];
    __syncthreads();
    return v;
}

}  // namespace

// Softmax of row blockIdx.x of the seq x seq scores, in place: the row is read from global
// memory once into shared memory (seq floats, dynamic), reduced there twice, written once.
extern "C" __global__ void __launch_bounds__(256) attn_softmax(float* __restrict__ sc, uint64_t seq) {
    extern __shared__ float buf[];
    __shared__ float red[kSoftmaxWarps];
    float* row = sc + static_cast<uint64_t>(blockIdx.x) * seq;
    const uint32_t t = threadIdx.x;
    float m = -INFINITY;
    for (uint64_t j = t; j < seq; j += kSoftmaxBlock) {
        const float x = row[j];
        buf[j] = x;
        m = fmaxf(m, x);
    }
    m = block_reduce<true>(m, red);
    float l = 0.0f;
    for (uint64_t j = t; j < seq; j += kSoftmaxBlock) {
        const float e = __expf(buf[j] - m);
        buf[j] = e;
        l += e;
    }
    l = block_reduce<false>(l, red);
    const float inv = 1.0f / l;
    for (uint64_t j = t; j < seq; j += kSoftmaxBlock) row[j] = buf[j] * inv;
}

// P.V: block qt computes O[qt*64 + i][t] for the 64 query rows i; thread t is output dimension
// t and walks the key tiles, one 64 x 64 tile of P and of V at a time through shared memory.
extern "C" __global__ void __launch_bounds__(64)
attn_pv(const float* __restrict__ p, const float* __restrict__ v, float* __restrict__ o, uint64_t seq) {
    __shared__ float ps[kT * kT];
    __shared__ float vs[kT * kD];
    const uint32_t t = threadIdx.x;
    const uint64_t qt = blockIdx.x;
    float acc[kT];
#pragma unroll
    for (uint32_t i = 0; i < kT; ++i) acc[i] = 0.0f;
    const volatile float* vp = ps;
#pragma unroll 1
    for (uint64_t kt = 0; kt < seq / kT; ++kt) {
        for (uint32_t r = 0; r < kT; ++r) {
            ps[r * kT + t] = p[(qt * kT + r) * seq + kt * kT + t];
            vs[r * kD + t] = v[(kt * kT + r) * kD + t];
        }
        __syncthreads();
#pragma unroll 1
        for (uint32_t j = 0; j < kT; ++j) {
            const float x = vs[j * kD + t];
#pragma unroll
            for (uint32_t i = 0; i < kT; ++i) acc[i] += vp[i * kT + j] * x;
        }
        __syncthreads();
    }
#pragma unroll
    for (uint32_t i = 0; i < kT; ++i) o[(qt * kT + i) * kD + t] = acc[i];
}

// FlashAttention's tiling: block qt owns query rows qt*64 .. +64, thread t row qt*64 + t (its
// q and o in registers). K and V come through shared memory one 64-row tile at a time; the
// scores of a tile live in registers for one key at a time (online softmax: running max m,
// running sum l, the accumulator rescaled when the max grows). Nothing S x S is stored.
extern "C" __global__ void __launch_bounds__(64)
attn_flash(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
           float* __restrict__ o, uint64_t seq) {
    __shared__ float qk[kT * kP];  // Q staging (padded), then each K tile, then O staging
    __shared__ float vs[kT * kD];
    const uint32_t t = threadIdx.x;
    const uint64_t qt = blockIdx.x;
    for (uint32_t r = 0; r < kT; ++r) qk[r * kP + t] = q[(qt * kT + r) * kD + t];
    __syncthreads();
    float qr[kD], acc[kD];
#pragma unroll
    for (uint32_t d = 0; d < kD; ++d) {
        qr[d] = qk[t * kP + d] * kScale;
        acc[d] = 0.0f;
    }
    __syncthreads();
    float m = -INFINITY, l = 0.0f;
    const volatile float* vk = qk;
    const volatile float* vv = vs;
#pragma unroll 1
    for (uint64_t kt = 0; kt < seq / kT; ++kt) {
        for (uint32_t r = 0; r < kT; ++r) {
            qk[r * kD + t] = k[(kt * kT + r) * kD + t];
            vs[r * kD + t] = v[(kt * kT + r) * kD + t];
        }
        __syncthreads();
#pragma unroll 1
        for (uint32_t j = 0; j < kT; ++j) {
            float s = 0.0f;
#pragma unroll
            for (uint32_t d = 0; d < kD; ++d) s += qr[d] * vk[j * kD + d];
            const float m_new = fmaxf(m, s);
            const float c = __expf(m - m_new);
            const float e = __expf(s - m_new);
            l = l * c + e;
#pragma unroll
            for (uint32_t d = 0; d < kD; ++d) acc[d] = acc[d] * c + e * vv[j * kD + d];
            m = m_new;
        }
        __syncthreads();
    }
    const float inv = 1.0f / l;
#pragma unroll
    for (uint32_t d = 0; d < kD; ++d) qk[t * kP + d] = acc[d] * inv;
    __syncthreads();
    for (uint32_t r = 0; r < kT; ++r) o[(qt * kT + r) * kD + t] = qk[r * kP + t];
}

// The streaming read straight from global memory: out[j] = 2 * in[j] (common.cuh convention).
extern "C" __global__ void __launch_bounds__(256)
reuse_direct(const float* __restrict__ in, float* __restrict__ out, uint64_t m, uint32_t ilp) {
    coalprof::stream_items(
        ilp, m, [&](uint64_t j) { return in[j]; }, [&](uint64_t j, float x) { out[j] = 2.0f * x; });
}

// The same read staged through shared memory, every word stored once and loaded once: a copy
// with nothing to reuse. ilp = 4 (the catalogue's), blocks of 256.
extern "C" __global__ void __launch_bounds__(256)
reuse_staged(const float* __restrict__ in, float* __restrict__ out, uint64_t m) {
    constexpr uint32_t kIlp = 4;
    __shared__ float tile[kIlp * 256];
    const uint32_t t = threadIdx.x;
    const uint64_t first = static_cast<uint64_t>(blockIdx.x) * kIlp * 256 + t;
#pragma unroll
    for (uint32_t i = 0; i < kIlp; ++i) {
        const uint64_t j = first + static_cast<uint64_t>(i) * 256;
        if (j < m) tile[i * 256 + t] = in[j];
    }
    __syncthreads();
#pragma unroll
    for (uint32_t i = 0; i < kIlp; ++i) {
        const uint64_t j = first + static_cast<uint64_t>(i) * 256;
        if (j < m) out[j] = 2.0f * tile[i * 256 + t];
    }
}

const coalprof::PatternInfo coalprof::kPattern = {
    "reuse", {"attn_scores", "attn_softmax", "attn_pv", "attn_flash", "reuse_direct", "reuse_staged", nullptr}};

namespace {

void run_attention(const coalprof::Spec& s, coalprof::Harness& h) {
    using namespace coalprof;
    const std::string& step = get_str(s, "step");
    const uint64_t seq = get_u64(s, "seq_len");
    const uint64_t d = get_u64(s, "head_dim");
    const uint64_t tile = get_u64(s, "tile");
    const char* want = h.kernel() == "attn_scores"    ? "scores"
                       : h.kernel() == "attn_softmax" ? "softmax"
                       : h.kernel() == "attn_pv"      ? "pv"
                                                      : "flash";
    if (step != want) h.bad(s, "step does not match the kernel (scores, softmax, pv or flash)");
    if (d != kD || tile != kT) h.bad(s, "head_dim and tile must be 64");
    if (seq == 0 || seq % kT != 0) h.bad(s, "seq_len must be a positive multiple of 64");
    const unsigned tiles = static_cast<unsigned>(seq / kT);
    if (step == "softmax") {
        h.require_block(s, kSoftmaxBlock, 1, 1);
        if (h.grid().x != seq || h.grid().y != 1 || h.grid().z != 1) h.bad(s, "grid must be seq_len,1,1 (a block per row)");
    } else {
        h.require_block(s, kT, 1, 1);
        const unsigned gy = step == "scores" ? tiles : 1;
        if (h.grid().x != tiles || h.grid().y != gy || h.grid().z != 1)
            h.bad(s, "grid must be seq_len/64,seq_len/64,1 for scores and seq_len/64,1,1 otherwise");
    }
    if (h.validating) return;

    const uint64_t rows = 4 * seq * kD, matrix = 4 * seq * seq;
    if (step == "scores") {
        DeviceBuffer q = input_f32(rows, 21), k = input_f32(rows, 22);
        DeviceBuffer sc = output(matrix);
        const float *pq = q.at<float>(), *pk = k.at<float>();
        float* psc = sc.at<float>();
        h.launch([&] { attn_scores<<<h.grid(), h.block()>>>(pq, pk, psc, seq); });
        h.finish(psc, seq * seq, false);
    } else if (step == "softmax") {
        // The row lives in shared memory: beyond 48 KB (S > 12,288) a kernel must ask for it.
        const size_t smem = static_cast<size_t>(4 * seq);
        CUDA_CHECK(cudaFuncSetAttribute(attn_softmax, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
        DeviceBuffer sc = input_f32(matrix, 23);
        float* psc = sc.at<float>();
        h.launch([&] { attn_softmax<<<h.grid(), h.block(), smem>>>(psc, seq); });
        h.finish(psc, seq * seq, false);
    } else if (step == "pv") {
        DeviceBuffer p = input_f32(matrix, 24), v = input_f32(rows, 25);
        DeviceBuffer o = output(rows);
        const float *pp = p.at<float>(), *pv = v.at<float>();
        float* po = o.at<float>();
        h.launch([&] { attn_pv<<<h.grid(), h.block()>>>(pp, pv, po, seq); });
        h.finish(po, seq * kD, false);
    } else {
        DeviceBuffer q = input_f32(rows, 21), k = input_f32(rows, 22), v = input_f32(rows, 25);
        DeviceBuffer o = output(rows);
        const float *pq = q.at<float>(), *pk = k.at<float>(), *pv = v.at<float>();
        float* po = o.at<float>();
        h.launch([&] { attn_flash<<<h.grid(), h.block()>>>(pq, pk, pv, po, seq); });
        h.finish(po, seq * kD, false);
    }
}

void run_staging(const coalprof::Spec& s, coalprof::Harness& h) {
    using namespace coalprof;
    const uint64_t m = get_u64(s, "elements");
    const uint32_t ilp = get_u32(s, "ilp");
    const bool staged = get_bool(s, "staged");
    if (staged != (h.kernel() == "reuse_staged")) h.bad(s, "staged=1 goes with reuse_staged, 0 with reuse_direct");
    if (m == 0 || ilp == 0) h.bad(s, "elements and ilp must be at least 1");
    if (staged && ilp != 4) h.bad(s, "reuse_staged handles 4 items per thread (ilp=4)");
    h.require_block(s, 256, 1, 1);
    if (static_cast<uint64_t>(h.grid().x) * 256 * ilp < m) h.bad(s, "the grid does not cover the elements");
    if (h.validating) return;

    DeviceBuffer in = input_f32(4 * m, 26);
    DeviceBuffer out = output(4 * m);
    const float* pin = in.at<float>();
    float* pout = out.at<float>();
    if (staged)
        h.launch([&] { reuse_staged<<<h.grid(), h.block()>>>(pin, pout, m); });
    else
        h.launch([&] { reuse_direct<<<h.grid(), h.block()>>>(pin, pout, m, ilp); });
    h.finish(pout, m, false);
}

}  // namespace

void coalprof::run_variant(const Spec& s, Harness& h) {
    if (h.kernel() == "reuse_direct" || h.kernel() == "reuse_staged")
        run_staging(s, h);
    else
        run_attention(s, h);
}
