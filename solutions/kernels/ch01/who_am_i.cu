// ANCHOR: kernel
// ANCHOR: signature
// Every thread runs this same function (SPMD). It finds out who it is from the built-in
// variables and records that in the slot it owns: slot i belongs to the thread whose global
// index is i.
extern "C" __global__ void who_am_i(int* block, int* thread, int n) {
    // ANCHOR_END: signature
    // SOLUTION
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // blocks before mine, then my place in mine
    if (i < n) {  // the last block may run past the end: those threads do nothing
        block[i] = blockIdx.x;
        thread[i] = threadIdx.x;
    }
    // STUB
    // // TODO: compute this thread's global index i from blockIdx.x, blockDim.x and threadIdx.x;
    // //       if i is inside the arrays, store blockIdx.x in block[i] and threadIdx.x in thread[i]
    // END SOLUTION
}
// ANCHOR_END: kernel
