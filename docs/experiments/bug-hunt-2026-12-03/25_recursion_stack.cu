// gpubook run 25_recursion_stack.cu --kernel fibk --grid 1 --block 32 --arg i32[32]:iota --arg i32[32]:zeros --mode check
// BUG: recursive device function with a local array per frame and a depth driven by data (missing base case for n<=0 when n is negative... here: base case only n==0, odd step overshoots)
__device__ int walk(int n) {
    int scratch[64];
    for (int k = 0; k < 64; ++k) scratch[k] = n + k;
    if (n == 0) return scratch[0];
    return scratch[n & 63] + walk(n - 2);   // odd n never hits 0
}
extern "C" __global__ void fibk(const int* in, int* out) {
    out[threadIdx.x] = walk(in[threadIdx.x]);
}
