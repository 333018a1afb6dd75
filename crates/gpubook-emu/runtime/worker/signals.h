// Crash reports: SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT and SIGTRAP in a kernel become a
// `crash`, `stack_overflow`, `out_of_bounds` or `trap` reply, then the worker exits (the
// host respawns it; device memory lives in the host's memfd and survives).
#pragma once

#include <cstdint>

namespace gpubook::rt {

struct Worker;

void install_crash_handlers();
// Each OS thread that runs kernels needs its own alternate signal stack: a stack overflow
// leaves no room on the fiber's stack to run the handler.
void install_signal_stack(Worker& w);
// The interrupted instruction of a signal's ucontext.
uintptr_t signal_pc(void* ucontext);
// Writes the kernel's printf output and `reply` (a formatted JSON object, to which it adds
// `"exiting":true`), then _exit()s.
[[noreturn]] void report_and_exit(const char* reply, int status);

} // namespace gpubook::rt
