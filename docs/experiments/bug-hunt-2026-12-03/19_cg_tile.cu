// gpubook run 19_cg_tile.cu --kernel tilesum --grid 1 --block 128 --arg f32[128]:iota --arg f32[1]:zeros --mode check
// BUG: warp tiles write their partial to shared, then only tile.sync() (not block.sync()) before warp 0 reads all partials
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tilesum(const float* in, float* out) {
    __shared__ float part[4];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    float v = in[block.thread_rank()];
    for (int o = 16; o > 0; o >>= 1) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) part[tile.meta_group_rank()] = v;
    tile.sync();                       // should be block.sync()
    if (tile.meta_group_rank() == 0) {
        float w = tile.thread_rank() < 4 ? part[tile.thread_rank()] : 0.f;
        for (int o = 2; o > 0; o >>= 1) w += tile.shfl_down(w, o);
        if (tile.thread_rank() == 0) out[0] = w;
    }
}
