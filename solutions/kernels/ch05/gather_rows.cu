// out[r][:] = in[index[r]][:]: rows of `hidden` floats gathered by index, as DeepEP's dispatch
// gathers the tokens bound for one rank into that rank's buffer. The host launches one warp
// (32 threads) per output row, 8 warps a block.

// ANCHOR: kernel
extern "C" __global__ void gather_rows(const float* in, const int* index, float* out, int rows, int hidden) {
    // SOLUTION
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // this warp's row
    int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* src = in + (size_t)index[r] * hidden;
    float* dst = out + (size_t)r * hidden;
    // At each step the 32 lanes read 32 consecutive floats and write 32 consecutive floats:
    // a warp request covers 128 bytes, 4 sectors (5 when a row does not start on a sector).
    for (int j = lane; j < hidden; j += 32) {
        dst[j] = src[j];
    }
    // STUB
    // // TODO: copy row index[r] of `in` into row r of `out`, for every r < rows. Each warp owns
    // // one output row: r = (global thread index) / 32. Choose which elements each lane moves so
    // // that, at every step, the 32 lanes of the warp touch neighbouring floats.
    // END SOLUTION
}
// ANCHOR_END: kernel
