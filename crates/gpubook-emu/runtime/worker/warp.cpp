// Warp collectives. Lanes named in the mask rendezvous: each parks with its request, and
// the last lane to arrive computes every lane's result and makes them all ready.
#include "access/races.h"
#include "access/inline_checks.h"
#include "worker.h"

namespace gpubook::rt {

namespace {

[[noreturn]] void fail_warp(Worker& w, const Thread& t, std::string message, const char* cls = "barrier_divergence") {
    Diagnostic d;
    d.cls = cls;
    d.message = std::move(message);
    d.pc = t.wait_pc;
    set_location(d, *w.blk, &t);
    fail_block(w, std::move(d));
}

// The lane whose value `lane` reads in a shuffle, or -1 for "keep your own value".
int shuffle_source(const WarpRequest& r, int lane) {
    int width = r.width;
    int segment = lane & ~(width - 1);
    int src;
    switch (r.op) {
    case GPUBOOK_WARP_SHFL: src = segment + (((r.arg % width) + width) % width); break;
    case GPUBOOK_WARP_SHFL_UP: src = lane - r.arg; if (src < segment) return -1; break;
    case GPUBOOK_WARP_SHFL_DOWN: src = lane + r.arg; if (src >= segment + width) return -1; break;
    default: src = lane ^ r.arg; if (src < segment || src >= segment + width) return -1; break; // XOR
    }
    return src >= 0 && src < int(kWarpSize) ? src : -1;
}

std::string bad_source(const Block& b, const Thread& t, unsigned wi, int src) {
    const Warp& wp = b.warps[wi];
    unsigned lane = t.linear % kWarpSize;
    const char* op = warp_op_name(t.warp.op);
    if (!(wp.exists >> src & 1)) {
        unsigned last = 31 - unsigned(__builtin_clz(wp.exists));
        return format("invalid shuffle: lane %u's %s reads lane %d, which does not exist: the block has %u "
                      "threads, so warp %u has only lanes 0-%u. The value it gets is undefined on a GPU. Make "
                      "the block a multiple of 32 threads, or keep the source lane below the warp's size "
                      "(and its mask to the lanes that exist).",
                      lane, op, src, b.nthreads, wi, last);
    }
    return format("invalid shuffle: lane %u's %s with mask 0x%08x reads lane %d, which is not in the mask. "
                  "The value it gets is undefined on a GPU: name every lane it reads from in the mask.",
                  lane, op, t.warp.mask, src);
}

int64_t as_signed(uint64_t v) { return int64_t(int32_t(uint32_t(v))); }

uint64_t reduce(int op, bool is_signed, const uint64_t* vals, unsigned lanes) {
    bool first = true;
    uint64_t acc = 0;
    for (unsigned l = 0; l < kWarpSize; l++) {
        if (!(lanes >> l & 1)) continue;
        uint64_t v = uint32_t(vals[l]);
        if (first) { acc = v; first = false; continue; }
        switch (op) {
        case GPUBOOK_WARP_REDUCE_ADD: acc = uint32_t(acc + v); break;
        case GPUBOOK_WARP_REDUCE_MIN:
            acc = is_signed ? (as_signed(v) < as_signed(acc) ? v : acc) : (v < acc ? v : acc); break;
        case GPUBOOK_WARP_REDUCE_MAX:
            acc = is_signed ? (as_signed(v) > as_signed(acc) ? v : acc) : (v > acc ? v : acc); break;
        case GPUBOOK_WARP_REDUCE_AND: acc &= v; break;
        case GPUBOOK_WARP_REDUCE_OR: acc |= v; break;
        default: acc ^= v; break;
        }
    }
    return acc;
}

} // namespace

const char* warp_op_name(int op) {
    static const char* names[] = {"__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                  "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync",
                                  "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
                                  "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
                                  "__reduce_or_sync", "__reduce_xor_sync"};
    return op >= 0 && op < int(sizeof names / sizeof *names) ? names[op] : "a warp function";
}

void resolve_warp(Worker& w, Block& b, unsigned wi, unsigned lanes) {
    Thread* lane_thread[kWarpSize] = {};
    uint64_t vals[kWarpSize] = {};
    const Thread* lead = nullptr;
    for (unsigned l = 0; l < kWarpSize; l++) {
        if (!(lanes >> l & 1)) continue;
        Thread* t = &b.threads[wi * kWarpSize + l];
        lane_thread[l] = t;
        vals[l] = t->warp.value;
        if (!lead) { lead = t; continue; }
        if (t->warp.op != lead->warp.op || t->warp.mask != lead->warp.mask) {
            std::vector<unsigned> a{lead->linear}, bl{t->linear};
            fail_warp(w, *t, format("warp divergence in warp %u: %s called %s with mask 0x%08x while %s "
                                    "called %s with mask 0x%08x. The lanes named in a mask must call the "
                                    "same warp function with the same mask.",
                                    wi, describe_threads(bl, w.launch->block).c_str(), warp_op_name(t->warp.op),
                                    t->warp.mask, describe_threads(a, w.launch->block).c_str(),
                                    warp_op_name(lead->warp.op), lead->warp.mask));
        }
    }
    const WarpRequest& r = lead->warp;
    uint64_t common = 0;
    switch (r.op) {
    case GPUBOOK_WARP_BALLOT:
    case GPUBOOK_WARP_ANY:
    case GPUBOOK_WARP_ALL: {
        unsigned ballot = 0;
        for (unsigned l = 0; l < kWarpSize; l++)
            if ((lanes >> l & 1) && vals[l]) ballot |= 1u << l;
        common = r.op == GPUBOOK_WARP_BALLOT ? ballot : r.op == GPUBOOK_WARP_ANY ? ballot != 0 : ballot == lanes;
        break;
    }
    case GPUBOOK_WARP_MATCH_ALL: {
        bool same = true;
        for (unsigned l = 0; l < kWarpSize; l++)
            if ((lanes >> l & 1) && vals[l] != lead->warp.value) same = false;
        common = same ? lanes : 0;
        break;
    }
    case GPUBOOK_WARP_REDUCE_ADD: case GPUBOOK_WARP_REDUCE_MIN: case GPUBOOK_WARP_REDUCE_MAX:
    case GPUBOOK_WARP_REDUCE_AND: case GPUBOOK_WARP_REDUCE_OR: case GPUBOOK_WARP_REDUCE_XOR:
        common = reduce(r.op, r.arg != 0, vals, lanes);
        break;
    default: break;
    }
    for (unsigned l = 0; l < kWarpSize; l++) {
        Thread* t = lane_thread[l];
        if (!t) continue;
        switch (r.op) {
        case GPUBOOK_WARP_SHFL: case GPUBOOK_WARP_SHFL_UP: case GPUBOOK_WARP_SHFL_DOWN: case GPUBOOK_WARP_SHFL_XOR: {
            int src = shuffle_source(t->warp, int(l));
            // Reading a lane that takes no part (outside the mask, or past the end of a partial
            // warp) gives an undefined value on a GPU.
            if (src >= 0 && !(lanes >> src & 1)) fail_warp(w, *t, bad_source(b, *t, wi, src), "invalid_shuffle");
            t->warp.result = src >= 0 ? vals[src] : vals[l];
            break;
        }
        case GPUBOOK_WARP_MATCH_ANY: {
            unsigned m = 0;
            for (unsigned k = 0; k < kWarpSize; k++)
                if ((lanes >> k & 1) && vals[k] == vals[l]) m |= 1u << k;
            t->warp.result = m;
            break;
        }
        default: t->warp.result = common; break;
        }
    }
    Warp& wp = b.warps[wi];
    // Every live lane met here: their memory requests line up again (counts.cpp).
    if (w.launch->mode == Mode::Check && lanes == (wp.exists & ~wp.exited)) counts_converged(*w.launch, b, int(wi));
    wp.arrived &= ~lanes;
    wp.epoch++;
    inline_segments_moved();
    b.parked -= unsigned(__builtin_popcount(lanes));
    b.idle_spins = 0;
    w.progress++;
    for (unsigned l = 0; l < kWarpSize; l++)
        if (lane_thread[l]) make_ready(b, *lane_thread[l]);
}

} // namespace gpubook::rt

