// gpubook run 23_le_n.cu --kernel relu --grid 1 --block 1024 --arg f32[1000]:random --arg i32=1000 --mode check
// BUG: off-by-one guard (<= n)
extern "C" __global__ void relu(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) a[i] = fmaxf(a[i] - 50.f, 0.f);
}
