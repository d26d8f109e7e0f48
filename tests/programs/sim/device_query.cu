// What a cuda-samples style program does before its kernels: pick the device with the most
// SM·clock among those not prohibited (the computeMode, major/minor, SM count and clock
// attributes), read its properties, then profile one kernel between cudaProfilerStart/Stop.
#include <cuda_profiler_api.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorString(err_));                                        \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

static int pick_device() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  int best = -1;
  long long best_perf = -1;
  for (int d = 0; d < count; ++d) {
    int mode, major, minor, sms, clock_khz;
    CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d));
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
    if (mode == cudaComputeModeProhibited) continue;
    long long perf = static_cast<long long>(sms) * clock_khz;
    if (perf > best_perf) {
      best_perf = perf;
      best = d;
    }
    std::printf("device %d: sm_%d%d, %d SMs at %d kHz\n", d, major, minor, sms, clock_khz);
  }
  return best;
}

// Every other float: a warp's 32 loads span 256 bytes, 8 sectors per request.
__global__ void every_other(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[2 * i];  // EVERY_OTHER
}

int main() {
  int dev = pick_device();
  if (dev < 0) {
    std::fprintf(stderr, "no usable device\n");
    return 1;
  }
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  int attrs[] = {cudaDevAttrMaxSharedMemoryPerBlockOptin, cudaDevAttrMaxBlocksPerMultiprocessor,
                 cudaDevAttrL2CacheSize, cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth,
                 cudaDevAttrCooperativeLaunch, cudaDevAttrManagedMemory, cudaDevAttrUnifiedAddressing};
  for (int a : attrs) {
    int v;
    CHECK(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(a), dev));
  }
  std::printf("%s: sm_%d%d, warp %d, %zu B shared per block (%zu opt-in), L2 %d B, bus %d bit\n",
              prop.name, prop.major, prop.minor, prop.warpSize, prop.sharedMemPerBlock,
              prop.sharedMemPerBlockOptin, prop.l2CacheSize, prop.memoryBusWidth);
  if (prop.major < 7 || prop.warpSize != 32 || prop.l2CacheSize <= 0 || prop.memoryBusWidth <= 0) {
    std::fprintf(stderr, "unexpected device properties\n");
    return 1;
  }

  const int n = 4096;
  float *in, *out;
  CHECK(cudaMalloc(&in, 2 * n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  float *h = new float[2 * n];
  for (int i = 0; i < 2 * n; ++i) h[i] = static_cast<float>(i);
  CHECK(cudaMemcpy(in, h, 2 * n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaProfilerStart());
  every_other<<<n / 256, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaProfilerStop());
  CHECK(cudaMemcpy(h, out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    if (h[i] != 2.0f * i) {
      std::fprintf(stderr, "out[%d] = %f\n", i, h[i]);
      return 1;
    }
  }
  std::printf("device_query: done\n");
  delete[] h;
  return 0;
}
