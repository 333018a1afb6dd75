// For run.sh's locals check: a device-memory loop that accumulates into a local struct through
// a method, as learners write it. Each check the pass leaves reads the arena's bounds once
// (g_chk.arena, or gpubook_arena_lo with -DDEVICE_TEST): only p[i]'s should be left.
#include "shim.h"
#include "checks_inline.h"
struct Acc {
    float v;
    void add(float x) { v += x; }
};
extern "C" float method_on_local(const float* p, int n) {
    Acc a{0};
    for (int i = 0; i < n; i++) a.add(p[i]);
    return a.v;
}
