// column — sums of a row-major rows x cols fp32 matrix, one thread per output, blocks of 256
// (spec.rs `Sums`): along rows, lanes are a row apart (uncoalesced, 32 sectors per request);
// along columns, lanes read consecutive words (coalesced, 4 sectors per request).
#include "common.cuh"

// Thread i = blockIdx.x * blockDim.x + threadIdx.x sums row i: a[i * cols + c], c = 0..cols.
extern "C" __global__ void row_sums(const float* __restrict__ a, float* __restrict__ out, uint64_t rows, uint64_t cols) {
    const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float* __restrict__ row = a + i * cols;
    float acc = 0.0f;
#pragma unroll 8
    for (uint64_t c = 0; c < cols; ++c) acc += row[c];
    out[i] = acc;
}

// Thread i sums column i: a[r * cols + i], r = 0..rows.
extern "C" __global__ void column_sums(const float* __restrict__ a, float* __restrict__ out, uint64_t rows,
                                       uint64_t cols) {
    const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= cols) return;
    const float* __restrict__ col = a + i;
    float acc = 0.0f;
#pragma unroll 8
    for (uint64_t r = 0; r < rows; ++r) acc += col[r * cols];
    out[i] = acc;
}

const coalprof::PatternInfo coalprof::kPattern = {"column", {"row_sums", "column_sums", nullptr}};

void coalprof::run_variant(const Spec& s, Harness& h) {
    const bool along_rows = get_bool(s, "along_rows");
    const uint64_t rows = get_u64(s, "rows");
    const uint64_t cols = get_u64(s, "cols");
    if (along_rows != (h.kernel() == "row_sums")) h.bad(s, "along_rows=1 goes with row_sums, 0 with column_sums");
    if (rows == 0 || cols == 0) h.bad(s, "rows and cols must be at least 1");
    if (h.validating) return;

    DeviceBuffer a = input_f32(4 * rows * cols, 8);
    const uint64_t n = along_rows ? rows : cols;
    DeviceBuffer out = output(4 * n);
    const float* pa = a.at<float>();
    float* pout = out.at<float>();
    if (along_rows)
        h.launch([&] { row_sums<<<h.grid(), h.block()>>>(pa, pout, rows, cols); });
    else
        h.launch([&] { column_sums<<<h.grid(), h.block()>>>(pa, pout, rows, cols); });
    h.finish(pout, n, false);
}
