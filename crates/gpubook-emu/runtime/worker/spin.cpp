// Spin detection: a thread that reads the same value from the same place with a volatile or
// atomic access, again, is waiting for another thread or block to change it. It yields, so
// that the others run (check mode interleaves threads and blocks only at these points, which
// keeps it deterministic). A value that changed is progress: the wait may be over.
#include "arena.h"
#include "access/races.h"
#include "worker.h"

#include <algorithm>

#include <cstring>

namespace gpubook::rt {

namespace {

// A block that waited on memory only a block past the device's limit wrote: on a GPU the two
// are never resident together, and the launch hangs.
[[noreturn]] void report_not_coresident(Worker& w, const Thread& t, uintptr_t addr, uint64_t writer,
                                        uintptr_t pc) {
    const Launch& l = *w.launch;
    const Block& b = *w.blk;
    unsigned wb[3], me[3] = {b.view.block_idx.x, b.view.block_idx.y, b.view.block_idx.z};
    linear_to_coords(writer, l.grid, wb);
    const Buffer* buf = g_arena.find(addr, 1);
    std::string what = buf ? describe_element(*buf, addr, 4) : format("device address %#lx", (unsigned long)addr);
    Diagnostic d;
    d.cls = "hang";
    d.message = format("blocks wait for blocks that cannot run at the same time: block %s waited on %s, which "
                       "block %s writes, but block %s cannot be resident together with block %s: the grid has "
                       "%llu blocks and the device holds %llu at once (%u SM%s, %llu threads per block). On a GPU "
                       "this launch never finishes. Launch no more blocks than the device holds (for example "
                       "one per SM, each looping over several pieces of work), or let a block wait only for "
                       "blocks that started before it.",
                       coords(me).c_str(), what.c_str(), coords(wb).c_str(), coords(wb).c_str(),
                       coords(me).c_str(), (unsigned long long)l.total_blocks,
                       (unsigned long long)l.resident_limit.load(), g_device.sms, g_device.sms == 1 ? "" : "s",
                       (unsigned long long)l.threads_per_block);
    d.pc = pc;
    set_location(d, b, &t);
    fail_block(w, std::move(d));
}

} // namespace

bool spin_point(Worker& w, uintptr_t pc, uintptr_t addr, uint64_t value, bool may_yield) {
    Thread& t = *w.current;
    Block& b = *w.blk;
    ThreadChecks& c = *t.chk;
    for (unsigned i = 0, used = std::min(c.spin_next, kSpinMemos); i < used; i++) {
        SpinMemo& m = c.spin[i];
        if (m.pc != pc) continue;
        if (m.addr == addr && m.value == value) {
            if (!may_yield) return false;
            c.spin_pc = pc;
            c.spin_addr = addr;
            yield_current(w, true);
            return true;
        }
        if (m.addr == addr) { // what it waited for changed
            b.idle_spins = 0;
            c.spin_pc = c.spin_addr = 0;
            w.progress++;
            uint64_t from = w.launch->over_capacity_from.load(std::memory_order_relaxed);
            if (!b.over_capacity && from != UINT64_MAX) {
                uint32_t writer = races_last_writer(addr);
                if (writer != UINT32_MAX && writer >= from) report_not_coresident(w, t, addr, writer, pc);
            }
        }
        m.addr = addr;
        m.value = value;
        return false;
    }
    c.spin[c.spin_next++ % kSpinMemos] = SpinMemo{pc, addr, value};
    return false;
}

} // namespace gpubook::rt
