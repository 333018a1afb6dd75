// Tensor-core fragments used as a GPU would not forgive: a tile at an address that is not 32-byte
// aligned, and a fragment operation only half the warp reaches.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void misaligned(const half* a, float* out) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a + 1, 16);
    out[threadIdx.x] = (float)fa.x[0];
}

extern "C" __global__ void half_warp(float* out) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    if (threadIdx.x < 16) wmma::fill_fragment(acc, 1.0f);
    out[threadIdx.x] = 0.0f;
}
