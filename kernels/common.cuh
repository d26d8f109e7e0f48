// common.cuh — the harness every pattern executable shares (see kernels/README.md).
//
// A pattern file (`<pattern>.cu`) includes this header once and defines exactly two things:
//
//   const coalprof::PatternInfo coalprof::kPattern = {"stride", {"stride_copy", nullptr}};
//   void coalprof::run_variant(const coalprof::Spec& s, coalprof::Harness& h);
//
// `main` (below) parses the arguments, calls `run_variant` once per variant with
// `h.validating == true` (read every key, check it, return: argument errors exit 2 before the
// CUDA runtime is touched), then initialises CUDA and calls `run_variant` again for real.
// A real run allocates and initialises its buffers (kernels named `coalprof_init_*`, which
// coalprof's ncu filter skips), calls `h.launch(...)` once (exactly one launch of the measured
// kernel, or warm-up + timed repeats with `--time`), then `h.finish(...)` which computes the
// checksum on the device and writes the manifest line. Buffers are freed when they go out of
// scope.
//
// Exit codes: 2 bad arguments, 3 a CUDA error (the failing call and cudaGetErrorName).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#define COALPROF_EXIT_ARGS 2
#define COALPROF_EXIT_CUDA 3

// Checks a CUDA runtime call; on failure prints the call, the error's name and message, exits 3.
#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        cudaError_t coalprof_err_ = (call);                                                     \
        if (coalprof_err_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "error: CUDA call `%s` failed at %s:%d: %s (%s)\n", #call,     \
                         __FILE__, __LINE__, cudaGetErrorName(coalprof_err_),                   \
                         cudaGetErrorString(coalprof_err_));                                    \
            std::exit(COALPROF_EXIT_CUDA);                                                      \
        }                                                                                       \
    } while (0)

