//! `gpubook run FILE.cu --kernel NAME --grid G --block B --arg ...`: launch one kernel with
//! buffers and values described on the command line, then print the diagnostics (on the
//! emulator) and a summary of every buffer. For experiments, and for the book's snippets.
//!
//! An argument is a buffer `TYPE[N]:INIT` (INIT: zeros, ones, iota, random, uninit, or a number)
//! or a value `TYPE=X`; TYPE is one of f32 f64 i32 u32 i64 u64 u8.
//! Example: `gpubook run vector_add.cu --kernel vector_add --grid 4 --block 256 \
//!           --arg 'f32[1000]:iota' --arg 'f32[1000]:ones' --arg 'f32[1000]:uninit' --arg i32=1000`

use anyhow::{Context, bail};
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{DeviceRepr, DeviceSlice, Gpu, LaunchConfig, PushKernelArg, Source, Stream};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The .cu file.
    file: PathBuf,
    /// The `__global__` function to launch.
    #[arg(long)]
    kernel: String,
    /// Blocks: X or X,Y or X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// Threads a block: X or X,Y or X,Y,Z.
    #[arg(long, default_value = "32")]
    block: String,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    shared: u32,
    /// One per kernel parameter, in order: `f32[1000]:random`, `i32=1000`, ...
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Run on the emulator in this mode (check: every access checked; fast: blocks in parallel).
    #[arg(long)]
    mode: Option<Mode>,
    /// Elements of each buffer to print.
    #[arg(long, default_value_t = 8)]
    show: usize,
}

/// A buffer or value as parsed, with its data on the host.
enum Arg {
    Buffer(Host),
    Value(Host),
}

/// Host data of one of the supported types.
enum Host {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    U8(Vec<u8>),
}

/// The device side of a buffer argument; `uninit` buffers are allocated and not written.
enum Device {
    F32(DeviceSlice<f32>),
    F64(DeviceSlice<f64>),
    I32(DeviceSlice<i32>),
    U32(DeviceSlice<u32>),
    I64(DeviceSlice<i64>),
    U64(DeviceSlice<u64>),
    U8(DeviceSlice<u8>),
}

macro_rules! each_type {
    ($value:expr, $v:ident => $body:expr) => {
        match $value {
            Host::F32($v) => $body,
            Host::F64($v) => $body,
            Host::I32($v) => $body,
            Host::U32($v) => $body,
            Host::I64($v) => $body,
            Host::U64($v) => $body,
            Host::U8($v) => $body,
        }
    };
}

fn dims(s: &str) -> anyhow::Result<(u32, u32, u32)> {
    let v: Vec<u32> =
        s.split(',').map(|x| x.trim().parse()).collect::<Result<_, _>>().with_context(|| format!("`{s}` is not X, X,Y or X,Y,Z"))?;
    Ok(match v[..] {
        [x] => (x, 1, 1),
        [x, y] => (x, y, 1),
        [x, y, z] => (x, y, z),
        _ => bail!("`{s}` has more than three dimensions"),
    })
}

/// Element `i` of a buffer filled with `init`; `None` for `uninit`.
fn init_value(init: &str, i: usize, rng: &mut gpubook::grade::Rng) -> anyhow::Result<Option<f64>> {
    Ok(Some(match init {
        "zeros" => 0.0,
        "ones" => 1.0,
        "iota" => i as f64,
        "random" => rng.f32(0.0, 100.0).round() as f64,
        "uninit" => return Ok(None),
        x => x.parse().with_context(|| format!("`{x}` is not zeros, ones, iota, random, uninit or a number"))?,
    }))
}

fn host_of(ty: &str, values: Vec<f64>) -> anyhow::Result<Host> {
    Ok(match ty {
        "f32" => Host::F32(values.iter().map(|&x| x as f32).collect()),
        "f64" => Host::F64(values),
        "i32" => Host::I32(values.iter().map(|&x| x as i32).collect()),
        "u32" => Host::U32(values.iter().map(|&x| x as u32).collect()),
        "i64" => Host::I64(values.iter().map(|&x| x as i64).collect()),
        "u64" => Host::U64(values.iter().map(|&x| x as u64).collect()),
        "u8" => Host::U8(values.iter().map(|&x| x as u8).collect()),
        other => bail!("unknown type `{other}`: use f32 f64 i32 u32 i64 u64 u8"),
    })
}

