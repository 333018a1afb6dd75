// A diagnostic: what went wrong in a launch, where (pc in the kernel's .so, CUDA block and
// thread), and related places (`more`). Serialised as the protocol's failure reply.
#pragma once

#include "json.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpubook::rt {

struct Note {
    std::string what;   // e.g. "the other access: a write by thread (3,0,0)"
    uintptr_t pc = 0;   // absolute address; 0 when unknown
    bool has_location = false;
    unsigned block[3] = {0, 0, 0};
    unsigned thread[3] = {0, 0, 0};
};

struct Diagnostic {
    std::string cls;     // out_of_bounds, race, barrier_divergence, ...
    std::string message; // a full sentence for the learner; the host adds file:line from pc
    uintptr_t pc = 0;
    // Where to look when pc has no line of the learner's (a hang sampled in a loop that the
    // compiler emptied): the kernel's last checked access. Sent as "frames", after pc.
    uintptr_t fallback_pc = 0;
    bool has_location = false;
    unsigned block[3] = {0, 0, 0};
    unsigned thread[3] = {0, 0, 0};
    std::vector<Note> more;
};

// A return address points after the call; the call itself is one byte earlier, which is
// what addr2line should be asked about.
inline uintptr_t call_site(const void* return_address) {
    return reinterpret_cast<uintptr_t>(return_address) - 1;
}

// Writes {"ok":false,"class":...,"so":...,"pc":...,...} into j.
void write_failure(Json& j, const Diagnostic& d);
// Adds "so" and "pc" (the offset inside that object) for an absolute address.
void write_pc(Json& j, uintptr_t pc);

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "(3,0,0)" or "3" style coordinates.
std::string coords(const unsigned v[3]);
// Linear thread indices (sorted) as ranges of CUDA thread coordinates:
// "threads 0-31 and 64" for 1-D blocks, "threads (0,0,0)-(15,1,0)" otherwise.
std::string describe_threads(const std::vector<unsigned>& linear, const unsigned block_dim[3]);
void linear_to_coords(uint64_t linear, const unsigned dim[3], unsigned out[3]);

} // namespace gpubook::rt
