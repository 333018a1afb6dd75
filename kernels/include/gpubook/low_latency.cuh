// Chapter 8: a stage on which simulated ranks run a DeepEP-style low-latency exchange, so that
// a grader can try many interleavings of them and catch every stale or early read.
//
// Each rank owns two buffers (in one registered region), each holding
//   signals[ranks]                 signals[s]: the count rank s sent in this buffer's current
//                                  operation, as -n-1; 0 means "not arrived yet"
//   recv[ranks][tokens][hidden]    the tokens rank s sent
// An operation (think: one dispatch or one combine) is, for every rank, a SEND phase (write the
// tokens into each peer's buffer, then the count into the peer's signal word) and a RECV phase
// (wait until every peer's count has arrived, then read the tokens). Ranks are not in lockstep:
// a fast rank may already send the next operation while a slow one still receives this one.
//
// Your kernel file defines the three protocol functions declared below; `ll_harness` plays the
// ranks inside one thread block, in an order drawn from a seed, and checks every read through the
// signal helpers, and that what RECV returns is what went through the receiver's buffer: the
// counts and tokens of an operation carry a stamp that only its SEND phase knows, so a receiver
// learns them from its buffer or not at all. On a real system the ranks are GPUs and the writes go over NVLink or RDMA; the
// protocol, and its mistakes, are the same.
#ifndef GPUBOOK_LOW_LATENCY_CUH
#define GPUBOOK_LOW_LATENCY_CUH

#define LL_MAX_RANKS 8
#define LL_MAX_TOKENS 15
#define LL_MAX_HIDDEN 8

// ANCHOR: ctx
// What a rank knows during one phase of one operation.
struct LLCtx {
    int rank;        // this rank
    int op;          // the operation it is in (0, 1, 2, ...)
    int ranks;       // how many ranks take part
    int tokens;      // the most tokens one rank sends another per operation
    int hidden;      // ints per token
    int* region;     // every rank's two buffers, one after another
    int* shadow;     // the harness's record of every signal word (who wrote what, when)
    int* report;     // the first violation found
    int* out;        // RECV: tokens received, [ranks][tokens][hidden]
    int* out_counts; // RECV: counts received, [ranks]
    unsigned seed;
    unsigned stamp;  // SEND: mixed into this operation's counts and tokens (0 during RECV)
    int phase;       // LL_SEND or LL_RECV
};

// One of a rank's two buffers.
struct LLBuffer {
    int* signals; // [ranks]
    int* recv;    // [ranks][tokens][hidden]
};

// ANCHOR_END: ctx

#define LL_SEND 0
#define LL_RECV 1

// ---- What your kernel file defines --------------------------------------------------------

// Called once at the start of each operation, by one thread: which buffer this operation uses
// (*cur) and which the next one will (*next), advancing the rank's *idx.
__device__ void ll_flip(int* idx, int* cur, int* next);
// SEND phase of operation c.op for rank c.rank; run by every thread of the block.
__device__ void ll_send(const LLCtx& c, int cur, int next);
// RECV phase; run by every thread. Returns true (in every thread) once every peer's count has
// arrived in buffer `cur`, after copying the tokens to c.out and the counts to c.out_counts;
// false if some count has not arrived yet (the harness will call again later).
__device__ bool ll_recv(const LLCtx& c, int cur);

// ---- Helpers for your functions ------------------------------------------------------------
// ANCHOR: helpers_doc
// ll_buffer(c, rank, idx)        buffer idx (0 or 1) of `rank`: .signals[ranks], .recv
// ll_slot(c, buffer, src, i)     where token i from rank src goes in that buffer (c.hidden ints)
// ll_count(c, dst)               how many tokens this rank sends dst in this operation
// ll_word(c, dst, i, j)          word j of token i this rank sends dst
// ll_put_count(c, signal, v)     send a count: write v into a peer's signal word
// ll_get_count(c, signal)        read a signal word; 0 means nothing has arrived yet
// ll_clean(c, signal)            zero a signal word for a later operation
// ANCHOR_END: helpers_doc

