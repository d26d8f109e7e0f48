// A program whose PTX holds a kernel it never launches, written with libcu++ atomics and their
// memory orders (acq_rel read-modify-writes, acquire loads, release stores, fences): the
// simulator parses the whole PTX at start, so the qualifiers must parse even though only the
// plain histogram below runs. The histogram itself uses a relaxed atomic_ref, launched.
#include <cuda/atomic>
#include <cstdio>

// A ticket lock's handoff, as a producer/consumer kernel would write it. Never launched.
__global__ void handoff(int *flag, int *data, int *tickets) {
  cuda::atomic_ref<int, cuda::thread_scope_device> ticket(*tickets);
  int mine = ticket.fetch_add(1, cuda::memory_order_acq_rel);
  cuda::atomic_ref<int, cuda::thread_scope_device> ready(*flag);
  if (mine == 0) {
    data[0] = 42;
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
    ready.store(1, cuda::memory_order_release);
  } else {
    while (ready.load(cuda::memory_order_acquire) == 0) {
    }
    data[mine] = data[0];
  }
}

// Launched: a 16-bin histogram with relaxed device-scope atomics.
__global__ void histogram16(const int *keys, int *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuda::atomic_ref<int, cuda::thread_scope_device> bin(bins[keys[i] & 15]);
    bin.fetch_add(1, cuda::memory_order_relaxed);
  }
}

int main() {
  const int n = 2048;
  int *h = new int[n];
  for (int i = 0; i < n; ++i) h[i] = i * 5;
  int *keys, *bins;
  cudaMalloc(&keys, n * sizeof(int));
  cudaMalloc(&bins, 16 * sizeof(int));
  cudaMemcpy(keys, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(bins, 0, 16 * sizeof(int));
  histogram16<<<n / 256, 256>>>(keys, bins, n);
  int got[16];
  cudaMemcpy(got, bins, sizeof got, cudaMemcpyDeviceToHost);
  int want[16] = {};
  for (int i = 0; i < n; ++i) want[(i * 5) & 15]++;
  for (int b = 0; b < 16; ++b) {
    if (got[b] != want[b]) {
      std::fprintf(stderr, "bin %d: got %d, want %d\n", b, got[b], want[b]);
      return 1;
    }
  }
  std::printf("acq_rel_unlaunched: histogram correct\n");
  delete[] h;
  return 0;
}
