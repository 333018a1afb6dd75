// gpubook's CPU emulator compiles CUDA C as C++; this header stands in for the real one so
// that using it stops the build with a message naming the feature.
#error "gpubook's emulator does not support mma.h (tensor cores (wmma)) yet: run this kernel on a GPU (GPUBOOK_BACKEND=cuda), or write it without mma.h"
