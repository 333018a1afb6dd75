// Two kernels for `gpubook run --ranks`: every rank stores its number into its slot of every
// rank's `inbox` (through the peer table), then each rank adds up what arrived in its own.
// @ranks: 2
// @launch: post grid=1 block=32 peers:i32[2]:zeros i32=rank i32=ranks
// @launch: total grid=1 block=32 @inbox i32[1]:uninit i32=ranks
// @expect: inbox[i] = i * 10
// @expect: sum[0] = 10
// @expect: inbox@1[i] = i * 10

extern "C" __global__ void post(int* const* inbox, int rank, int ranks) {
    int d = threadIdx.x;
    if (d < ranks) inbox[d][rank] = rank * 10;
}

extern "C" __global__ void total(const int* inbox, int* sum, int ranks) {
    if (threadIdx.x == 0) {
        int s = 0;
        for (int r = 0; r < ranks; ++r) s += inbox[r];
        sum[0] = s;
    }
}
