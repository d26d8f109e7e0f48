// offset — `out[j] = 2 * in[j + offset]`: a base not on a 32-byte boundary touches 5 sectors
// instead of 4. The kernel is strided.cuh's, shared with coalesced and stride.
#define COALPROF_STRIDED_PATTERN offset
#include "strided.cuh"
