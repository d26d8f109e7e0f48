// A strided and a coalesced copy, the smallest program `coalprof profile --backend sim` tells
// apart without a GPU (see README.md beside this file):
//
//   .tools/cuda11/bin/nvcc -ccbin g++-11 -cudart shared -arch=sm_70 -lineinfo -o app examples/sim/app.cu
//   coalprof profile --backend sim -- ./app
//   coalprof lines profiles/<the run it saved>
#include <cuda_runtime.h>

#include <cstdio>

// Elements per copy: `--nvcc-arg=-DN=131072` for a bigger run (a multiple of 128).
#ifndef N
#define N 4096
#endif

// Lane i reads word i: a warp's 32 loads fall in 4 sectors of 32 bytes.
__global__ void coalesced_copy(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Lane i reads word i * stride: at a stride of 8 floats or more every lane has a sector of its own.
__global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[static_cast<size_t>(i) * stride];
}

static int check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) std::fprintf(stderr, "error: %s failed (CUDA error %d)\n", what, static_cast<int>(e));
    return e != cudaSuccess;
}

int main() {
    const int n = N, stride = 32, threads = 128;
    float *in = nullptr, *out = nullptr;
    if (check(cudaMalloc(&in, sizeof(float) * n * stride), "cudaMalloc") ||
        check(cudaMalloc(&out, sizeof(float) * n), "cudaMalloc") ||
        check(cudaMemset(in, 0, sizeof(float) * n * stride), "cudaMemset"))
        return 1;
    coalesced_copy<<<n / threads, threads>>>(in, out, n);
    strided_copy<<<n / threads, threads>>>(in, out, n, stride);
    if (check(cudaDeviceSynchronize(), "the kernels")) return 1;
    std::printf("copied %d floats twice\n", n);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
