// bf16 arithmetic as sm_80+ PTX writes it (`fma.rn.bf16`, `fma.rn.bf16x2`, `cvt.rn.bf16.f32`,
// `cvt.rn.bf16x2.f32`; and, as inline PTX, `cvt.f32.bf16`, `cvt.rz.bf16.f32`, `min.bf16`,
// `neg.bf16`, `abs.bf16`, `max.bf16x2`, `cvt.rn.f16x2.f32`): built for compute_80 by hand (coalprof builds for sm_70, where CUDA
// 11.8 offers no bf16 arithmetic) and run with `profile --backend sim -- ./bf16_sm80`. The
// inputs are multiples of 1/4 whose sums and products fit bf16's 8 significant bits or round
// once, so the host's float result rounded to bf16 is the answer. Exits 1 on a difference.
#include <cuda_bf16.h>
#include <cmath>
#include <cstdio>
#include <cstring>

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

// The rest of sm_80's bf16 PTX, on raw bits: bf16 in unsigned short, pairs in unsigned.
__global__ void bf16_asm(const unsigned short *h, const unsigned *pairs, const float *f, float *wide,
                         unsigned short *out, unsigned *out2) {
  int i = threadIdx.x;
  float w;
  unsigned short r;
  unsigned q;
  asm("cvt.f32.bf16 %0, %1;" : "=f"(w) : "h"(h[i]));
  wide[i] = w;
  asm("min.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[i]), "h"(h[i + 1]));
  out[i] = r;
  asm("neg.bf16 %0, %1;" : "=h"(r) : "h"(h[i]));
  out[i + 32] = r;
  asm("abs.bf16 %0, %1;" : "=h"(r) : "h"(h[i]));
  out[i + 64] = r;
  asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(r) : "f"(f[i]));
  out[i + 96] = r;
  asm("max.bf16x2 %0, %1, %2;" : "=r"(q) : "r"(pairs[i]), "r"(pairs[i + 1]));
  out2[i] = q;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(q) : "f"(f[i]), "f"(-2.0f));  // high, low
  out2[i + 32] = q;
}

static float r(float x) { return __bfloat162float(__float2bfloat16(x)); }
static unsigned short bits(float x) {  // the bf16 of x, truncated (exact for the values used)
  unsigned u;
  std::memcpy(&u, &x, sizeof u);
  return static_cast<unsigned short>(u >> 16);
}
static float value(unsigned short b) {
  unsigned u = static_cast<unsigned>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

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
  // The inline PTX: h[i] = i - 10.5 (exact in bf16), pairs of (20 - i, i).
  unsigned short hh[n + 1];
  unsigned hq[n + 1];
  for (int i = 0; i <= n; ++i) {
    hh[i] = bits(i - 10.5f);
    hq[i] = (static_cast<unsigned>(bits(1.0f * i)) << 16) | bits(20.0f - i);
  }
  unsigned short *dh, *o16;
  unsigned *dq, *o32;
  float *wide;
  cudaMalloc(&dh, sizeof hh);
  cudaMalloc(&dq, sizeof hq);
  cudaMalloc(&wide, n * sizeof(float));
  cudaMalloc(&o16, 4 * n * sizeof(unsigned short));
  cudaMalloc(&o32, 2 * n * sizeof(unsigned));
  cudaMemcpy(dh, hh, sizeof hh, cudaMemcpyHostToDevice);
  cudaMemcpy(dq, hq, sizeof hq, cudaMemcpyHostToDevice);
  bf16_asm<<<1, n>>>(dh, dq, f, wide, o16, o32);
  float hw[n];
  unsigned short r16[4 * n];
  unsigned r32[2 * n];
  cudaMemcpy(hw, wide, sizeof hw, cudaMemcpyDeviceToHost);
  cudaMemcpy(r16, o16, sizeof r16, cudaMemcpyDeviceToHost);
  cudaMemcpy(r32, o32, sizeof r32, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    float x = value(hh[i]), y = value(hh[i + 1]);
    // cvt.f32.bf16, min, neg, abs, and cvt.rz (truncation, as bits() does).
    float got[5] = {hw[i], value(r16[i]), value(r16[i + 32]), value(r16[i + 64]), value(r16[i + 96])};
    float want[5] = {x, std::fmin(x, y), -x, std::fabs(x), value(bits(hf[i]))};
    for (int k = 0; k < 5; ++k)
      if (got[k] != want[k] && bad++ < 8) std::fprintf(stderr, "asm %d, element %d: %g, want %g\n", k, i, got[k], want[k]);
    unsigned mx = (static_cast<unsigned>(bits(std::fmax(1.0f * i, 1.0f * i + 1))) << 16) |
                  bits(std::fmax(20.0f - i, 19.0f - i));
    if (r32[i] != mx && bad++ < 8) std::fprintf(stderr, "max.bf16x2 %d: %08x, want %08x\n", i, r32[i], mx);
  }
  // cvt.rn.f16x2.f32 d, a, b: a to the high half; hf[3] = 3.75 is 0x4380 in f16, -2.0 0xC000.
  if (r32[32 + 3] != 0x4380C000u && bad++ < 8) std::fprintf(stderr, "cvt.rn.f16x2.f32: %08x\n", r32[32 + 3]);
  if (bad) {
    std::fprintf(stderr, "bf16_sm80: %d wrong results\n", bad);
    return 1;
  }
  std::printf("bf16_sm80: correct\n");
  return 0;
}
