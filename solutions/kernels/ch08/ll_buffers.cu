// Two buffers per rank, alternating every operation, with the next one's signals cleaned while
// the current operation runs: DeepEP's low-latency scheme, on the stage of
// gpubook/low_latency.cuh (read its first lines for the buffer layout and the helpers).
#include "gpubook/low_latency.cuh"

// ANCHOR: flip
// Which buffer this operation uses and which the next will: DeepEP writes
// `buffer = buffers[idx]; next_buffer = buffers[idx ^= 1]`.
__device__ void ll_flip(int* idx, int* cur, int* next) {
    // SOLUTION
    *cur = *idx;
    *idx ^= 1;
    *next = *idx;
    // STUB
    // // TODO: *cur is this operation's buffer (*idx); flip *idx; *next is the flipped one
    // END SOLUTION
}
// ANCHOR_END: flip

// ANCHOR: send
// SEND: warp 0 zeroes this rank's `next` signals, so the next operation needs no cleaning pass;
// the other warps write the tokens into each peer's `cur` buffer. Only after both (a barrier)
// does thread 0 send the counts, as -n-1, so that 0 keeps meaning "not arrived yet".
__device__ void ll_send(const LLCtx& c, int cur, int next) {
    // SOLUTION
    if (threadIdx.x < 32) {
        LLBuffer mine = ll_buffer(c, c.rank, next);
        for (int s = threadIdx.x; s < c.ranks; s += 32) ll_clean(c, &mine.signals[s]);
    } else {
        int senders = blockDim.x - 32, t = threadIdx.x - 32;
        for (int peer = 0; peer < c.ranks; peer++) {
            LLBuffer theirs = ll_buffer(c, peer, cur);
            int words = ll_count(c, peer) * c.hidden;
            for (int k = t; k < words; k += senders) {
                ll_slot(c, theirs, c.rank, k / c.hidden)[k % c.hidden] = ll_word(c, peer, k / c.hidden, k % c.hidden);
            }
        }
    }
    __syncthreads(); // the cleaning warp has reported and the tokens are written
    if (threadIdx.x == 0) {
        for (int peer = 0; peer < c.ranks; peer++) {
            ll_put_count(c, &ll_buffer(c, peer, cur).signals[c.rank], -ll_count(c, peer) - 1);
        }
    }
    // STUB
    // // TODO: warp 0 cleans this rank's `next` signals (ll_clean); the other warps write
    // // ll_count(c, peer) tokens of c.hidden words (ll_word) into ll_slot(c, peer's `cur`
    // // buffer, c.rank, i); then a barrier; then thread 0 sends each peer its count as -n-1
    // // (ll_put_count into the peer's `cur` signals[c.rank])
    // END SOLUTION
}
// ANCHOR_END: send

// ANCHOR: recv
// RECV: ready once every peer's signal is non-zero; then decode n = -v-1 and copy the tokens.
__device__ bool ll_recv(const LLCtx& c, int cur) {
    // SOLUTION
    LLBuffer mine = ll_buffer(c, c.rank, cur);
    for (int s = 0; s < c.ranks; s++) {
        if (ll_get_count(c, &mine.signals[s]) == 0) return false; // not arrived: poll again later
    }
    for (int s = 0; s < c.ranks; s++) {
        int n = -ll_get_count(c, &mine.signals[s]) - 1;
        if (threadIdx.x == 0) c.out_counts[s] = n;
        for (int k = threadIdx.x; k < n * c.hidden; k += blockDim.x) {
            c.out[(s * c.tokens + k / c.hidden) * c.hidden + k % c.hidden] = ll_slot(c, mine, s, k / c.hidden)[k % c.hidden];
        }
    }
    return true;
    // STUB
    // // TODO: read every peer's signal in buffer `cur` (ll_get_count); any 0: return false.
    // // Else decode each count n = -v-1 into c.out_counts[s], copy n tokens to c.out
    // // ([ranks][tokens][hidden]) and return true
    // return false;
    // END SOLUTION
}
// ANCHOR_END: recv

// The grader's harness plays the ranks (gpubook/low_latency.cuh); nothing to change here.
extern "C" __global__ void ll_run(int* region, int* shadow, int* state, int* out, int* report, int ranks, int tokens,
                                  int hidden, int target_op, unsigned seed) {
    ll_harness(region, shadow, state, out, report, ranks, tokens, hidden, target_op, seed);
}