namespace coalprof {

[[noreturn]] inline void die_args(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void die_args(const char* fmt, ...) {
    std::fputs("error: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::exit(COALPROF_EXIT_ARGS);
}

// ---------------------------------------------------------------------------------------------
// The documented hash (spec.rs `hash32`): Chris Wellons' lowbias32 of (i ^ seed), i truncated
// to 32 bits by the caller's cast.
// ---------------------------------------------------------------------------------------------

__host__ __device__ __forceinline__ uint32_t coalprof_hash32(uint32_t i, uint32_t seed) {
    uint32_t x = i ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// ---------------------------------------------------------------------------------------------
// fp16 without <cuda_fp16.h>: the PyPI toolchain lacks CCCL's <nv/target>, which cuda_fp16.h
// includes, so halves are stored as uint16_t and converted with one PTX instruction each.
// ---------------------------------------------------------------------------------------------

using half_bits = uint16_t;

__device__ __forceinline__ float half_to_float(half_bits h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ half_bits float_to_half(float f) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
// The host's float_to_half for the inputs (finite, non-negative, below 65520): the same
// round-to-nearest-even as `cvt.rn.f16.f32`, subnormal halves included.
inline half_bits host_float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = (x & 0x7fffff) | (x & 0x7f800000 ? 0x800000 : 0);
    // Normal halves keep 10 of the 23 fraction bits; subnormal ones fewer, by 1 - exp.
    const int shift = exp > 0 ? 13 : 14 - exp;
    if (shift > 24) return 0;
    uint32_t h = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (exp > 0) h = (static_cast<uint32_t>(exp) << 10) | (h & 0x3ff);
    if (rest > halfway || (rest == halfway && (h & 1))) ++h;  // a carry into the exponent is right
    return static_cast<half_bits>(h);
}
// 2 * x for both halves of a packed half2 (x + x is exact).
__device__ __forceinline__ uint32_t half2_twice(uint32_t x) {
    uint32_t r;
    asm("add.rn.f16x2 %0, %1, %1;" : "=r"(r) : "r"(x));
    return r;
}

// ---------------------------------------------------------------------------------------------
// Variant specs: `key=value` pairs joined by `;`
// ---------------------------------------------------------------------------------------------

struct Spec {
    std::string text;                                       // as given, for messages
    int index = 0;                                          // position on the command line
    std::vector<std::pair<std::string, std::string>> kv;

    const std::string* find(const char* key) const {
        for (const auto& p : kv)
            if (p.first == key) return &p.second;
        return nullptr;
    }
    // The variant's name for messages: `name` when present, else `#<index>`.
    std::string label() const {
        const std::string* n = find("name");
        return n ? *n : "#" + std::to_string(index);
    }
};

inline Spec parse_spec(const std::string& text, int index) {
    Spec s;
    s.text = text;
    s.index = index;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        if (!item.empty()) {
            size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0)
                die_args("variant #%d: `%s` is not a key=value pair (in `%s`)", index, item.c_str(),
                         text.c_str());
            std::string key = item.substr(0, eq);
            if (s.find(key.c_str()))
                die_args("variant #%d: key `%s` given twice (in `%s`)", index, key.c_str(), text.c_str());
            s.kv.emplace_back(key, item.substr(eq + 1));
        }
        start = end + 1;
    }
    return s;
}

inline const std::string& get_str(const Spec& s, const char* key) {
    const std::string* v = s.find(key);
    if (!v) die_args("variant %s: missing key `%s`", s.label().c_str(), key);
    return *v;
}

inline uint64_t parse_u64_or_die(const Spec& s, const char* key, const std::string& v) {
    if (v.empty() || v[0] < '0' || v[0] > '9')
        die_args("variant %s: key `%s`: `%s` is not an unsigned integer", s.label().c_str(), key, v.c_str());
    errno = 0;
    char* end = nullptr;
    unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (errno != 0 || *end != '\0')
        die_args("variant %s: key `%s`: `%s` is not an unsigned 64-bit integer", s.label().c_str(), key,
                 v.c_str());
    return static_cast<uint64_t>(x);
}

inline uint64_t get_u64(const Spec& s, const char* key) {
    return parse_u64_or_die(s, key, get_str(s, key));
}

inline uint32_t get_u32(const Spec& s, const char* key) {
    uint64_t x = get_u64(s, key);
    if (x > 0xffffffffULL)
        die_args("variant %s: key `%s`: %llu does not fit in 32 bits", s.label().c_str(), key,
                 static_cast<unsigned long long>(x));
    return static_cast<uint32_t>(x);
}

inline bool get_bool(const Spec& s, const char* key) {
    const std::string& v = get_str(s, key);
    if (v == "0" || v == "false") return false;
    if (v == "1" || v == "true") return true;
    die_args("variant %s: key `%s`: `%s` is not 0 or 1", s.label().c_str(), key, v.c_str());
}

// `x,y,z` (each >= 1).
inline dim3 get_dim3(const Spec& s, const char* key) {
    const std::string& v = get_str(s, key);
    uint64_t d[3];
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
        size_t end = v.find(',', start);
        if ((i < 2) != (end != std::string::npos))
            die_args("variant %s: key `%s`: `%s` is not x,y,z", s.label().c_str(), key, v.c_str());
        if (end == std::string::npos) end = v.size();
        d[i] = parse_u64_or_die(s, key, v.substr(start, end - start));
        if (d[i] == 0 || d[i] > 0xffffffffULL)
            die_args("variant %s: key `%s`: `%s` has a dimension outside 1..2^32-1", s.label().c_str(),
                     key, v.c_str());
        start = end + 1;
    }
    return dim3(static_cast<unsigned>(d[0]), static_cast<unsigned>(d[1]), static_cast<unsigned>(d[2]));
}

// ---------------------------------------------------------------------------------------------
// Pattern registration (defined by each .cu)
// ---------------------------------------------------------------------------------------------

struct PatternInfo {
    const char* name;            // coalprof's pattern name, e.g. "kv-layout"
    const char* kernels[8];      // the extern "C" kernels this executable launches, nullptr-ended
};

class Harness;
extern const PatternInfo kPattern;
void run_variant(const Spec& s, Harness& h);

// ---------------------------------------------------------------------------------------------
// Device buffers and their initialisation (all on the device; kernels named coalprof_init_*)
// ---------------------------------------------------------------------------------------------

// --host-init: buffers filled on the host and copied (or zeroed with cudaMemset) instead of by
// the coalprof_init_* kernels, with the same values. Under a simulator those kernels are most
// of the instructions executed; on a GPU they are faster than the copy.
inline bool& host_init() {
    static bool on = false;
    return on;
}

// Deterministic, cheap input values in [0, 1): the top 24 bits of the hash of the index (a
// multiple of 2^-24, so exact in fp32 on the host and the device alike).
__host__ __device__ __forceinline__ float coalprof_init_value(uint64_t i, uint32_t seed) {
    return static_cast<float>(coalprof_hash32(static_cast<uint32_t>(i), seed) >> 8) * 5.9604645e-08f;
}

extern "C" __global__ void coalprof_init_fill_f32(float* __restrict__ p, uint64_t n, uint32_t seed) {
    const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = coalprof_init_value(i, seed);
}

extern "C" __global__ void coalprof_init_fill_f16(half_bits* __restrict__ p, uint64_t n, uint32_t seed) {
    const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = float_to_half(coalprof_init_value(i, seed));
}

extern "C" __global__ void coalprof_init_zero(uint32_t* __restrict__ p, uint64_t words) {
    const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += step)
        p[i] = 0u;
}

