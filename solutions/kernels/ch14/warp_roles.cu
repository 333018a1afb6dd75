// A channel of DeepEP's internode dispatch, in one kernel: two blocks per channel, and inside
// each block warps with roles, named as DeepEP names them.
//
// block 2c + 1, the sender SM                    block 2c, the forwarder SM
//   warps 0 .. S-1   kRDMASender                   warps 0 .. G-1   kRDMAAndNVLForwarder
//   warp  S          kRDMASenderCoordinator        warp  G          kForwarderCoordinator
//
// The senders copy the channel's tokens into the channel's ring (the RDMA receive buffer on the
// forwarding GPU): sender warp w takes tokens w, w + S, w + 2S, ... The sender coordinator moves
// the ring's tail over the tokens every sender has written, a chunk at a time (DeepEP issues one
// RDMA put per chunk). Forwarder warp w serves GPU (w + c) % G of this node: it reads every token
// in the ring and stores the ones that go to its GPU into that GPU's receive buffer. The
// forwarder coordinator moves the ring's head over the tokens every forwarder is done with, so
// the senders may reuse their slots. Warps of different roles wait for each other only through
// memory, never at a __syncthreads.

#define MAX_WARPS 32

enum Role { kRDMASender, kRDMASenderCoordinator, kRDMAAndNVLForwarder, kForwarderCoordinator, kIdle };

// ANCHOR: roles
// Which role warp `warp` of this block plays (DeepEP's role_meta), and which sender or GPU it
// serves (*index).
__device__ Role role_of(bool forwarder_sm, int warp, int channel, int senders, int gpus, int* index) {
    *index = -1;
    if (forwarder_sm) {
        if (warp < gpus) {
            *index = (warp + channel) % gpus; // channels start on different GPUs
            return kRDMAAndNVLForwarder;
        }
        return warp == gpus ? kForwarderCoordinator : kIdle;
    }
    if (warp < senders) {
        *index = warp;
        return kRDMASender;
    }
    return warp == senders ? kRDMASenderCoordinator : kIdle;
}
// ANCHOR_END: roles

// ANCHOR: helpers
// Counters and progress words are read and written through volatile pointers: a plain load may
// be served from a register or this SM's L1 and never see another warp's or block's store.
__device__ __forceinline__ int ld_volatile(const int* p) {
    return *(const volatile int*)p;
}
__device__ __forceinline__ void st_volatile(int* p, int v) {
    *(volatile int*)p = v;
}

// About two seconds on a GPU: a wait that long is a deadlock. DeepEP's waits time out the same
// way, with a message, then a trap.
#define TIMEOUT_CYCLES 4000000000LL

// Spins until *p > v; after the timeout prints who waited for what, and traps.
__device__ void wait_above(const int* p, int v, const char* who) {
    long long start = clock64();
    while (ld_volatile(p) <= v) {
        if (clock64() - start > TIMEOUT_CYCLES) {
            printf("%s of block %d waited about 2 s for a counter to pass %d; "
                   "it stays at %d\n",
                   who, (int)blockIdx.x, v, ld_volatile(p));
            __trap();
        }
    }
}

// For a coordinator's polling loop: traps when it has gone on since `start` for the timeout.
__device__ void check_deadline(long long start, const char* who) {
    if (clock64() - start > TIMEOUT_CYCLES) {
        printf("%s of block %d polled about 2 s without finishing\n", who, (int)blockIdx.x);
        __trap();
    }
}
// ANCHOR_END: helpers

