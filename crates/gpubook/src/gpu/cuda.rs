//! The CUDA backend: a thin layer over cudarc's driver API and NVRTC.
//!
//! cudarc loads libcuda and libnvrtc at run time (dynamic-loading), so gpubook builds on machines
//! with no CUDA at all. cudarc panics on the first call when a library is missing, so `probe`
//! looks for them first and turns every failure into a typed error.

use super::backend::{Backend, BackendFunction, BackendModule, LaunchRequest};
use super::error::{GpuError, Result};
use super::ids::{EventId, HostMem, StreamId};
use super::info::{BackendKind, DeviceInfo};
use super::limits::{MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK};
use super::module::KernelSource;
use super::occupancy::{FunctionResources, SmLimits};
use super::toolkit::{toolkit_headers, toolkit_include};
use super::trace::AccessCounts;
use crate::sync::lock;
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, result, sys};
use cudarc::nvrtc::Ptx;
use gpubook_cudac::{Finding, KernelLookupError, KernelRef, find_kernel, source_findings};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// The oldest driver gpubook's cudarc build (CUDA 13.0 symbols) is known to work with.
const MIN_DRIVER: i32 = 12000;

/// Checks that libcuda loads, the driver is new enough and at least one device answers; returns
/// the number of devices.
pub fn probe() -> Result<usize> {
    let fix_driver = "install the NVIDIA driver (or run on the CPU emulator: GPUBOOK_BACKEND=emu)";
    // SAFETY: only tries to dlopen libcuda (running its initialisers, as any driver use
    // would) and calls nothing in it.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::Unavailable {
            backend: "cuda",
            reason: "the CUDA driver library (libcuda.so.1) was not found".into(),
            fix: fix_driver.into(),
        });
    }
    let outcome = std::panic::catch_unwind(|| -> Result<usize> {
        result::init().map_err(|e| GpuError::Unavailable {
            backend: "cuda",
            reason: format!("cuInit failed: {e}"),
            fix: "check that the NVIDIA driver is loaded (nvidia-smi) and a GPU is visible".into(),
        })?;
        let version = driver_version().unwrap_or(0);
        if version < MIN_DRIVER {
            return Err(GpuError::Unavailable {
                backend: "cuda",
                reason: format!("the driver supports CUDA {}.{}, gpubook needs 12.0 or newer", version / 1000, version % 1000 / 10),
                fix: "update the NVIDIA driver".into(),
            });
        }
        let n = result::device::get_count().map_err(|e| GpuError::driver("cuDeviceGetCount", e))?;
        if n <= 0 {
            return Err(GpuError::Unavailable {
                backend: "cuda",
                reason: "the driver loaded but reports no CUDA device".into(),
                fix: "check CUDA_VISIBLE_DEVICES and nvidia-smi".into(),
            });
        }
        Ok(n as usize)
    });
    outcome.unwrap_or_else(|_| {
        Err(GpuError::Unavailable {
            backend: "cuda",
            reason: "the CUDA driver library lacks functions gpubook needs (driver too old?)".into(),
            fix: "update the NVIDIA driver".into(),
        })
    })
}

pub fn driver_version() -> Option<i32> {
    let mut v = 0;
    // SAFETY: cuDriverGetVersion writes one int through `&mut v`, a live local (a missing
    // libcuda makes cudarc's loader panic, not misbehave).
    let r = unsafe { sys::cuDriverGetVersion(&mut v) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(v)
}

/// Checks that NVRTC loads; returns its version.
pub fn probe_nvrtc() -> Result<(i32, i32)> {
    // SAFETY: only tries to dlopen libnvrtc and calls nothing in it.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GpuError::Unavailable {
            backend: "cuda",
            reason: "NVRTC (libnvrtc.so) was not found, so kernels cannot be compiled at run time".into(),
            fix: "install the CUDA toolkit's NVRTC (e.g. the cuda-nvrtc package) and put it on LD_LIBRARY_PATH".into(),
        });
    }
    std::panic::catch_unwind(|| {
        let (mut a, mut b) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints through pointers to live locals; a missing
        // symbol panics in cudarc's loader, caught here.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut a, &mut b) };
        (a, b)
    })
    .map_err(|_| GpuError::Unavailable {
        backend: "cuda",
        reason: "libnvrtc loaded but lacks nvrtcVersion".into(),
        fix: "install a matching CUDA toolkit's NVRTC".into(),
    })
}

pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    info: DeviceInfo,
    streams: Mutex<Streams>,
    events: Mutex<Events>,
    /// Recorded on the default stream at creation; trace times are measured from it.
    origin: CudaEvent,
    created: std::time::Instant,
}

struct Streams {
    by_id: HashMap<StreamId, Arc<CudaStream>>,
    next: StreamId,
}

#[derive(Default)]
struct Events {
    by_id: HashMap<EventId, CudaEvent>,
    pool: Vec<CudaEvent>,
    next: EventId,
}

fn drv<T>(call: &'static str, r: std::result::Result<T, result::DriverError>) -> Result<T> {
    r.map_err(|e| GpuError::driver(call, e))
}

impl CudaBackend {
    pub(crate) fn new(ordinal: usize) -> Result<Self> {
        probe()?;
        let nvrtc = probe_nvrtc().ok();
        let ctx = drv("cuCtxCreate", CudaContext::new(ordinal))?;
        // SAFETY: gpubook orders work across streams itself (the order tracker waits on
        // events; a free waits for every stream's use) and allocates through result::,
        // not CudaSlice; cudarc's own tracking would only add events we do not use.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a| ctx.attribute(a).unwrap_or(0);
        use sys::CUdevice_attribute as A;
        let info = DeviceInfo {
            backend: BackendKind::Cuda,
            ordinal,
            name: drv("cuDeviceGetName", ctx.name())?,
            compute_capability: drv("cuDeviceGetAttribute", ctx.compute_capability())?,
            multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) as u32,
            total_memory: drv("cuDeviceTotalMem", ctx.total_mem())? as u64,
            // The table's limits, which every GPU this build supports shares; only the opt-in
            // maximum differs between GPUs.
            max_threads_per_block: MAX_THREADS_PER_BLOCK,
            max_block_dim: MAX_BLOCK_DIM,
            max_grid_dim: MAX_GRID_DIM,
            max_shared_mem_per_block: SHARED_MEM_PER_BLOCK,
            max_shared_mem_per_block_optin: (attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) as u32)
                .max(SHARED_MEM_PER_BLOCK),
            warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE) as u32,
            // The driver's limits; the allocation units are the occupancy calculator's, the
            // same for compute capability 8.x and 9.0.
            sm: SmLimits {
                max_threads: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) as u32,
                max_blocks: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR) as u32,
                max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) as u32,
                warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE) as u32,
                registers: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) as u32,
                max_registers_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK) as u32,
                shared_memory: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) as u32,
                max_shared_memory_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) as u32,
                reserved_shared_memory_per_block: attr(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK) as u32,
                ..SmLimits::H200
            },
            driver_version: driver_version(),
            nvrtc_version: nvrtc,
            detail: if nvrtc.is_some() { String::new() } else { "NVRTC missing: kernels cannot be compiled".into() },
        };
        let default = ctx.default_stream();
        let origin = drv("cuEventCreate", ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))?;
        drv("cuEventRecord", origin.record(&default))?;
        let streams = Streams { by_id: HashMap::from([(0, default)]), next: 1 };
        Ok(CudaBackend { ctx, info, streams: Mutex::new(streams), events: Mutex::default(), origin, created: std::time::Instant::now() })
    }

    /// The cudarc context underneath, for learners who want to call cudarc directly.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn stream(&self, id: StreamId) -> Result<Arc<CudaStream>> {
        self.bind()?;
        let streams = lock(&self.streams);
        streams.by_id.get(&id).cloned().ok_or_else(|| GpuError::driver("stream", format!("unknown stream {id}")))
    }

    fn bind(&self) -> Result<()> {
        drv("cuCtxSetCurrent", self.ctx.bind_to_thread())
    }

    fn with_event<T>(&self, id: EventId, f: impl FnOnce(&CudaEvent) -> Result<T>) -> Result<T> {
        let events = lock(&self.events);
        let e = events.by_id.get(&id).ok_or_else(|| GpuError::driver("event", format!("unknown event {id}")))?;
        f(e)
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn host_now_us(&self) -> f64 {
        self.created.elapsed().as_secs_f64() * 1e6
    }

    fn new_stream(&self) -> Result<StreamId> {
        self.bind()?;
        let s = drv("cuStreamCreate", self.ctx.new_stream())?;
        let mut streams = lock(&self.streams);
        let id = streams.next;
        streams.next += 1;
        streams.by_id.insert(id, s);
        Ok(id)
    }

    fn destroy_stream(&self, stream: StreamId) {
        if stream != 0 {
            lock(&self.streams).by_id.remove(&stream);
        }
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        drv("cuStreamSynchronize", self.stream(stream)?.synchronize())
    }

    fn synchronize_device(&self) -> Result<()> {
        self.bind()?;
        drv("cuCtxSynchronize", self.ctx.synchronize())
    }

    fn alloc(&self, stream: StreamId, bytes: usize, _elem: usize, _label: &str) -> Result<u64> {
        let s = self.stream(stream)?;
        // cudaMalloc of 0 bytes is legal; keep one byte so every buffer has a distinct address.
        let bytes = bytes.max(1);
        // SAFETY: `s` is a live stream of the bound context; the bytes start unset, which
        // `Stream::alloc`'s callers accept, and other streams reach them only after event waits.
        let r = unsafe { if self.ctx.has_async_alloc() { result::malloc_async(s.cu_stream(), bytes) } else { result::malloc_sync(bytes) } };
        r.map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
                GpuError::OutOfMemory { requested: bytes, detail: format!("{free} of {total} bytes free") }
            } else {
                GpuError::driver("cuMemAllocAsync", e)
            }
        })
    }

    fn free(&self, stream: StreamId, addr: u64) -> Result<()> {
        let s = self.stream(stream)?;
        // SAFETY: `addr` came from `alloc` on this stream (the same has_async_alloc choice) and
        // is freed once, by its DeviceSlice, after every stream's use of it (`free_buffer`).
        unsafe {
            if self.ctx.has_async_alloc() {
                drv("cuMemFreeAsync", result::free_async(addr, s.cu_stream()))
            } else {
                drv("cuMemFree", result::free_sync(addr))
            }
        }
    }

    unsafe fn copy_htod(&self, stream: StreamId, dst: u64, src: *const u8, bytes: usize, _m: HostMem) -> Result<()> {
        let s = self.stream(stream)?;
        // SAFETY: the caller passes `bytes` readable bytes at `src` (Backend::copy_htod).
        let src = unsafe { std::slice::from_raw_parts(src, bytes) };
        // SAFETY: `dst` is a live allocation of at least `bytes` (the API checked the lengths),
        // and `src` stays valid until the copy completes: the caller's contract.
        drv("cuMemcpyHtoDAsync", unsafe { result::memcpy_htod_async(dst, src, s.cu_stream()) })
    }

    unsafe fn copy_dtoh(&self, stream: StreamId, dst: *mut u8, src: u64, bytes: usize, _m: HostMem) -> Result<()> {
        let s = self.stream(stream)?;
        // SAFETY: the caller passes `bytes` writable bytes at `dst` that nothing else reads or
        // writes until the copy completes (Backend::copy_dtoh).
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
        // SAFETY: `src` is a live allocation of at least `bytes` (the API checked the lengths),
        // and `dst` stays valid and unread until the copy completes: the caller's contract.
        drv("cuMemcpyDtoHAsync", unsafe { result::memcpy_dtoh_async(dst, src, s.cu_stream()) })
    }

    fn copy_dtod(&self, stream: StreamId, dst: u64, src: u64, bytes: usize) -> Result<()> {
        let s = self.stream(stream)?;
        // SAFETY: both are live allocations of at least `bytes` (same_len checked them); other
        // streams' uses are ordered before this one by event waits.
        drv("cuMemcpyDtoDAsync", unsafe { result::memcpy_dtod_async(dst, src, bytes, s.cu_stream()) })
    }

    fn memset(&self, stream: StreamId, dst: u64, byte: u8, bytes: usize) -> Result<()> {
        let s = self.stream(stream)?;
        // SAFETY: `dst` is a live allocation of at least `bytes`: the API passes the buffer's
        // own size.
        drv("cuMemsetD8Async", unsafe { result::memset_d8_async(dst, byte, bytes, s.cu_stream()) })
    }

    fn load_module(&self, source: &KernelSource) -> Result<Arc<dyn BackendModule>> {
        self.bind()?;
        probe_nvrtc()?;
        let (major, minor) = self.info.compute_capability;
        let mut includes: Vec<String> = source.include_dirs.iter().map(|p| p.display().to_string()).collect();
        match toolkit_headers() {
            Ok(t) => includes.extend(t.dirs.iter().map(|d| d.display().to_string())),
            // Only a kernel that includes one of the toolkit's headers needs them.
            Err(missing) => {
                if let Some((header, line)) = toolkit_include(&source.text) {
                    return Err(GpuError::Compile {
                        file: source.path.clone(),
                        line: Some(line),
                        message: format!("`#include <{header}>` needs the CUDA toolkit's headers, which NVRTC does not carry: {missing}"),
                        log: String::new(),
                    });
                }
            }
        }
        let mut options = vec![format!("--gpu-architecture=sm_{major}{minor}"), "--std=c++17".to_string()];
        options.extend(includes.iter().map(|d| format!("--include-path={d}")));
        // C++-linkage kernels a plain name launches get their lowered names now; template
        // instantiations when one is asked for (`CudaKernels::function`).
        let plain: Vec<String> = source
            .signatures
            .iter()
            .filter_map(|k| match find_kernel(&source.signatures, &k.name) {
                Ok(KernelRef::Cpp { expr, signature }) if signature == k => Some(expr),
                _ => None,
            })
            .collect();
        let (ptx, lowered, warned) = nvrtc_compile(source, &options, &plain)?;
        let module = drv("cuModuleLoadData", self.ctx.load_module(ptx))?;
        // What NVRTC does not warn of (overlapping extern arrays), then what it did.
        let mut findings = source_findings(std::path::Path::new(&source.display_path()), &source.text);
        findings.extend(warned);
        Ok(Arc::new(CudaKernels {
            ctx: self.ctx.clone(),
            module,
            source: source.clone(),
            options,
            lowered: lowered.into_iter().collect(),
            instances: Mutex::default(),
            findings: Mutex::new(findings),
        }))
    }

    fn launch(&self, stream: StreamId, l: &LaunchRequest<'_>) -> Result<Option<AccessCounts>> {
        let s = self.stream(stream)?;
        let f = l.function.as_any().downcast_ref::<CudaFunction>().expect("a CUDA function on the CUDA backend");
        // cuLaunchKernel reads each parameter through a pointer to its bytes.
        let mut params: Vec<*mut c_void> = l.args.iter().map(|a| a.as_ptr() as *mut c_void).collect();
        let g = (l.grid[0], l.grid[1], l.grid[2]);
        let b = (l.block[0], l.block[1], l.block[2]);
        // SAFETY: `f` keeps its module loaded, and `params` points at each argument's bytes,
        // which `l` holds for the call; the caller of the unsafe `LaunchArgs::launch`
        // vouches for what the kernel does with them.
        drv("cuLaunchKernel", unsafe { result::launch_kernel(f.cu_function(), g, b, l.shared_mem_bytes, s.cu_stream(), &mut params) })?;
        Ok(None) // a GPU counts nothing for us
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        let s = self.stream(stream)?;
        let mut events = lock(&self.events);
        let e = match events.pool.pop() {
            Some(e) => e,
            None => drv("cuEventCreate", self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))?,
        };
        drv("cuEventRecord", e.record(&s))?;
        let id = events.next;
        events.next += 1;
        events.by_id.insert(id, e);
        Ok(id)
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        let s = self.stream(stream)?;
        self.with_event(event, |e| drv("cuStreamWaitEvent", s.wait(e)))
    }

    fn synchronize_event(&self, event: EventId) -> Result<()> {
        self.bind()?;
        self.with_event(event, |e| drv("cuEventSynchronize", e.synchronize()))
    }

    fn event_time_us(&self, event: EventId) -> Result<f64> {
        self.bind()?;
        self.with_event(event, |e| {
            drv("cuEventSynchronize", e.synchronize())?;
            Ok(drv("cuEventElapsedTime", self.origin.elapsed_ms(e))? as f64 * 1e3)
        })
    }

    fn destroy_event(&self, event: EventId) {
        let mut events = lock(&self.events);
        if let Some(e) = events.by_id.remove(&event) {
            events.pool.push(e);
        }
    }

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.bind()?;
        // SAFETY: a fresh allocation of at least one byte; it is unset, and `alloc_pinned`
        // (unsafe) leaves it to its caller to write before reading.
        let p = drv("cuMemHostAlloc", unsafe { result::malloc_host(bytes.max(1), 0) })?;
        Ok(p as *mut u8)
    }

    unsafe fn free_pinned(&self, ptr: *mut u8, _bytes: usize) {
        let _ = self.bind();
        // SAFETY: `ptr` came from `alloc_pinned` (malloc_host) and is no longer used: the
        // caller's contract.
        let _ = unsafe { result::free_host(ptr as *mut c_void) };
    }

    fn alloc_mapped(&self, bytes: usize, _elem: usize, _label: &str) -> Result<(*mut u8, u64)> {
        self.bind()?;
        // SAFETY: a fresh allocation of at least one byte; `Gpu::alloc_mapped` zeroes it before
        // anyone reads it.
        let host = drv("cuMemHostAlloc", unsafe { result::malloc_host(bytes.max(1), sys::CU_MEMHOSTALLOC_DEVICEMAP) })?;
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: `host` was just allocated with CU_MEMHOSTALLOC_DEVICEMAP and `dev` is a live
        // local for the answer. With unified addressing (every 64-bit platform CUDA
        // supports) this is the host address.
        if let Err(e) = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0) }.result() {
            // SAFETY: `host` came from malloc_host just above and nothing else holds it.
            let _ = unsafe { result::free_host(host) };
            return Err(GpuError::driver("cuMemHostGetDevicePointer", e));
        }
        Ok((host as *mut u8, dev))
    }

    unsafe fn free_mapped(&self, host: *mut u8, _dev: u64) {
        let _ = self.bind();
        // SAFETY: `host` came from `alloc_mapped` (malloc_host) and is no longer used: the
        // caller's contract.
        let _ = unsafe { result::free_host(host as *mut c_void) };
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct CudaKernels {
    ctx: Arc<CudaContext>,
    module: Arc<CudaModule>,
    source: KernelSource,
    /// NVRTC's options, for compiling template instantiations later.
    options: Vec<String>,
    /// Name expression → lowered (mangled) name, for the C++-linkage kernels.
    lowered: HashMap<String, String>,
    /// Template instantiations compiled so far, by name expression.
    instances: Mutex<HashMap<String, CudaFunction>>,
    /// The source's findings and NVRTC's warnings, instances' included.
    findings: Mutex<Vec<Finding>>,
}

impl BackendModule for CudaKernels {
    fn findings(&self) -> Vec<Finding> {
        lock(&self.findings).clone()
    }

    fn function(&self, name: &str) -> Result<Arc<dyn BackendFunction>> {
        let get = |module: &Arc<CudaModule>, symbol: &str| {
            module.load_function(symbol).map_err(|e| GpuError::driver("cuModuleGetFunction", format!("`{name}` ({symbol}): {e}")))
        };
        let f = match find_kernel(&self.source.signatures, name) {
            Ok(KernelRef::CLinkage(k)) => get(&self.module, &k.name)?,
            Ok(KernelRef::Cpp { expr, .. }) => {
                let lowered = self
                    .lowered
                    .get(&expr)
                    .ok_or_else(|| GpuError::driver("nvrtcGetLoweredName", format!("no lowered name for `{expr}`")))?;
                get(&self.module, lowered)?
            }
            Ok(KernelRef::Template { expr, .. }) => {
                let mut instances = lock(&self.instances);
                if let Some(f) = instances.get(&expr) {
                    f.clone()
                } else {
                    // NVRTC instantiates a template only for the name expressions it is given.
                    let (ptx, lowered, warned) = nvrtc_compile(&self.source, &self.options, std::slice::from_ref(&expr))?;
                    let mut findings = lock(&self.findings);
                    for f in warned {
                        if !findings.contains(&f) {
                            findings.push(f);
                        }
                    }
                    drop(findings);
                    let module = drv("cuModuleLoadData", self.ctx.load_module(ptx))?;
                    let f = get(&module, &lowered[0].1)?;
                    instances.insert(expr, f.clone());
                    f
                }
            }
            // A kernel the parser did not see (made by a macro) may still be there by its name.
            Err(KernelLookupError::NotFound { available, .. }) => self.module.load_function(name).map_err(|_| {
                GpuError::KernelNotFound { name: name.into(), file: self.source.path.clone(), available: available.join(", ") }
            })?,
            Err(e) => return Err(GpuError::KernelName { file: self.source.path.clone(), message: e.to_string() }),
        };
        Ok(Arc::new(f))
    }

    fn global(&self, name: &str) -> Result<(u64, usize)> {
        use cudarc::driver::DevicePtr as _;
        drv("cuCtxSetCurrent", self.ctx.bind_to_thread())?;
        let stream = self.ctx.default_stream();
        let view = self.module.get_global(name, &stream).map_err(|e| GpuError::Size(format!("cuModuleGetGlobal(`{name}`): {e}")))?;
        let bytes = view.len();
        let (addr, _no_sync) = view.device_ptr(&stream);
        Ok((addr, bytes))
    }
}

/// What `nvrtc_compile` gives: the PTX, each name expression's lowered (mangled) name, which
/// `cuModuleGetFunction` takes, and what NVRTC's log warned of.
type Compiled = (Ptx, Vec<(String, String)>, Vec<Finding>);

/// Compiles `source` with NVRTC, adding each of `exprs` as a name expression.
fn nvrtc_compile(source: &KernelSource, options: &[String], exprs: &[String]) -> Result<Compiled> {
    use cudarc::nvrtc::{result as nv, sys as nvs};
    use std::ffi::{CStr, CString};
    let fail = |call: &'static str, e: nv::NvrtcError| GpuError::driver(call, format!("{e:?}"));
    let text = CString::new(source.text.as_bytes()).map_err(|_| GpuError::Compile {
        file: source.path.clone(),
        line: None,
        message: "the source contains a NUL byte".into(),
        log: String::new(),
    })?;
    let name = CString::new(source.display_path().replace('\0', "")).expect("no NUL left");
    let prog = nv::create_program(&text, Some(&name)).map_err(|e| fail("nvrtcCreateProgram", e))?;
    struct Program(nvs::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: the program came from create_program and this, its only owner, destroys it
            // once.
            let _ = unsafe { nv::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    let exprs_c: Vec<CString> = exprs.iter().map(|e| CString::new(e.as_bytes()).expect("a name has no NUL")).collect();
    for e in &exprs_c {
        // SAFETY: `prog` is live and `e` is a NUL-terminated string that outlives the call.
        unsafe { nvs::nvrtcAddNameExpression(prog.0, e.as_ptr()) }.result().map_err(|e| fail("nvrtcAddNameExpression", e))?;
    }
    // SAFETY: `prog` is a live program that nothing else uses.
    if unsafe { nv::compile_program(prog.0, options) }.is_err() {
        // SAFETY: `prog` is live; its log is copied out before it goes.
        let log = unsafe { nv::get_program_log(prog.0) }.map(|l| c_chars_to_string(&l)).unwrap_or_default();
        return Err(nvrtc_error(source, log));
    }
    // SAFETY: `prog` is live; its log is copied out before it goes.
    let warned = match unsafe { nv::get_program_log(prog.0) } {
        Ok(log) => super::warnings::nvrtc_findings(&c_chars_to_string(&log)),
        Err(_) => Vec::new(),
    };
    // SAFETY: `prog` is live and compiled; the PTX is copied out before it goes.
    let ptx = unsafe { nv::get_ptx(prog.0) }.map_err(|e| fail("nvrtcGetPTX", e))?;
    let mut lowered = Vec::new();
    for (expr, c) in exprs.iter().zip(&exprs_c) {
        let mut out: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: `c` was added as a name expression before compiling, and `out` is a live
        // local for the answer.
        unsafe { nvs::nvrtcGetLoweredName(prog.0, c.as_ptr(), &mut out) }.result().map_err(|e| fail("nvrtcGetLoweredName", e))?;
        // SAFETY: NVRTC pointed `out` at a NUL-terminated string that belongs to the program,
        // still alive: copy it before the program goes.
        lowered.push((expr.clone(), unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned()));
    }
    Ok((Ptx::from_src(c_chars_to_string(&ptx)), lowered, warned))
}

/// NVRTC's NUL-terminated output as text.
fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl BackendFunction for CudaFunction {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn resources(&self) -> Result<FunctionResources> {
        // get_attribute makes the function's context current first.
        let attr = |a, what| drv(what, self.get_attribute(a)).map(|v| v.max(0) as u32);
        use sys::CUfunction_attribute_enum as F;
        Ok(FunctionResources {
            registers_per_thread: Some(attr(F::CU_FUNC_ATTRIBUTE_NUM_REGS, "cuFuncGetAttribute(NUM_REGS)")?),
            static_shared_bytes: Some(attr(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "cuFuncGetAttribute(SHARED_SIZE_BYTES)")?),
            local_bytes_per_thread: Some(attr(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "cuFuncGetAttribute(LOCAL_SIZE_BYTES)")?),
            max_threads_per_block: attr(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)")?,
        })
    }

    fn max_shared_optin(&self) -> u32 {
        // The device of the function's context (resources() makes it current).
        let most = self.resources().ok().and_then(|_| {
            let mut dev: sys::CUdevice = 0;
            // SAFETY: writes one CUdevice through a pointer to a live local; `resources()` made the
            // function's context current.
            unsafe { sys::cuCtxGetDevice(&mut dev) }.result().ok()?;
            let a = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
            // SAFETY: `dev` is a device the driver itself just reported (cuCtxGetDevice).
            unsafe { result::device::get_attribute(dev, a) }.ok()
        });
        (most.unwrap_or(0) as u32).max(SHARED_MEM_PER_BLOCK)
    }

    fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> Result<()> {
        self.resources()?; // binds the function's context to this thread
        let a = sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        drv("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", self.set_attribute(a, bytes as i32))
    }

    fn max_active_blocks_per_sm(&self, block: u32, dynamic_shared: u32) -> Result<u32> {
        self.resources()?; // binds the function's context to this thread
        drv(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            self.occupancy_max_active_blocks_per_multiprocessor(block, dynamic_shared as usize, None),
        )
    }
}

/// NVRTC logs read `path(LINE): error: message`; keep the first error's file and line.
fn nvrtc_error(source: &KernelSource, log: String) -> GpuError {
    let first = log.lines().find(|l| l.contains(": error")).unwrap_or("").to_string();
    let line = first.split_once('(').and_then(|(_, rest)| rest.split_once(')')).and_then(|(n, _)| n.parse().ok());
    let message = first.split_once(": error").map(|(_, m)| format!("error{m}")).unwrap_or_else(|| log.trim().to_string());
    GpuError::Compile { file: source.path.clone(), line, message, log }
}