// Per-block partial sums (in double) of n fp32 or fp16 values; the host adds the partials in
// block order, so the checksum is deterministic for a given output. At most 1024 blocks, and
// one per 4096 values below that: a small output (what a simulator runs) gets a small grid.
constexpr unsigned kChecksumBlocks = 1024;
constexpr unsigned kChecksumThreads = 256;

inline unsigned checksum_blocks(uint64_t n) {
    return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(kChecksumBlocks, (n + 4095) / 4096)));
}

extern "C" __global__ void __launch_bounds__(256)
coalprof_init_checksum(const void* __restrict__ p, uint64_t n, int is_half, double* __restrict__ partials) {
    __shared__ double part[kChecksumThreads];
    const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    double acc = 0.0;
    const float* f = static_cast<const float*>(p);
    const half_bits* h = static_cast<const half_bits*>(p);
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
        acc += is_half ? static_cast<double>(half_to_float(h[i])) : static_cast<double>(f[i]);
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = part[0];
}

inline unsigned init_grid(uint64_t n) {
    uint64_t blocks = (n + 255) / 256;
    return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(blocks, 8192)));
}

// One cudaMalloc'd (256-byte aligned) buffer, freed on scope exit.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(uint64_t bytes) : bytes_(round_up(bytes)) {
        CUDA_CHECK(cudaMalloc(&ptr_, static_cast<size_t>(bytes_)));
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
    ~DeviceBuffer() {
        if (ptr_) CUDA_CHECK(cudaFree(ptr_));
    }
    // The buffer shifted by `offset_bytes` (how the specs apply base offsets).
    template <typename T>
    T* at(uint64_t offset_bytes = 0) const {
        return reinterpret_cast<T*>(static_cast<char*>(ptr_) + offset_bytes);
    }
    uint64_t bytes() const { return bytes_; }

    // Fill the whole allocation with deterministic inputs / zeros.
    void fill_f32(uint32_t seed) {
        if (host_init()) {
            std::vector<float> v(static_cast<size_t>(bytes_ / 4));
            for (size_t i = 0; i < v.size(); ++i) v[i] = coalprof_init_value(i, seed);
            CUDA_CHECK(cudaMemcpy(ptr_, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
            return;
        }
        coalprof_init_fill_f32<<<init_grid(bytes_ / 4), 256>>>(at<float>(), bytes_ / 4, seed);
        CUDA_CHECK(cudaGetLastError());
    }
    void fill_f16(uint32_t seed) {
        if (host_init()) {
            std::vector<half_bits> v(static_cast<size_t>(bytes_ / 2));
            for (size_t i = 0; i < v.size(); ++i) v[i] = host_float_to_half(coalprof_init_value(i, seed));
            CUDA_CHECK(cudaMemcpy(ptr_, v.data(), v.size() * sizeof(half_bits), cudaMemcpyHostToDevice));
            return;
        }
        coalprof_init_fill_f16<<<init_grid(bytes_ / 2), 256>>>(at<half_bits>(), bytes_ / 2, seed);
        CUDA_CHECK(cudaGetLastError());
    }
    void zero() {
        if (host_init()) {
            CUDA_CHECK(cudaMemset(ptr_, 0, static_cast<size_t>(bytes_)));
            return;
        }
        coalprof_init_zero<<<init_grid(bytes_ / 4), 256>>>(at<uint32_t>(), bytes_ / 4);
        CUDA_CHECK(cudaGetLastError());
    }

  private:
    static uint64_t round_up(uint64_t b) { return std::max<uint64_t>(256, (b + 255) / 256 * 256); }
    void* ptr_ = nullptr;
    uint64_t bytes_ = 0;
};

inline DeviceBuffer input_f32(uint64_t bytes, uint32_t seed) {
    DeviceBuffer b(bytes);
    b.fill_f32(seed);
    return b;
}
inline DeviceBuffer input_f16(uint64_t bytes, uint32_t seed) {
    DeviceBuffer b(bytes);
    b.fill_f16(seed);
    return b;
}
inline DeviceBuffer output(uint64_t bytes) {
    DeviceBuffer b(bytes);
    b.zero();
    return b;
}

// ---------------------------------------------------------------------------------------------
// The streaming convention (spec.rs): item k of thread t in block b is
// j = (b * ilp + k) * blockDim.x + t, processed only when j < m. All ilp loads are issued before
// the stores. `load(j)` must make exactly the documented global load(s); `store(j, v)` the store.
// ---------------------------------------------------------------------------------------------

template <int ILP, typename Load, typename Store>
__device__ __forceinline__ void stream_fixed(uint64_t m, Load load, Store store) {
    using T = decltype(load(uint64_t{0}));
    const uint64_t block = blockDim.x;
    const uint64_t first = static_cast<uint64_t>(blockIdx.x) * ILP * block + threadIdx.x;
    T v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
        const uint64_t j = first + static_cast<uint64_t>(k) * block;
        v[k] = T{};
        if (j < m) v[k] = load(j);
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
        const uint64_t j = first + static_cast<uint64_t>(k) * block;
        if (j < m) store(j, v[k]);
    }
}

