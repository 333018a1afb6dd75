// @feature: a bitonic sort of 256 keys in shared memory: barriers inside two nested loops
// @launch: sort grid=1 block=256 i32[256]:uninit
// @expect: out[i] = i
extern "C" __global__ void sort(int* out) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = (t * 37) % 256; // a permutation of 0..255
    __syncthreads();
    for (int k = 2; k <= 256; k *= 2) {
        for (int j = k / 2; j > 0; j /= 2) {
            int p = t ^ j;
            if (p > t) {
                bool up = (t & k) == 0;
                int a = s[t], b = s[p];
                if ((a > b) == up) {
                    s[t] = b;
                    s[p] = a;
                }
            }
            __syncthreads();
        }
    }
    out[t] = s[t];
}
