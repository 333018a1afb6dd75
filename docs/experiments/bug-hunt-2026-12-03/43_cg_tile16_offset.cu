// gpubook run 43_cg_tile16_offset.cu --kernel t16 --grid 1 --block 32 --arg f32[32]:iota --arg f32[2]:zeros --mode check
// BUG: reduction over tiled_partition<16> but the loop starts at offset 16 (copied from the 32-wide version): shfl_down past the tile
// returns the caller's own value, so every tile sum is doubled-up (defined behaviour, silently wrong: expect 120 and 376)
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void t16(const float* in, float* out) {
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) out[tile.meta_group_rank()] = v;
}
