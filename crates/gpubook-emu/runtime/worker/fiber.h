// Fibers: stackful coroutines with a hand-written context switch.
//
// A switch saves the callee-saved registers on the current stack, stores the stack
// pointer, loads the other fiber's and pops its registers: about 20 instructions and no
// system call (ucontext's swapcontext makes a sigprocmask syscall on every switch, ~20x
// slower). The assembly is in fiber_x86_64.S and fiber_aarch64.S.
#pragma once

namespace gpubook::rt {

extern "C" {
// Saves the running context's stack pointer in *save_sp and resumes the context at to_sp.
void gpubook_fiber_switch(void** save_sp, void* to_sp);
}

// Lays out a fresh stack so that switching to the returned stack pointer calls entry(arg).
// `entry` must never return: a fiber ends by switching away for good.
void* fiber_prepare(char* stack_top, void (*entry)(void*), void* arg);

} // namespace gpubook::rt
