// gpubook run 32_assert.cu --kernel gather --grid 1 --block 64 --arg i32[64]:random --arg f32[64]:iota --arg f32[64]:zeros --mode check
// BUG: gather indices from data (0..99) exceed the table size 64; the author put an assert in
#include <assert.h>
extern "C" __global__ void gather(const int* idx, const float* table, float* out) {
    int i = threadIdx.x;
    int k = idx[i];
    assert(k >= 0 && k < 64);
    out[i] = table[k];
}
