// @feature: atomicOr, atomicAnd and atomicXor on unsigned int
// @launch: bits grid=2 block=32 u32[3]:0,4294967295,0
// @expect: m[0] = 4294967295
// @expect: m[1] = 4294901760
// @expect: m[2] = 0
extern "C" __global__ void bits(unsigned* m) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x; // 0..63
    atomicOr(&m[0], 1u << (t % 32));
    if (t < 16) atomicAnd(&m[1], ~(1u << t));
    atomicXor(&m[2], 1u << (t % 32)); // every bit flipped twice
}
