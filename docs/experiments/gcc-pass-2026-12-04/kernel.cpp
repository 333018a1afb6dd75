// The benchmark's kernel and a launch of it as nested loops (a block a loop over its threads),
// compiled twice by run.sh: plain (native) and with the pass (CHECKED).
#include "shim.h"
#ifdef CHECKED
#include "checks_inline.h"
#define LAUNCH launch_checked
#define vector_add_naive vector_add_naive_checked // the two builds link into one program
#define vector_add_tuned vector_add_tuned_checked
#define vector_add_float4 vector_add_float4_checked
#else
#define GPUBOOK_NO_PASS
#define LAUNCH launch_native
#endif
#include "../../../kernels/bench/vector_add.cu"

#ifdef CHECKED
GPUBOOK_NO_PASS void gpubook_finish_warp();
#endif

__attribute__((flatten)) GPUBOOK_NO_PASS void LAUNCH(unsigned blocks, unsigned threads, const float* a, const float* b,
                                                     float* c, int n) {
    blockDim = dim3{threads, 1, 1};
    gridDim = dim3{blocks, 1, 1};
    for (unsigned blk = 0; blk < blocks; blk++) {
        blockIdx.x = blk;
        for (unsigned t = 0; t < threads; t++) {
            threadIdx.x = t;
#ifdef CHECKED
            g_chk.thread = t;
            g_chk.lane = t % 32;
            if (t % 32 == 0) g_chk.seg++;
#endif
            vector_add_naive(a, b, c, n);
#ifdef CHECKED
            gpubook_thread_end();
            if (t % 32 == 31 || t + 1 == threads) gpubook_finish_warp();
#endif
        }
    }
}