// ANCHOR: kernel
// x: [tokens][hidden], the tokens of this channel's sender; place[t * gpus + g]: token t's row in
// GPU g's receive buffer, or -1 if it does not go there. ring_x: [channels][slots][hidden] and
// ring_src: [channels][slots], the rings; counters: [channels][2], each ring's head and tail
// (zeroed). recv_x[g], recv_src[g]: GPU g's receive buffers. Grid: 2 x channels blocks of
// 32 x (max(senders, gpus) + 1) threads.
extern "C" __global__ void dispatch_roles(const float* x, const int* place, float* ring_x, int* ring_src, int* counters,
                                          float* const* recv_x, int* const* recv_src, int tokens, int hidden, int gpus,
                                          int slots, int chunk, int senders) {
    // progress[w]: how far worker warp w has got (the first token it has not finished).
    __shared__ int progress[MAX_WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int channel = blockIdx.x / 2, channels = gridDim.x / 2;
    const bool forwarder_sm = blockIdx.x % 2 == 0;
    const int per = (tokens + channels - 1) / channels;
    const int begin = min(tokens, channel * per), n = min(tokens, begin + per) - begin;
    int* head = counters + 2 * channel;
    int* tail = head + 1;
    float* ring = ring_x + (long long)channel * slots * hidden;
    int* ring_token = ring_src + (long long)channel * slots;
    int index;
    const Role role = role_of(forwarder_sm, warp, channel, senders, gpus, &index);
    // A sender's first token is its warp number; a forwarder starts at 0.
    if (threadIdx.x < MAX_WARPS) progress[threadIdx.x] = forwarder_sm ? 0 : threadIdx.x;
    __syncthreads(); // the last barrier: from here on, roles wait for each other through memory

    if (role == kRDMASender) {
        // SOLUTION
        for (int i = index; i < n; i += senders) {
            // The slot still holds token i - slots until every forwarder is past it.
            if (lane == 0) wait_above(head, i - slots, "kRDMASender");
            __syncwarp();
            int slot = i % slots;
            const float* row = x + (long long)(begin + i) * hidden;
            for (int h = lane; h < hidden; h += 32) ring[(long long)slot * hidden + h] = row[h];
            if (lane == 0) ring_token[slot] = begin + i;
            __syncwarp();
            if (lane == 0) {
                __threadfence(); // the row, before the progress that lets the coordinator publish it
                st_volatile(&progress[index], i + senders);
            }
        }
        // STUB
        // // TODO: for tokens i = index, index + senders, ... below n: lane 0 waits until slot
        // // i % slots is free (wait_above: head > i - slots); __syncwarp; the lanes copy the row of token
        // // begin + i into the slot and lane 0 writes begin + i into ring_token; __syncwarp; lane 0
        // // fences and records i + senders in progress[index]
        // END SOLUTION
    } else if (role == kRDMASenderCoordinator) {
        // SOLUTION
        int published = 0;
        const long long start = clock64();
        while (published < n) {
            check_deadline(start, "kRDMASenderCoordinator");
            // Lane l watches sender l; the tokens below every sender's progress are written.
            int mine = lane < senders ? ld_volatile(&progress[lane]) : n;
            int ready = min((int)__reduce_min_sync(0xffffffffu, (unsigned)mine), n);
            if (ready > published && (ready - published >= chunk || ready == n)) {
                if (lane == 0) {
                    __threadfence();
                    st_volatile(tail, ready); // one RDMA put of the chunk, then its tail
                }
                published = ready;
            }
        }
        // STUB
        // // TODO: until the tail reaches n (check_deadline in the loop): lane l < senders reads progress[l] (the others take n);
        // // ready = the minimum over the warp (__reduce_min_sync), at most n; when it is a chunk or
        // // more past what was published (or reaches n), lane 0 fences and stores it in the tail
        // END SOLUTION
    } else if (role == kRDMAAndNVLForwarder) {
        // SOLUTION
        const int g = index;
        for (int i = 0; i < n; ++i) {
            if (lane == 0) wait_above(tail, i, "kRDMAAndNVLForwarder"); // published yet?
            __syncwarp();
            int slot = i % slots;
            int t = __ldcg(ring_token + slot);
            int p = place[(long long)t * gpus + g];
            if (p >= 0) {
                const float* src = ring + (long long)slot * hidden;
                for (int h = lane; h < hidden; h += 32) recv_x[g][(long long)p * hidden + h] = __ldcg(src + h);
                if (lane == 0) recv_src[g][p] = t;
            }
            __syncwarp();
            if (lane == 0) st_volatile(&progress[warp], i + 1);
        }
        // STUB
        // // TODO: for every token i of the channel: lane 0 waits until the tail is past i (wait_above);
        // // __syncwarp; read the token's index t from ring_token (slot i % slots, with __ldcg) and
        // // its place p in GPU index; if p >= 0 the lanes copy the row into recv_x[index] at row p
        // // and lane 0 writes t into recv_src[index][p]; __syncwarp; lane 0 records i + 1 in
        // // progress[warp]
        // END SOLUTION
    } else if (role == kForwarderCoordinator) {
        // SOLUTION
        int released = 0;
        const long long start = clock64();
        while (released < n) {
            check_deadline(start, "kForwarderCoordinator");
            // A slot is free once EVERY forwarder is past its token.
            int mine = lane < gpus ? ld_volatile(&progress[lane]) : n;
            int done = (int)__reduce_min_sync(0xffffffffu, (unsigned)mine);
            if (done > released) {
                if (lane == 0) {
                    __threadfence();
                    st_volatile(head, done);
                }
                released = done;
            }
        }
        // STUB
        // // TODO: until the head reaches n (check_deadline in the loop): lane l < gpus reads progress[l] (the others take n);
        // // done = the minimum over the warp; when it passed what was released, lane 0 fences and
        // // stores it in the head
        // END SOLUTION
    }
}
// ANCHOR_END: kernel
