//! Launches described as text, run on one device: buffers made by a launch stay for the next
//! (`@name`), so a two-kernel algorithm (scan, then add the block sums) runs as written. With
//! several ranks ([`Session::with_ranks`]) every launch runs once per rank, rank 0 first, and
//! every buffer is a [`Symmetric`] one: a copy per rank, and per rank the table of all copies.

use super::elem::{Elem, ElemType};
use super::spec::{ArgSpec, Init, LaunchLine, SymbolSpec};
use anyhow::{Context, bail};
use gpubook::ep::{Symmetric, Topology, World};
use gpubook::gpu::{AccessCounts, Function, Global, Gpu, GpuError, LaunchArgs, LaunchConfig, Module, Source, Stream};
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
        /// A buffer of some element size on every rank.
        enum DevBuf { $($v(Symmetric<Elem<$n>>)),* }
        /// A value argument of some size.
        enum Value { $($v(Elem<$n>)),* }

        impl DevBuf {
            /// `n` elements of `size` bytes on every rank: from `data`, zeroed, or left unwritten.
            fn alloc(world: &World, s: &Stream, size: usize, n: usize, data: Option<&[u8]>, zeroed: bool, label: &str) -> anyhow::Result<DevBuf> {
                Ok(match size {
                    $($n => DevBuf::$v({
                        let mut b: Symmetric<Elem<$n>> = if zeroed {
                            Symmetric::zeros(world, n, label)?
                        } else {
                            // SAFETY: the emulator poisons it and reports reads; on a GPU it holds
                            // garbage, as asked, until `data` (when given) is copied in.
                            unsafe { Symmetric::alloc(world, n, label) }?
                        };
                        if let Some(d) = data {
                            let host: Vec<Elem<$n>> = d.chunks_exact($n).map(|c| Elem::<$n>(c.try_into().expect("chunks of N"))).collect();
                            for r in 0..world.size() {
                                s.memcpy_htod(&host, b.on_mut(r))?;
                            }
                        }
                        if world.size() == 1 {
                            b.on_mut(0).set_label(label); // one rank: the buffer's plain name
                        }
                        b
                    }),)*
                    _ => bail!("no buffer of {size}-byte elements"),
                })
            }
            fn read(&self, rank: usize, s: &Stream) -> gpubook::gpu::Result<Vec<u8>> {
                Ok(match self { $(DevBuf::$v(d) => s.clone_dtoh(d.on(rank))?.into_iter().flat_map(|e| e.0).collect()),* })
            }
            /// Rank `rank`'s own copy, as a `T*`.
            fn push<'a>(&'a mut self, rank: usize, l: &mut LaunchArgs<'a>) {
                match self { $(DevBuf::$v(d) => { l.arg(d.on_mut(rank)); }),* }
            }
            /// The table of every rank's copy, as the `T* const*` rank `rank` is given.
            fn push_peers<'a>(&'a self, rank: usize, l: &mut LaunchArgs<'a>) {
                match self { $(DevBuf::$v(d) => { l.arg(d.peers(rank)); }),* }
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

/// A buffer of the session (one copy per rank).
pub struct Buffer {
    pub name: String,
    pub ty: ElemType,
    pub n: usize,
    dev: DevBuf,
    /// Its bytes before the first launch, when the session keeps them ([`Session::keep_initial`]);
    /// `None` for an uninit buffer. Every rank's copy starts the same.
    initial: Option<Vec<u8>>,
    uninit: bool,
}

impl Buffer {
    /// Made `uninit`: its elements hold the 0xFF poison until written (a written -1 looks the same).
    pub fn uninit(&self) -> bool {
        self.uninit
    }

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

/// What a launch did on one rank.
#[derive(Debug)]
pub struct Launched {
    /// The emulator's check mode counts (None on a GPU and in fast mode).
    pub counts: Option<AccessCounts>,
}

/// One module on one device, the ranks that share it, and the buffers its launches made.
pub struct Session {
    pub gpu: Gpu,
    stream: Arc<Stream>,
    module: Module,
    world: World,
    buffers: Vec<Buffer>,
    symbols: Vec<Symbol>,
    rng: crate::rng::Rng,
    keep_initial: bool,
}

impl Session {
    pub fn new(gpu: Gpu, file: &Path) -> anyhow::Result<Session> {
        Session::with_ranks(gpu, file, 1)
    }

    /// `ranks` ranks on `gpu`, as the expert-parallel chapters' [`World::new`] puts them.
    pub fn with_ranks(gpu: Gpu, file: &Path, ranks: usize) -> anyhow::Result<Session> {
        if ranks == 0 {
            bail!("--ranks 0: a launch needs at least one rank");
        }
        let world = World::new(&gpu, Topology::single_node(ranks).map_err(anyhow::Error::msg)?)?;
        let module = gpu.load_module(Source::file(file))?;
        Ok(Session {
            stream: gpu.default_stream(),
            gpu,
            module,
            world,
            buffers: Vec::new(),
            symbols: Vec::new(),
            rng: crate::rng::Rng::new(1),
            keep_initial: false,
        })
    }

