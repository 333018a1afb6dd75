//! `gpubook run FILE.cu --kernel NAME --grid G --block B --arg ...`: launch one kernel with
//! buffers and values described on the command line, then print the diagnostics (on the
//! emulator), the memory traffic (the emulator's check mode counts it) and a summary of every
//! buffer. For experiments, and for the book's snippets.
//!
//! An argument is a buffer `TYPE[N]:INIT` (INIT: zeros, ones, iota, random, uninit, or a number)
//! or a value `TYPE=X`; TYPE is one of f32 f64 i32 u32 i64 u64 u8. A number that does not fit
//! the type is an error, and so are buffers larger than the device's memory.
//! Example: `gpubook run vector_add.cu --kernel vector_add --grid 4 --block 256 \
//!           --arg 'f32[1000]:iota' --arg 'f32[1000]:ones' --arg 'f32[1000]:uninit' --arg i32=1000`

use anyhow::{Context, bail};
use gpubook::emu::{EmuConfig, Mode};
use gpubook::gpu::{AccessCounts, DeviceRepr, DeviceSlice, Gpu, LaunchConfig, PushKernelArg, Source, Stream};
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
    /// Run on the emulator in this mode (check: every access checked and counted; fast: blocks
    /// in parallel).
    #[arg(long)]
    mode: Option<Mode>,
    /// Elements of each buffer to print.
    #[arg(long, default_value_t = 8)]
    show: usize,
}

/// The element types `gpubook run` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
    U8,
}

impl Ty {
    fn parse(s: &str) -> anyhow::Result<Ty> {
        Ok(match s.trim() {
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "i32" => Ty::I32,
            "u32" => Ty::U32,
            "i64" => Ty::I64,
            "u64" => Ty::U64,
            "u8" => Ty::U8,
            other => bail!("unknown type `{other}`: use f32 f64 i32 u32 i64 u64 u8"),
        })
    }

    fn size(self) -> usize {
        match self {
            Ty::U8 => 1,
            Ty::F32 | Ty::I32 | Ty::U32 => 4,
            Ty::F64 | Ty::I64 | Ty::U64 => 8,
        }
    }
}

/// How a buffer starts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Init {
    Zeros,
    Ones,
    Iota,
    Random,
    /// Allocated and not written: the emulator reports reads of it.
    Uninit,
    Value(f64),
}

impl Init {
    fn parse(s: &str) -> anyhow::Result<Init> {
        Ok(match s.trim() {
            "zeros" => Init::Zeros,
            "ones" => Init::Ones,
            "iota" => Init::Iota,
            "random" => Init::Random,
            "uninit" => Init::Uninit,
            x => Init::Value(x.parse().with_context(|| format!("`{x}` is not zeros, ones, iota, random, uninit or a number"))?),
        })
    }

    /// Element `i`'s value (not for `Uninit`).
    fn value(self, i: usize, rng: &mut gpubook::grade::Rng) -> f64 {
        match self {
            Init::Zeros | Init::Uninit => 0.0,
            Init::Ones => 1.0,
            Init::Iota => i as f64,
            Init::Random => rng.f32(0.0, 100.0).round() as f64,
            Init::Value(x) => x,
        }
    }
}

/// One kernel argument as described.
#[derive(Debug, Clone, PartialEq)]
enum ArgSpec {
    Buffer { ty: Ty, n: usize, init: Init },
    Value { ty: Ty, x: f64 },
}

/// `f32[1000]:iota` or `i32=7`, with every number checked against the type.
fn parse_arg(s: &str) -> anyhow::Result<ArgSpec> {
    if let Some((ty, value)) = s.split_once('=') {
        let ty = Ty::parse(ty)?;
        let x: f64 = value.trim().parse().with_context(|| format!("`{value}` is not a number"))?;
        check_fits(ty, x).with_context(|| format!("`{s}`"))?;
        return Ok(ArgSpec::Value { ty, x });
    }
    let (decl, init) = s.split_once(':').unwrap_or((s, "zeros"));
    let (ty, n) = decl.split_once('[').with_context(|| format!("`{s}` is neither TYPE[N]:INIT nor TYPE=VALUE"))?;
    let ty = Ty::parse(ty)?;
    let n: usize = n.trim_end_matches(']').parse().with_context(|| format!("`{decl}`: the length is not a number"))?;
    let init = Init::parse(init)?;
    // The values an init can produce: a constant, or 0..n-1 for iota (random stays in 0..100).
    let extremes: &[f64] = match init {
        Init::Ones => &[1.0],
        Init::Iota => &[n.saturating_sub(1) as f64],
        Init::Value(x) => &[x],
        _ => &[],
    };
    for &x in extremes {
        check_fits(ty, x).with_context(|| format!("`{s}`"))?;
    }
    Ok(ArgSpec::Buffer { ty, n, init })
}

