// Dispatch and combine across nodes, DeepEP's two-hop path. Rank (a, l) is GPU l of node a.
//   hop 1, InfiniBand: a token crosses to each node b that holds one of its experts once, into the
//     RDMA buffer of rank (b, l), the rank with the sender's own index (for its own node, that is
//     itself: a local copy);
//   hop 2, NVLink: rank (b, l) forwards it to every rank of node b that holds one of its experts.
// A message (rdma_x, rdma_meta, rdma_topk_weights) is the token's row, its index t, its topk_idx,
// its send_pos for each of node b's ranks, and its weights. RDMA buffers have one region of
// `tokens` messages per source node; rdma_count[a] counts the messages from node a (zeroed
// before the dispatch), and the sender claims each slot with an atomic add on it, as DeepEP
// advances its tail counters. `moved` counts messages as in intranode.cu.
#include "channels.cuh"

__device__ inline int meta_len(int topk, int gpus) { return 1 + topk + gpus; }

extern "C" __global__ void dispatch_rdma(const float* x, const int* topk_idx, const float* topk_weights,
                                         const int* send_pos, float* const* rdma_x, int* const* rdma_meta,
                                         float* const* rdma_topk_weights, int* const* rdma_count, int* moved,
                                         int tokens, int hidden, int topk, int experts, int nodes, int gpus,
                                         int rank) {
    __shared__ int claimed;
    int ranks = nodes * gpus, per_rank = experts / ranks, node = rank / gpus, local = rank % gpus;
    int m_len = meta_len(topk, gpus), begin, end;
    channel_range(tokens, &begin, &end);
    for (int t = begin; t < end; ++t) {
        for (int b = 0; b < nodes; ++b) {
            bool to_b = false;  // the same for every thread: the block goes on or skips together
            for (int k = 0; k < topk; ++k) to_b = to_b || topk_idx[t * topk + k] / per_rank / gpus == b;
            if (!to_b) continue;
            int f = b * gpus + local;  // the same-index rank of node b
            if (threadIdx.x == 0) claimed = atomicAdd(&rdma_count[f][node], 1);
            __syncthreads();
            long long slot = (long long)node * tokens + claimed;
            const float* src = x + (long long)t * hidden;
            for (int h = threadIdx.x; h < hidden; h += blockDim.x) rdma_x[f][slot * hidden + h] = src[h];
            int* meta = rdma_meta[f] + slot * m_len;
            for (int j = threadIdx.x; j < m_len; j += blockDim.x) {
                if (j == 0) meta[0] = t;
                else if (j <= topk) meta[j] = topk_idx[t * topk + j - 1];
                else meta[j] = send_pos[t * ranks + b * gpus + (j - 1 - topk)];
            }
            for (int k = threadIdx.x; k < topk; k += blockDim.x)
                rdma_topk_weights[f][slot * topk + k] = topk_weights[t * topk + k];
            if (threadIdx.x == 0 && f != rank) atomicAdd(&moved[f], 1);
            __syncthreads();  // `claimed` is read by all before the next claim
        }
    }
}

extern "C" __global__ void dispatch_forward(const float* rdma_x, const int* rdma_meta, const float* rdma_topk_weights,
                                            const int* rdma_count, const int* per_rank_buffer, float* const* recv_x,
                                            int* const* recv_topk_idx, float* const* recv_topk_weights,
                                            int* const* recv_src, int* moved, int tokens, int hidden, int topk,
                                            int experts, int nodes, int gpus, int rank) {
    int ranks = nodes * gpus, per_rank = experts / ranks, node = rank / gpus, local = rank % gpus;
    int m_len = meta_len(topk, gpus);
    for (int a = 0; a < nodes; ++a) {
        int s = a * gpus + local, begin, end;  // the sender: rank l of node a
        channel_range(rdma_count[a], &begin, &end);
        for (int i = begin; i < end; ++i) {
            long long m = (long long)a * tokens + i;
            const int* meta = rdma_meta + m * m_len;
            int t = meta[0];
            for (int g = 0; g < gpus; ++g) {
                int pos = meta[1 + topk + g];
                if (pos < 0) continue;
                int d = node * gpus + g;
                long long slot = (long long)rank_offset(per_rank_buffer, ranks, s, d) + pos;
                for (int h = threadIdx.x; h < hidden; h += blockDim.x) recv_x[d][slot * hidden + h] = rdma_x[m * hidden + h];
                for (int k = threadIdx.x; k < topk; k += blockDim.x) {
                    int e = meta[1 + k];
                    bool here = e / per_rank == d;
                    recv_topk_idx[d][slot * topk + k] = here ? e - d * per_rank : -1;
                    recv_topk_weights[d][slot * topk + k] = here ? rdma_topk_weights[m * topk + k] : 0.0f;
                }
                if (threadIdx.x == 0) {
                    recv_src[d][slot] = s * tokens + t;
                    if (d != rank) atomicAdd(&moved[d], 1);
                }
            }
        }
    }
}

// Each received token's expert outputs, weighted and summed, into partial[slot]: the first step
// of combine, on the rank that ran the experts.
extern "C" __global__ void combine_local(const int* recv_topk_idx, const float* recv_topk_weights,
                                         const float* expert_out, float* partial, int num_recv, int hidden, int topk) {
    long long n = (long long)num_recv * hidden;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        long long slot = i / hidden;
        int h = (int)(i % hidden);
        float z = 0.0f;
        for (int k = 0; k < topk; ++k)
            if (recv_topk_idx[slot * topk + k] >= 0)
                z += recv_topk_weights[slot * topk + k] * expert_out[(slot * topk + k) * hidden + h];
        partial[i] = z;
    }
}

// The way back, on the forwarder (b, l): for each message it received in dispatch, add up the
// partials of node b's ranks (read over NVLink) and send one row back over InfiniBand, into row
// (t, b) of the sender's combine_buf: DeepEP's "NVLink-to-IB forwarding and accumulation".
extern "C" __global__ void combine_forward(const int* rdma_meta, const int* rdma_count, const int* per_rank_buffer,
                                           float* const* partial, float* const* combine_buf, int* moved, int tokens,
                                           int hidden, int topk, int nodes, int gpus, int rank) {
    int ranks = nodes * gpus, node = rank / gpus, local = rank % gpus;
    int m_len = meta_len(topk, gpus);
    for (int a = 0; a < nodes; ++a) {
        int s = a * gpus + local, begin, end;
        channel_range(rdma_count[a], &begin, &end);
        for (int i = begin; i < end; ++i) {
            const int* meta = rdma_meta + ((long long)a * tokens + i) * m_len;
            int t = meta[0];
            float* dst = combine_buf[s] + ((long long)t * nodes + node) * hidden;
            for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
                float acc = 0.0f;
                for (int g = 0; g < gpus; ++g) {
                    int pos = meta[1 + topk + g];
                    if (pos < 0) continue;
                    int d = node * gpus + g;
                    acc += partial[d][((long long)rank_offset(per_rank_buffer, ranks, s, d) + pos) * hidden + h];
                }
                dst[h] = acc;
            }
            if (threadIdx.x == 0) {
                for (int g = 0; g < gpus; ++g)
                    if (meta[1 + topk + g] >= 0 && g != local) atomicAdd(&moved[ranks + node * gpus + g], 1);
                if (s != rank) atomicAdd(&moved[s], 1);
            }
        }
    }
}
