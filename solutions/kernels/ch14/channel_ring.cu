// A channel's ring buffer between a sender block and a receiver block, with flow control: the
// sender never overwrites a slot the receiver has not read, and the receiver never reads a slot
// the sender has not written. The stage is gpubook/channel_ring.cuh (read its first lines).
#include "gpubook/channel_ring.cuh"

// ANCHOR: send
// Token number i of the channel goes into slot i % r.slots. The slot is free once the receiver
// has read token i - r.slots, that is once *r.head > i - r.slots. Publish it by moving the tail
// to i + 1, after every thread has written its part of the row.
__device__ void send_token(const Ring& r, int i, const float* row, int token) {
    // SOLUTION
    if (threadIdx.x == 0) ring_wait_above(r, r.head, i - r.slots); // a full ring: wait for the receiver
    __syncthreads();
    int slot = i % r.slots;
    float* dst = r.x + (long long)slot * r.hidden;
    for (int h = threadIdx.x; h < r.hidden; h += blockDim.x) dst[h] = row[h];
    if (threadIdx.x == 0) r.src[slot] = token;
    __syncthreads(); // every part of the row is written
    if (threadIdx.x == 0) {
        __threadfence(); // the row, before the tail that announces it
        *(volatile int*)r.tail = i + 1;
    }
    // STUB
    // // TODO: thread 0 waits while the ring is full (ring_wait_above on the head); a barrier;
    // // the threads copy the row into slot i % slots and thread 0 writes the token's index into
    // // r.src; a barrier; thread 0 fences (__threadfence) and moves the tail to i + 1
    // END SOLUTION
}
// ANCHOR_END: send

// ANCHOR: receive
// Token number i is in slot i % r.slots once *r.tail > i. Copy it out, then hand the slot back
// by moving the head to i + 1.
__device__ void receive_token(const Ring& r, int i, float* row, int* token) {
    // SOLUTION
    if (threadIdx.x == 0) ring_wait_above(r, r.tail, i); // nothing new yet: wait for the sender
    __syncthreads();
    int slot = i % r.slots;
    const float* src = r.x + (long long)slot * r.hidden;
    // __ldcg: through L2, past this SM's L1, which may still hold the token this slot held
    // r.slots tokens ago (L1 is not kept coherent with other SMs' stores).
    for (int h = threadIdx.x; h < r.hidden; h += blockDim.x) row[h] = __ldcg(src + h);
    if (threadIdx.x == 0) *token = __ldcg(r.src + slot);
    __syncthreads(); // every part of the row is read
    if (threadIdx.x == 0) {
        __threadfence(); // the reads, before the head that frees the slot
        *(volatile int*)r.head = i + 1;
    }
    // STUB
    // // TODO: thread 0 waits until the tail is past i (ring_wait_above); a barrier; the threads
    // // copy slot i % slots into row (with __ldcg) and thread 0 stores r.src's entry in *token;
    // // a barrier; thread 0 fences (__threadfence) and moves the head to i + 1
    // END SOLUTION
}
// ANCHOR_END: receive

// The grader's stage runs the channels (gpubook/channel_ring.cuh); nothing to change here.
extern "C" __global__ void channel_ring(const float* x, float* recv_x, int* recv_src, float* ring_x, int* ring_src,
                                        int* counters, const int* pauses, int* scratch, int tokens, int hidden, int slots) {
    channel_ring_harness(x, recv_x, recv_src, ring_x, ring_src, counters, pauses, scratch, tokens, hidden, slots);
}
