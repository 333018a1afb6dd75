// The last few things a search found, newest first. A kernel takes turns between a few buffers
// (its inputs and outputs) or shared variables (a tiled kernel's two tiles), so check mode's
// per-access lookups mostly end here instead of in the search.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpubook::rt {

template <class T, unsigned N> class Recent {
public:
    // The item whose range holds [a, a+n), among those remembered, else null.
    const T* find(uintptr_t a, size_t n) const {
        for (const Hit& h : hits_)
            if (a >= h.lo && a + n <= h.hi) return h.item; // an empty slot's [0, 0) holds nothing
        return nullptr;
    }
    // Whether a remembered item holds [a, a+n).
    bool holds(uintptr_t a, size_t n) const {
        for (const Hit& h : hits_)
            if (a >= h.lo && a + n <= h.hi) return true;
        return false;
    }
    // Remembers `item`, which holds [lo, hi), as the newest; forgets the oldest.
    void add(uintptr_t lo, uintptr_t hi, const T* item) {
        for (unsigned k = N - 1; k > 0; k--) hits_[k] = hits_[k - 1];
        hits_[0] = Hit{lo, hi, item};
    }
    void clear() {
        for (Hit& h : hits_) h = Hit{};
    }

private:
    struct Hit {
        uintptr_t lo = 0, hi = 0; // copies: find() never reads the item itself
        const T* item = nullptr;
    };
    Hit hits_[N];
};

} // namespace gpubook::rt
