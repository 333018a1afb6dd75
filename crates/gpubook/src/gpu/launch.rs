//! Launching a kernel: `stream.launch_builder(&f).arg(&a).arg(&mut c).arg(&n).launch(cfg)`.
//!
//! Before a launch reaches either backend it is checked against what the GPU would refuse (the
//! configuration) and against the kernel's own parameter list (count, pointer or value, element
//! type, size), so a wrong argument is a clear error here rather than garbage on the device.

use super::backend::LaunchRequest;
use super::error::{GpuError, Result};
use super::function::Function;
use super::info::DeviceInfo;
use super::mapped::MappedHostSlice;
use super::memory::{DevicePtr, DeviceSlice, DeviceView, DeviceViewMut, RawRef};
use super::repr::{DeviceRepr, as_bytes, is_known_c_type};
use super::stream::{Stream, access};
use super::strided::{StridedView, StridedViewMut};
use super::trace::OpKind;
use gpubook_emu::Param;
use std::sync::Arc;

/// Grid and block shape of a launch (CUDA's `<<<grid, block, shared>>>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid_dim: (u32, u32, u32),
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes (`extern __shared__`).
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element, 1024 threads a block (as cudarc's `for_num_elems`).
    pub fn for_num_elems(n: u32) -> Self {
        LaunchConfig { grid_dim: (n.div_ceil(1024).max(1), 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }
    }

    pub fn threads_per_block(&self) -> u64 {
        self.block_dim.0 as u64 * self.block_dim.1 as u64 * self.block_dim.2 as u64
    }

    pub fn blocks(&self) -> u64 {
        self.grid_dim.0 as u64 * self.grid_dim.1 as u64 * self.grid_dim.2 as u64
    }
}

/// One kernel argument, as the builder keeps it.
#[doc(hidden)]
pub struct Arg<'a> {
    bytes: Vec<u8>,
    kind: ArgKind<'a>,
}

enum ArgKind<'a> {
    Pointer { raw: RawRef<'a>, c_names: &'static [&'static str], rust: &'static str, mutable: bool },
    Scalar { c_names: &'static [&'static str], rust: &'static str },
}

/// Things that can be passed to a kernel: device slices and views (as pointers) and plain values.
pub trait PushKernelArg<'a> {
    #[doc(hidden)]
    fn into_arg(self) -> Arg<'a>;
}

pub(crate) fn pointer<'a, T: DeviceRepr>(raw: RawRef<'a>, mutable: bool) -> Arg<'a> {
    Arg { bytes: raw.addr.to_le_bytes().to_vec(), kind: ArgKind::Pointer { raw, c_names: T::C_NAMES, rust: T::RUST_NAME, mutable } }
}

impl<'a, T: DeviceRepr> PushKernelArg<'a> for &'a DeviceSlice<T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), false)
    }
}
impl<'a, T: DeviceRepr> PushKernelArg<'a> for &'a mut DeviceSlice<T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a DeviceView<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), false)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a DeviceViewMut<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a mut DeviceViewMut<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a StridedView<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), false)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a StridedViewMut<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, 'b, T: DeviceRepr> PushKernelArg<'a> for &'a mut StridedViewMut<'b, T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, T: DeviceRepr> PushKernelArg<'a> for &'a MappedHostSlice<T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), false)
    }
}
impl<'a, T: DeviceRepr> PushKernelArg<'a> for &'a mut MappedHostSlice<T> {
    fn into_arg(self) -> Arg<'a> {
        pointer::<T>(self.raw(), true)
    }
}
impl<'a, T: DeviceRepr> PushKernelArg<'a> for &'a T {
    fn into_arg(self) -> Arg<'a> {
        let bytes = as_bytes(std::slice::from_ref(self)).to_vec();
        Arg { bytes, kind: ArgKind::Scalar { c_names: T::C_NAMES, rust: T::RUST_NAME } }
    }
}

impl Stream {
    /// Starts a launch of `f`: add arguments with `.arg(..)`, then `.launch(cfg)`.
    pub fn launch_builder<'a>(&'a self, f: &'a Function) -> LaunchArgs<'a> {
        LaunchArgs::new(self, f)
    }
}

/// A launch being put together (cudarc's `LaunchArgs`).
pub struct LaunchArgs<'a> {
    stream: &'a Stream,
    func: &'a Function,
    args: Vec<Arg<'a>>,
}

impl<'a> LaunchArgs<'a> {
    pub(crate) fn new(stream: &'a Stream, func: &'a Function) -> Self {
        LaunchArgs { stream, func, args: Vec::new() }
    }

