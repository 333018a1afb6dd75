// DeepEP's two-hop dispatch across nodes. Rank (a, l) = rank a * gpus + l is GPU l
// of node a; expert e lives on rank e / (experts / ranks), so on node e / (experts
// / ranks) / gpus.
//
// Hop 1 (InfiniBand). A message carries one token to one node: its row, its index
// t, its topk_idx, its send_pos for each of the target node's ranks, and its
// weights. A token goes to each node b holding one of its experts ONCE, into the
// RDMA buffers of rank (b, l): the rank of node b with the sender's own index (on
// its own node that is the sender itself). Each rank's RDMA buffers have a region
// per source node, `tokens` messages long; rdma_count[a] counts the messages that
// arrived from node a (zeroed before). Claim a slot with an atomic add on the
// receiver's counter: slot = atomicAdd(&rdma_count[f][a], 1), message m = a *
// tokens + slot.
//
// Hop 2 (NVLink). Rank (b, l) forwards every message it received to each rank g of
// its node with send_pos >= 0, into its final slot: (tokens every lower rank sends
// to (b, g), from per_rank_buffer, the whole count matrix) + send_pos, as in
// chapter 12's dispatch.

__device__ inline int meta_len(int topk, int gpus) { return 1 + topk + gpus; }

// ANCHOR: rdma
// One block per token t of this rank (blockIdx.x).
extern "C" __global__ void
dispatch_rdma(const float* x, const int* topk_idx, const float* topk_weights,
              const int* send_pos, float* const* rdma_x, int* const* rdma_meta,
              float* const* rdma_topk_weights, int* const* rdma_count, int tokens,
              int hidden, int topk, int experts, int nodes, int gpus, int rank) {
    __shared__ int claimed;  // the slot thread 0 claimed, for the whole block
    int t = blockIdx.x;
    int ranks = nodes * gpus, per_rank = experts / ranks;
    int node = rank / gpus, local = rank % gpus;
    int m_len = meta_len(topk, gpus);
    // SOLUTION
    for (int b = 0; b < nodes; ++b) {
        // One message per (token, node), however many of its experts live there.
        bool to_b = false;
        for (int k = 0; k < topk; ++k) to_b = to_b ||
            topk_idx[t * topk + k] / per_rank / gpus == b;
        if (!to_b) continue;
        int f = b * gpus + local;  // the same-index rank of node b
        if (threadIdx.x == 0) claimed = atomicAdd(&rdma_count[f][node], 1);
        __syncthreads();
        long long m = (long long)node * tokens + claimed;
        for (int h = threadIdx.x; h < hidden; h += blockDim.x)
            rdma_x[f][m * hidden + h] = x[(long long)t * hidden + h];
        for (int j = threadIdx.x; j < m_len; j += blockDim.x) {
            int v;
            if (j == 0) v = t;
            else if (j <= topk) v = topk_idx[t * topk + j - 1];
            else v = send_pos[t * ranks + b * gpus + (j - 1 - topk)];
            rdma_meta[f][m * m_len + j] = v;
        }
        for (int k = threadIdx.x; k < topk; k += blockDim.x)
            rdma_topk_weights[f][m * topk + k] = topk_weights[t * topk + k];
        __syncthreads();  // every thread has used `claimed` before the next claim
    }
    // STUB
    // // TODO: for each node b: does one of the token's experts live there? If so,
    // // once: thread 0 claims a slot in rank (b, local)'s region for this node
    // // (atomicAdd on its rdma_count[node], through the peer table) and shares it
    // // through `claimed` (__syncthreads); then write the message: the row, meta
    // // [t, topk_idx..., send_pos for node b's ranks...], the weights. Another
    // // __syncthreads before the next claim.
    // END SOLUTION
}
// ANCHOR_END: rdma

// ANCHOR: forward
// One block per (message slot i = blockIdx.x, source node a = blockIdx.y); slots
// past rdma_count[a] have nothing to do. The sender was rank a * gpus + (this
// rank's index).
extern "C" __global__ void
dispatch_forward(const float* rdma_x, const int* rdma_meta,
                 const float* rdma_topk_weights, const int* rdma_count,
                 const int* per_rank_buffer, float* const* recv_x,
                 int* const* recv_topk_idx, float* const* recv_topk_weights,
                 int* const* recv_src, int tokens, int hidden, int topk,
                 int experts, int nodes, int gpus, int rank) {
    int i = blockIdx.x, a = blockIdx.y;
    int ranks = nodes * gpus, per_rank = experts / ranks;
    int node = rank / gpus, local = rank % gpus;
    int m_len = meta_len(topk, gpus);
    // SOLUTION
    if (i >= rdma_count[a]) return;
    long long m = (long long)a * tokens + i;
    const int* meta = rdma_meta + m * m_len;
    int s = a * gpus + local, t = meta[0];
    for (int g = 0; g < gpus; ++g) {
        int pos = meta[1 + topk + g];
        if (pos < 0) continue;
        int d = node * gpus + g, offset = 0;
        for (int r = 0; r < s; ++r) offset += per_rank_buffer[r * ranks + d];
        long long slot = (long long)offset + pos;
        for (int h = threadIdx.x; h < hidden; h += blockDim.x)
            recv_x[d][slot * hidden + h] = rdma_x[m * hidden + h];
        for (int k = threadIdx.x; k < topk; k += blockDim.x) {
            int e = meta[1 + k];
            bool here = e / per_rank == d;
            recv_topk_idx[d][slot * topk + k] = here ? e - d * per_rank : -1;
            float weight = here ? rdma_topk_weights[m * topk + k] : 0.0f;
            recv_topk_weights[d][slot * topk + k] = weight;
        }
        if (threadIdx.x == 0) recv_src[d][slot] = s * tokens + t;
    }
    // STUB
    // // TODO: skip slots past rdma_count[a]. Read the message's meta: t, the
    // // sender s, and for each rank g of this node its send_pos. Where it is >= 0,
    // // store the token into rank (node, g)'s receive buffers as chapter 12's
    // // dispatch does (the row, local expert numbers or -1, weights or 0, and s *
    // // tokens + t), at slot (column d of per_rank_buffer summed over the rows
    // // below s) + send_pos.
    // END SOLUTION
}
// ANCHOR_END: forward
