// gpubook's CPU emulator compiles CUDA C as C++; this header stands in for the real one so
// that using it stops the build with a message naming the feature.
#error "gpubook's emulator does not support texture_fetch_functions.h (textures) yet: run this kernel on a GPU (GPUBOOK_BACKEND=cuda), or write it without texture_fetch_functions.h"
