// Kernel modules: the .so files the host compiled, dlopen'ed by LOAD.
#pragma once

#include "worker.h"

#include <string>

namespace gpubook::rt {

struct Module {
    std::string id;
    std::string path;
    void* handle = nullptr;
    uintptr_t base = 0; // load address: pc offsets in reports are relative to it
};

// Returns "" or the dlopen error.
std::string load_module(const std::string& id, const std::string& path);
Module* find_module(const std::string& id);
// The kernel's entry point and parameter count (-1 when unknown), or null.
KernelEntry find_kernel(const Module& m, const std::string& name, int* arity);
// Its block loop (fast-mode modules only), or null.
BlockLoopEntry find_block_loop(const Module& m, const std::string& name);
// True when pc lies in a loaded kernel module (not in the worker or a system library).
bool in_kernel_module(uintptr_t pc);
// A `__device__` or `__constant__` variable of the module (plain globals in the emulator's
// build): its address and size from the symbol table. Returns "" or why not. The range is
// remembered, so that PEEK and POKE may touch it and nothing else.
std::string find_global(const Module& m, const std::string& name, uintptr_t* addr, size_t* bytes);
// True when [addr, addr+bytes) lies inside one variable find_global returned.
bool is_global_range(uintptr_t addr, size_t bytes);

} // namespace gpubook::rt
