// Packed half-precision arithmetic (__half2) as mixed-precision kernels use it: add, sub,
// mul, fma, negation and a comparison on both lanes at once, and scalar __half math. The
// inputs are multiples of 1/8 in [-8, 8], so every exact result has at most 13 significant
// bits and the host's float arithmetic rounded once to half is the correct answer; some
// products (7.875 * 7.875 = 62.015625) fall exactly halfway between two halves and check
// round-to-nearest-even. Exits 1 on any difference.
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>

__global__ void half2_ops(const __half2 *a, const __half2 *b, const __half2 *c, __half2 *sum, __half2 *diff,
                          __half2 *prod, __half2 *fma, __half2 *neg, __half2 *gt, __half *hsum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i];  // LOAD_A
  __half2 y = b[i];
  __half2 z = c[i];
  sum[i] = __hadd2(x, y);  // STORE_SUM
  diff[i] = __hsub2(x, y);
  prod[i] = __hmul2(x, y);
  fma[i] = __hfma2(x, y, z);
  neg[i] = __hneg2(x);
  gt[i] = __hgt2(x, y);
  hsum[i] = __hlt(__low2half(x), __high2half(y)) ? __hadd(__low2half(x), __high2half(y)) : __high2half(x);
}

static float h(__half v) { return __half2float(v); }

int main() {
  const int n = 4096;
  std::vector<__half2> a(n), b(n), c(n);
  auto eighth = [](int k) { return (k % 129 - 64) / 8.0f; };
  for (int i = 0; i < n; ++i) {
    a[i] = __floats2half2_rn(eighth(i * 7 + 3), eighth(i * 5 + 11));
    b[i] = __floats2half2_rn(eighth(i * 3 + 1), eighth(i * 11 + 2));
    c[i] = __floats2half2_rn(eighth(i * 13 + 5), eighth(i + 40));
  }
  a[0] = b[0] = __floats2half2_rn(7.875f, -7.875f);  // products halfway between halves
  __half2 *d[9];
  for (auto &p : d) cudaMalloc(&p, n * sizeof(__half2));
  cudaMemcpy(d[0], a.data(), n * sizeof(__half2), cudaMemcpyHostToDevice);
  cudaMemcpy(d[1], b.data(), n * sizeof(__half2), cudaMemcpyHostToDevice);
  cudaMemcpy(d[2], c.data(), n * sizeof(__half2), cudaMemcpyHostToDevice);
  __half *hsum;
  cudaMalloc(&hsum, n * sizeof(__half));
  half2_ops<<<n / 256, 256>>>(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], hsum, n);
  std::vector<std::vector<__half2>> r(6, std::vector<__half2>(n));
  for (int k = 0; k < 6; ++k) cudaMemcpy(r[k].data(), d[3 + k], n * sizeof(__half2), cudaMemcpyDeviceToHost);
  std::vector<__half> hs(n);
  cudaMemcpy(hs.data(), hsum, n * sizeof(__half), cudaMemcpyDeviceToHost);
  const char *names[6] = {"__hadd2", "__hsub2", "__hmul2", "__hfma2", "__hneg2", "__hgt2"};
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    // .x is the low lane, .y the high one.
    float x[2] = {h(a[i].x), h(a[i].y)};
    float y[2] = {h(b[i].x), h(b[i].y)};
    float z[2] = {h(c[i].x), h(c[i].y)};
    for (int l = 0; l < 2; ++l) {
      float want[6] = {x[l] + y[l], x[l] - y[l], x[l] * y[l], x[l] * y[l] + z[l], -x[l], x[l] > y[l] ? 1.0f : 0.0f};
      for (int k = 0; k < 6; ++k) {
        float got = h(l == 0 ? r[k][i].x : r[k][i].y);
        if (got != h(__float2half_rn(want[k]))) {
          if (bad++ < 10)
            std::fprintf(stderr, "%s lane %d of element %d: %g, want %g\n", names[k], l, i, got,
                         h(__float2half_rn(want[k])));
        }
      }
    }
    float want = x[0] < y[1] ? x[0] + y[1] : x[1];
    if (h(hs[i]) != h(__float2half_rn(want)) && bad++ < 10)
      std::fprintf(stderr, "scalar half %d: %g, want %g\n", i, h(hs[i]), want);
  }
  if (bad) {
    std::fprintf(stderr, "half2_arith: %d wrong results\n", bad);
    return 1;
  }
  std::printf("half2_arith: correct\n");
  return 0;
}
