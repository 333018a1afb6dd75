// Chapter 6's prefix sums for `gpubook perf-bench`: y[i] = x[0] + ... + x[i] (inclusive, u32,
// wrapping), three ways.
//
// 1. Scan, then add (the exercise's design): each block of 256 scans its 256 elements and
//    writes its total; the totals are scanned the same way (recursively, on the host's side);
//    a last kernel adds each block's offset. 2 reads and 2 writes of the data.
// 2. Reduce, then scan: one pass adds up each tile, one block scans the tile sums, a second pass
//    scans each tile from its offset. 2 reads and 1 write.
// 3. One pass, decoupled look-back (Merrill and Garland, 2016): each block scans its tile,
//    publishes the tile's total, and waits only until its predecessors have published theirs.
//    1 read and 1 write: what a copy moves.
//
// Tiles (2 and 3) are 8192 elements, 128 threads, each thread loading sixteen uint4s.

#define FULL 0xffffffffu
// 128 threads of 16 uint4s: the fastest shape scripts/gpu/scan-tune found on an H200 (it tries
// others with -DTHREADS and -DVEC).
#ifndef THREADS
#define THREADS 128
#endif
#define WARPS (THREADS / 32)
#ifndef VEC
#define VEC 16
#endif
#define TILE (THREADS * VEC * 4)

// ---- 1. scan, then add ------------------------------------------------------------------------

// Inclusive scan over the 32 lanes of a warp (all 32 must call it).
__device__ unsigned warp_inclusive_scan(unsigned v) {
    int lane = threadIdx.x % 32;
    for (int d = 1; d < 32; d *= 2) {
        unsigned up = __shfl_up_sync(FULL, v, d);
        if (lane >= d) v += up;
    }
    return v;
}

// y = the inclusive scan of each block's blockDim.x elements (a multiple of 32); block_sums[b] =
// block b's total.
extern "C" __global__ void scan_blocks(const unsigned* x, unsigned* y, unsigned* block_sums, int n) {
    __shared__ unsigned warp_totals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned v = warp_inclusive_scan(i < n ? x[i] : 0u);
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned t = warp_inclusive_scan(lane < blockDim.x / 32 ? warp_totals[lane] : 0u);
        warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    if (i < n) y[i] = v;
    if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = v;
}

// y[i] += the scanned total of the blocks before i's block.
extern "C" __global__ void add_offsets(unsigned* y, const unsigned* scanned_sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) y[i] += scanned_sums[blockIdx.x - 1];
}

// ---- tiles ------------------------------------------------------------------------------------

// This thread's part of the tile at `base`: chunk k holds elements base + k * THREADS * 4 +
// 4 * threadIdx.x .. + 3, so the lanes of a warp load 512 consecutive bytes at once.
__device__ void load_tile(const unsigned* x, size_t base, size_t n, uint4 v[VEC]) {
    for (int k = 0; k < VEC; k++) {
        size_t i = base + (size_t)k * THREADS * 4 + 4 * threadIdx.x;
        if (i + 3 < n) {
            v[k] = ((const uint4*)x)[i / 4];
        } else {
            v[k].x = i < n ? x[i] : 0u;
            v[k].y = i + 1 < n ? x[i + 1] : 0u;
            v[k].z = i + 2 < n ? x[i + 2] : 0u;
            v[k].w = i + 3 < n ? x[i + 3] : 0u;
        }
    }
}

__device__ void store_tile(unsigned* y, size_t base, size_t n, const uint4 v[VEC]) {
    for (int k = 0; k < VEC; k++) {
        size_t i = base + (size_t)k * THREADS * 4 + 4 * threadIdx.x;
        if (i + 3 < n) {
            ((uint4*)y)[i / 4] = v[k];
        } else {
            if (i < n) y[i] = v[k].x;
            if (i + 1 < n) y[i + 1] = v[k].y;
            if (i + 2 < n) y[i + 2] = v[k].z;
        }
    }
}

// Turns the tile in registers into its inclusive scan (from the tile's start) and returns the
// tile's total. Four scans side by side, one per chunk: within each uint4, across the lanes
// with shuffles, across the warps through `warp_totals`; then the chunks follow each other.
__device__ unsigned scan_tile(uint4 v[VEC], unsigned (*warp_totals)[WARPS]) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned own[VEC], incl[VEC];
    for (int k = 0; k < VEC; k++) {
        v[k].y += v[k].x;
        v[k].z += v[k].y;
        v[k].w += v[k].z;
        own[k] = incl[k] = v[k].w;
    }
    for (int d = 1; d < 32; d *= 2) {
        for (int k = 0; k < VEC; k++) {
            unsigned up = __shfl_up_sync(FULL, incl[k], d);
            if (lane >= d) incl[k] += up;
        }
    }
    if (lane == 31) {
        for (int k = 0; k < VEC; k++) warp_totals[k][warp] = incl[k];
    }
    __syncthreads();
    if (warp == 0) {
        for (int k = 0; k < VEC; k++) {
            unsigned t = lane < WARPS ? warp_totals[k][lane] : 0u;
            for (int d = 1; d < WARPS; d *= 2) {
                unsigned up = __shfl_up_sync(FULL, t, d);
                if (lane >= d) t += up;
            }
            if (lane < WARPS) warp_totals[k][lane] = t;
        }
    }
    __syncthreads();
    unsigned before_chunk = 0;
    for (int k = 0; k < VEC; k++) {
        unsigned before = before_chunk + (warp > 0 ? warp_totals[k][warp - 1] : 0u) + incl[k] - own[k];
        v[k].x += before;
        v[k].y += before;
        v[k].z += before;
        v[k].w += before;
        before_chunk += warp_totals[k][WARPS - 1];
    }
    return before_chunk;
}

