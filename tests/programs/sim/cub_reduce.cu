// Sums with CUB the two ways CUDA code uses it: inside a kernel (BlockLoad into registers,
// BlockReduce through shared memory) and from the host (DeviceReduce::Sum, asked first for
// the size of its temporary storage, then run with it).
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cstdio>
#include <vector>

constexpr int kThreads = 128;
constexpr int kItems = 4;
constexpr int kTile = kThreads * kItems;

__global__ void tile_sums(const int *in, int *out) {
  using Load = cub::BlockLoad<int, kThreads, kItems, cub::BLOCK_LOAD_DIRECT>;
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage reduce_storage;

  int items[kItems];
  Load().Load(in + blockIdx.x * kTile, items);  // LOAD_TILE
  int sum = Reduce(reduce_storage).Sum(items);   // REDUCE
  if (threadIdx.x == 0) {
    out[blockIdx.x] = sum;  // STORE_OUT
  }
}

int main() {
  const int tiles = 16;
  const int n = tiles * kTile;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % 13 - 6;
  int *d_in, *d_tiles, *d_total;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_tiles, tiles * sizeof(int));
  cudaMalloc(&d_total, sizeof(int));
  cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);

  tile_sums<<<tiles, kThreads>>>(d_in, d_tiles);

  // The device-wide sum of the tile sums: the size query, then the reduction.
  void *temp = nullptr;
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(temp, temp_bytes, d_tiles, d_total, tiles);
  cudaMalloc(&temp, temp_bytes);
  cub::DeviceReduce::Sum(temp, temp_bytes, d_tiles, d_total, tiles);

  std::vector<int> got(tiles);
  int total = 0;
  cudaMemcpy(got.data(), d_tiles, tiles * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(&total, d_total, sizeof(int), cudaMemcpyDeviceToHost);
  int want_total = 0;
  for (int t = 0; t < tiles; ++t) {
    int want = 0;
    for (int j = 0; j < kTile; ++j) want += h[t * kTile + j];
    want_total += want;
    if (got[t] != want) {
      std::fprintf(stderr, "tile %d: got %d, want %d\n", t, got[t], want);
      return 1;
    }
  }
  if (total != want_total) {
    std::fprintf(stderr, "DeviceReduce::Sum: got %d, want %d\n", total, want_total);
    return 1;
  }
  std::printf("cub_reduce: %d tile sums and their total (%d) correct\n", tiles, total);
  cudaFree(temp);
  cudaFree(d_in);
  cudaFree(d_tiles);
  cudaFree(d_total);
  return 0;
}