    /// Adds the next kernel argument: `&slice` / `&mut slice` for a pointer, `&value` for a value.
    pub fn arg<A: PushKernelArg<'a>>(&mut self, arg: A) -> &mut Self {
        self.args.push(arg.into_arg());
        self
    }

    /// Queues the kernel on the stream (`cuLaunchKernel`).
    ///
    /// # Safety
    /// As with cudarc: the kernel may read and write any memory its pointer arguments reach, and
    /// nothing checks what it does there on a GPU (the emulator does check).
    pub unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<()> {
        let gpu = self.stream.gpu();
        let name = self.func.name.clone();
        check_config(gpu.info(), &name, &cfg)?;
        if let Some(sig) = &self.func.signature {
            check_args(&name, &sig.params, &self.args)?;
        }
        let mut accesses = Vec::new();
        let mut buffers = Vec::new();
        let mut bytes_touched = 0u64;
        let mut mapped_bytes = 0u64;
        for (i, a) in self.args.iter().enumerate() {
            if let ArgKind::Pointer { raw, mutable, .. } = &a.kind {
                if !Arc::ptr_eq(raw.gpu, &gpu.inner) {
                    return Err(GpuError::Arguments {
                        kernel: name,
                        message: format!("argument {i} (`{}`) lives on another device", raw.label),
                    });
                }
                let param = self.func.signature.as_ref().and_then(|s| s.params.get(i));
                // A buffer the program never named takes the parameter's name in the emulator's
                // diagnostics: `a[1000]` reads better than `buffer #3[1000]`.
                if let Some(p) = param
                    && raw.label.starts_with("buffer #")
                    && !raw.mapped
                {
                    gpu.inner.backend.relabel(raw.addr - raw.offset as u64, &p.name);
                }
                let param_const = param.is_some_and(|p| p.is_const);
                let write = *mutable || !param_const;
                accesses.push(access(raw, write));
                buffers.push((raw.buffer, write));
                bytes_touched += raw.bytes as u64;
                if raw.mapped {
                    mapped_bytes += raw.bytes as u64;
                }
            }
        }
        let bytes: Vec<Vec<u8>> = self.args.iter().map(|a| a.bytes.clone()).collect();
        let request = LaunchRequest {
            function: self.func.inner.as_ref(),
            grid: [cfg.grid_dim.0, cfg.grid_dim.1, cfg.grid_dim.2],
            block: [cfg.block_dim.0, cfg.block_dim.1, cfg.block_dim.2],
            shared_mem_bytes: cfg.shared_mem_bytes,
            args: &bytes,
            bytes_touched,
            mapped_bytes,
        };
        let kind = OpKind::Launch {
            kernel: name.clone(),
            grid: request.grid,
            block: request.block,
            shared_mem_bytes: cfg.shared_mem_bytes,
            buffers,
        };
        let stream_id = self.stream.id();
        gpu.inner.run_op(stream_id, kind, &name, &accesses, |b| b.launch(stream_id, &request))?;
        Ok(())
    }
}

fn check_config(info: &DeviceInfo, kernel: &str, cfg: &LaunchConfig) -> Result<()> {
    let err = |message: String| Err(GpuError::LaunchConfig { kernel: kernel.into(), message });
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    if [g.0, g.1, g.2, b.0, b.1, b.2].contains(&0) {
        return err(format!(
            "grid_dim {g:?} and block_dim {b:?} must have no zero dimension (an empty launch is an error on a GPU: did n.div_ceil(block) give 0?)"
        ));
    }
    if cfg.threads_per_block() > info.max_threads_per_block as u64 {
        return err(format!(
            "block_dim {b:?} has {} threads; a block holds at most {}",
            cfg.threads_per_block(),
            info.max_threads_per_block
        ));
    }
    let (mb, mg) = (info.max_block_dim, info.max_grid_dim);
    if b.0 > mb[0] || b.1 > mb[1] || b.2 > mb[2] {
        return err(format!("block_dim {b:?} exceeds the per-dimension limits {mb:?}"));
    }
    if g.0 > mg[0] || g.1 > mg[1] || g.2 > mg[2] {
        return err(format!("grid_dim {g:?} exceeds the per-dimension limits {mg:?}"));
    }
    if cfg.shared_mem_bytes > info.max_shared_mem_per_block {
        return err(format!(
            "{} bytes of dynamic shared memory requested; a block may use at most {} without opting in",
            cfg.shared_mem_bytes, info.max_shared_mem_per_block
        ));
    }
    Ok(())
}

fn check_args(kernel: &str, params: &[Param], args: &[Arg<'_>]) -> Result<()> {
    let list = || params.iter().map(|p| format!("{} {}", p.ty, p.name)).collect::<Vec<_>>().join(", ");
    let err = |message: String| Err(GpuError::Arguments { kernel: kernel.into(), message });
    if params.len() != args.len() {
        return err(format!("the kernel takes {} arguments ({}) but {} were given", params.len(), list(), args.len()));
    }
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        let known = is_known_c_type(&p.base);
        match (&a.kind, p.pointer) {
            (ArgKind::Pointer { raw, rust, .. }, false) => {
                return err(format!(
                    "argument {i} `{} {}` is a value, but a device buffer (`{}` of {rust}) was given",
                    p.ty, p.name, raw.label
                ));
            }
            (ArgKind::Scalar { rust, .. }, true) => {
                return err(format!(
                    "argument {i} `{} {}` is a pointer, but a value of type {rust} was given: pass a device slice (&buf or &mut buf)",
                    p.ty, p.name
                ));
            }
            (ArgKind::Pointer { c_names, rust, raw, .. }, true) if known && !c_names.contains(&p.base.as_str()) => {
                return err(format!("argument {i} `{} {}` points to {}, but `{}` holds {rust}", p.ty, p.name, p.base, raw.label));
            }
            (ArgKind::Scalar { c_names, rust }, false) if known && !c_names.contains(&p.base.as_str()) => {
                return err(format!(
                    "argument {i} `{} {}` is a {}, but a {rust} ({} bytes) was given: convert it (e.g. `n as i32`)",
                    p.ty,
                    p.name,
                    p.base,
                    a.bytes.len()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
