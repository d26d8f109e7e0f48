// Two transformer kernels in the style of LLM training code (bf16 activations, fp32 math):
// a layernorm forward, one warp per row, and a tanh-approximated GELU. Both move their
// bf16 data 128 bits at a time through a small vector type built on int4, with the
// streaming hints (__ldcs/__stcs) such code uses, and reduce across a warp with
// cooperative-groups tiles and __shfl_xor_sync. The host recomputes everything in fp32
// from the same bf16 inputs and exits 1 on a mismatch.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_bf16.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace cg = cooperative_groups;
using bf16 = __nv_bfloat16;

// Eight bf16 values in one 16-byte register group: loaded and stored as an int4.
struct alignas(16) Bf16x8 {
  bf16 lane[8];
  __device__ static Bf16x8 from_bits(int4 bits) {
    Bf16x8 v;
    memcpy(&v, &bits, sizeof bits);
    return v;
  }
  __device__ int4 bits() const {
    int4 b;
    memcpy(&b, this, sizeof b);
    return b;
  }
};

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

constexpr int C = 512;                 // channels per row
constexpr int CHUNKS = C / (32 * 8);   // 128-bit chunks per lane and row

// out = (x - mean) * rstd * weight + bias, row by row; mean and rstd kept for backward.
__global__ void layernorm_forward(bf16 *out, float *mean, float *rstd, const bf16 *inp, const bf16 *weight,
                                  const bf16 *bias, int rows) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= rows) return;
  const bf16 *x = inp + row * C;
  float v[CHUNKS][8];
  float sum = 0.0f;
  for (int k = 0; k < CHUNKS; ++k) {
    int c = (k * 32 + warp.thread_rank()) * 8;
    Bf16x8 in = Bf16x8::from_bits(__ldcs(reinterpret_cast<const int4 *>(x + c)));  // LN_LOAD_X
    for (int i = 0; i < 8; ++i) {
      v[k][i] = __bfloat162float(in.lane[i]);
      sum += v[k][i];
    }
  }
  float m = cg::reduce(warp, sum, cg::plus<float>()) / C;
  float sq = 0.0f;
  for (int k = 0; k < CHUNKS; ++k)
    for (int i = 0; i < 8; ++i) sq += (v[k][i] - m) * (v[k][i] - m);
  float s = rsqrtf(warp_sum(sq) / C + 1e-5f);
  for (int k = 0; k < CHUNKS; ++k) {
    int c = (k * 32 + warp.thread_rank()) * 8;
    Bf16x8 w = Bf16x8::from_bits(*reinterpret_cast<const int4 *>(weight + c));  // LN_LOAD_W
    Bf16x8 b = Bf16x8::from_bits(*reinterpret_cast<const int4 *>(bias + c));  // LN_LOAD_B
    Bf16x8 o;
    for (int i = 0; i < 8; ++i) {
      float n = (v[k][i] - m) * s;
      o.lane[i] = __float2bfloat16(n * __bfloat162float(w.lane[i]) + __bfloat162float(b.lane[i]));
    }
    __stcs(reinterpret_cast<int4 *>(out + row * C + c), o.bits());  // LN_STORE_OUT
  }
  if (warp.thread_rank() == 0) {
    __stcs(mean + row, m);  // LN_STORE_MEAN
    __stcs(rstd + row, s);  // LN_STORE_RSTD
  }
}

__host__ __device__ float gelu_tanh(float x) {
  const float k = 0.7978845608f;  // sqrt(2/pi)
  float cube = 0.044715f * x * x * x;
  return 0.5f * x * (1.0f + tanhf(k * (x + cube)));
}

// Eight elements a thread, one 128-bit load and store each.
__global__ void gelu_forward(bf16 *out, const bf16 *inp, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (i >= n) return;
  Bf16x8 in = Bf16x8::from_bits(__ldcs(reinterpret_cast<const int4 *>(inp + i)));  // GELU_LOAD
  Bf16x8 o;
  for (int j = 0; j < 8; ++j) o.lane[j] = __float2bfloat16(gelu_tanh(__bfloat162float(in.lane[j])));
  __stcs(reinterpret_cast<int4 *>(out + i), o.bits());  // GELU_STORE
}

