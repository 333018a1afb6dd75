//! Modules and functions: `gpu.load_module(Source::file(..))?.load_function(..)` (cudarc's
//! `CudaModule` and `CudaFunction`). A module is a backend's compiled code plus the source it came
//! from, whose parsed signatures the launch checks use.

use super::backend::{BackendFunction, BackendModule};
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::module::{KernelSource, Source};
use super::occupancy::FunctionResources;
use gpubook_cudac::{Finding, KernelSignature};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

impl Gpu {
    /// Compiles a module: NVRTC on a GPU, the system C++ compiler on the emulator.
    pub fn load_module(&self, source: Source) -> Result<Module> {
        let replaced = crate::sync::lock(&self.inner.kernel_files).clone();
        let source = Arc::new(source.read(&replaced)?);
        let inner = self.inner.backend.load_module(&source)?;
        self.inner.keep_findings(inner.findings());
        Ok(Module { inner, source, gpu: self.inner.clone() })
    }
}

/// A compiled module (cudarc's `CudaModule`, CUDA's `cuModuleLoadData`).
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Arc<dyn BackendModule>,
    pub(crate) source: Arc<KernelSource>,
    /// The device that keeps the findings of what this module compiles later (template
    /// instances).
    gpu: Arc<super::context::GpuInner>,
}

impl Module {
    /// Looks a `__global__` function up by name (`cuModuleGetFunction`): its plain name (an
    /// `extern "C"` kernel, or a C++ one no other kernel shares the name with) or, for a template
    /// kernel, the instantiation to launch, `load_function("reduce<float, 256>")` (NVRTC's name
    /// expressions; compiled now). An ambiguous name is an error listing the overloads.
    pub fn load_function(&self, name: &str) -> Result<Function> {
        let signature = gpubook_cudac::find_kernel(&self.source.signatures, name).ok().map(|k| k.signature().clone());
        let inner = self.inner.function(name).map_err(|e| match e {
            GpuError::KernelNotFound { .. } => GpuError::KernelNotFound {
                name: name.into(),
                file: PathBuf::from(self.source.display_path()),
                available: self.source.kernel_names().join(", "),
            },
            GpuError::KernelName { message, .. } => GpuError::KernelName { file: PathBuf::from(self.source.display_path()), message },
            other => other,
        })?;
        self.gpu.keep_findings(self.inner.findings());
        Ok(Function { inner, name: name.into(), signature, opted_in: Arc::default() })
    }

    pub fn source(&self) -> &KernelSource {
        &self.source
    }

    /// What the source and the compiler showed that is legal but most likely a bug: overlapping
    /// `extern __shared__` arrays, a local read before anything was stored to it.
    pub fn findings(&self) -> Vec<Finding> {
        self.inner.findings()
    }
}

/// One kernel of a module, ready to launch (cudarc's `CudaFunction`).
#[derive(Clone)]
pub struct Function {
    pub(crate) inner: Arc<dyn BackendFunction>,
    pub(crate) name: String,
    pub(crate) signature: Option<KernelSignature>,
    /// Dynamic shared memory the kernel opted in to past 48 KiB (0: none); shared by clones, as
    /// a CUDA function's attribute is.
    pub(crate) opted_in: Arc<AtomicU32>,
}

impl Function {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters as parsed from the source, when the parser understood them.
    pub fn signature(&self) -> Option<&KernelSignature> {
        self.signature.as_ref()
    }

    /// Registers per thread, static shared memory and the largest block this kernel was compiled
    /// for (`cuFuncGetAttribute`). The emulator knows neither registers nor static shared memory
    /// (`None`).
    pub fn resources(&self) -> Result<FunctionResources> {
        self.inner.resources()
    }

    /// How many blocks of `block_threads` threads, each with `dynamic_shared_bytes` of dynamic
    /// shared memory, one SM holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`; cudarc's
    /// `occupancy_max_active_blocks_per_multiprocessor`). The driver answers on a GPU; the
    /// emulator computes it from its SM's limits (`DeviceInfo::sm`), counting threads, blocks and
    /// dynamic shared memory only. 0: such a block cannot be launched at all.
    pub fn max_active_blocks_per_sm(&self, block_threads: u32, dynamic_shared_bytes: u32) -> Result<u32> {
        self.inner.max_active_blocks_per_sm(block_threads, dynamic_shared_bytes)
    }

    /// Lets launches of this kernel use up to `bytes` of dynamic shared memory, past the 48 KiB
    /// every kernel gets (CUDA's `cudaFuncSetAttribute(kernel,
    /// cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`; cudarc's `CudaFunction::set_attribute`).
    /// At most the device's `max_shared_mem_per_block_optin` (227 KiB on an H200, 163 KiB on the
    /// emulator, which claims compute capability 8.0).
    pub fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> Result<()> {
        let most = self.inner.max_shared_optin();
        if bytes > most {
            return Err(GpuError::LaunchConfig {
                kernel: self.name.clone(),
                message: format!("{bytes} bytes of dynamic shared memory asked for; this device gives a block at most {most}"),
            });
        }
        self.inner.set_max_dynamic_shared_bytes(bytes)?;
        self.opted_in.store(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// What `set_max_dynamic_shared_bytes` last set (0: never).
    pub fn max_dynamic_shared_bytes(&self) -> u32 {
        self.opted_in.load(Ordering::Relaxed)
    }

    /// The backend's own function object (cudarc's `CudaFunction` on a GPU).
    pub fn raw(&self) -> &dyn std::any::Any {
        self.inner.as_any()
    }
}
