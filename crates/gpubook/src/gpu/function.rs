//! Modules and functions: `gpu.load_module(Source::file(..))?.load_function(..)` (cudarc's
//! `CudaModule` and `CudaFunction`). A module is a backend's compiled code plus the source it came
//! from, whose parsed signatures the launch checks use.

use super::backend::{BackendFunction, BackendModule};
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::module::{KernelSource, Source};
use super::occupancy::FunctionResources;
use gpubook_emu::KernelSignature;
use std::path::PathBuf;
use std::sync::Arc;

impl Gpu {
    /// Compiles a module: NVRTC on a GPU, the system C++ compiler on the emulator.
    pub fn load_module(&self, source: Source) -> Result<Module> {
        let source = Arc::new(source.read()?);
        let inner = self.inner.backend.load_module(&source)?;
        Ok(Module { inner, source })
    }
}

/// A compiled module (cudarc's `CudaModule`, CUDA's `cuModuleLoadData`).
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Arc<dyn BackendModule>,
    pub(crate) source: Arc<KernelSource>,
}

impl Module {
    /// Looks a `__global__` function up by name (`cuModuleGetFunction`).
    pub fn load_function(&self, name: &str) -> Result<Function> {
        let signature = self.source.signatures.iter().find(|s| s.name == name).cloned();
        let inner = self.inner.function(name).map_err(|_| GpuError::KernelNotFound {
            name: name.into(),
            file: PathBuf::from(self.source.display_path()),
            available: self.source.kernel_names().join(", "),
        })?;
        Ok(Function { inner, name: name.into(), signature })
    }

    pub fn source(&self) -> &KernelSource {
        &self.source
    }
}

/// One kernel of a module, ready to launch (cudarc's `CudaFunction`).
#[derive(Clone)]
pub struct Function {
    pub(crate) inner: Arc<dyn BackendFunction>,
    pub(crate) name: String,
    pub(crate) signature: Option<KernelSignature>,
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

    /// The backend's own function object (cudarc's `CudaFunction` on a GPU).
    pub fn raw(&self) -> &dyn std::any::Any {
        self.inner.as_any()
    }
}
