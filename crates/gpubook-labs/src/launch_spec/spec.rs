//! The text of a launch: `KERNEL grid=X[,Y,Z] block=X[,Y,Z] shared=BYTES ARG...`, where an ARG
//! is a buffer `TYPE[N]:INIT`, a value `TYPE=X` (a vector value `float2=1,2`) or `@name`, a
//! buffer an earlier launch made (named after that kernel's parameter). INIT is zeros, ones,
//! iota (0, 1, 2, ... over every scalar), random (whole numbers 0..100, seeded), uninit
//! (allocated, never written: the emulator reports reads of it), a number, a list `1,2,3`, or a
//! `.npy` file (`f32[]:x.npy` takes N from the file). Every number must fit its type.
//!
//! Several ranks on one device (`gpubook run --ranks R`, a script's `// @ranks: R`): every
//! launch runs once per rank, rank 0 first, and each rank has its own copy of every buffer (the
//! same init). Three arguments say which rank: a value `i32=rank` (the rank launching), a value
//! `i32=ranks` (R), and a peer table `peers:BUFFER`, where BUFFER is `TYPE[N]:INIT` (a new
//! buffer) or `@name`: the kernel parameter `T* const* name` gets the device array of every
//! rank's copy, entry d rank d's (DeepEP's `buffer_ptrs`, made by [`gpubook::ep::Symmetric`]).
//! `peers:` works with one rank too (a table of one pointer).
//!
//! A module variable (`__constant__` or `__device__`) is set before the first launch with
//! `NAME=TYPE[N]:INIT` (an array, `coeffs=f32[16]:iota`) or `NAME=TYPE=X` (one value,
//! `scale=f32=2.5`): the same buffers and values, named. Its size on the device must be exactly
//! N elements of TYPE. `NAME=TYPE[N]:uninit` writes nothing (the source's initial values stay)
//! and only reads the variable back.

use super::elem::{Base, ElemType};
use super::npy;
use std::path::Path;

/// How a buffer starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Zeros,
    Ones,
    Iota,
    Random,
    /// Allocated and not written.
    Uninit,
    /// One value for every scalar, or one per scalar.
    List(Vec<f64>),
    /// An .npy file's scalar type and raw data (checked against the buffer's type and length).
    Data(Base, Vec<u8>),
}

/// One kernel argument as written.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    Buffer {
        ty: ElemType,
        n: usize,
        init: Init,
    },
    /// A value; one number per lane.
    Value {
        ty: ElemType,
        values: Vec<f64>,
    },
    /// `@name`: a buffer made by an earlier launch.
    Ref(String),
    /// `TYPE=rank`: the launching rank's number, or `TYPE=ranks`: how many ranks there are.
    Rank {
        ty: ElemType,
        count: bool,
    },
    /// `peers:BUFFER`: the table of every rank's copy of a buffer (a new one or `@name`).
    Peers(Box<ArgSpec>),
}

impl ArgSpec {
    /// Device bytes this argument allocates.
    pub fn bytes(&self) -> u64 {
        match self {
            ArgSpec::Buffer { ty, n, .. } => (*n as u64).saturating_mul(ty.size() as u64),
            ArgSpec::Peers(inner) => inner.bytes(),
            _ => 0,
        }
    }
}

/// One launch as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchLine {
    pub kernel: String,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared: u32,
    pub args: Vec<ArgSpec>,
}

/// A `__constant__` or `__device__` variable and what goes into it.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolSpec {
    pub name: String,
    pub ty: ElemType,
    /// Elements: N of an array, 1 for a value.
    pub n: usize,
    /// What to write: a value's numbers are an `Init::List`; `Init::Uninit` writes nothing.
    pub init: Init,
    /// The text as written, for messages.
    pub text: String,
}

/// `NAME=TYPE[N]:INIT` or `NAME=TYPE=X` (a vector `NAME=float2=1,2`).
pub fn parse_symbol(s: &str, dir: &Path) -> Result<SymbolSpec, String> {
    let (name, rest) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=TYPE[N]:INIT or NAME=TYPE=X"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("`{s}`: `{name}` is not a variable's name (write NAME=TYPE[N]:INIT or NAME=TYPE=X)"));
    }
    let (ty, n, init) = match parse_arg(rest.trim(), dir).map_err(|e| format!("`{name}=`: {e}"))? {
        ArgSpec::Buffer { ty, n, init } => (ty, n, init),
        ArgSpec::Value { ty, values } => (ty, 1, Init::List(values)),
        ArgSpec::Ref(_) | ArgSpec::Rank { .. } | ArgSpec::Peers(_) => {
            return Err(format!("`{s}`: a variable is given TYPE[N]:INIT or TYPE=X, not @NAME, a rank or a peer table"));
        }
    };
    Ok(SymbolSpec { name: name.to_string(), ty, n, init, text: s.to_string() })
}