// Violations, in report[0] (the first one found wins).
#define LL_OK 0
#define LL_BAD_FLIP 1       // ll_flip gave a buffer index other than 0 or 1
#define LL_ZERO_COUNT 2     // a count was written as 0, which reads as "not arrived"
#define LL_STALE 3          // a signal read returned a count from an earlier operation
#define LL_WIPED 4          // a clean zeroed a count nobody had read yet
#define LL_OVERWRITE 5      // a count landed on one nobody had read yet
#define LL_WRONG_COUNT 6    // RECV reported a count other than the one sent
#define LL_WRONG_DATA 7     // RECV returned a token word other than the one sent
#define LL_DEADLOCK 8       // every unfinished rank waits for a count that will never come
#define LL_NOT_SIGNAL 9     // a signal helper was given a pointer that is not a signal word
#define LL_WRONG_SLOT 10    // a rank wrote its count into another rank's signal slot
#define LL_NOT_IN_BUFFER 11 // RECV returned a token that is not in the receiver's buffer
#define LL_REBUILT 12       // RECV called ll_count or ll_word, which say what this rank sends
// report[1..]: rank, op, peer, other op, value, buffer, token, word; report[16..]: statistics.
#define LL_REPORT_INTS 24

__device__ __forceinline__ void ll_fail(int* report, int kind, int rank, int op, int peer, int other, int value, int buf,
                                        int tok, int word) {
    if (atomicCAS(report, 0, kind) == 0) {
        report[1] = rank;
        report[2] = op;
        report[3] = peer;
        report[4] = other;
        report[5] = value;
        report[6] = buf;
        report[7] = tok;
        report[8] = word;
    }
}

__device__ __forceinline__ int ll_buffer_ints(const LLCtx& c) {
    return c.ranks + c.ranks * c.tokens * c.hidden;
}
// Buffer `idx` (0 or 1) of rank `rank`.
__device__ __forceinline__ LLBuffer ll_buffer(const LLCtx& c, int rank, int idx) {
    int* base = c.region + (rank * 2 + idx) * ll_buffer_ints(c);
    LLBuffer b;
    b.signals = base;
    b.recv = base + c.ranks;
    return b;
}
// Where token `i` from rank `src` goes in buffer `b`.
__device__ __forceinline__ int* ll_slot(const LLCtx& c, LLBuffer b, int src, int i) {
    return b.recv + (src * c.tokens + i) * c.hidden;
}
// A hash of (stamp, op, src, dst): what makes an operation's counts and tokens its own.
__device__ __forceinline__ unsigned ll_mix(unsigned seed, unsigned stamp, int op, int src, int dst) {
    unsigned h = seed ^ stamp * 0x27D4EB2Fu ^ (unsigned)op * 0x9E3779B1u ^ (unsigned)(src * 31 + dst) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}
// How many tokens rank `src` sends rank `dst` in operation `op` (0 ..= tokens), under `stamp`.
__device__ __forceinline__ int ll_count_stamped(unsigned seed, unsigned stamp, int tokens, int op, int src, int dst) {
    return (int)(ll_mix(seed, stamp, op, src, dst) % (unsigned)(tokens + 1));
}
// Word j of token i from `src` to `dst` in operation `op`: it says where it came from, so a read
// of the wrong operation's data is recognised; bits 27-30 check it against the stamp.
__device__ __forceinline__ int ll_word_stamped(unsigned seed, unsigned stamp, int op, int src, int dst, int i, int j) {
    int check = (int)(ll_mix(seed, stamp, op, src, dst) >> 20) & 0xF;
    return (check << 27) | ((op & 0x3FFF) << 13) | (src << 10) | (dst << 7) | (i << 3) | j;
}
// What this rank sends; only SEND may ask: a receiver learns what arrived from its buffer.
__device__ __forceinline__ bool ll_sending(const LLCtx& c, int helper) {
    if (c.phase == LL_SEND) return true;
    ll_fail(c.report, LL_REBUILT, c.rank, c.op, -1, helper, 0, -1, -1, -1);
    return false;
}
// Tokens this rank sends rank `dst` in the current operation.
__device__ __forceinline__ int ll_count(const LLCtx& c, int dst) {
    if (!ll_sending(c, 0)) return 0;
    return ll_count_stamped(c.seed, c.stamp, c.tokens, c.op, c.rank, dst);
}
// Word j of token i this rank sends `dst` in the current operation.
__device__ __forceinline__ int ll_word(const LLCtx& c, int dst, int i, int j) {
    if (!ll_sending(c, 1)) return -1;
    return ll_word_stamped(c.seed, c.stamp, c.op, c.rank, dst, i, j);
}

// The shadow of a signal word: [op of the last write, state, op of the last clean, writer + 1
// (0: never written)].
#define LL_SHADOW_INTS 4
#define LL_CLEAN 0
#define LL_UNREAD 1
#define LL_READ 2