using namespace gpubook::rt;

extern "C" uint64_t gpubook_rt_warp(int op, unsigned mask, uint64_t value, int arg, int width) {
    Worker& w = *tls_worker;
    loop_break(w);
    Block& b = *w.blk;
    Thread& t = *w.current;
    unsigned lane = t.linear % kWarpSize, wi = t.linear / kWarpSize;
    t.wait_pc = call_site(__builtin_return_address(0));
    if (!(mask >> lane & 1))
        fail_warp(w, t, format("lane %u called a warp function with mask 0x%08x, which does not include the lane "
                               "itself. The mask names the lanes that take part, the caller included.",
                               lane, mask));
    if (width < 1 || width > 32 || (width & (width - 1)))
        fail_warp(w, t, format("shuffle width %d is not a power of two between 1 and 32", width));
    t.warp = WarpRequest{op, mask, value, arg, width, 0};
    state(t) = ThreadState::AtWarp;
    Warp& wp = b.warps[wi];
    wp.arrived |= 1u << lane;
    b.parked++;
    // Lanes past the end of a partial last warp do not exist; the mask may still name them
    // (a shuffle that reads one is diagnosed in resolve_warp).
    unsigned need = mask & wp.exists;
    if ((wp.arrived & need) == need) resolve_warp(w, b, wi, need);
    park_current(w);
    return t.warp.result;
}

extern "C" unsigned gpubook_rt_activemask(void) {
    Worker& w = *tls_worker;
    loop_break(w);
    const Warp& wp = w.blk->warps[w.current->linear / kWarpSize];
    return wp.exists & ~wp.exited;
}