/// Whether `x` is a value of `ty`: integers must be whole and in range, floats finite and in
/// range unless written as inf or nan.
fn check_fits(ty: Ty, x: f64) -> anyhow::Result<()> {
    let (lo, hi): (f64, f64) = match ty {
        Ty::F32 => {
            if x.is_finite() && x.abs() > f32::MAX as f64 {
                bail!("{x} is out of range for f32 (largest: {:e})", f32::MAX);
            }
            return Ok(());
        }
        Ty::F64 => return Ok(()),
        Ty::I32 => (i32::MIN as f64, i32::MAX as f64),
        Ty::U32 => (0.0, u32::MAX as f64),
        Ty::I64 => (i64::MIN as f64, i64::MAX as f64),
        Ty::U64 => (0.0, u64::MAX as f64),
        Ty::U8 => (0.0, 255.0),
    };
    let name = format!("{ty:?}").to_lowercase();
    if !x.is_finite() || x.fract() != 0.0 {
        bail!("{x} is not a whole number, as {name} needs");
    }
    // i64 and u64's extremes round up as floats: 2^63 is not an i64 though it compares equal.
    let too_big = x > hi || (matches!(ty, Ty::I64 | Ty::U64) && x >= hi);
    if x < lo || too_big {
        bail!("{x} is out of range for {name} ({lo} to {hi})");
    }
    Ok(())
}

/// The device side of a buffer argument.
enum Device {
    F32(DeviceSlice<f32>),
    F64(DeviceSlice<f64>),
    I32(DeviceSlice<i32>),
    U32(DeviceSlice<u32>),
    I64(DeviceSlice<i64>),
    U64(DeviceSlice<u64>),
    U8(DeviceSlice<u8>),
}

/// The element types `gpubook run` knows, as numbers for its summary.
trait Num: DeviceRepr + std::fmt::Debug {
    fn to_f64(self) -> f64;
    /// `x` has been checked to fit (check_fits).
    fn from_f64(x: f64) -> Self;
}

macro_rules! num {
    ($($t:ty),*) => {$(impl Num for $t {
        fn to_f64(self) -> f64 { self as f64 }
        fn from_f64(x: f64) -> Self { x as $t }
    })*};
}
num!(f32, f64, i32, u32, i64, u64, u8);

/// A device buffer of `n` elements named `label`, filled as `init` says. Host memory for the
/// initial values is reserved fallibly: too little of it is an error, not an abort.
fn upload<T: Num>(s: &Stream, n: usize, init: Init, label: &str, rng: &mut gpubook::grade::Rng) -> anyhow::Result<DeviceSlice<T>> {
    let mut d = match init {
        Init::Uninit => unsafe { s.alloc::<T>(n) }?,
        Init::Zeros => s.alloc_zeros::<T>(n)?,
        _ => {
            let mut v: Vec<T> = Vec::new();
            v.try_reserve_exact(n).map_err(|_| {
                anyhow::anyhow!("not enough host memory to build the {} bytes of `{label}`'s initial values", n * std::mem::size_of::<T>())
            })?;
            v.extend((0..n).map(|i| T::from_f64(init.value(i, rng))));
            s.clone_htod(&v)?
        }
    };
    d.set_label(label);
    Ok(d)
}

