//! Launching a kernel: `stream.launch_builder(&f).arg(&a).arg(&mut c).arg(&n).launch(cfg)`.
//!
//! Before a launch reaches either backend it is checked, here and only here, against what the GPU
//! would refuse (the configuration, against limits.rs's table) and against the kernel's own
//! parameter list as parsed from its source (count, pointer or value, element type, size), so a
//! wrong argument is a clear error rather than garbage on the device, the same on both backends.

use super::backend::LaunchRequest;
use super::error::{GpuError, Result};
use super::function::Function;
use super::limits::{LaunchConfig, check_config};
use super::mapped::MappedHostSlice;
use super::memory::{DevicePtr, DeviceSlice, DeviceView, DeviceViewMut, RawRef};
use super::repr::{DeviceRepr, as_bytes, c_size, is_known_c_type, rust_type_for};
use super::stream::{Stream, access};
use super::strided::{StridedView, StridedViewMut};
use super::trace::OpKind;
use gpubook_cudac::Param;
use std::sync::Arc;

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
        check_config(gpu.info(), &name, &cfg, self.func.max_dynamic_shared_bytes())?;
        if let Some(sig) = &self.func.signature {
            check_args(&name, &sig.params, &self.args)?;
        }
        let mut accesses = Vec::new();
        let mut buffers = Vec::new();
        let mut allocations = Vec::new(); // (device address of the allocation, its id)
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
                allocations.push((raw.addr - raw.offset as u64, raw.buffer));
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
            allocations: &allocations,
        };
        let stream_id = self.stream.id();
        let auto = gpu.inner.auto_sync.load(std::sync::atomic::Ordering::SeqCst);
        gpu.inner.run_op_recording(stream_id, &name, &accesses, auto, |b| {
            let counts = b.launch(stream_id, &request)?;
            Ok(OpKind::Launch {
                kernel: name.clone(),
                grid: request.grid,
                block: request.block,
                shared_mem_bytes: cfg.shared_mem_bytes,
                buffers,
                counts: counts.map(Box::new),
            })
        })?;
        Ok(())
    }
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
                let want = rust_type_for(&p.base).unwrap_or("i32");
                return err(format!(
                    "argument {i} `{} {}` is a {}, but a {rust} ({} bytes) was given: convert it (e.g. `n as {want}`)",
                    p.ty,
                    p.name,
                    p.base,
                    a.bytes.len()
                ));
            }
            // A type no DeviceRepr stands for (bool, int3, ...): its size, at least, must match.
            (ArgKind::Scalar { rust, .. }, false) if c_size(&p.base).is_some_and(|size| size != a.bytes.len()) => {
                let size = c_size(&p.base).unwrap_or_default();
                return err(format!(
                    "argument {i} `{} {}` is a {size}-byte {}, but a {rust} ({} bytes) was given",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{Gpu, Result};

    /// An argument to push: the device buffer (of f32) or a value.
    enum A {
        Buf,
        I32(i32),
        U64(u64),
        F64(f64),
        U8(u8),
    }

    /// The checks of `k(params)` against `args`, on an emulated device (whose buffers the pointer
    /// arguments need; no kernel is compiled or run).
    fn check(params: &str, args: &[A]) -> Result<()> {
        let gpu = Gpu::emulated(0, gpubook_emu::EmuConfig::from_env())?;
        let stream = gpu.default_stream();
        let buf = stream.alloc_zeros::<f32>(4)?;
        let sig = gpubook_cudac::parse_kernels(&format!("extern \"C\" __global__ void k({params}) {{}}")).remove(0);
        let f = Function {
            inner: std::sync::Arc::new(NoFunction),
            name: "k".into(),
            signature: Some(sig.clone()),
            opted_in: Default::default(),
        };
        let mut launch = stream.launch_builder(&f);
        for a in args {
            match a {
                A::Buf => launch.arg(&buf),
                A::I32(v) => launch.arg(v),
                A::U64(v) => launch.arg(v),
                A::F64(v) => launch.arg(v),
                A::U8(v) => launch.arg(v),
            };
        }
        check_args("k", &sig.params, &launch.args)
    }

    struct NoFunction;
    impl crate::gpu::backend::BackendFunction for NoFunction {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn resources(&self) -> Result<crate::gpu::FunctionResources> {
            unreachable!("the argument checks ask no function for its resources")
        }
        fn max_active_blocks_per_sm(&self, _: u32, _: u32) -> Result<u32> {
            unreachable!("the argument checks ask no function about occupancy")
        }
        fn max_shared_optin(&self) -> u32 {
            unreachable!("the argument checks opt in to nothing")
        }
        fn set_max_dynamic_shared_bytes(&self, _: u32) -> Result<()> {
            unreachable!("the argument checks opt in to nothing")
        }
    }

    fn refused(params: &str, args: &[A]) -> String {
        check(params, args).expect_err("the check should refuse this").to_string()
    }

    #[test]
    fn matching_arguments_pass() {
        check("const float* a, int n", &[A::Buf, A::I32(4)]).unwrap();
        // bool has no DeviceRepr: a value of its size passes.
        check("bool flag, float* out", &[A::U8(1), A::Buf]).unwrap();
    }

    #[test]
    fn count_kind_type_and_size_are_checked() {
        let e = refused("const float* a, int n", &[A::Buf]);
        assert!(e.contains("the kernel takes 2 arguments (const float* a, int n) but 1 were given"), "{e}");
        let e = refused("const float* a, int n", &[A::Buf, A::U64(4)]);
        assert!(e.contains("argument 1 `int n` is a int, but a u64 (8 bytes) was given: convert it (e.g. `n as i32`)"), "{e}");
        let e = refused("float* a, float s", &[A::Buf, A::F64(1.5)]);
        assert!(e.contains("convert it (e.g. `n as f32`)"), "the hint names the parameter's Rust type: {e}");
        let e = refused("float* a, int n", &[A::I32(4), A::I32(4)]);
        assert!(e.contains("argument 0 `float* a` is a pointer, but a value of type i32 was given"), "{e}");
        let e = refused("int n", &[A::Buf]);
        assert!(e.contains("argument 0 `int n` is a value, but a device buffer (`buffer #1` of f32) was given"), "{e}");
        let e = refused("int* a", &[A::Buf]);
        assert!(e.contains("argument 0 `int* a` points to int, but `buffer #1` holds f32"), "{e}");
        let e = refused("int3 v", &[A::I32(4)]);
        assert!(e.contains("argument 0 `int3 v` is a 12-byte int3, but a i32 (4 bytes) was given"), "{e}");
    }
}
