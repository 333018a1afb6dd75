// counts[b] += how many of values[0 .. n) equal b, for values in [0, bins); counts is zero before
// the launch. The host launches a grid sized to the device (fewer threads than values: each
// thread visits several with a grid-stride loop) and gives each block bins * 4 bytes of dynamic
// shared memory.

// ANCHOR: kernel
extern "C" __global__ void histogram(const unsigned* values, unsigned* counts, int n, int bins) {
    extern __shared__ unsigned local[];  // this block's own bins
    // TODO: count this block's share of the values (a grid-stride loop) into `local`, starting
    // from zero, with atomicAdd on shared memory; then add the block's counts into `counts`,
    // one global atomicAdd per bin. Barriers between the three phases.
}
// ANCHOR_END: kernel