static bool close(float got, float want, float tol) { return std::fabs(got - want) <= tol * (1.0f + std::fabs(want)); }

int main() {
  const int rows = 64, n = rows * C;
  std::vector<bf16> x(n), w(C), b(C);
  for (int i = 0; i < n; ++i) x[i] = __float2bfloat16(std::sin(0.37f * i) * 2.0f + 0.25f * (i % 7));
  for (int c = 0; c < C; ++c) {
    w[c] = __float2bfloat16(1.0f + 0.01f * (c % 13));
    b[c] = __float2bfloat16(0.05f * ((c % 5) - 2));
  }
  bf16 *dx, *dw, *db, *dout, *dgelu;
  float *dmean, *drstd;
  cudaMalloc(&dx, n * sizeof(bf16));
  cudaMalloc(&dw, C * sizeof(bf16));
  cudaMalloc(&db, C * sizeof(bf16));
  cudaMalloc(&dout, n * sizeof(bf16));
  cudaMalloc(&dgelu, n * sizeof(bf16));
  cudaMalloc(&dmean, rows * sizeof(float));
  cudaMalloc(&drstd, rows * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(bf16), cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w.data(), C * sizeof(bf16), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), C * sizeof(bf16), cudaMemcpyHostToDevice);
  const int block = 256, rows_per_block = block / 32;
  layernorm_forward<<<rows / rows_per_block, block>>>(dout, dmean, drstd, dx, dw, db, rows);
  gelu_forward<<<n / 8 / block, block>>>(dgelu, dx, n);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "llm_bf16: a kernel failed\n");
    return 1;
  }
  std::vector<bf16> out(n), gelu(n);
  std::vector<float> mean(rows), rstd(rows);
  cudaMemcpy(out.data(), dout, n * sizeof(bf16), cudaMemcpyDeviceToHost);
  cudaMemcpy(gelu.data(), dgelu, n * sizeof(bf16), cudaMemcpyDeviceToHost);
  cudaMemcpy(mean.data(), dmean, rows * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(rstd.data(), drstd, rows * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += __bfloat162float(x[r * C + c]);
    m /= C;
    for (int c = 0; c < C; ++c) v += (__bfloat162float(x[r * C + c]) - m) * (__bfloat162float(x[r * C + c]) - m);
    float s = 1.0f / std::sqrt(static_cast<float>(v / C) + 1e-5f);
    if (!close(mean[r], m, 1e-4f) || !close(rstd[r], s, 1e-4f)) {
      if (bad++ < 5) std::fprintf(stderr, "row %d: mean %f rstd %f, want %f %f\n", r, mean[r], rstd[r], m, s);
    }
    for (int c = 0; c < C; ++c) {
      float want = (__bfloat162float(x[r * C + c]) - m) * s * __bfloat162float(w[c]) + __bfloat162float(b[c]);
      // bf16 keeps 8 significant bits: two units in the last place of slack.
      if (!close(__bfloat162float(out[r * C + c]), want, 1.0f / 64)) {
        if (bad++ < 5) std::fprintf(stderr, "out[%d][%d] = %f, want %f\n", r, c, __bfloat162float(out[r * C + c]), want);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    float want = gelu_tanh(__bfloat162float(x[i]));
    if (!close(__bfloat162float(gelu[i]), want, 1.0f / 64)) {
      if (bad++ < 10) std::fprintf(stderr, "gelu[%d] = %f, want %f\n", i, __bfloat162float(gelu[i]), want);
    }
  }
  if (bad) {
    std::fprintf(stderr, "llm_bf16: %d mismatches\n", bad);
    return 1;
  }
  std::printf("llm_bf16: correct\n");
  return 0;
}
