//! Launches described as text, run on one device: buffers made by a launch stay for the next
//! (`@name`), so a two-kernel algorithm (scan, then add the block sums) runs as written.

use super::elem::{Elem, ElemType};
use super::spec::{ArgSpec, Init, LaunchLine, SymbolSpec};
use crate::gpu::{AccessCounts, DeviceSlice, Function, Global, Gpu, GpuError, LaunchArgs, LaunchConfig, Module, Source, Stream};
use anyhow::{Context, bail};
use std::path::Path;
use std::sync::Arc;

/// Calls `$m!` with every element size a buffer may have (`Elem<N>`) and its variant name.
macro_rules! for_sizes {
    ($m:ident) => {
        $m!(S1 1, S2 2, S3 3, S4 4, S6 6, S8 8, S12 12, S16 16, S24 24, S32 32);
    };
}

macro_rules! dev_buf {
    ($($v:ident $n:literal),*) => {
        /// A device buffer of some element size.
        enum DevBuf { $($v(DeviceSlice<Elem<$n>>)),* }
        /// A value argument of some size.
        enum Value { $($v(Elem<$n>)),* }

        impl DevBuf {
            /// `n` elements of `size` bytes: from `data`, zeroed, or left unwritten.
            fn alloc(s: &Stream, size: usize, n: usize, data: Option<&[u8]>, zeroed: bool) -> anyhow::Result<DevBuf> {
                Ok(match size {
                    $($n => DevBuf::$v(match data {
                        Some(d) => s.clone_htod(&d.chunks_exact($n).map(|c| Elem::<$n>(c.try_into().expect("chunks of N"))).collect::<Vec<_>>())?,
                        None if zeroed => s.alloc_zeros(n)?,
                        // SAFETY: the emulator poisons it and reports reads; on a GPU it holds garbage, as asked.
                        None => unsafe { s.alloc(n) }?,
                    }),)*
                    _ => bail!("no buffer of {size}-byte elements"),
                })
            }
            fn read(&self, s: &Stream) -> crate::gpu::Result<Vec<u8>> {
                Ok(match self { $(DevBuf::$v(d) => s.clone_dtoh(d)?.into_iter().flat_map(|e| e.0).collect()),* })
            }
            fn set_label(&mut self, label: &str) {
                match self { $(DevBuf::$v(d) => d.set_label(label)),* }
            }
            fn push<'a>(&'a mut self, l: &mut LaunchArgs<'a>) {
                match self { $(DevBuf::$v(d) => { l.arg(d); }),* }
            }
        }

        impl Value {
            fn new(bytes: &[u8]) -> anyhow::Result<Value> {
                Ok(match bytes.len() {
                    $($n => Value::$v(Elem(bytes.try_into().expect("N bytes"))),)*
                    size => bail!("no value of {size} bytes"),
                })
            }
            fn push<'a>(&'a self, l: &mut LaunchArgs<'a>) {
                match self { $(Value::$v(v) => { l.arg(v); }),* }
            }
        }
    };
}
for_sizes!(dev_buf);

/// A buffer of the session.
pub struct Buffer {
    pub name: String,
    pub ty: ElemType,
    pub n: usize,
    dev: DevBuf,
    /// Its bytes before the first launch, when the session keeps them ([`Session::keep_initial`]);
    /// `None` for an uninit buffer.
    initial: Option<Vec<u8>>,
}

impl Buffer {
    /// Its bytes before the first launch; `None` when not kept or never written (uninit).
    pub fn initial(&self) -> Option<&[u8]> {
        self.initial.as_deref()
    }
}

/// A `__constant__` or `__device__` variable the session set or reads back.
pub struct Symbol {
    pub name: String,
    pub ty: ElemType,
    pub n: usize,
    global: Global,
}

/// What a launch did.
#[derive(Debug)]
pub struct Launched {
    /// The emulator's check mode counts (None on a GPU and in fast mode).
    pub counts: Option<AccessCounts>,
}

/// One module on one device, and the buffers its launches made.
pub struct Session {
    pub gpu: Gpu,
    stream: Arc<Stream>,
    module: Module,
    buffers: Vec<Buffer>,
    symbols: Vec<Symbol>,
    rng: crate::grade::Rng,
    keep_initial: bool,
}

impl Session {
    pub fn new(gpu: Gpu, file: &Path) -> anyhow::Result<Session> {
        let module = gpu.load_module(Source::file(file))?;
        Ok(Session {
            stream: gpu.default_stream(),
            gpu,
            module,
            buffers: Vec::new(),
            symbols: Vec::new(),
            rng: crate::grade::Rng::new(1),
            keep_initial: false,
        })
    }