/// `f32[1000]:iota` or `i32=7`; returns the argument and whether its buffer starts unwritten.
fn parse_arg(s: &str, rng: &mut gpubook::grade::Rng) -> anyhow::Result<(Arg, bool)> {
    if let Some((ty, value)) = s.split_once('=') {
        let v: f64 = value.trim().parse().with_context(|| format!("`{value}` is not a number"))?;
        return Ok((Arg::Value(host_of(ty.trim(), vec![v])?), false));
    }
    let (decl, init) = s.split_once(':').unwrap_or((s, "zeros"));
    let (ty, n) = decl.split_once('[').with_context(|| format!("`{s}` is neither TYPE[N]:INIT nor TYPE=VALUE"))?;
    let n: usize = n.trim_end_matches(']').parse().with_context(|| format!("`{decl}`: the length is not a number"))?;
    let values: Vec<Option<f64>> = (0..n).map(|i| init_value(init, i, rng)).collect::<anyhow::Result<_>>()?;
    let uninit = values.iter().any(Option::is_none);
    Ok((Arg::Buffer(host_of(ty, values.into_iter().map(|v| v.unwrap_or(0.0)).collect())?), uninit))
}

/// A device copy of `v` named `label` in diagnostics (or, `uninit`, a buffer nothing wrote).
fn upload<T: DeviceRepr>(s: &Stream, v: &[T], uninit: bool, label: &str) -> gpubook::gpu::Result<DeviceSlice<T>> {
    let mut d = if uninit { unsafe { s.alloc::<T>(v.len()) } } else { s.clone_htod(v) }?;
    d.set_label(label);
    Ok(d)
}

fn to_device(s: &Stream, h: &Host, uninit: bool, label: &str) -> gpubook::gpu::Result<Device> {
    Ok(match h {
        Host::F32(v) => Device::F32(upload(s, v, uninit, label)?),
        Host::F64(v) => Device::F64(upload(s, v, uninit, label)?),
        Host::I32(v) => Device::I32(upload(s, v, uninit, label)?),
        Host::U32(v) => Device::U32(upload(s, v, uninit, label)?),
        Host::I64(v) => Device::I64(upload(s, v, uninit, label)?),
        Host::U64(v) => Device::U64(upload(s, v, uninit, label)?),
        Host::U8(v) => Device::U8(upload(s, v, uninit, label)?),
    })
}

/// The element types `gpubook run` knows, as numbers for its summary.
trait Num: DeviceRepr + std::fmt::Debug {
    fn to_f64(self) -> f64;
}

macro_rules! num {
    ($($t:ty),*) => {$(impl Num for $t { fn to_f64(self) -> f64 { self as f64 } })*};
}
num!(f32, f64, i32, u32, i64, u64, u8);

/// All bytes 0xFF: the pattern the emulator (and graders) leave in memory nothing wrote.
fn poisoned<T: DeviceRepr>(x: &T) -> bool {
    // SAFETY: DeviceRepr types have no padding, so every byte is initialised.
    let bytes = unsafe { std::slice::from_raw_parts(x as *const T as *const u8, std::mem::size_of::<T>()) };
    bytes.iter().all(|&b| b == 0xFF)
}

