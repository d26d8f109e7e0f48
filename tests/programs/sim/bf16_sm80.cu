// bf16 arithmetic as sm_80+ PTX writes it (`fma.rn.bf16`, `fma.rn.bf16x2`, `cvt.rn.bf16.f32`,
// `cvt.rn.bf16x2.f32`): built for compute_80 by hand (coalprof builds for sm_70, where CUDA
// 11.8 offers no bf16 arithmetic) and run with `profile --backend sim -- ./bf16_sm80`. The
// inputs are multiples of 1/4 whose sums and products fit bf16's 8 significant bits or round
// once, so the host's float result rounded to bf16 is the answer. Exits 1 on a difference.
#include <cuda_bf16.h>
#include <cstdio>

using bf16 = __nv_bfloat16;

__global__ void bf16_ops(const bf16 *a, const bf16 *b, const float *f, bf16 *out, __nv_bfloat162 *pairs) {
  int i = threadIdx.x;
  out[i] = __hadd(a[i], b[i]);           // fma.rn.bf16 with 1.0
  out[i + 32] = __hmul(a[i], b[i]);      // fma.rn.bf16 with -0.0
  out[i + 64] = __hfma(a[i], b[i], a[i]);
  out[i + 96] = __float2bfloat16(f[i] * 3.0f);  // cvt.rn.bf16.f32
  __nv_bfloat162 p = __floats2bfloat162_rn(f[i], -0.5f * f[i]);  // cvt.rn.bf16x2.f32
  pairs[i] = p;
  pairs[i + 32] = __hmul2(p, __floats2bfloat162_rn(2.0f, 4.0f));  // fma.rn.bf16x2
}

static float r(float x) { return __bfloat162float(__float2bfloat16(x)); }

int main() {
  const int n = 32;
  bf16 ha[n], hb[n];
  float hf[n];
  for (int i = 0; i < n; ++i) {
    ha[i] = __float2bfloat16(0.75f * i - 3.0f);
    hb[i] = __float2bfloat16(1.5f - 0.25f * i);
    hf[i] = 1.25f * i + 0.0078125f * (i % 3);
  }
  bf16 *a, *b, *out;
  float *f;
  __nv_bfloat162 *pairs;
  cudaMalloc(&a, n * sizeof(bf16));
  cudaMalloc(&b, n * sizeof(bf16));
  cudaMalloc(&f, n * sizeof(float));
  cudaMalloc(&out, 4 * n * sizeof(bf16));
  cudaMalloc(&pairs, 2 * n * sizeof(__nv_bfloat162));
  cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice);
  cudaMemcpy(f, hf, sizeof hf, cudaMemcpyHostToDevice);
  bf16_ops<<<1, n>>>(a, b, f, out, pairs);
  bf16 ho[4 * n];
  __nv_bfloat162 hp[2 * n];
  cudaMemcpy(ho, out, sizeof ho, cudaMemcpyDeviceToHost);
  cudaMemcpy(hp, pairs, sizeof hp, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float x = __bfloat162float(ha[i]), y = __bfloat162float(hb[i]);
    float want[4] = {r(x + y), r(x * y), r(x * y + x), r(hf[i] * 3.0f)};
    for (int k = 0; k < 4; ++k) {
      float got = __bfloat162float(ho[i + n * k]);
      if (got != want[k] && bad++ < 8) std::fprintf(stderr, "op %d, element %d: %g, want %g\n", k, i, got, want[k]);
    }
    // .x is the low half: cvt.rn.bf16x2.f32 d, hi, lo.
    float lo = r(hf[i]), hi = r(-0.5f * hf[i]);
    float got[4] = {__bfloat162float(hp[i].x), __bfloat162float(hp[i].y), __bfloat162float(hp[i + n].x),
                    __bfloat162float(hp[i + n].y)};
    float expect[4] = {lo, hi, r(2.0f * lo), r(4.0f * hi)};
    for (int k = 0; k < 4; ++k)
      if (got[k] != expect[k] && bad++ < 8) std::fprintf(stderr, "pair %d of %d: %g, want %g\n", k, i, got[k], expect[k]);
  }
  if (bad) {
    std::fprintf(stderr, "bf16_sm80: %d wrong results\n", bad);
    return 1;
  }
  std::printf("bf16_sm80: correct\n");
  return 0;
}
