// @feature: atomicInc (wrapping), atomicDec, atomicSub and atomicExch
// @launch: counters grid=4 block=250 u32[4]:0,5,1000,0
// @expect: c[0] = 0
// @expect: c[1] = 2
// @expect: c[2] = 0
// @expect: c[3] = 1
extern "C" __global__ void counters(unsigned* c) {
    atomicInc(&c[0], 9);  // 1000 increments that wrap after 9: back to 0
    if (threadIdx.x < 3 && blockIdx.x == 0) atomicDec(&c[1], 100); // 5 - 3
    atomicSub(&c[2], 1);  // 1000 - 1000
    atomicExch(&c[3], 1); // any thread's 1
}
