// Dispatch inside a node, by stores into the peers' buffers (DeepEP's intranode
// dispatch, without its channels). Every rank runs both kernels; a world barrier
// separates them.

// ANCHOR: notify
// Rank `rank` writes its counts (num_tokens_per_rank: the tokens it sends to each
// rank) into row `rank` of EVERY rank's per_rank_buffer (ranks x ranks ints),
// reached through the peer table: per_rank_buffer[d] is rank d's copy. After the
// barrier each rank holds the whole matrix, per_rank_buffer[s * ranks + d] = tokens
// rank s sends to rank d (DeepEP's notify_dispatch).
extern "C" __global__ void
notify_dispatch(const int* num_tokens_per_rank, int* const* per_rank_buffer,
                int ranks, int rank) {
    // TODO: for every rank d and every column j (one (d, j) pair per thread, in
    // a loop over ranks * ranks), store num_tokens_per_rank[j] in row `rank`,
    // column j, of rank d's copy.
}
// ANCHOR_END: notify

// ANCHOR: dispatch
// One block per token t of this rank (blockIdx.x). For each rank d with
// send_pos[t][d] >= 0, the token goes to slot
//     (tokens every lower rank sends to d) + send_pos[t * ranks + d]
// of d's receive buffers, where the first term adds up column d of this rank's
// per_rank_buffer over the rows s < rank. Write, through the peer tables (recv_x[d]
// is rank d's buffer):
//   recv_x[d][slot * hidden + h]          the token's row
//   recv_topk_idx[d][slot * topk + k]     its k-th expert as d's LOCAL number
//                                         (e - d * per_rank) if e is on d, else -1
//   recv_topk_weights[d][slot * topk + k] its weight if the expert is on d, else 0
//   recv_src[d][slot]                     rank * tokens + t, where it came from
extern "C" __global__ void
dispatch(const float* x, const int* topk_idx, const float* topk_weights,
         const int* send_pos, const int* per_rank_buffer, float* const* recv_x,
         int* const* recv_topk_idx, float* const* recv_topk_weights,
         int* const* recv_src, int tokens, int hidden, int topk, int experts,
         int ranks, int rank) {
    int t = blockIdx.x;
    int per_rank = experts / ranks;
    // TODO: for each rank d with send_pos[t * ranks + d] >= 0: the slot is the
    // sum of column d of per_rank_buffer over the rows s < rank, plus the
    // position. Copy the token's row (the block's threads split the hidden
    // floats), its topk entries as d's local expert numbers (-1 and weight 0 for
    // experts elsewhere), and its source (thread 0) into rank d's buffers.
}
// ANCHOR_END: dispatch
