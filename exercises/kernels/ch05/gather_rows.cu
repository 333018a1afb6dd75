// out[r][:] = in[index[r]][:]: rows of `hidden` floats gathered by index, as DeepEP's dispatch
// gathers the tokens bound for one rank into that rank's buffer. The host launches one warp
// (32 threads) per output row, 8 warps a block.

// ANCHOR: kernel
extern "C" __global__ void gather_rows(const float* in, const int* index, float* out, int rows, int hidden) {
    // TODO: copy row index[r] of `in` into row r of `out`, for every r < rows. Each warp owns
    // one output row: r = (global thread index) / 32. Choose which elements each lane moves so
    // that, at every step, the 32 lanes of the warp touch neighbouring floats.
}
// ANCHOR_END: kernel
