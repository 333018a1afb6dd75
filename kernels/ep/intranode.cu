// Dispatch and combine inside one node: every rank stores straight into its peers' buffers
// (DeepEP's intranode kernels, without their channel ring buffers: each token goes directly to its
// final slot). Every kernel counts what it moves in `moved` (2 x ranks ints): moved[r] messages
// sent to rank r, moved[ranks + r] messages read from rank r. The host turns those counts into
// link traffic.
#include "channels.cuh"

// Every rank writes its row of counts (tokens it sends to each rank) into every rank's
// per_rank_buffer, so each ends up with the whole matrix: DeepEP's notify_dispatch.
extern "C" __global__ void notify_dispatch(const int* num_tokens_per_rank, int* const* per_rank_buffer, int* moved,
                                           int ranks, int rank) {
    for (int i = threadIdx.x; i < ranks * ranks; i += blockDim.x) {
        int d = i / ranks, j = i % ranks;
        per_rank_buffer[d][rank * ranks + j] = num_tokens_per_rank[j];
    }
    if (threadIdx.x == 0)
        for (int d = 0; d < ranks; ++d)
            if (d != rank) moved[d] += 1;
}

// Token t goes to every rank d with send_pos[t][d] >= 0, once, into slot
// rank_offset(rank -> d) + send_pos[t][d] of d's receive buffers. Its topk_idx arrive as d's
// local expert numbers (-1 for experts elsewhere, with weight 0). Dynamic shared memory: ranks ints.
extern "C" __global__ void dispatch(const float* x, const int* topk_idx, const float* topk_weights, const int* send_pos,
                                    const int* per_rank_buffer, float* const* recv_x, int* const* recv_topk_idx,
                                    float* const* recv_topk_weights, int* const* recv_src, int* moved, int tokens,
                                    int hidden, int topk, int experts, int ranks, int rank) {
    extern __shared__ int offset[];
    for (int d = threadIdx.x; d < ranks; d += blockDim.x) offset[d] = rank_offset(per_rank_buffer, ranks, rank, d);
    __syncthreads();
    int per_rank = experts / ranks, begin, end;
    channel_range(tokens, &begin, &end);
    for (int t = begin; t < end; ++t) {
        for (int d = 0; d < ranks; ++d) {
            int pos = send_pos[t * ranks + d];
            if (pos < 0) continue;
            long long slot = (long long)offset[d] + pos;
            const float* src = x + (long long)t * hidden;
            float* dst = recv_x[d] + slot * hidden;
            for (int h = threadIdx.x; h < hidden; h += blockDim.x) dst[h] = src[h];
            for (int k = threadIdx.x; k < topk; k += blockDim.x) {
                int e = topk_idx[t * topk + k];
                bool here = e / per_rank == d;
                recv_topk_idx[d][slot * topk + k] = here ? e - d * per_rank : -1;
                recv_topk_weights[d][slot * topk + k] = here ? topk_weights[t * topk + k] : 0.0f;
            }
            if (threadIdx.x == 0) {
                recv_src[d][slot] = rank * tokens + t;
                if (d != rank) atomicAdd(&moved[d], 1);
            }
        }
    }
}

// The expert side of combine: each received token's expert outputs, weighted by its gate weights
// and summed, go back to the token's rank, into row (t, this rank) of its combine_buf.
extern "C" __global__ void combine(const int* recv_topk_idx, const float* recv_topk_weights, const int* recv_src,
                                   const float* expert_out, float* const* combine_buf, int* moved, int num_recv,
                                   int tokens, int hidden, int topk, int ranks, int rank) {
    int begin, end;
    channel_range(num_recv, &begin, &end);
    for (int i = begin; i < end; ++i) {
        int s = recv_src[i] / tokens, t = recv_src[i] % tokens;
        float* dst = combine_buf[s] + ((long long)t * ranks + rank) * hidden;
        for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
            float z = 0.0f;
            for (int k = 0; k < topk; ++k)
                if (recv_topk_idx[i * topk + k] >= 0)
                    z += recv_topk_weights[i * topk + k] * expert_out[((long long)i * topk + k) * hidden + h];
            dst[h] = z;
        }
        if (threadIdx.x == 0 && s != rank) atomicAdd(&moved[s], 1);
    }
}

// The token's side: out[t] is the sum of the rows that came back, one per route the token took.
// Routes are groups of `group` ranks: 1 for intranode (a row per rank), gpus per node for the
// two-hop path (a row per node).
extern "C" __global__ void combine_reduce(const float* combine_buf, const int* send_pos, float* out, int tokens,
                                          int hidden, int ranks, int group) {
    int routes = ranks / group;
    long long n = (long long)tokens * hidden;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        int t = (int)(i / hidden), h = (int)(i % hidden);
        float sum = 0.0f;
        for (int j = 0; j < routes; ++j) {
            bool used = false;
            for (int g = 0; g < group; ++g) used = used || send_pos[t * ranks + j * group + g] >= 0;
            if (used) sum += combine_buf[((long long)t * routes + j) * hidden + h];
        }
        out[i] = sum;
    }
}