    pub fn ranks(&self) -> usize {
        self.world.size()
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

    /// `name` (rank 0's copy) or `name@R` (rank R's), as `--save` and `@expect` name a buffer.
    pub fn find(&self, name: &str) -> anyhow::Result<(&Buffer, usize)> {
        let (base, rank) = match name.split_once('@') {
            Some((b, r)) => (
                b,
                r.parse::<usize>()
                    .ok()
                    .filter(|&r| r < self.ranks())
                    .with_context(|| format!("`{name}`: no rank `{r}` (there are {})", self.ranks()))?,
            ),
            None => (name, 0),
        };
        let b = self.buffer(base).with_context(|| {
            let names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
            format!("no buffer `{base}` (there are: {})", names.join(", "))
        })?;
        Ok((b, rank))
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
    pub fn read_symbol(&self, s: &Symbol) -> gpubook::gpu::Result<Vec<u8>> {
        s.global.read_bytes(&self.stream)
    }

    /// A buffer's (`name`, or `name@R` for rank R's copy) or, failing that, a variable's type
    /// and bytes, by name.
    pub fn contents(&self, name: &str) -> Option<anyhow::Result<(ElemType, Vec<u8>)>> {
        if self.buffer(name.split('@').next().unwrap_or(name)).is_some() {
            return Some(self.find(name).and_then(|(b, rank)| Ok((b.ty, self.read_rank(b, rank)?))));
        }
        let s = self.symbols.iter().find(|s| s.name == name)?;
        Some(self.read_symbol(s).map(|d| (s.ty, d)).map_err(Into::into))
    }

    /// Every buffer's and variable's name, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.buffers.iter().map(|b| b.name.as_str()).chain(self.symbols.iter().map(|s| s.name.as_str())).collect()
    }

    /// Rank 0's copy of the buffer, copied from the device.
    pub fn read(&self, b: &Buffer) -> gpubook::gpu::Result<Vec<u8>> {
        self.read_rank(b, 0)
    }

    /// Rank `rank`'s copy of the buffer, copied from the device.
    pub fn read_rank(&self, b: &Buffer, rank: usize) -> gpubook::gpu::Result<Vec<u8>> {
        b.dev.read(rank, &self.stream)
    }

    /// How a buffer's copy is labelled in diagnostics and access counts: its name with one rank,
    /// `name@R` with several.
    pub fn label(&self, b: &Buffer, rank: usize) -> String {
        if self.ranks() == 1 { b.name.clone() } else { format!("{}@{rank}", b.name) }
    }

    /// Refuses buffers the device cannot hold, before anything is allocated.
    pub fn check_memory(&self, lines: &[LaunchLine]) -> anyhow::Result<()> {
        let total = self.gpu.info().total_memory;
        let mut sum = 0u64;
        for arg in lines.iter().flat_map(|l| &l.args) {
            let bytes = arg.bytes().saturating_mul(self.ranks() as u64);
            if bytes > total {
                bail!("a buffer of {} ({arg:?}) is larger than the device's {}", gib(bytes), gib(total));
            }
            sum = sum.saturating_add(bytes);
        }
        if sum > total {
            bail!("the buffers need {} of device memory together; the device has {}", gib(sum), gib(total));
        }
        Ok(())
    }

    /// Makes the launch's new buffers (a copy on every rank), then launches once per rank, rank
    /// 0 first, each after the last has finished. The outer error is a problem with the
    /// description; the inner ones the ranks' own outcomes (a kernel's diagnostic), up to the
    /// first rank that failed.
    pub fn launch(&mut self, line: &LaunchLine) -> anyhow::Result<Vec<Result<Launched, GpuError>>> {
        let f: Function = self.module.load_function(&line.kernel)?;
        let params = f.signature().map(|s| s.params.clone()).unwrap_or_default();
        if !params.is_empty() && params.len() != line.args.len() {
            let list: Vec<String> = params.iter().map(|p| format!("{} {}", p.ty, p.name)).collect();
            bail!("`{}` takes {} arguments ({}), {} given", line.kernel, params.len(), list.join(", "), line.args.len());
        }
        let slots = self.slots(line, &params)?;
        let mut outcomes = Vec::new();
        for rank in 0..self.ranks() {
            let outcome = self.launch_rank(line, &f, &slots, rank)?;
            let failed = outcome.is_err();
            outcomes.push(outcome);
            if failed {
                break;
            }
        }
        Ok(outcomes)
    }

    /// Each argument: a buffer (its index, and whether the kernel gets the peer table), a value,
    /// or the rank; new buffers are made here.
    fn slots(&mut self, line: &LaunchLine, params: &[gpubook::cudac::Param]) -> anyhow::Result<Vec<Slot>> {
        let mut slots: Vec<Slot> = Vec::new();
        for (i, arg) in line.args.iter().enumerate() {
            let param = params.get(i);
            let what = param.map(|p| format!("argument {i} `{} {}`", p.ty, p.name)).unwrap_or(format!("argument {i}"));
            // Pointer levels: `T*` 1, `T* const*` 2 (a peer table).
            let levels = param.map(|p| p.ty.matches('*').count() + usize::from(p.ty.contains('[')));
            let check_type = |ty: ElemType, pointer: bool, peers: bool| -> anyhow::Result<()> {
                if let Some(p) = param {
                    if p.pointer != pointer {
                        bail!(
                            "{what} is {}, but {} given",
                            if p.pointer { "a pointer" } else { "a value" },
                            if pointer { "a buffer was" } else { "a value was" }
                        );
                    }
                    match levels {
                        Some(l) if peers && l < 2 => {
                            bail!("{what} is one buffer, not a table of every rank's (`T* const*`): drop `peers:`")
                        }
                        Some(l) if pointer && !peers && l >= 2 => {
                            bail!("{what} is a table of pointers: give `peers:` and a buffer, whose copies on every rank it lists")
                        }
                        _ => {}
                    }
                    if ElemType::parse(&p.base).is_ok() && !ty.matches_c(&p.base) {
                        bail!("{what} holds {}, but {} was given", p.base, ty.c_name());
                    }
                }
                Ok(())
            };
            let (arg, peers) = match arg {
                ArgSpec::Peers(inner) => (inner.as_ref(), true),
                a => (a, false),
            };
            slots.push(match arg {
                ArgSpec::Ref(name) => {
                    let at = self.buffers.iter().position(|b| &b.name == name).with_context(|| {
                        let names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
                        format!("{what}: no buffer named `{name}` (there are: {})", names.join(", "))
                    })?;
                    check_type(self.buffers[at].ty, true, peers)?;
                    Slot::Buffer { at, peers }
                }
                ArgSpec::Value { ty, values } => {
                    check_type(*ty, false, false)?;
                    let mut bytes = Vec::new();
                    values.iter().for_each(|&x| ty.base.encode(x, &mut bytes));
                    Slot::Value(Value::new(&bytes)?)
                }
                ArgSpec::Rank { ty, count } => {
                    check_type(*ty, false, false)?;
                    Slot::Rank { ty: *ty, count: *count }
                }
                ArgSpec::Buffer { ty, n, init } => {
                    check_type(*ty, true, peers)?;
                    let name = param.map(|p| p.name.clone()).filter(|n| !n.is_empty()).unwrap_or(format!("arg{i}"));
                    let name = if self.buffer(&name).is_some() { format!("{name}.{}", self.buffers.len()) } else { name };
                    let data = self.initial_bytes(*ty, *n, init, &name)?;
                    let zeroed = matches!(init, Init::Zeros);
                    let dev = DevBuf::alloc(&self.world, &self.stream, ty.size(), *n, data.as_deref(), zeroed, &name)?;
                    let initial = match (&data, zeroed) {
                        _ if !self.keep_initial => None,
                        (Some(bytes), _) => Some(bytes.clone()),
                        (None, true) => Some(vec![0; ty.size() * n]),
                        (None, false) => None,
                    };
                    let uninit = matches!(init, Init::Uninit);
                    self.buffers.push(Buffer { name, ty: *ty, n: *n, dev, initial, uninit });
                    Slot::Buffer { at: self.buffers.len() - 1, peers }
                }
                ArgSpec::Peers(_) => bail!("{what}: a peer table of a peer table"),
            });
        }
        Ok(slots)
    }

    fn launch_rank(&mut self, line: &LaunchLine, f: &Function, slots: &[Slot], rank: usize) -> anyhow::Result<Result<Launched, GpuError>> {
        let cfg = LaunchConfig { grid_dim: line.grid, block_dim: line.block, shared_mem_bytes: line.shared };
        let ranks = self.ranks();
        let mut rank_values = Vec::new();
        for slot in slots {
            if let Slot::Rank { ty, count } = slot {
                let mut bytes = Vec::new();
                ty.base.encode(if *count { ranks as f64 } else { rank as f64 }, &mut bytes);
                rank_values.push(Value::new(&bytes)?);
            }
        }
        let mut free: Vec<Option<&mut DevBuf>> = self.buffers.iter_mut().map(|b| Some(&mut b.dev)).collect();
        let mut launch = self.stream.launch_builder(f);
        let mut rank_values = rank_values.iter();
        for slot in slots {
            match slot {
                Slot::Buffer { at, peers } => {
                    let b = free[*at].take().context("the same buffer is passed twice: give the kernel two buffers")?;
                    if *peers { b.push_peers(rank, &mut launch) } else { b.push(rank, &mut launch) }
                }
                Slot::Value(v) => v.push(&mut launch),
                Slot::Rank { .. } => rank_values.next().expect("one value per rank slot").push(&mut launch),
            }
        }
        // SAFETY: every argument was checked against the kernel's parameters (count, kind, type);
        // whether the kernel stays inside its buffers is what the emulator's check mode reports
        // (on a GPU the launch spec's author vouches for it, as for any launch).
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
        let value = |rng: &mut crate::rng::Rng, k: usize| -> f64 {
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

/// One argument of a launch, ready for any rank.
enum Slot {
    Buffer { at: usize, peers: bool },
    Value(Value),
    Rank { ty: ElemType, count: bool },
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