/// `X`, `X,Y` or `X,Y,Z`.
pub fn parse_dims(s: &str) -> Result<(u32, u32, u32), String> {
    let v: Vec<u32> =
        s.split(',').map(|x| x.trim().parse()).collect::<Result<_, _>>().map_err(|_| format!("`{s}` is not X, X,Y or X,Y,Z"))?;
    Ok(match v[..] {
        [x] => (x, 1, 1),
        [x, y] => (x, y, 1),
        [x, y, z] => (x, y, z),
        _ => return Err(format!("`{s}` has more than three dimensions")),
    })
}

/// `KERNEL grid=.. block=.. shared=.. ARG...`; `.npy` paths are relative to `dir`.
pub fn parse_launch(s: &str, dir: &Path) -> Result<LaunchLine, String> {
    let mut words = s.split_whitespace();
    let kernel = words.next().ok_or("an empty launch: write `KERNEL grid=.. block=.. ARG...`")?.to_string();
    let mut line = LaunchLine { kernel, grid: (1, 1, 1), block: (32, 1, 1), shared: 0, args: Vec::new() };
    for w in words {
        if let Some(v) = w.strip_prefix("grid=") {
            line.grid = parse_dims(v)?;
        } else if let Some(v) = w.strip_prefix("block=") {
            line.block = parse_dims(v)?;
        } else if let Some(v) = w.strip_prefix("shared=") {
            line.shared = v.parse().map_err(|_| format!("`{w}`: the dynamic shared memory is not a number of bytes"))?;
        } else {
            line.args.push(parse_arg(w, dir)?);
        }
    }
    Ok(line)
}

/// One argument: `f32[1000]:iota`, `i32=7`, `float2=1,2`, `@out`, `i32=rank`, `peers:@out`.
pub fn parse_arg(s: &str, dir: &Path) -> Result<ArgSpec, String> {
    let ctx = |e: String| format!("`{s}`: {e}");
    if let Some(name) = s.strip_prefix('@') {
        return Ok(ArgSpec::Ref(name.to_string()));
    }
    if let Some(inner) = s.strip_prefix("peers:") {
        return match parse_arg(inner, dir)? {
            a @ (ArgSpec::Buffer { .. } | ArgSpec::Ref(_)) => Ok(ArgSpec::Peers(Box::new(a))),
            _ => Err(ctx("a peer table is of a buffer: peers:TYPE[N]:INIT or peers:@NAME".into())),
        };
    }
    if let Some((ty, value)) = s.split_once('=') {
        let ty = ElemType::parse(ty).map_err(ctx)?;
        if let v @ ("rank" | "ranks") = value.trim() {
            if ty.lanes != 1 || ty.base.is_float() {
                return Err(ctx(format!("`{v}` is a whole number: give it an integer type such as i32")));
            }
            return Ok(ArgSpec::Rank { ty, count: v == "ranks" });
        }
        let values = numbers(value).map_err(ctx)?;
        if values.len() != ty.lanes {
            return Err(ctx(format!("{} takes {} number(s), {} given", ty.c_name(), ty.lanes, values.len())));
        }
        for &x in &values {
            ty.base.check_fits(x).map_err(ctx)?;
        }
        return Ok(ArgSpec::Value { ty, values });
    }
    let (decl, init) = s.split_once(':').unwrap_or((s, "zeros"));
    let (ty, n) = decl.split_once('[').ok_or_else(|| format!("`{s}` is neither TYPE[N]:INIT, TYPE=VALUE nor @NAME"))?;
    let ty = ElemType::parse(ty).map_err(ctx)?;
    let n = n.strip_suffix(']').ok_or_else(|| ctx("no closing `]`".into()))?;
    let n: Option<usize> = if n.is_empty() { None } else { Some(n.parse().map_err(|_| ctx(format!("the length `{n}` is not a number")))?) };
    let init = parse_init(init, dir).map_err(ctx)?;
    let scalars = |n: usize| n.saturating_mul(ty.lanes);
    if let Init::Data(base, _) = &init
        && *base != ty.base
    {
        return Err(ctx(format!("the file holds {}, not {}", base.rust_name(), ty.base.rust_name())));
    }
    let n = match (&init, n) {
        (Init::Data(_, d), None) if d.len() % ty.size() != 0 => {
            return Err(ctx(format!("the file's {} scalars are not a whole number of {}", d.len() / ty.base.size(), ty.c_name())));
        }
        (Init::Data(_, d), None) => d.len() / ty.size(),
        (Init::Data(_, d), Some(n)) if d.len() != n * ty.size() => {
            return Err(ctx(format!(
                "the file holds {} scalars, {n} elements of {} are {}",
                d.len() / ty.base.size(),
                ty.c_name(),
                scalars(n)
            )));
        }
        (_, Some(n)) => n,
        (_, None) => return Err(ctx("give the length: only an .npy init can leave it out".into())),
    };
    // The values an init can produce, each checked against the type.
    match &init {
        Init::Ones => ty.base.check_fits(1.0).map_err(ctx)?,
        Init::Iota => ty.base.check_fits(scalars(n).saturating_sub(1) as f64).map_err(ctx)?,
        Init::List(v) => {
            if v.len() != 1 && v.len() != scalars(n) {
                return Err(ctx(format!("{} values for {} scalars: give one, or one per scalar", v.len(), scalars(n))));
            }
            for &x in v {
                ty.base.check_fits(x).map_err(ctx)?;
            }
        }
        _ => {}
    }
    Ok(ArgSpec::Buffer { ty, n, init })
}

