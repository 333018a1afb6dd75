// gpubook run 26_block_order_wait.cu --kernel chain --grid 4 --block 32 --arg f32[128]:iota --arg f32[128]:zeros --arg i32[4]:zeros --mode check
// BUG: "decoupled" chained scan that assumes block b+1 finishes before block b (waits on a flag of a HIGHER block)
extern "C" __global__ void chain(const float* in, float* out, int* flags) {
    int b = blockIdx.x, t = threadIdx.x;
    if (b < gridDim.x - 1 && t == 0) {
        while (atomicAdd(&flags[b + 1], 0) == 0) { }   // wait for the next block
    }
    __syncthreads();
    out[b * 32 + t] = in[b * 32 + t] + 1.f;
    __threadfence();
    __syncthreads();
    if (t == 0) atomicExch(&flags[b], 1);
}
