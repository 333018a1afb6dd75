#include "signals.h"

#include "arena.h"
#include "json.h"
#include "stack_pool.h"
#include "watchdog.h"
#include "worker.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <ucontext.h>
#include <unistd.h>

namespace gpubook::rt {

namespace {

constexpr size_t kSignalStackBytes = 256 * 1024;
std::atomic<bool> g_reporting{false};
Json g_crash_json; // static: the alternate stack is too small for a Json

// Formats into a static buffer; handler code allocates nothing.
char g_message[2048];

const char* where(Worker* w, char* buf, size_t n) {
    // In a block loop the running thread is the loop's (w->current, if set, is the last one that
    // called the worker, in check mode); the report ends the process.
    if (w && w->loop) w->current = loop_thread(*w);
    if (!w || !w->in_block.load() || !w->current) return "";
    const gpubook_dim3& b = w->current->block->view.block_idx;
    const gpubook_dim3& t = view(*w->current).thread_idx;
    std::snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u)", t.x, t.y, t.z, b.x, b.y, b.z);
    return buf;
}

const char* describe_fault(int sig, const siginfo_t* si, uintptr_t pc, Worker* w, const char** cls) {
    char who[128];
    const char* thread = where(w, who, sizeof who);
    uintptr_t addr = reinterpret_cast<uintptr_t>(si->si_addr);
    *cls = "crash";
    if (sig == SIGSEGV && stack_guard_contains(si->si_addr)) {
        *cls = "stack_overflow";
        std::snprintf(g_message, sizeof g_message,
                      "stack overflow: %s used more than its %zu KiB stack (a large local array, or recursion "
                      "that goes too deep). GPU threads have far less: the default is 1 KiB "
                      "(cudaLimitStackSize). Use shared or global memory for big arrays.",
                      thread, stack_size() / 1024);
    } else if (sig == SIGSEGV && g_arena.contains(addr)) {
        *cls = "out_of_bounds";
        const Buffer* b = g_arena.nearest(addr);
        if (b)
            std::snprintf(g_message, sizeof g_message,
                          "out-of-bounds access by %s at device address %#lx, %s buffer '%s' (%zu bytes at "
                          "%#lx). Fast mode caught it with a guard page; check mode names the element.",
                          thread, (unsigned long)addr, addr < b->addr ? "before" : "past the end of",
                          b->label.c_str(), b->bytes, (unsigned long)b->addr);
        else
            std::snprintf(g_message, sizeof g_message,
                          "access by %s to device address %#lx, which belongs to no live buffer.", thread,
                          (unsigned long)addr);
    } else if (sig == SIGSEGV && si->si_code == SI_KERNEL) {
        // x86 reports a general-protection fault with no address: an aligned vector instruction
        // (movaps) on an address that is not 16-byte aligned, or a non-canonical pointer.
        *cls = "misaligned";
        std::snprintf(g_message, sizeof g_message,
                      "misaligned or invalid address: %s made a vector access (a float4, int4, double2 ...) at "
                      "an address that is not aligned to its size, or used a pointer that is not an address at "
                      "all. A GPU stops such a kernel with \"misaligned address\". Check mode names the address "
                      "and its alignment.",
                      thread);
    } else if (sig == SIGSEGV || sig == SIGBUS) {
        // Just outside device memory: an index far out of range of a buffer, not a host pointer.
        const Buffer* b = addr >= 65536 ? g_arena.nearest(addr) : nullptr;
        uintptr_t gap = b ? distance_outside(*b, addr) : 0;
        if (b && gap < (uintptr_t(64) << 30)) {
            std::snprintf(g_message, sizeof g_message,
                          "segmentation fault: %s accessed address %#lx, outside device memory, %lu bytes %s "
                          "buffer '%s' (%zu bytes at %#lx), the nearest. An index that far out of range has "
                          "usually wrapped around: a short or int that overflowed, or an unsigned subtraction "
                          "below zero.",
                          thread, (unsigned long)addr, (unsigned long)gap, addr < b->addr ? "before" : "past the end of",
                          b->label.c_str(), b->bytes, (unsigned long)b->addr);
        } else {
            const char* hint = addr < 65536 ? " That is a null (or nearly null) pointer: was a buffer not passed, "
                                              "or an index computed from an uninitialised value?"
                                            : " It is neither device memory nor the thread's own stack: a host "
                                              "pointer passed to the kernel, or a wild pointer?";
            std::snprintf(g_message, sizeof g_message, "segmentation fault: %s accessed address %#lx.%s", thread,
                          (unsigned long)addr, hint);
        }
    } else if (sig == SIGFPE) {
        std::snprintf(g_message, sizeof g_message,
                      "arithmetic exception in %s: an integer division by zero (or INT_MIN / -1). A GPU "
                      "returns an unspecified value instead; the result is wrong either way.",
                      thread);
    } else if (sig == SIGABRT) {
        *cls = "trap";
        std::snprintf(g_message, sizeof g_message,
                      "%s aborted: abort() was called, by the kernel or by a C library function it called.",
                      thread);
    } else if (sig == SIGILL || sig == SIGTRAP) {
        const auto* code = reinterpret_cast<const unsigned char*>(pc);
        bool ud2 = pc && code[0] == 0x0f && code[1] == 0x0b;
        *cls = ud2 || sig == SIGTRAP ? "trap" : "crash";
        std::snprintf(g_message, sizeof g_message,
                      ud2 ? "%s reached __builtin_trap() or code the compiler proved unreachable (often a "
                            "function that does not return a value on every path)."
                          : "illegal instruction in %s.",
                      thread);
    }
    return g_message;
}

void on_fatal_signal(int sig, siginfo_t* si, void* uc) {
    if (g_reporting.exchange(true)) {
        for (;;) pause(); // another thread is reporting and will end the process
    }
    Worker* w = tls_worker;
    uintptr_t pc = signal_pc(uc);
    const char* cls = "crash";
    const char* message = describe_fault(sig, si, pc, w, &cls);
    Json& j = g_crash_json;
    j.begin_object().boolean("ok", false).str("class", cls).str("message", message);
    write_pc(j, pc);
    if (w && w->in_block.load() && w->current) {
        const gpubook_dim3& b = w->current->block->view.block_idx;
        const gpubook_dim3& t = view(*w->current).thread_idx;
        unsigned bb[3] = {b.x, b.y, b.z}, tt[3] = {t.x, t.y, t.z};
        j.dim3("block", bb).dim3("thread", tt);
    }
    j.begin_array("more");
    if (w && w->last_access_pc) {
        j.begin_object().str("what", "the kernel's last checked memory access");
        write_pc(j, w->last_access_pc);
        j.end_object();
    }
    j.end_array().end_object();
    report_and_exit(j.c_str(), 70);
}

} // namespace

