// Two buffers per rank, alternating every operation, with the next one's signals cleaned while
// the current operation runs: DeepEP's low-latency scheme, on the stage of
// gpubook/low_latency.cuh (read its first lines for the buffer layout and the helpers).
#include "gpubook/low_latency.cuh"

// ANCHOR: flip
// Which buffer this operation uses and which the next will: DeepEP writes
// `buffer = buffers[idx]; next_buffer = buffers[idx ^= 1]`.
__device__ void ll_flip(int* idx, int* cur, int* next) {
    // TODO: *cur is this operation's buffer (*idx); flip *idx; *next is the flipped one
}
// ANCHOR_END: flip

// ANCHOR: send
// SEND: warp 0 zeroes this rank's `next` signals, so the next operation needs no cleaning pass;
// the other warps write the tokens into each peer's `cur` buffer. Only after both (a barrier)
// does thread 0 send the counts, as -n-1, so that 0 keeps meaning "not arrived yet".
__device__ void ll_send(const LLCtx& c, int cur, int next) {
    // TODO: warp 0 cleans this rank's `next` signals (ll_clean); the other warps write
    // ll_count(c, peer) tokens of c.hidden words (ll_word) into ll_slot(c, peer's `cur`
    // buffer, c.rank, i); then a barrier; then thread 0 sends each peer its count as -n-1
    // (ll_put_count into the peer's `cur` signals[c.rank])
}
// ANCHOR_END: send

// ANCHOR: recv
// RECV: ready once every peer's signal is non-zero; then decode n = -v-1 and copy the tokens.
__device__ bool ll_recv(const LLCtx& c, int cur) {
    // TODO: read every peer's signal in buffer `cur` (ll_get_count); any 0: return false.
    // Else decode each count n = -v-1 into c.out_counts[s], copy n tokens to c.out
    // ([ranks][tokens][hidden]) and return true
    return false;
}
// ANCHOR_END: recv

// The grader's harness plays the ranks (gpubook/low_latency.cuh); nothing to change here.
extern "C" __global__ void ll_run(int* region, int* shadow, int* state, int* out, int* report, int ranks, int tokens,
                                  int hidden, int target_op, unsigned seed) {
    ll_harness(region, shadow, state, out, report, ranks, tokens, hidden, target_op, seed);
}
