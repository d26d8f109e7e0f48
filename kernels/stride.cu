// stride — `out[j] = 2 * in[j * stride]`: sectors/request grows to 32 and useful bandwidth falls
// with the stride. The kernel is strided.cuh's, shared with coalesced and offset.
#define COALPROF_STRIDED_PATTERN stride
#include "strided.cuh"