// Which (owner rank, buffer, source) a signal pointer names; false if it is not a signal word.
__device__ __forceinline__ bool ll_locate(const LLCtx& c, const int* p, int* owner, int* buf, int* src) {
    long off = (long)(p - c.region);
    int per = ll_buffer_ints(c);
    if (off < 0 || off >= (long)c.ranks * 2 * per) return false;
    int rb = (int)(off / per), within = (int)(off % per);
    if (within >= c.ranks) return false;
    *owner = rb / 2;
    *buf = rb % 2;
    *src = within;
    return true;
}

__device__ __forceinline__ int* ll_shadow(const LLCtx& c, int owner, int buf, int src) {
    return c.shadow + ((owner * 2 + buf) * c.ranks + src) * LL_SHADOW_INTS;
}

// Sends a count: writes `value` into a peer's signal word (a release store on a real system,
// after the tokens it announces).
__device__ __forceinline__ void ll_put_count(const LLCtx& c, int* signal, int value) {
    int owner, buf, src;
    if (!ll_locate(c, signal, &owner, &buf, &src)) {
        ll_fail(c.report, LL_NOT_SIGNAL, c.rank, c.op, -1, 0, value, -1, -1, -1);
        return;
    }
    if (src != c.rank) ll_fail(c.report, LL_WRONG_SLOT, c.rank, c.op, owner, src, value, buf, -1, -1);
    if (value == 0) ll_fail(c.report, LL_ZERO_COUNT, c.rank, c.op, owner, 0, value, buf, -1, -1);
    int* sh = ll_shadow(c, owner, buf, src);
    if (sh[1] == LL_UNREAD) ll_fail(c.report, LL_OVERWRITE, c.rank, c.op, owner, sh[0], value, buf, -1, -1);
    *(volatile int*)signal = value;
    sh[0] = c.op;
    sh[1] = LL_UNREAD;
    sh[3] = c.rank + 1;
}

// Reads a signal word (an acquire load on a real system): 0 means nothing has arrived yet.
__device__ __forceinline__ int ll_get_count(const LLCtx& c, int* signal) {
    int owner, buf, src;
    if (!ll_locate(c, signal, &owner, &buf, &src)) {
        ll_fail(c.report, LL_NOT_SIGNAL, c.rank, c.op, -1, 0, 0, -1, -1, -1);
        return 0;
    }
    int v = *(volatile int*)signal;
    // Every thread reads the same value, so thread 0 alone checks it against the record.
    if (v != 0 && threadIdx.x == 0) {
        int* sh = ll_shadow(c, owner, buf, src);
        if (sh[0] != c.op) ll_fail(c.report, LL_STALE, c.rank, c.op, src, sh[0], v, buf, -1, -1);
        sh[1] = LL_READ;
    }
    return v;
}

// Zeroes a signal word for a later operation.
__device__ __forceinline__ void ll_clean(const LLCtx& c, int* signal) {
    int owner, buf, src;
    if (!ll_locate(c, signal, &owner, &buf, &src)) {
        ll_fail(c.report, LL_NOT_SIGNAL, c.rank, c.op, -1, 0, 0, -1, -1, -1);
        return;
    }
    int* sh = ll_shadow(c, owner, buf, src);
    if (sh[1] == LL_UNREAD) ll_fail(c.report, LL_WIPED, c.rank, c.op, src, sh[0], *signal, buf, -1, -1);
    *(volatile int*)signal = 0;
    sh[1] = LL_CLEAN;
    sh[2] = c.op;
}

// ---- The harness ---------------------------------------------------------------------------

// Per-rank state, kept in device memory between launches.
#define LL_STATE_INTS 8
#define LL_S_OP 0      // operation the rank is in
#define LL_S_PHASE 1   // 0: SEND next, 1: RECV next
#define LL_S_IDX 2     // the rank's buffer index (ll_flip's *idx)
#define LL_S_CUR 3     // buffer of the current operation
#define LL_S_NEXT 4    // buffer of the next one
#define LL_S_POLLED 5  // polled without success since anything last happened
// state[ranks * LL_STATE_INTS + 0]: the scheduler's random state; + 1: the choice it broadcasts;
// + 2: RECV's answer; + 3: the stamp (set by the grader; never in an LLCtx during RECV).

