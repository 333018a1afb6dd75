#include "modules.h"

#include <dlfcn.h>
#include <link.h>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace gpubook::rt {

namespace {
std::map<std::string, std::unique_ptr<Module>> g_modules;
std::vector<std::pair<uintptr_t, size_t>> g_globals; // (address, bytes) find_global handed out
} // namespace

std::string load_module(const std::string& id, const std::string& path) {
    // RTLD_LOCAL: two modules may define kernels with the same name.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        return e ? e : "dlopen failed";
    }
    auto m = std::make_unique<Module>();
    m->id = id;
    m->path = path;
    m->handle = h;
    link_map* lm = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) m->base = lm->l_addr;
    g_modules[id] = std::move(m); // a reloaded id replaces the old module (which stays mapped)
    return "";
}

Module* find_module(const std::string& id) {
    auto it = g_modules.find(id);
    return it == g_modules.end() ? nullptr : it->second.get();
}

KernelEntry find_kernel(const Module& m, const std::string& name, int* arity) {
    auto entry = reinterpret_cast<KernelEntry>(dlsym(m.handle, ("__gpubook_kernel_" + name).c_str()));
    auto* n = static_cast<const int*>(dlsym(m.handle, ("__gpubook_kernel_arity_" + name).c_str()));
    *arity = n ? *n : -1;
    return entry;
}

BlockLoopEntry find_block_loop(const Module& m, const std::string& name) {
    return reinterpret_cast<BlockLoopEntry>(dlsym(m.handle, ("__gpubook_kloop_" + name).c_str()));
}

std::string find_global(const Module& m, const std::string& name, uintptr_t* addr, size_t* bytes) {
    void* p = dlsym(m.handle, name.c_str());
    Dl_info info{};
    void* entry = nullptr;
    if (!p || !dladdr1(p, &info, &entry, RTLD_DL_SYMENT) || !entry)
        return "`" + name + "` is not in the module's symbol table";
    if (reinterpret_cast<uintptr_t>(info.dli_fbase) != m.base && m.base != 0)
        return "`" + name + "` is not defined by the module";
    const auto* sym = static_cast<const ElfW(Sym)*>(entry);
    if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
        return "`" + name + "` is not a variable (a function?)";
    *addr = reinterpret_cast<uintptr_t>(p);
    *bytes = size_t(sym->st_size);
    g_globals.emplace_back(*addr, *bytes);
    return "";
}

bool is_global_range(uintptr_t addr, size_t bytes) {
    for (const auto& [a, n] : g_globals)
        if (addr >= a && bytes <= n && addr - a <= n - bytes) return true;
    return false;
}

bool in_kernel_module(uintptr_t pc) {
    Dl_info info{};
    if (!pc || !dladdr(reinterpret_cast<void*>(pc), &info)) return false;
    for (const auto& [id, m] : g_modules)
        if (reinterpret_cast<uintptr_t>(info.dli_fbase) == m->base) return true;
    return false;
}

} // namespace gpubook::rt
