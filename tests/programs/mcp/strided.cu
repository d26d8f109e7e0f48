// A copy whose load walks `in` with a stride read from the command line, and whose store is
// coalesced: tests/it/mcp.rs runs it through `coalprof mcp`'s profile_sim tool (THREADS comes
// from an nvcc argument, the stride from a program argument) and derives its sectors from the
// addresses below.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef THREADS
#define THREADS 1024
#endif

__global__ void strided_read(const float *in, float *out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[static_cast<size_t>(i) * stride]; // STRIDED
}

int main(int argc, char **argv) {
    const int n = THREADS, block = 128;
    const int stride = argc > 1 ? atoi(argv[1]) : 1;
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * n * stride);
    cudaMalloc(&out, sizeof(float) * n);
    cudaMemset(in, 0, sizeof(float) * n * stride);
    strided_read<<<n / block, block>>>(in, out, n, stride);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "strided_read: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaFree(in);
    cudaFree(out);
    return 0;
}