fn summary<T: Num>(s: &Stream, d: &DeviceSlice<T>, show: usize) -> gpubook::gpu::Result<String> {
    let v = s.clone_dtoh(d)?;
    let poison = v.iter().filter(|x| poisoned(*x)).count();
    let head: Vec<String> = v.iter().take(show).map(|x| format!("{x:?}")).collect();
    let numbers = v.iter().filter(|x| !poisoned(*x)).map(|&x| x.to_f64()).filter(|x| !x.is_nan());
    let (lo, hi, sum) = numbers.fold((f64::MAX, f64::MIN, 0.0), |(lo, hi, s), x| (lo.min(x), hi.max(x), s + x));
    let range = if lo <= hi { format!("min {lo}, max {hi}, sum {sum}") } else { "no numbers".into() };
    let unwritten = if poison > 0 { format!("; {poison} still hold the 0xFF poison (never written?)") } else { String::new() };
    Ok(format!("{} elements: [{}{}] {range}{unwritten}", v.len(), head.join(", "), if v.len() > show { ", ..." } else { "" }))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let gpu = match a.mode {
        Some(mode) => Gpu::emulated(0, EmuConfig { mode, ..EmuConfig::from_env() })?,
        None => Gpu::new()?,
    };
    let s = gpu.default_stream();
    let module = gpu.load_module(Source::file(&a.file))?;
    let f = module.load_function(&a.kernel)?;
    let mut rng = gpubook::grade::Rng::new(1);
    let parsed: Vec<(Arg, bool)> = a.args.iter().map(|x| parse_arg(x, &mut rng)).collect::<anyhow::Result<_>>()?;
    let mut buffers: Vec<Option<Device>> = Vec::new();
    let names: Vec<String> = f.signature().map(|sig| sig.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
    for (i, (arg, uninit)) in parsed.iter().enumerate() {
        let label = names.get(i).cloned().unwrap_or_else(|| format!("arg {i}"));
        buffers.push(match arg {
            Arg::Buffer(h) => Some(to_device(&s, h, *uninit, &label)?),
            Arg::Value(_) => None,
        });
    }
    let cfg = LaunchConfig { grid_dim: dims(&a.grid)?, block_dim: dims(&a.block)?, shared_mem_bytes: a.shared };
    println!("{} on {} ({})", a.kernel, gpu.info().name, gpu.backend());
    let mut launch = s.launch_builder(&f);
    for ((arg, _), dev) in parsed.iter().zip(buffers.iter_mut()) {
        match (arg, dev) {
            (_, Some(d)) => push_buffer(&mut launch, d),
            (Arg::Value(h), None) => each_type!(h, v => {
                launch.arg(&v[0]);
            }),
            (Arg::Buffer(_), None) => unreachable!("every buffer was uploaded"),
        };
    }
    let outcome = unsafe { launch.launch(cfg) };
    let code = match &outcome {
        Ok(()) => {
            println!("launched grid {:?} × block {:?}: ok", cfg.grid_dim, cfg.block_dim);
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::FAILURE
        }
    };
    for (i, dev) in buffers.iter().enumerate() {
        let line = match dev {
            Some(Device::F32(d)) => summary(&s, d, a.show)?,
            Some(Device::F64(d)) => summary(&s, d, a.show)?,
            Some(Device::I32(d)) => summary(&s, d, a.show)?,
            Some(Device::U32(d)) => summary(&s, d, a.show)?,
            Some(Device::I64(d)) => summary(&s, d, a.show)?,
            Some(Device::U64(d)) => summary(&s, d, a.show)?,
            Some(Device::U8(d)) => summary(&s, d, a.show)?,
            None => continue,
        };
        println!("arg {i} ({}): {line}", a.args[i]);
    }
    Ok(code)
}

fn push_buffer<'a>(launch: &mut gpubook::gpu::LaunchArgs<'a>, d: &'a mut Device) {
    fn push<'a, T: DeviceRepr>(l: &mut gpubook::gpu::LaunchArgs<'a>, s: &'a mut DeviceSlice<T>)
    where
        &'a mut DeviceSlice<T>: PushKernelArg<'a>,
    {
        l.arg(s);
    }
    match d {
        Device::F32(s) => push(launch, s),
        Device::F64(s) => push(launch, s),
        Device::I32(s) => push(launch, s),
        Device::U32(s) => push(launch, s),
        Device::I64(s) => push(launch, s),
        Device::U64(s) => push(launch, s),
        Device::U8(s) => push(launch, s),
    }
}
