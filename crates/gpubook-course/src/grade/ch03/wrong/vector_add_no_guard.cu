// Wrong: no boundary guard. The grid is rounded up to whole blocks, so the last block's extra
// threads read and write past the end of the arrays.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
