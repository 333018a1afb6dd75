// Tiles of a block (tiled_partition<8> and <32>): rank, size, meta-group rank, shuffles, votes.
// launch: tile_ops grid=1 block=64
// out: int 8
// expect: 28 28 1 0 255 7 4 31
// For each 8-thread tile: shfl_down sums ranks 0..7 = 28 (lane 0 of tile 0); shfl_xor sum = 28;
// any(rank == 7) = 1; all(rank < 7) = 0; ballot(true) over 8 ranks = 255; shfl(v, 7) = 7;
// tile 4's meta_group_rank = 4 (out[6] from thread 32); shfl_up in a 32-tile: lane 31 gets 30 + 1.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_ops(int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
    int rank = (int)tile.thread_rank();
    int down = rank;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) down += tile.shfl_down(down, offset);
    int butterfly = rank;
    for (int mask = 1; mask < 8; mask *= 2) butterfly += tile.shfl_xor(butterfly, mask);
    int any7 = tile.any(rank == 7);
    int all_below7 = tile.all(rank < 7);
    unsigned everyone = tile.ballot(1);
    int from7 = tile.shfl(rank, 7);
    tile.sync();
    auto warp = cg::tiled_partition<32>(block);
    int up = warp.shfl_up((int)warp.thread_rank(), 1) + 1;
    if (block.thread_rank() == 0) {
        out[0] = down;
        out[1] = butterfly;
        out[2] = any7;
        out[3] = all_below7;
        out[4] = (int)everyone;
        out[5] = from7;
    }
    if (block.thread_rank() == 32) out[6] = (int)tile.meta_group_rank();
    if (warp.thread_rank() == 31 && warp.meta_group_rank() == 0) out[7] = up;
}