__device__ void add_to_tile(uint4 v[VEC], unsigned offset) {
    for (int k = 0; k < VEC; k++) {
        v[k].x += offset;
        v[k].y += offset;
        v[k].z += offset;
        v[k].w += offset;
    }
}

// ---- 2. reduce, then scan ---------------------------------------------------------------------

// tile_sums[b] = the sum of tile b.
extern "C" __global__ void reduce_tiles(const unsigned* x, unsigned* tile_sums, int n) {
    __shared__ unsigned warp_sums[WARPS];
    uint4 v[VEC];
    load_tile(x, (size_t)blockIdx.x * TILE, (size_t)n, v);
    unsigned s = 0;
    for (int k = 0; k < VEC; k++) s += v[k].x + v[k].y + v[k].z + v[k].w;
    for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(FULL, s, d);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int w = 0; w < WARPS; w++) total += warp_sums[w];
        tile_sums[blockIdx.x] = total;
    }
}

// The exclusive scan of `count` values, in place, by one block (blockDim.x = 1024), 1024 values
// at a time with a running carry.
extern "C" __global__ void scan_tile_sums(unsigned* sums, int count) {
    __shared__ unsigned warp_totals[32];
    __shared__ unsigned carry;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (threadIdx.x == 0) carry = 0;
    for (int base = 0; base < count; base += blockDim.x) {
        int i = base + threadIdx.x;
        unsigned own = i < count ? sums[i] : 0u;
        unsigned v = warp_inclusive_scan(own);
        if (lane == 31) warp_totals[warp] = v;
        __syncthreads();
        if (warp == 0) warp_totals[lane] = warp_inclusive_scan(lane < blockDim.x / 32 ? warp_totals[lane] : 0u);
        __syncthreads();
        unsigned before = carry + (warp > 0 ? warp_totals[warp - 1] : 0u) + v - own;
        if (i < count) sums[i] = before;
        __syncthreads();  // every thread has read carry and warp_totals
        if (threadIdx.x == 0) carry += warp_totals[blockDim.x / 32 - 1];
        __syncthreads();
    }
}

// y = the scan of each tile, from the tile's offset (the exclusive scan of the tile sums).
extern "C" __global__ void scan_tiles(const unsigned* x, unsigned* y, const unsigned* offsets, int n) {
    __shared__ unsigned warp_totals[VEC][WARPS];
    uint4 v[VEC];
    size_t base = (size_t)blockIdx.x * TILE;
    load_tile(x, base, (size_t)n, v);
    scan_tile(v, warp_totals);
    add_to_tile(v, offsets[blockIdx.x]);
    store_tile(y, base, (size_t)n, v);
}

// ---- 3. one pass, decoupled look-back ---------------------------------------------------------

// A tile's status word: a flag in the high half, a value in the low half, written and read as
// one 64-bit word so that no reader sees a flag without its value.
#define NOT_READY 0ull
#define AGGREGATE (1ull << 32)   // the value is the tile's own total
#define INCLUSIVE (2ull << 32)   // the value is the total of every tile up to this one

// Warp 0 of tile `tile`: publishes the tile's total, then walks back over its predecessors 32
// at a time, adding their totals, until it meets one that knows its inclusive prefix; publishes
// its own and returns the exclusive prefix (everything before this tile).
__device__ unsigned look_back(volatile unsigned long long* status, unsigned tile, unsigned total) {
    int lane = threadIdx.x % 32;
    if (tile == 0) {
        if (lane == 0) status[0] = INCLUSIVE | total;
        return 0;
    }
    if (lane == 0) status[tile] = AGGREGATE | total;
    unsigned prefix = 0;
    for (long p = (long)tile - 1;; p -= 32) {
        long q = p - lane;  // lane 0 looks at the nearest predecessor
        unsigned long long s;
        do {
            s = q >= 0 ? status[q] : INCLUSIVE;  // before tile 0: nothing, and known
        } while (__any_sync(FULL, (s >> 32) == 0));
        unsigned done = __ballot_sync(FULL, (s >> 32) == 2);
        unsigned value = (unsigned)s;
        if (done != 0 && lane > __ffs(done) - 1) value = 0;  // beyond the nearest inclusive one
        for (int d = 16; d > 0; d /= 2) value += __shfl_xor_sync(FULL, value, d);
        prefix += value;
        if (done != 0) break;
    }
    if (lane == 0) status[tile] = INCLUSIVE | (prefix + total);
    return prefix;
}

// `status` holds one word per tile, then a ticket counter; all zero before the launch. Blocks
// take tiles in the order they start (the ticket), so every tile's predecessors are running or
// done: waiting for them cannot deadlock, whatever order the GPU starts blocks in.
extern "C" __global__ void scan_decoupled(const unsigned* x, unsigned* y, unsigned long long* status, int n) {
    __shared__ unsigned warp_totals[VEC][WARPS];
    __shared__ unsigned tile_s, prefix_s;
    unsigned tiles = gridDim.x;
    if (threadIdx.x == 0) tile_s = atomicAdd((unsigned*)(status + tiles), 1u);
    __syncthreads();
    unsigned tile = tile_s;
    size_t base = (size_t)tile * TILE;
    uint4 v[VEC];
    load_tile(x, base, (size_t)n, v);
    unsigned total = scan_tile(v, warp_totals);
    if (threadIdx.x < 32) {
        unsigned prefix = look_back(status, tile, total);
        if (threadIdx.x == 0) prefix_s = prefix;
    }
    __syncthreads();
    add_to_tile(v, prefix_s);
    store_tile(y, base, (size_t)n, v);
}
