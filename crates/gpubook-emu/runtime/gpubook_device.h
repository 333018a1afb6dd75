// gpubook_device.h — what a CUDA C (NVRTC dialect) kernel sees when gpubook's CPU emulator
// compiles it as C++. compile.rs passes it with `-include gpubook_device.h`.
//
// The kernel is built into a shared object that the worker process (crates/gpubook-emu/runtime/worker)
// loads; everything that needs the worker — thread coordinates, barriers, warp collectives,
// shared memory, checked atomics — is a call into it through device/abi.h. No STL here:
// this header is compiled with every kernel and keeps that compile at ~0.2 s.
#ifndef GPUBOOK_DEVICE_H
#define GPUBOOK_DEVICE_H

#ifndef __cplusplus
#error "gpubook_device.h is compiled as C++ (g++ -x c++)"
#endif

// Kernels may test these as they would under nvcc/NVRTC.
#define __CUDACC__ 1
#define __CUDACC_RTC__ 1
#define __CUDA_ARCH__ 800
#define GPUBOOK_EMULATOR 1

#include "device/abi.h"
#if defined(GPUBOOK_CHECK_PASS)
#include "device/check_inline.h"
#endif
// Placement new (`new (buffer) T(...)`), which device code may use without an include; <new>
// is small and has no STL behind it.
#include <new>
#include "device/vector_types.h"
#include "device/builtins.h"
#include "device/sync.h"
#include "device/warp.h"
#include "device/atomics.h"
#include "device/math_functions.h"
#include "device/shared_memory.h"
#include "device/kernel_export.h"
#include "device/io.h"

#endif
