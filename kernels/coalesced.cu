// coalesced — `out[j] = 2 * in[j]` (stride 1, offset 0): the perfectly coalesced fp32 copy,
// 4 sectors per request. The kernel is strided.cuh's, shared with offset and stride.
#define COALPROF_STRIDED_PATTERN coalesced
#include "strided.cuh"