fn to_device(s: &Stream, ty: Ty, n: usize, init: Init, label: &str, rng: &mut gpubook::grade::Rng) -> anyhow::Result<Device> {
    Ok(match ty {
        Ty::F32 => Device::F32(upload(s, n, init, label, rng)?),
        Ty::F64 => Device::F64(upload(s, n, init, label, rng)?),
        Ty::I32 => Device::I32(upload(s, n, init, label, rng)?),
        Ty::U32 => Device::U32(upload(s, n, init, label, rng)?),
        Ty::I64 => Device::I64(upload(s, n, init, label, rng)?),
        Ty::U64 => Device::U64(upload(s, n, init, label, rng)?),
        Ty::U8 => Device::U8(upload(s, n, init, label, rng)?),
    })
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

/// Refuses buffers the device cannot hold, before anything is allocated.
fn check_memory(gpu: &Gpu, specs: &[ArgSpec], raw: &[String]) -> anyhow::Result<()> {
    let total = gpu.info().total_memory;
    let mut sum = 0u64;
    for (spec, text) in specs.iter().zip(raw) {
        if let ArgSpec::Buffer { ty, n, .. } = spec {
            let bytes = (*n as u64).saturating_mul(ty.size() as u64);
            if bytes > total {
                bail!("`{text}` needs {} of device memory; the device has {}", gib(bytes), gib(total));
            }
            sum = sum.saturating_add(bytes);
        }
    }
    if sum > total {
        bail!("the buffers need {} of device memory together; the device has {}", gib(sum), gib(total));
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB ({bytes} bytes)", bytes as f64 / (1u64 << 30) as f64)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let specs: Vec<ArgSpec> = a.args.iter().map(|x| parse_arg(x)).collect::<anyhow::Result<_>>()?;
    let cfg = LaunchConfig { grid_dim: dims(&a.grid)?, block_dim: dims(&a.block)?, shared_mem_bytes: a.shared };
    let gpu = match a.mode {
        Some(mode) => Gpu::emulated(0, EmuConfig { mode, ..EmuConfig::from_env() })?,
        None => Gpu::new()?,
    };
    check_memory(&gpu, &specs, &a.args)?;
    let s = gpu.default_stream();
    let module = gpu.load_module(Source::file(&a.file))?;
    let f = module.load_function(&a.kernel)?;
    let mut rng = gpubook::grade::Rng::new(1);
    let names: Vec<String> = f.signature().map(|sig| sig.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
    let mut buffers: Vec<Option<Device>> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let label = names.get(i).cloned().unwrap_or_else(|| format!("arg {i}"));
        buffers.push(match *spec {
            ArgSpec::Buffer { ty, n, init } => Some(to_device(&s, ty, n, init, &label, &mut rng)?),
            ArgSpec::Value { .. } => None,
        });
    }
    let values: Vec<Option<Scalar>> = specs
        .iter()
        .map(|spec| match *spec {
            ArgSpec::Value { ty, x } => Some(Scalar::new(ty, x)),
            ArgSpec::Buffer { .. } => None,
        })
        .collect();
    println!("{} on {} ({})", a.kernel, gpu.info().name, gpu.backend());
    let mut launch = s.launch_builder(&f);
    for (value, dev) in values.iter().zip(buffers.iter_mut()) {
        match (value, dev) {
            (_, Some(d)) => push_buffer(&mut launch, d),
            (Some(v), None) => v.push(&mut launch),
            (None, None) => unreachable!("every buffer was uploaded"),
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
    if outcome.is_ok()
        && let Some(counts) = gpu.trace()?.launches().last().and_then(|op| op.access_counts())
    {
        print!("{}", counts_table(counts));
    }
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

/// The emulator's access counts as a table under 88 columns.
fn counts_table(c: &AccessCounts) -> String {
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    let per = |a: u64, b: u64| if b == 0 { "-".to_string() } else { format!("{:.2}", a as f64 / b as f64) };
    let mut t = String::from("memory traffic (counted by check mode, warp by warp):\n");
    t += &format!("  {:<16}{:>10}{:>12}{:>10}{:>13}{:>12}\n", "global memory", "requests", "bytes", "sectors", "sectors/req", "efficiency");
    for (name, g) in [("loads", c.global.loads), ("stores", c.global.stores)] {
        let eff = if g.sectors == 0 { "-".into() } else { pct(g.efficiency()) };
        t += &format!("  {name:<16}{:>10}{:>12}{:>10}{:>13}{eff:>12}\n", g.requests, g.bytes, g.sectors, per(g.sectors, g.requests));
    }
    t += &format!("  {:<16}{:>10}\n", "atomics", c.global.atomics);
    t += &format!("  {:<16}{:>10}{:>12}{:>13}{:>16}\n", "shared memory", "requests", "bytes", "wavefronts", "bank conflicts");
    for (name, s) in [("loads", c.shared.loads), ("stores", c.shared.stores)] {
        t += &format!("  {name:<16}{:>10}{:>12}{:>13}{:>16}\n", s.requests, s.bytes, s.wavefronts, s.bank_conflicts());
    }
    t += &format!("  {:<16}{:>10}\n", "atomics", c.shared.atomics);
    let (lo, hi) = (&c.per_thread_min, &c.per_thread_max);
    t += &format!("  {:<16}{:>10}{:>12}   ({} threads)\n", "per thread", "min", "max", c.threads);
    for (name, a, b) in [
        ("global loads", lo.global_loads, hi.global_loads),
        ("global stores", lo.global_stores, hi.global_stores),
        ("shared loads", lo.shared_loads, hi.shared_loads),
        ("shared stores", lo.shared_stores, hi.shared_stores),
        ("atomics", lo.atomics, hi.atomics),
        ("barriers", lo.barriers, hi.barriers),
    ] {
        t += &format!("  {name:<16}{a:>10}{b:>12}\n");
    }
    if !c.buffers.is_empty() {
        t += &format!("  {:<16}{:>21}{:>23}{:>10}\n", "per buffer", "loads: req / sectors", "stores: req / sectors", "atomics");
        for b in &c.buffers {
            let l = format!("{} / {}", b.loads.requests, b.loads.sectors);
            let s = format!("{} / {}", b.stores.requests, b.stores.sectors);
            t += &format!("  {:<16}{l:>21}{s:>23}{:>10}\n", b.label, b.atomics);
        }
    }
    t
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

/// A value argument in its type (the launch builder borrows it).
enum Scalar {
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    U8(u8),
}

impl Scalar {
    /// `x` has been checked to fit `ty` (check_fits).
    fn new(ty: Ty, x: f64) -> Scalar {
        match ty {
            Ty::F32 => Scalar::F32(x as f32),
            Ty::F64 => Scalar::F64(x),
            Ty::I32 => Scalar::I32(x as i32),
            Ty::U32 => Scalar::U32(x as u32),
            Ty::I64 => Scalar::I64(x as i64),
            Ty::U64 => Scalar::U64(x as u64),
            Ty::U8 => Scalar::U8(x as u8),
        }
    }

    fn push<'a>(&'a self, launch: &mut gpubook::gpu::LaunchArgs<'a>) {
        match self {
            Scalar::F32(v) => launch.arg(v),
            Scalar::F64(v) => launch.arg(v),
            Scalar::I32(v) => launch.arg(v),
            Scalar::U32(v) => launch.arg(v),
            Scalar::I64(v) => launch.arg(v),
            Scalar::U64(v) => launch.arg(v),
            Scalar::U8(v) => launch.arg(v),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_must_fit_their_type() {
        assert_eq!(parse_arg("i32=7").unwrap(), ArgSpec::Value { ty: Ty::I32, x: 7.0 });
        let e = format!("{:#}", parse_arg("i32=3e9").unwrap_err());
        assert!(e.contains("3000000000 is out of range for i32"), "{e}");
        assert!(parse_arg("i32=2147483647").is_ok());
        assert!(parse_arg("i32=2147483648").is_err());
        assert!(parse_arg("u32=-1").is_err());
        assert!(parse_arg("u8=256").is_err());
        assert!(format!("{:#}", parse_arg("i32=1.5").unwrap_err()).contains("not a whole number"));
        assert!(parse_arg("i64=9223372036854775807").is_err(), "2^63 rounds up: not an i64");
        assert!(parse_arg("f32=1e39").is_err());
        assert!(parse_arg("f32=inf").is_ok());
        assert!(parse_arg("u8[256]:iota").is_ok());
        assert!(format!("{:#}", parse_arg("u8[257]:iota").unwrap_err()).contains("256 is out of range for u8"));
        assert!(parse_arg("u8[4]:300").is_err());
        assert_eq!(parse_arg("f32[3]").unwrap(), ArgSpec::Buffer { ty: Ty::F32, n: 3, init: Init::Zeros });
    }
}
