// Chapter 14: the stage on which a channel's ring buffer runs, so that a grader can slow either
// side down at random and catch a slot overwritten before it was read, or read before it was
// written.
//
// A launch has two blocks per channel, as DeepEP's intranode dispatch does: block 2c sends
// channel c's tokens, block 2c+1 receives them. Channel c takes tokens
// [c * ceil(n / C), min((c + 1) * ceil(n / C), n)) (DeepEP's get_channel_task_range). Between
// the two blocks sits the channel's ring: `slots` token rows in global memory, with a head and
// a tail counter. The sender moves the tail (tokens written), the receiver the head (tokens
// read); both only ever grow, and token i of the channel lives in slot i % slots.
//
// Your kernel file defines the two functions declared below. The harness calls them once per
// token, every thread of the block, and pauses for a random while before each call (how long,
// and which side, is the grader's choice, drawn from a seed).
#ifndef GPUBOOK_CHANNEL_RING_CUH
#define GPUBOOK_CHANNEL_RING_CUH

// ANCHOR: ring
// One channel's ring, as both of its blocks see it.
struct Ring {
    float* x;    // [slots][hidden]: the token rows
    int* src;    // [slots]: the index of the token each slot holds
    int* head;   // tokens the receiver has read (only the receiver moves it)
    int* tail;   // tokens the sender has written (only the sender moves it)
    int slots;   // rows in the ring
    int hidden;  // floats per row
};
// ANCHOR_END: ring

// ---- What your kernel file defines --------------------------------------------------------

// ANCHOR: decls
// The sender block puts token number i of its channel (row: its `hidden` floats; token: its
// index in x) into the ring. Called by every thread of the block, for i = 0, 1, 2, ...
__device__ void send_token(const Ring& r, int i, const float* row, int token);
// The receiver block takes token number i of its channel out of the ring: its row into `row`,
// its index into *token. Called by every thread of the block, for i = 0, 1, 2, ...
__device__ void receive_token(const Ring& r, int i, float* row, int* token);
// ANCHOR_END: decls

// ---- A helper for your functions -----------------------------------------------------------

// ANCHOR: wait
// Waits until *counter > value, reading it through a volatile pointer (a plain load may be
// served from a register or this SM's L1, and never see the other block's store); returns the
// value it saw. `counter` is r.head or r.tail. After about two seconds it prints what it waited
// for and traps: a wait that long is a deadlock (DeepEP's waits time out the same way).
__device__ int ring_wait_above(const Ring& r, const int* counter, int value);
// ANCHOR_END: wait

#define RING_TIMEOUT_CYCLES 4000000000LL

__device__ int ring_wait_above(const Ring& r, const int* counter, int value) {
    long long start = clock64();
    for (;;) {
        int now = *(const volatile int*)counter;
        if (now > value) return now;
        if (clock64() - start > RING_TIMEOUT_CYCLES) {
            printf("block %d waited about 2 s for %s > %d, and it stays at %d: nothing will move it\n", (int)blockIdx.x,
                   counter == r.head ? "the head" : counter == r.tail ? "the tail" : "a counter", value, now);
            __trap();
        }
    }
}

// ---- The harness ---------------------------------------------------------------------------

// A random pause before a call: `rounds` turns during which this block stands still and the
// other blocks run. On a GPU it spins for about a microsecond a round. The emulator's check mode
// runs one block at a time and lets another run only when every thread of the block waits: a
// thread waits when it reads a value it read at the same place before, so each round reads a
// word twice (a wait) and then changes it (progress, so the wait is not mistaken for a hang).
__device__ __forceinline__ void ring_pause(int rounds, int* word) {
#if defined(GPUBOOK_CHECK)
    for (int r = 0; r < 2 * rounds; ++r) {
        int v = *(volatile int*)word;
        if (r & 1) *(volatile int*)word = v + 1;
    }
#else
    (void)word;
    long long until = clock64() + 2000LL * rounds;
    while (clock64() < until) {
    }
#endif
}

// The channel's tokens: [*begin, *end).
__device__ __forceinline__ void ring_channel_range(int tokens, int channels, int c, int* begin, int* end) {
    int per = (tokens + channels - 1) / channels;
    *begin = min(tokens, c * per);
    *end = min(tokens, *begin + per);
}

// The whole launch: grid 2 x channels. `counters` holds [head, tail] per channel (zeroed);
// `pauses[block * per + i]` is the pause before that block's call for token i (per =
// ceil(tokens / channels)); `scratch` one zeroed word per block.
__device__ void channel_ring_harness(const float* x, float* recv_x, int* recv_src, float* ring_x, int* ring_src,
                                     int* counters, const int* pauses, int* scratch, int tokens, int hidden, int slots) {
    int channels = gridDim.x / 2, c = blockIdx.x / 2;
    bool sender = blockIdx.x % 2 == 0;
    int begin, end;
    ring_channel_range(tokens, channels, c, &begin, &end);
    int per = (tokens + channels - 1) / channels;
    Ring r;
    r.x = ring_x + (long long)c * slots * hidden;
    r.src = ring_src + (long long)c * slots;
    r.head = counters + 2 * c;
    r.tail = counters + 2 * c + 1;
    r.slots = slots;
    r.hidden = hidden;
    for (int i = 0; begin + i < end; ++i) {
        if (threadIdx.x == 0) ring_pause(pauses[blockIdx.x * per + i], scratch + blockIdx.x);
        __syncthreads();
        long long t = begin + i;
        if (sender) {
            send_token(r, i, x + t * hidden, (int)t);
        } else {
            receive_token(r, i, recv_x + t * hidden, recv_src + t);
        }
    }
}

#endif
