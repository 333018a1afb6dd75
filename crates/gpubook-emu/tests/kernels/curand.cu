// Uses cuRAND's device API, which the emulator does not model.

#include <curand_kernel.h>

extern "C" __global__ void draw(float* out) {
    curandState s;
    curand_init(1234, threadIdx.x, 0, &s);
    out[threadIdx.x] = curand_uniform(&s);
}
