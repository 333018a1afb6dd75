// The cooperative-groups calls most samples use: this_thread_block(), thread_rank(), size() and
// sync() (as a member and as cg::sync). A block reverses its ranks through shared memory.
// launch: reverse_ranks grid=1 block=16
// out: int 16
// expect: 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 16
// out[r] = (size-1-r) read back after the block's barrier, plus 16 in the last slot (size()).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void reverse_ranks(int* out) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ int ranks[64];
    unsigned r = block.thread_rank();
    ranks[r] = (int)r;
    block.sync();
    int mine = ranks[block.size() - 1 - r];
    cg::sync(block);
    out[r] = r + 1 == block.size() ? (int)block.size() : mine;
}
