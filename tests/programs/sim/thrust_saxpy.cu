// y = a·x + y and its sum with Thrust, as host code written against device_vector does it.
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>
#include <cstdio>

struct saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

int main() {
  const int n = 4096;
  thrust::device_vector<float> x(n);
  thrust::device_vector<float> y(n, 1.0f);
  thrust::sequence(x.begin(), x.end());
  thrust::transform(x.begin(), x.end(), y.begin(), y.begin(), saxpy{2.0f});
  float sum = thrust::reduce(y.begin(), y.end(), 0.0f);

  thrust::host_vector<float> h = y;
  for (int i = 0; i < n; ++i) {
    if (h[i] != 2.0f * i + 1.0f) {
      std::fprintf(stderr, "y[%d] = %f, want %f\n", i, h[i], 2.0f * i + 1.0f);
      return 1;
    }
  }
  // Σ (2i + 1) for i < n is n², exact in float for n = 4096 (2^24).
  const float want = static_cast<float>(n) * n;
  if (sum != want) {
    std::fprintf(stderr, "sum = %f, want %f\n", sum, want);
    return 1;
  }
  std::printf("thrust_saxpy: %d elements and their sum correct\n", n);
  return 0;
}
