#include "shadow_space.h"

#include "arena.h"

#include <algorithm>
#include <sys/mman.h>

namespace gpubook::rt {

namespace {
// The least a partial shadow covers, so a growing program remaps a few times, not at every launch.
constexpr size_t kMinPartial = size_t(64) << 20;
constexpr size_t kPage = 4096;
} // namespace

size_t ShadowSpace::shadow_bytes(size_t arena_bytes) const {
    return ((arena_bytes + den_ - 1) / den_ * num_ + kPage - 1) / kPage * kPage + kPage;
}

bool ShadowSpace::cover(size_t need) {
    need = std::min(need, g_arena.bytes());
    if (data_ && covered_ >= need) return true;
    if (!data_) {
        // The whole arena first: one mapping that never moves.
        for (size_t want : {g_arena.bytes(), std::min(g_arena.bytes(), std::max(need, kMinPartial))}) {
            void* p = mmap(nullptr, shadow_bytes(want), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                           -1, 0);
            if (p == MAP_FAILED) continue;
            data_ = p;
            mapped_ = shadow_bytes(want);
            covered_ = want;
            if (covered_ >= need) return true;
            break;
        }
        if (!data_) return false;
    }
    size_t want = std::min(g_arena.bytes(), std::max(need, covered_ * 2));
    void* p = mremap(data_, mapped_, shadow_bytes(want), MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return false;
    data_ = p;
    mapped_ = shadow_bytes(want);
    covered_ = want;
    return true;
}

} // namespace gpubook::rt
