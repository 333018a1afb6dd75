// A `static __global__` kernel with C++ linkage, launched by its plain name, calling a static
// __device__ helper.
// launch: triple grid=1 block=4
// out: int 4
// expect: 0 3 6 9

static __device__ int times_three(int x) { return 3 * x; }

static __global__ void triple(int* out) {
    out[threadIdx.x] = times_three((int)threadIdx.x);
}
