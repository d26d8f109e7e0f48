// One source with 216 kernel instantiations, as header-only libraries and tuned kernels
// produce them (a kernel per element type, stride and unroll factor): the simulator parses
// every one at start. Three of them run.
#include <cstdio>
#include <utility>

template <typename T, int Stride, int Unroll>
__global__ void gather(const T *in, T *out, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * Unroll;
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    int j = i + u;
    if (j < n) out[j] = in[static_cast<long>(j) * Stride];  // GATHER
  }
}

// Every (type, stride, unroll) for strides 1..18 and unrolls 1, 2, 4: 4 × 18 × 3 = 216.
template <typename T, int... S>
void instantiate(std::integer_sequence<int, S...>) {
  static void *kernels[] = {(void *)gather<T, S + 1, 1>..., (void *)gather<T, S + 1, 2>...,
                            (void *)gather<T, S + 1, 4>...};
  (void)kernels;
}

template <typename T, int Stride>
bool check(int n) {
  T *h = new T[n * Stride];
  for (int i = 0; i < n * Stride; ++i) h[i] = static_cast<T>(i % 97);
  T *in, *out;
  cudaMalloc(&in, n * Stride * sizeof(T));
  cudaMalloc(&out, n * sizeof(T));
  cudaMemcpy(in, h, n * Stride * sizeof(T), cudaMemcpyHostToDevice);
  gather<T, Stride, 1><<<n / 128, 128>>>(in, out, n);
  T *r = new T[n];
  cudaMemcpy(r, out, n * sizeof(T), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && r[i] == h[i * Stride];
  cudaFree(in);
  cudaFree(out);
  delete[] h;
  delete[] r;
  return ok;
}

int main() {
  instantiate<float>(std::make_integer_sequence<int, 18>{});
  instantiate<double>(std::make_integer_sequence<int, 18>{});
  instantiate<int>(std::make_integer_sequence<int, 18>{});
  instantiate<short>(std::make_integer_sequence<int, 18>{});
  const int n = 2048;
  if (!check<float, 1>(n) || !check<float, 2>(n) || !check<double, 4>(n)) {
    std::fprintf(stderr, "a gather is wrong\n");
    return 1;
  }
  std::printf("many_templates: correct\n");
  return 0;
}
