#include "modules.h"

#include <dlfcn.h>
#include <link.h>
#include <map>
#include <memory>

namespace gpubook::rt {

namespace {
std::map<std::string, std::unique_ptr<Module>> g_modules;
}

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

bool in_kernel_module(uintptr_t pc) {
    Dl_info info{};
    if (!pc || !dladdr(reinterpret_cast<void*>(pc), &info)) return false;
    for (const auto& [id, m] : g_modules)
        if (reinterpret_cast<uintptr_t>(info.dli_fbase) == m->base) return true;
    return false;
}

} // namespace gpubook::rt