// `ilp` is a kernel argument; the common values get an unrolled body, others a plain loop.
template <typename Load, typename Store>
__device__ __forceinline__ void stream_items(uint32_t ilp, uint64_t m, Load load, Store store) {
    switch (ilp) {
    case 1: stream_fixed<1>(m, load, store); break;
    case 2: stream_fixed<2>(m, load, store); break;
    case 4: stream_fixed<4>(m, load, store); break;
    default: {
        const uint64_t block = blockDim.x;
        const uint64_t first = static_cast<uint64_t>(blockIdx.x) * ilp * block + threadIdx.x;
        for (uint32_t k = 0; k < ilp; ++k) {
            const uint64_t j = first + static_cast<uint64_t>(k) * block;
            if (j < m) store(j, load(j));
        }
    }
    }
}

// ---------------------------------------------------------------------------------------------
// Harness: options, launching, timing, checksum, manifest
// ---------------------------------------------------------------------------------------------

struct Options {
    std::string manifest;
    bool time = false;
    // --plan (or COALPROF_PLAN_ONLY=1 in the environment): write the manifest without touching
    // the GPU, so the launch plan can be read on a machine with no driver (the fake-GPU tests).
    bool plan = false;
    uint32_t warmup = 3;
    uint32_t repeats = 10;
    std::vector<Spec> variants;
};

inline void json_string(std::string& out, const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    out += '"';
}