uintptr_t signal_pc(void* ucontext) {
    auto* uc = static_cast<ucontext_t*>(ucontext);
#if defined(__x86_64__)
    return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return uintptr_t(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

namespace {
void write_all(const char* p, size_t n) {
    for (size_t off = 0; off < n;) {
        ssize_t k = write(kReplyFd, p + off, n - off);
        if (k <= 0) return;
        off += size_t(k);
    }
}
// GPUBOOK_EMU_EXIT_DELAY_MS (tests only): how long a worker lingers after its last reply, as a
// loaded machine may make it, so that a host that took it for alive would be caught.
long g_exit_delay_ms = 0;
} // namespace

void report_and_exit(const char* reply, int status) {
    // The kernel's printf output first, if stdout is not locked by a thread we interrupted.
    if (ftrylockfile(stdout) == 0) {
        fflush_unlocked(stdout);
        funlockfile(stdout);
    }
    // This reply is the process's last: "exiting" tells the host to start a fresh worker for
    // what comes next, not to send it to this one, which may not have exited yet.
    size_t n = std::strlen(reply);
    if (n && reply[n - 1] == '}') {
        write_all(reply, n - 1);
        write_all(",\"exiting\":true}\n", 17);
    } else {
        write_all(reply, n);
        write_all("\n", 1);
    }
    if (g_exit_delay_ms > 0) {
        struct timespec ts {g_exit_delay_ms / 1000, (g_exit_delay_ms % 1000) * 1000000};
        nanosleep(&ts, nullptr);
    }
    _exit(status);
}

void install_signal_stack(Worker& w) {
    if (!w.signal_stack) w.signal_stack = static_cast<char*>(std::malloc(kSignalStackBytes));
    stack_t ss{};
    ss.ss_sp = w.signal_stack;
    ss.ss_size = kSignalStackBytes;
    sigaltstack(&ss, nullptr);
}

void install_crash_handlers() {
    if (const char* v = std::getenv("GPUBOOK_EMU_EXIT_DELAY_MS")) g_exit_delay_ms = std::atol(v);
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) sigaction(sig, &sa, nullptr);
}

} // namespace gpubook::rt
