// Streaming accesses as bandwidth-bound kernels write them: loads and stores with the
// evict-first hint (__ldcs/__stcs), and 128-bit accesses through a float4 reinterpret_cast.
#include <cstdio>
#include <vector>

// One float per thread, streamed: a warp's 32 loads are 128 contiguous bytes, 4 sectors.
__global__ void scale_streaming(const float *in, float *out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = __ldcs(in + i);  // LDCS
    __stcs(out + i, a * v);    // STCS
  }
}

// Four floats per thread through float4: a warp's loads are 512 contiguous bytes, 16 sectors
// in one request.
__global__ void scale_vec4(const float *in, float *out, float a, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4 *>(in)[i];  // LOAD4
    v.x *= a;
    v.y *= a;
    v.z *= a;
    v.w *= a;
    reinterpret_cast<float4 *>(out)[i] = v;  // STORE4
  }
}

int main() {
  const int n = 8192;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 100);
  float *in, *out1, *out2;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out1, n * sizeof(float));
  cudaMalloc(&out2, n * sizeof(float));
  cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  scale_streaming<<<n / 256, 256>>>(in, out1, 3.0f, n);
  scale_vec4<<<n / 4 / 256, 256>>>(in, out2, 3.0f, n / 4);
  std::vector<float> r1(n), r2(n);
  cudaMemcpy(r1.data(), out1, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(r2.data(), out2, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    if (r1[i] != 3.0f * h[i] || r2[i] != 3.0f * h[i]) {
      std::fprintf(stderr, "element %d: %f %f, want %f\n", i, r1[i], r2[i], 3.0f * h[i]);
      return 1;
    }
  }
  std::printf("streaming_float4: correct\n");
  cudaFree(in);
  cudaFree(out1);
  cudaFree(out2);
  return 0;
}