inline void json_double(std::string& out, double x) {
    if (!std::isfinite(x)) {
        out += "null";
        return;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    out += buf;
}

class Harness {
  public:
    bool validating = true;

    Harness(const Options& o, FILE* manifest) : opts_(o), manifest_(manifest) {}

    // The launch shape the variant gives (launched exactly as given).
    dim3 grid() const { return grid_; }
    dim3 block() const { return block_; }
    const std::string& kernel() const { return kernel_; }

    // Requires the given block shape (kernels whose thread mapping fixes it).
    void require_block(const Spec& s, unsigned x, unsigned y, unsigned z) const {
        if (block_.x != x || block_.y != y || block_.z != z)
            die_args("variant %s: kernel %s needs block=%u,%u,%u, got %u,%u,%u", s.label().c_str(),
                     kernel_.c_str(), x, y, z, block_.x, block_.y, block_.z);
    }
    [[noreturn]] void bad(const Spec& s, const char* what) const {
        die_args("variant %s: kernel %s: %s", s.label().c_str(), kernel_.c_str(), what);
    }

    // Reads the keys every variant has; called by main before run_variant.
    void begin(const Spec& s) {
        name_ = get_str(s, "name");
        kernel_ = get_str(s, "kernel");
        grid_ = get_dim3(s, "grid");
        block_ = get_dim3(s, "block");
        bytes_read_ = get_u64(s, "bytes_read");
        bytes_written_ = get_u64(s, "bytes_written");
        bool known = false;
        std::string list;
        for (const char* const* k = kPattern.kernels; *k; ++k) {
            known = known || kernel_ == *k;
            list += (list.empty() ? "" : ", ") + std::string(*k);
        }
        if (!known)
            die_args("variant %s: unknown kernel `%s` (the %s executable has: %s)", name_.c_str(),
                     kernel_.c_str(), kPattern.name, list.c_str());
        if (static_cast<uint64_t>(block_.x) * block_.y * block_.z > 1024)
            die_args("variant %s: block %u,%u,%u has more than 1024 threads", name_.c_str(), block_.x,
                     block_.y, block_.z);
        if (grid_.y > 65535 || grid_.z > 65535 || grid_.x > 0x7fffffffU)
            die_args("variant %s: grid %u,%u,%u exceeds CUDA's limits", name_.c_str(), grid_.x, grid_.y,
                     grid_.z);
        times_.clear();
    }

    // Plan mode: the manifest line of the variant begun last, without running it. With --time
    // it stands in for a GPU that moves the variant's bytes at kPlanBytesPerMs (an H200's
    // 4.8 TB/s), so the timing path is exercised end to end; the checksum is null.
    void write_plan() {
        if (opts_.time) times_.assign(1, static_cast<double>(bytes_read_ + bytes_written_) / kPlanBytesPerMs);
        write_manifest(std::nan(""));
    }
    static constexpr double kPlanBytesPerMs = 4.8e9;

    // Runs the measured kernel: once (profiling run), or warm-up + timed repeats with --time.
    template <typename Launch>
    void launch(Launch&& fn) {
        if (!opts_.time) {
            fn();
            check_launch();
            return;
        }
        for (uint32_t i = 0; i < opts_.warmup; ++i) {
            fn();
            check_launch();
        }
        cudaEvent_t start, stop;
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        for (uint32_t i = 0; i < opts_.repeats; ++i) {
            CUDA_CHECK(cudaEventRecord(start));
            fn();
            CUDA_CHECK(cudaEventRecord(stop));
            check_launch();
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            times_.push_back(static_cast<double>(ms));
        }
        CUDA_CHECK(cudaEventDestroy(start));
        CUDA_CHECK(cudaEventDestroy(stop));
    }

    // Checksums `n` output values (fp32, or fp16 when is_half) and writes the manifest line.
    void finish(const void* out, uint64_t n, bool is_half) {
        const unsigned blocks = checksum_blocks(n);
        DeviceBuffer partials(blocks * sizeof(double));
        coalprof_init_checksum<<<blocks, kChecksumThreads>>>(out, n, is_half ? 1 : 0, partials.at<double>());
        CUDA_CHECK(cudaGetLastError());
        std::vector<double> host(blocks);
        CUDA_CHECK(cudaMemcpy(host.data(), partials.at<double>(), blocks * sizeof(double),
                              cudaMemcpyDeviceToHost));
        double sum = 0.0;
        for (double x : host) sum += x;
        write_manifest(sum);
    }

  private:
    void check_launch() {
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            std::fprintf(stderr,
                         "error: kernel %s (variant %s, grid %u,%u,%u, block %u,%u,%u) failed: %s (%s)\n",
                         kernel_.c_str(), name_.c_str(), grid_.x, grid_.y, grid_.z, block_.x, block_.y,
                         block_.z, cudaGetErrorName(e), cudaGetErrorString(e));
            std::exit(COALPROF_EXIT_CUDA);
        }
    }

    void write_manifest(double checksum) {
        std::string l = "{\"pattern\":";
        json_string(l, kPattern.name);
        l += ",\"variant\":";
        json_string(l, name_);
        l += ",\"kernel\":";
        json_string(l, kernel_);
        char buf[160];
        std::snprintf(buf, sizeof buf, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", grid_.x, grid_.y,
                      grid_.z, block_.x, block_.y, block_.z);
        l += buf;
        std::snprintf(buf, sizeof buf, ",\"bytes_read\":%llu,\"bytes_written\":%llu",
                      static_cast<unsigned long long>(bytes_read_),
                      static_cast<unsigned long long>(bytes_written_));
        l += buf;
        l += ",\"checksum\":";
        json_double(l, checksum);
        if (opts_.time && !times_.empty()) {
            std::vector<double> sorted = times_;
            std::sort(sorted.begin(), sorted.end());
            size_t n = sorted.size();
            double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
            l += ",\"time_ms\":";
            json_double(l, median);
            l += ",\"times_ms\":[";
            for (size_t i = 0; i < times_.size(); ++i) {
                if (i) l += ',';
                json_double(l, times_[i]);
            }
            l += ']';
        }
        l += "}\n";
        if (std::fputs(l.c_str(), manifest_) == EOF || std::fflush(manifest_) != 0) {
            std::fprintf(stderr, "error: cannot write the manifest %s: %s\n", opts_.manifest.c_str(),
                         std::strerror(errno));
            std::exit(COALPROF_EXIT_ARGS);
        }
    }

    const Options& opts_;
    FILE* manifest_;
    std::string name_, kernel_;
    dim3 grid_, block_;
    uint64_t bytes_read_ = 0, bytes_written_ = 0;
    std::vector<double> times_;
};

