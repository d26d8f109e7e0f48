// A block-wide sum written with cooperative groups, as CUDA code written since CUDA 11 does it:
// warp tiles reduce with cg::reduce (shuffles, no memory), lane 0 of each tile parks its partial
// in shared memory, the block syncs, and the first tile reduces the partials.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

__global__ void block_sum(const float *in, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ float partial[kWarps];

  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;                      // LOAD_IN
  float warp_sum = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) {
    partial[tile.meta_group_rank()] = warp_sum;         // STORE_PARTIAL
  }
  block.sync();
  if (tile.meta_group_rank() == 0) {
    float p = tile.thread_rank() < kWarps ? partial[tile.thread_rank()] : 0.0f;  // LOAD_PARTIAL
    float total = cg::reduce(tile, p, cg::plus<float>());
    if (tile.thread_rank() == 0) {
      out[blockIdx.x] = total;                          // STORE_OUT
    }
  }
}

int main() {
  const int n = 1 << 14;
  const int blocks = n / kBlock;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 7);
  float *d_in, *d_out;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, blocks * sizeof(float));
  cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  block_sum<<<blocks, kBlock>>>(d_in, d_out, n);
  std::vector<float> sums(blocks);
  cudaMemcpy(sums.data(), d_out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b) {
    float want = 0;
    for (int j = 0; j < kBlock; ++j) want += h[b * kBlock + j];
    if (sums[b] != want) {
      std::fprintf(stderr, "block %d: got %f, want %f\n", b, sums[b], want);
      return 1;
    }
  }
  std::printf("cg_reduce: %d block sums correct\n", blocks);
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