__device__ __forceinline__ unsigned ll_rand(unsigned* s) {
    unsigned x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

// Whether every peer has done its SEND of rank r's current operation: what a correct RECV
// would find. The scheduler polls a rank that is not ready yet only now and then (enough to catch
// a RECV that goes ahead on a stale count, not so often that the run is mostly waiting).
__device__ __forceinline__ bool ll_all_sent(const int* state, int ranks, int r) {
    int op = state[r * LL_STATE_INTS + LL_S_OP];
    for (int q = 0; q < ranks; q++) {
        const int* p = state + q * LL_STATE_INTS;
        if (p[LL_S_OP] == op && p[LL_S_PHASE] == 0) return false;
    }
    return true;
}

// Thread 0: the next rank to run (flipping its buffers when it starts an operation), -1 when
// done or after a violation, -2 on deadlock.
__device__ int ll_choose(int* state, int* shared, int* report, int ranks, int target_op) {
    // An atomic read: other threads may still be reporting (atomically) what they checked.
    if (atomicAdd(&report[0], 0) != LL_OK) return -1;
    int unfinished = 0, stuck = 0;
    for (int r = 0; r < ranks; r++) {
        int* s = state + r * LL_STATE_INTS;
        if (s[LL_S_OP] < target_op) {
            unfinished++;
            if (s[LL_S_PHASE] == 1 && s[LL_S_POLLED]) stuck++;
        }
    }
    if (unfinished == 0) return -1;
    if (stuck == unfinished) return -2;
    // A rank that polled in vain since anything last happened would poll in vain again.
    int candidates = unfinished - stuck, choice = -1;
    for (;;) {
        int k = (int)(ll_rand((unsigned*)&shared[0]) % (unsigned)candidates);
        for (int r = 0; r < ranks; r++) {
            const int* q = state + r * LL_STATE_INTS;
            bool stuck_here = q[LL_S_PHASE] == 1 && q[LL_S_POLLED];
            if (q[LL_S_OP] < target_op && !stuck_here && k-- == 0) choice = r;
        }
        int* s = state + choice * LL_STATE_INTS;
        bool early_poll = s[LL_S_PHASE] == 1 && !ll_all_sent(state, ranks, choice);
        if (!early_poll || ll_rand((unsigned*)&shared[0]) % 4 == 0) break;
    }
    int* s = state + choice * LL_STATE_INTS;
    if (s[LL_S_PHASE] == 0) {
        s[LL_S_CUR] = -1;
        s[LL_S_NEXT] = -1;
        ll_flip(&s[LL_S_IDX], &s[LL_S_CUR], &s[LL_S_NEXT]);
        bool ok = (s[LL_S_CUR] == 0 || s[LL_S_CUR] == 1) && (s[LL_S_NEXT] == 0 || s[LL_S_NEXT] == 1);
        if (!ok) {
            ll_fail(report, LL_BAD_FLIP, choice, s[LL_S_OP], -1, s[LL_S_NEXT], s[LL_S_CUR], -1, -1, -1);
            return -1;
        }
    }
    return choice;
}

// Thread 0, on deadlock: name the first rank that waits, and the count it waits for.
__device__ void ll_deadlock(const int* region, const int* shadow, const int* state, int* report, int ranks, int tokens,
                            int hidden, int target_op) {
    for (int w = 0; w < ranks; w++) {
        const int* s = state + w * LL_STATE_INTS;
        if (s[LL_S_OP] >= target_op) continue;
        int cur = s[LL_S_CUR];
        const int* sig = region + (w * 2 + cur) * (ranks + ranks * tokens * hidden);
        for (int src = 0; src < ranks; src++) {
            if (*(const volatile int*)&sig[src] != 0) continue;
            const int* p = state + src * LL_STATE_INTS;
            // Has src already done its SEND of this operation?
            int sent = p[LL_S_OP] > s[LL_S_OP] || (p[LL_S_OP] == s[LL_S_OP] && p[LL_S_PHASE] == 1);
            const int* sh = shadow + ((w * 2 + cur) * ranks + src) * LL_SHADOW_INTS;
            ll_fail(report, LL_DEADLOCK, w, s[LL_S_OP], src, sh[2], sent, cur, sh[0], sh[3]);
            return;
        }
    }
    ll_fail(report, LL_DEADLOCK, -1, -1, -1, -1, -1, -1, -1, -1);
}

// Thread 0, after a rank finished an operation: every stuck rank may now get further.
__device__ void ll_progress(int* state, int* report, int ranks) {
    for (int q = 0; q < ranks; q++) state[q * LL_STATE_INTS + LL_S_POLLED] = 0;
    int lo = state[LL_S_OP], hi = lo;
    for (int q = 0; q < ranks; q++) {
        int o = state[q * LL_STATE_INTS + LL_S_OP];
        lo = o < lo ? o : lo;
        hi = o > hi ? o : hi;
    }
    if (hi - lo > report[18]) report[18] = hi - lo; // the widest gap between fastest and slowest
}

// Runs the ranks until each has finished operation `target_op - 1`, or a violation is found.
// One block; the first warp cleans, the others send (DeepEP gives cleaning to one warp too).
// Thread 0 schedules and keeps the books; each barrier separates its writes from the reads.
__device__ void ll_harness(int* region, int* shadow, int* state, int* out, int* report, int ranks, int tokens, int hidden,
                           int target_op, unsigned seed) {
    int* shared = state + ranks * LL_STATE_INTS; // [rng, choice, RECV's answer]
    LLCtx c;
    c.ranks = ranks;
    c.tokens = tokens;
    c.hidden = hidden;
    c.region = region;
    c.shadow = shadow;
    c.report = report;
    c.seed = seed;
    unsigned stamp = (unsigned)shared[3];
    for (;;) {
        if (threadIdx.x == 0) shared[1] = ll_choose(state, shared, report, ranks, target_op);
        __syncthreads();
        int r = shared[1];
        if (r == -1) return;
        if (r == -2) {
            if (threadIdx.x == 0) ll_deadlock(region, shadow, state, report, ranks, tokens, hidden, target_op);
            return;
        }
        int* s = state + r * LL_STATE_INTS;
        c.rank = r;
        c.op = s[LL_S_OP];
        c.out = out + r * ranks * tokens * hidden;
        c.out_counts = out + ranks * ranks * tokens * hidden + r * ranks;
        int cur = s[LL_S_CUR], next = s[LL_S_NEXT];
        if (s[LL_S_PHASE] == 0) {
            c.phase = LL_SEND;
            c.stamp = stamp;
            ll_send(c, cur, next);
            __syncthreads();
            // This operation's RECV fills the rank's output itself: what is there now is poison
            // (the next choice's barrier orders these stores before it).
            for (int k = threadIdx.x; k < ranks * tokens * hidden; k += blockDim.x) c.out[k] = -2;
            for (int k = threadIdx.x; k < ranks; k += blockDim.x) c.out_counts[k] = -2;
            if (threadIdx.x == 0) {
                s[LL_S_PHASE] = 1;
                ll_progress(state, report, ranks);
            }
            continue;
        }
        c.phase = LL_RECV;
        c.stamp = 0;
        bool ready = ll_recv(c, cur);
        if (threadIdx.x == 0) shared[2] = ready ? 1 : 0;
        __syncthreads();
        if (shared[2] == 0) {
            if (threadIdx.x == 0) {
                s[LL_S_POLLED] = 1;
                report[16]++;
            }
            continue;
        }
        // Check what RECV returned against what was sent, and against what is in the buffer it
        // read (no other rank has run since: a receiver that returns the right values from
        // anywhere else is found here).
        LLBuffer mine = ll_buffer(c, r, cur);
        for (int src = threadIdx.x; src < ranks; src += blockDim.x) {
            int want = ll_count_stamped(seed, stamp, tokens, c.op, src, r), got = c.out_counts[src];
            if (got != want) ll_fail(report, LL_WRONG_COUNT, r, c.op, src, want, got, cur, -1, -1);
        }
        __syncthreads(); // a wrong count is the first thing to report: the tokens follow from it
        int per_src = tokens * hidden;
        for (int k = threadIdx.x; k < ranks * per_src; k += blockDim.x) {
            int src = k / per_src, i = (k % per_src) / hidden, j = k % hidden;
            if (i >= ll_count_stamped(seed, stamp, tokens, c.op, src, r)) continue;
            int want = ll_word_stamped(seed, stamp, c.op, src, r, i, j), got = c.out[k];
            int there = ll_slot(c, mine, src, i)[j];
            if (got != want) ll_fail(report, LL_WRONG_DATA, r, c.op, src, want, got, cur, i, j);
            else if (there != want) ll_fail(report, LL_NOT_IN_BUFFER, r, c.op, src, want, there, cur, i, j);
        }
        // No barrier needed: thread 0 changes only the books, which the others read after the
        // next one.
        if (threadIdx.x == 0) {
            s[LL_S_OP]++;
            s[LL_S_PHASE] = 0;
            report[17]++;
            ll_progress(state, report, ranks);
        }
    }
}

#endif
