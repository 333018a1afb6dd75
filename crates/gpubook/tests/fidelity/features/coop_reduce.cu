// cg::reduce over warp tiles with cg::plus, cg::greater (maximum) and cg::less (minimum), then
// across the block's warps through shared memory.
// launch: warp_reduce grid=1 block=128
// out: float 4
// expect: 8128 127 0 2
// Values are the thread ranks 0..127: sum 8128, max 127, min 0; out[3] is 16-tile 2's sum of its
// ranks mod 4 (0+1+2+3 four times = 24) divided by 12 = 2.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void warp_reduce(float* out) {
    auto block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    float v = (float)block.thread_rank();
    float sum = cg::reduce(warp, v, cg::plus<float>());
    float hi = cg::reduce(warp, v, cg::greater<float>());
    float lo = cg::reduce(warp, v, cg::less<float>());
    __shared__ float sums[4], his[4], los[4];
    if (warp.thread_rank() == 0) {
        sums[warp.meta_group_rank()] = sum;
        his[warp.meta_group_rank()] = hi;
        los[warp.meta_group_rank()] = lo;
    }
    auto sixteen = cg::tiled_partition<16>(block);
    int small = cg::reduce(sixteen, (int)(block.thread_rank() % 4), cg::plus<int>());
    block.sync();
    if (block.thread_rank() == 0) {
        float s = 0, h = his[0], l = los[0];
        for (int w = 0; w < 4; w++) {
            s += sums[w];
            h = his[w] > h ? his[w] : h;
            l = los[w] < l ? los[w] : l;
        }
        out[0] = s;
        out[1] = h;
        out[2] = l;
    }
    if (block.thread_rank() == 32) out[3] = (float)small / 12.0f;
}