inline uint32_t parse_count(const char* opt, const char* v, uint32_t min) {
    char* end = nullptr;
    errno = 0;
    unsigned long x = std::strtoul(v, &end, 10);
    if (!*v || *v == '-' || *end || errno || x > 1000000 || x < min)
        die_args("%s expects an integer in %u..1000000, got `%s`", opt, min, v);
    return static_cast<uint32_t>(x);
}

inline Options parse_options(int argc, char** argv) {
    Options o;
    const char* usage =
        "usage: %s --manifest PATH [--plan] [--time] [--warmup N] [--repeats N] [--host-init] --variant SPEC "
        "[--variant SPEC ...]";
    int nvariant = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) die_args("%s needs a value", a.c_str());
            return argv[++i];
        };
        if (a == "--manifest") {
            o.manifest = value();
        } else if (a == "--time") {
            o.time = true;
        } else if (a == "--plan") {
            o.plan = true;
        } else if (a == "--host-init") {
            host_init() = true;
        } else if (a == "--warmup") {
            o.warmup = parse_count("--warmup", value(), 0);
        } else if (a == "--repeats") {
            o.repeats = parse_count("--repeats", value(), 1);
        } else if (a == "--variant") {
            o.variants.push_back(parse_spec(value(), nvariant++));
        } else if (a == "--help" || a == "-h") {
            std::printf(usage, argv[0]);
            std::printf("\n");
            std::exit(0);
        } else {
            std::fprintf(stderr, "error: unknown argument `%s`\n", a.c_str());
            std::fprintf(stderr, usage, argv[0]);
            std::fputc('\n', stderr);
            std::exit(COALPROF_EXIT_ARGS);
        }
    }
    const char* plan_only = std::getenv("COALPROF_PLAN_ONLY");
    if (plan_only && *plan_only && std::strcmp(plan_only, "0") != 0) o.plan = true;
    if (o.manifest.empty()) die_args("--manifest PATH is required");
    if (o.variants.empty()) die_args("at least one --variant SPEC is required");
    return o;
}

}  // namespace coalprof

int main(int argc, char** argv) {
    using namespace coalprof;
    Options opts = parse_options(argc, argv);

    // Validate every variant before touching CUDA: argument errors exit 2 on any machine.
    Harness h(opts, nullptr);
    for (const Spec& s : opts.variants) {
        h.begin(s);
        run_variant(s, h);
    }

    FILE* manifest = std::fopen(opts.manifest.c_str(), "w");
    if (!manifest) die_args("cannot open the manifest %s: %s", opts.manifest.c_str(), std::strerror(errno));

    if (opts.plan) {
        Harness plan(opts, manifest);
        for (const Spec& s : opts.variants) {
            plan.begin(s);
            plan.write_plan();
        }
        std::fclose(manifest);
        return 0;
    }

    CUDA_CHECK(cudaFree(nullptr));  // creates the context; with no driver: cudaErrorInsufficientDriver

    Harness run(opts, manifest);
    run.validating = false;
    for (const Spec& s : opts.variants) {
        run.begin(s);
        run_variant(s, run);
    }
    std::fclose(manifest);
    return 0;
}
