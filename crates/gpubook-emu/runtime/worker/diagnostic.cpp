#include "diagnostic.h"

#include <cstdarg>
#include <cstdio>
#include <dlfcn.h>

namespace gpubook::rt {

std::string format(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

void linear_to_coords(uint64_t linear, const unsigned dim[3], unsigned out[3]) {
    out[0] = unsigned(linear % dim[0]);
    out[1] = unsigned((linear / dim[0]) % dim[1]);
    out[2] = unsigned(linear / (uint64_t(dim[0]) * dim[1]));
}

std::string coords(const unsigned v[3]) { return format("(%u,%u,%u)", v[0], v[1], v[2]); }

std::string describe_threads(const std::vector<unsigned>& linear, const unsigned dim[3]) {
    bool one_d = dim[1] == 1 && dim[2] == 1;
    auto name = [&](unsigned l) {
        if (one_d) return format("%u", l);
        unsigned c[3];
        linear_to_coords(l, dim, c);
        return coords(c);
    };
    std::string out = linear.size() == 1 ? "thread " : "threads ";
    size_t i = 0, ranges = 0;
    while (i < linear.size()) {
        size_t j = i;
        while (j + 1 < linear.size() && linear[j + 1] == linear[j] + 1) j++;
        if (ranges == 6) { out += format(", ... (%zu in all)", linear.size()); break; }
        if (ranges) out += ", ";
        out += name(linear[i]);
        if (j > i) out += "-" + name(linear[j]);
        ranges++;
        i = j + 1;
    }
    return out;
}

void write_pc(Json& j, uintptr_t pc) {
    Dl_info info{};
    if (pc && dladdr(reinterpret_cast<void*>(pc), &info) && info.dli_fname) {
        j.str("so", info.dli_fname);
        j.unum("pc", pc - reinterpret_cast<uintptr_t>(info.dli_fbase));
    } else {
        j.str("so", "");
        j.unum("pc", 0);
    }
}

void write_failure(Json& j, const Diagnostic& d) {
    j.begin_object().boolean("ok", false).str("class", d.cls.c_str()).str("message", d.message.c_str());
    write_pc(j, d.pc);
    Dl_info at{}, fallback{};
    if (d.fallback_pc && dladdr(reinterpret_cast<void*>(d.pc), &at) &&
        dladdr(reinterpret_cast<void*>(d.fallback_pc), &fallback) && at.dli_fbase == fallback.dli_fbase) {
        j.begin_array("frames").unum(nullptr, d.fallback_pc - reinterpret_cast<uintptr_t>(at.dli_fbase)).end_array();
    }
    if (d.has_location) j.dim3("block", d.block).dim3("thread", d.thread);
    j.begin_array("more");
    for (const Note& n : d.more) {
        j.begin_object().str("what", n.what.c_str());
        write_pc(j, n.pc);
        if (n.has_location) j.dim3("block", n.block).dim3("thread", n.thread);
        j.end_object();
    }
    j.end_array().end_object();
}

} // namespace gpubook::rt
