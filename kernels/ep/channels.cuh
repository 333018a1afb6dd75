// A channel is a slice of the work, one block each: channel c of C takes items
// [c * ceil(n / C), min((c + 1) * ceil(n / C), n)) (DeepEP's get_channel_task_range). Chapter 14
// gives each channel a pair of SMs, ring buffers and warp roles; here a channel is a block.
#pragma once

__device__ inline void channel_range(int n, int* begin, int* end) {
    int per = (n + (int)gridDim.x - 1) / (int)gridDim.x;
    *begin = min(n, (int)blockIdx.x * per);
    *end = min(n, *begin + per);
}

// Where the tokens of rank `src` start in rank `dst`'s receive buffers: the tokens of every
// lower rank come first (a column of DeepEP's rank_prefix_matrix, one row earlier).
__device__ inline int rank_offset(const int* per_rank_buffer, int ranks, int src, int dst) {
    int offset = 0;
    for (int s = 0; s < src; ++s) offset += per_rank_buffer[s * ranks + dst];
    return offset;
}
