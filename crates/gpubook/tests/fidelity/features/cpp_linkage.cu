// A kernel with C++ linkage (no extern "C"), inside a namespace, launched by its plain name:
// NVRTC mangles it, gpubook finds it through a name expression. It calls a C++ overload set.
// launch: squares grid=1 block=8
// out: int 8
// expect: 0 1 4 9 16 25 36 49

namespace demo {
__device__ int square(int x) { return x * x; }
__device__ float square(float x) { return x * x; }

__global__ void squares(int* out) {
    int i = threadIdx.x;
    out[i] = square(i) + (int)square(0.0f);
}
} // namespace demo
