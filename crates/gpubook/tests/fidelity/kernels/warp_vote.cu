// @feature: __ballot_sync with __popc, __any_sync and __all_sync
// @launch: vote grid=1 block=128 i32[128]:iota u32[4]:uninit i32[4]:uninit i32[4]:uninit u32[4]:uninit
// @expect: count[i] = idiv(32 * i + 31, 3) - idiv(32 * i - 1, 3)
// @expect: any_negative[i] = 0
// @expect: all_small[i] = 1
// @expect: bits[0] = 1227133513
extern "C" __global__ void vote(const int* x, unsigned* count, int* any_negative, int* all_small, unsigned* bits) {
    int v = x[threadIdx.x];
    unsigned b = __ballot_sync(0xffffffffu, v % 3 == 0);
    int neg = __any_sync(0xffffffffu, v < 0);
    int small = __all_sync(0xffffffffu, v < 1000);
    if (threadIdx.x % 32 == 0) {
        int w = threadIdx.x / 32;
        count[w] = __popc(b);
        any_negative[w] = neg;
        all_small[w] = small;
        bits[w] = b;
    }
}