fn parse_init(s: &str, dir: &Path) -> Result<Init, String> {
    Ok(match s.trim() {
        "zeros" => Init::Zeros,
        "ones" => Init::Ones,
        "iota" => Init::Iota,
        "random" => Init::Random,
        "uninit" => Init::Uninit,
        path if path.ends_with(".npy") => {
            let path = dir.join(path);
            let bytes = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            let a = npy::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(Init::Data(a.base, a.data));
        }
        list => {
            Init::List(numbers(list).map_err(|_| format!("`{list}` is not zeros, ones, iota, random, uninit, numbers or a .npy file"))?)
        }
    })
}

fn numbers(s: &str) -> Result<Vec<f64>, String> {
    s.split(',').map(|x| x.trim().parse::<f64>().map_err(|_| format!("`{}` is not a number", x.trim()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(s: &str) -> Result<ArgSpec, String> {
        parse_arg(s, Path::new("."))
    }

    #[test]
    fn numbers_must_fit_their_type() {
        assert!(matches!(arg("i32=7").unwrap(), ArgSpec::Value { values, .. } if values == [7.0]));
        assert!(arg("i32=3e9").unwrap_err().contains("3000000000 is out of range for i32"));
        assert!(arg("u32=-1").is_err());
        assert!(arg("u8[256]:iota").is_ok());
        assert!(arg("u8[257]:iota").unwrap_err().contains("256 is out of range for u8"));
        assert!(arg("u8[4]:300").is_err());
        assert!(arg("float2=1").unwrap_err().contains("takes 2 number"));
        assert!(arg("f32[3]:1,2").unwrap_err().contains("2 values for 3 scalars"));
        assert!(arg("f32[]:zeros").is_err());
    }

    #[test]
    fn symbols_parse() {
        let s = parse_symbol("coeffs=f32[16]:iota", Path::new(".")).unwrap();
        assert_eq!((s.name.as_str(), s.ty, s.n, s.init), ("coeffs", ElemType::parse("f32").unwrap(), 16, Init::Iota));
        let s = parse_symbol("scale=f32=2.5", Path::new(".")).unwrap();
        assert_eq!((s.n, s.init), (1, Init::List(vec![2.5])));
        let s = parse_symbol("origin=float2=1,2", Path::new(".")).unwrap();
        assert_eq!((s.ty.lanes, s.n, s.init), (2, 1, Init::List(vec![1.0, 2.0])));
        assert!(parse_symbol("f32[4]=1", Path::new(".")).unwrap_err().contains("not a variable's name"));
        assert!(parse_symbol("x=@out", Path::new(".")).unwrap_err().contains("not @NAME"));
        assert!(parse_symbol("x=i32=3e9", Path::new(".")).unwrap_err().contains("out of range"));
        assert!(parse_symbol("count", Path::new(".")).is_err());
    }

    #[test]
    fn launches_parse() {
        let l = parse_launch("scan grid=4 block=16,16 shared=1024 float4[8]:iota @sums i32=8", Path::new(".")).unwrap();
        assert_eq!((l.grid, l.block, l.shared), ((4, 1, 1), (16, 16, 1), 1024));
        assert_eq!(l.args[0], ArgSpec::Buffer { ty: ElemType::parse("float4").unwrap(), n: 8, init: Init::Iota });
        assert_eq!(l.args[1], ArgSpec::Ref("sums".into()));
        assert!(parse_launch("k grid=1,2,3,4", Path::new(".")).is_err());
        let l = parse_launch("notify peers:i32[4]:zeros peers:@recv i32=rank u32=ranks", Path::new(".")).unwrap();
        assert_eq!(l.args[1], ArgSpec::Peers(Box::new(ArgSpec::Ref("recv".into()))));
        assert!(matches!(l.args[2], ArgSpec::Rank { count: false, .. }));
        assert!(matches!(l.args[3], ArgSpec::Rank { count: true, .. }));
        assert_eq!(l.args[0].bytes(), 16);
        assert!(arg("peers:i32=3").unwrap_err().contains("a peer table is of a buffer"));
        assert!(arg("f32=rank").unwrap_err().contains("integer type"));
    }
}
