// Combine inside a node: the way back. The experts' outputs for every received
// token are summed with the gate weights on the rank that ran them and stored into
// the token's own rank; there the rows that came back are added up.

// ANCHOR: combine
// One block per received slot i of this rank (blockIdx.x < num_recv). The token
// came from rank s = recv_src[i] / tokens, where it was token t = recv_src[i] %
// tokens. Its expert outputs are expert_out[(i * topk + k) * hidden + h] for every
// k with recv_topk_idx[i * topk + k] >= 0 (the other rows are not written). Store
//     sum over those k of
//         recv_topk_weights[i * topk + k] * expert_out[(i * topk + k) * hidden + h]
// into row (t * ranks + rank) of rank s's combine_buf (combine_buf[s] through the
// peer table).
extern "C" __global__ void
combine(const int* recv_topk_idx, const float* recv_topk_weights,
        const int* recv_src, const float* expert_out, float* const* combine_buf,
        int num_recv, int tokens, int hidden, int topk, int ranks, int rank) {
    int i = blockIdx.x;
    // SOLUTION
    int s = recv_src[i] / tokens, t = recv_src[i] % tokens;
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
        float z = 0.0f;
        for (int k = 0; k < topk; ++k)
            if (recv_topk_idx[i * topk + k] >= 0)
                z += recv_topk_weights[i * topk + k] *
                     expert_out[((long long)i * topk + k) * hidden + h];
        combine_buf[s][((long long)t * ranks + rank) * hidden + h] = z;
    }
    // STUB
    // // TODO: find the token's rank s and index t from recv_src[i]. For each h
    // // (the block's threads split them): add up weight * expert output over the
    // // token's experts on this rank, and store it in row t * ranks + rank of rank
    // // s's combine_buf.
    // END SOLUTION
}
// ANCHOR_END: combine

// ANCHOR: reduce
// On the token's own rank, one thread per (t, h): out[t * hidden + h] is the sum of
// combine_buf[(t * ranks + d) * hidden + h] over the ranks d the token went to
// (send_pos[t * ranks + d] >= 0). The other rows were never written.
extern "C" __global__ void
combine_reduce(const float* combine_buf, const int* send_pos, float* out,
               int tokens, int hidden, int ranks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // SOLUTION
    if (i >= tokens * hidden) return;
    int t = i / hidden, h = i % hidden;
    float sum = 0.0f;
    for (int d = 0; d < ranks; ++d)
        if (send_pos[t * ranks + d] >= 0)
            sum += combine_buf[((long long)t * ranks + d) * hidden + h];
    out[i] = sum;
    // STUB
    // // TODO: guard i; t = i / hidden, h = i % hidden; add up the rows of the
    // // ranks the token went to, and store the sum in out[i].
    // END SOLUTION
}
// ANCHOR_END: reduce
