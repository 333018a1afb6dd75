// Building the first frame of a fiber; the switch itself is in assembly.
#include "fiber.h"

#include <cstdint>
#include <cstring>

extern "C" void gpubook_fiber_bootstrap();

namespace gpubook::rt {

void* fiber_prepare(char* stack_top, void (*entry)(void*), void* arg) {
    auto top = reinterpret_cast<uintptr_t>(stack_top) & ~uintptr_t(15);
#if defined(__x86_64__)
    // gpubook_fiber_switch pops r15 r14 r13 r12 rbx rbp, then returns into the bootstrap.
    // 72 bytes below a 16-aligned top leaves the stack 16-aligned at the bootstrap's call.
    auto* sp = reinterpret_cast<uint64_t*>(top - 72);
    std::memset(sp, 0, 72);
    sp[2] = reinterpret_cast<uint64_t>(arg);   // r13
    sp[3] = reinterpret_cast<uint64_t>(entry); // r12
    sp[6] = reinterpret_cast<uint64_t>(&gpubook_fiber_bootstrap);
    return sp;
#elif defined(__aarch64__)
    // gpubook_fiber_switch restores a 160-byte block: x19 x20 ... x29 x30 d8 ... d15.
    auto* sp = reinterpret_cast<uint64_t*>(top - 160);
    std::memset(sp, 0, 160);
    sp[0] = reinterpret_cast<uint64_t>(entry); // x19
    sp[1] = reinterpret_cast<uint64_t>(arg);   // x20
    sp[11] = reinterpret_cast<uint64_t>(&gpubook_fiber_bootstrap); // x30
    return sp;
#else
#error "gpubook's emulator has fibers for x86_64 and aarch64 only"
#endif
}

} // namespace gpubook::rt
