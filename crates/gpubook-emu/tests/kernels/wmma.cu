// Uses tensor-core matrix fragments, which the emulator does not model.

#include <mma.h>

extern "C" __global__ void fill(float* out) {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;
}