    /// Keeps each new buffer's first bytes, so a run can tell which elements its launches changed.
    pub fn keep_initial(&mut self) {
        self.keep_initial = true;
    }

    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }

    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// Writes a module variable (before the launches that read it): its size on the device must
    /// be the spec's. `Init::Uninit` writes nothing and only keeps the variable for reading back.
    pub fn set_symbol(&mut self, spec: &SymbolSpec) -> anyhow::Result<()> {
        let global = self.module.get_global(&spec.name)?;
        let given = spec.n * spec.ty.size();
        if global.num_bytes() != given {
            bail!(
                "`{}`: the variable `{}` is {} bytes on the device, but {} × {} is {given} bytes",
                spec.text,
                spec.name,
                global.num_bytes(),
                spec.n,
                spec.ty.c_name()
            );
        }
        if !matches!(spec.init, Init::Uninit) {
            let data = self.initial_bytes(spec.ty, spec.n, &spec.init, &spec.name)?.unwrap_or_else(|| vec![0; given]);
            global.write_bytes(&self.stream, &data)?;
        }
        self.symbols.retain(|s| s.name != spec.name);
        self.symbols.push(Symbol { name: spec.name.clone(), ty: spec.ty, n: spec.n, global });
        Ok(())
    }

    /// The variable's bytes now (after the stream's work).
    pub fn read_symbol(&self, s: &Symbol) -> crate::gpu::Result<Vec<u8>> {
        s.global.read_bytes(&self.stream)
    }

    /// A buffer's or, failing that, a variable's type and bytes, by name.
    pub fn contents(&self, name: &str) -> Option<anyhow::Result<(ElemType, Vec<u8>)>> {
        if let Some(b) = self.buffer(name) {
            return Some(self.read(b).map(|d| (b.ty, d)).map_err(Into::into));
        }
        let s = self.symbols.iter().find(|s| s.name == name)?;
        Some(self.read_symbol(s).map(|d| (s.ty, d)).map_err(Into::into))
    }

    /// Every buffer's and variable's name, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.buffers.iter().map(|b| b.name.as_str()).chain(self.symbols.iter().map(|s| s.name.as_str())).collect()
    }

    /// The buffer's bytes, copied from the device.
    pub fn read(&self, b: &Buffer) -> crate::gpu::Result<Vec<u8>> {
        b.dev.read(&self.stream)
    }

    /// Refuses buffers the device cannot hold, before anything is allocated.
    pub fn check_memory(&self, lines: &[LaunchLine]) -> anyhow::Result<()> {
        let total = self.gpu.info().total_memory;
        let mut sum = 0u64;
        for arg in lines.iter().flat_map(|l| &l.args) {
            if arg.bytes() > total {
                bail!("a buffer of {} ({arg:?}) is larger than the device's {}", gib(arg.bytes()), gib(total));
            }
            sum = sum.saturating_add(arg.bytes());
        }
        if sum > total {
            bail!("the buffers need {} of device memory together; the device has {}", gib(sum), gib(total));
        }
        Ok(())
    }

    /// Makes the launch's new buffers, then launches. The outer error is a problem with the
    /// description; the inner one the launch's own outcome (the kernel's diagnostic).
    pub fn launch(&mut self, line: &LaunchLine) -> anyhow::Result<Result<Launched, GpuError>> {
        let f: Function = self.module.load_function(&line.kernel)?;
        let params = f.signature().map(|s| s.params.clone()).unwrap_or_default();
        if !params.is_empty() && params.len() != line.args.len() {
            let list: Vec<String> = params.iter().map(|p| format!("{} {}", p.ty, p.name)).collect();
            bail!("`{}` takes {} arguments ({}), {} given", line.kernel, params.len(), list.join(", "), line.args.len());
        }
        // Each argument: a buffer's index or a value.
        let mut slots: Vec<Result<usize, Value>> = Vec::new();
        for (i, arg) in line.args.iter().enumerate() {
            let param = params.get(i);
            let what = param.map(|p| format!("argument {i} `{} {}`", p.ty, p.name)).unwrap_or(format!("argument {i}"));
            let check_type = |ty: ElemType, pointer: bool| -> anyhow::Result<()> {
                if let Some(p) = param {
                    if p.pointer != pointer {
                        bail!(
                            "{what} is {}, but {} given",
                            if p.pointer { "a pointer" } else { "a value" },
                            if pointer { "a buffer was" } else { "a value was" }
                        );
                    }
                    if ElemType::parse(&p.base).is_ok() && !ty.matches_c(&p.base) {
                        bail!("{what} holds {}, but {} was given", p.base, ty.c_name());
                    }
                }
                Ok(())
            };
            slots.push(match arg {
                ArgSpec::Ref(name) => {
                    let at = self.buffers.iter().position(|b| &b.name == name).with_context(|| {
                        let names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
                        format!("{what}: no buffer named `{name}` (there are: {})", names.join(", "))
                    })?;
                    check_type(self.buffers[at].ty, true)?;
                    Ok(at)
                }
                ArgSpec::Value { ty, values } => {
                    check_type(*ty, false)?;
                    let mut bytes = Vec::new();
                    values.iter().for_each(|&x| ty.base.encode(x, &mut bytes));
                    Err(Value::new(&bytes)?)
                }
                ArgSpec::Buffer { ty, n, init } => {
                    check_type(*ty, true)?;
                    let name = param.map(|p| p.name.clone()).filter(|n| !n.is_empty()).unwrap_or(format!("arg{i}"));
                    let name = if self.buffer(&name).is_some() { format!("{name}.{}", self.buffers.len()) } else { name };
                    let data = self.initial_bytes(*ty, *n, init, &name)?;
                    let zeroed = matches!(init, Init::Zeros);
                    let mut dev = DevBuf::alloc(&self.stream, ty.size(), *n, data.as_deref(), zeroed)?;
                    dev.set_label(&name);
                    let initial = match (&data, zeroed) {
                        _ if !self.keep_initial => None,
                        (Some(bytes), _) => Some(bytes.clone()),
                        (None, true) => Some(vec![0; ty.size() * n]),
                        (None, false) => None,
                    };
                    self.buffers.push(Buffer { name, ty: *ty, n: *n, dev, initial });
                    Ok(self.buffers.len() - 1)
                }
            });
        }
        let cfg = LaunchConfig { grid_dim: line.grid, block_dim: line.block, shared_mem_bytes: line.shared };
        let mut free: Vec<Option<&mut DevBuf>> = self.buffers.iter_mut().map(|b| Some(&mut b.dev)).collect();
        let mut launch = self.stream.launch_builder(&f);
        for slot in &slots {
            match slot {
                Ok(at) => free[*at].take().context("the same buffer is passed twice: give the kernel two buffers")?.push(&mut launch),
                Err(v) => v.push(&mut launch),
            }
        }
        // SAFETY: every argument was checked against the kernel's parameters (count, kind, type).
        let outcome = unsafe { launch.launch(cfg) };
        Ok(match outcome {
            Ok(()) => {
                self.stream.synchronize()?;
                let counts = self.gpu.trace()?.launches().last().and_then(|op| op.access_counts()).cloned();
                Ok(Launched { counts })
            }
            Err(e) => Err(e),
        })
    }

    /// The bytes a buffer starts with; None for zeros and uninit (allocated as such). Host memory
    /// is reserved fallibly: too little of it is an error, not an abort.
    fn initial_bytes(&mut self, ty: ElemType, n: usize, init: &Init, name: &str) -> anyhow::Result<Option<Vec<u8>>> {
        let scalars = n * ty.lanes;
        let value = |rng: &mut crate::grade::Rng, k: usize| -> f64 {
            match init {
                Init::Ones => 1.0,
                Init::Iota => k as f64,
                Init::Random => rng.f32(0.0, 100.0).floor() as f64,
                Init::List(v) if v.len() == 1 => v[0],
                Init::List(v) => v[k],
                _ => 0.0,
            }
        };
        Ok(match init {
            Init::Zeros | Init::Uninit => None,
            Init::Data(_, d) => Some(d.clone()),
            _ => {
                let mut v: Vec<u8> = Vec::new();
                v.try_reserve_exact(n * ty.size()).map_err(|_| {
                    anyhow::anyhow!("not enough host memory to build the {} bytes of `{name}`'s initial values", n * ty.size())
                })?;
                for k in 0..scalars {
                    ty.base.encode(value(&mut self.rng, k), &mut v);
                }
                Some(v)
            }
        })
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB ({bytes} bytes)", bytes as f64 / (1u64 << 30) as f64)
}

/// A buffer's elements as text: `[0.0, 1.0, ...]`, vectors as `(x, y, z, w)`.
pub fn show(ty: ElemType, data: &[u8], count: usize) -> String {
    let b = ty.base.size();
    let elems: Vec<String> = data
        .chunks_exact(ty.size())
        .take(count)
        .map(|e| {
            let lanes: Vec<String> = e.chunks_exact(b).map(|x| ty.base.show(x)).collect();
            if ty.lanes == 1 { lanes[0].clone() } else { format!("({})", lanes.join(", ")) }
        })
        .collect();
    let more = if data.len() / ty.size() > count { ", ..." } else { "" };
    format!("[{}{more}]", elems.join(", "))
}
