//! Element types a launch spec names (`f32`, `float4`, `longlong2`, ...), their bytes, and
//! `Elem<N>`, the untyped N-byte element the device buffers hold. Half and bfloat16 (`f16`,
//! `bf16`, `half2`, `nv_bfloat162`) convert through the `half` crate, rounding to nearest even
//! as the device's conversions do.

use gpubook::gpu::DeviceRepr;

/// A scalar type of the C side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    Bf16,
}

/// (base, Rust name, CUDA vector prefix, C scalar names)
const BASES: &[(Base, &str, &str, &[&str])] = &[
    (Base::F32, "f32", "float", &["float"]),
    (Base::F64, "f64", "double", &["double"]),
    (Base::I8, "i8", "char", &["char", "signed char", "int8_t"]),
    (Base::U8, "u8", "uchar", &["unsigned char", "uint8_t", "uchar"]),
    (Base::I16, "i16", "short", &["short", "int16_t"]),
    (Base::U16, "u16", "ushort", &["unsigned short", "uint16_t", "ushort"]),
    (Base::I32, "i32", "int", &["int", "int32_t", "signed"]),
    (Base::U32, "u32", "uint", &["unsigned", "unsigned int", "uint32_t", "uint"]),
    (Base::I64, "i64", "longlong", &["long long", "int64_t", "long", "ptrdiff_t"]),
    (Base::U64, "u64", "ulonglong", &["unsigned long long", "uint64_t", "unsigned long", "size_t"]),
    (Base::F16, "f16", "half", &["half", "__half"]),
    (Base::Bf16, "bf16", "nv_bfloat16", &["nv_bfloat16", "__nv_bfloat16"]),
];

impl Base {
    pub fn size(self) -> usize {
        match self {
            Base::I8 | Base::U8 => 1,
            Base::I16 | Base::U16 | Base::F16 | Base::Bf16 => 2,
            Base::F32 | Base::I32 | Base::U32 => 4,
            Base::F64 | Base::I64 | Base::U64 => 8,
        }
    }

    fn row(self) -> &'static (Base, &'static str, &'static str, &'static [&'static str]) {
        BASES.iter().find(|r| r.0 == self).expect("every base has a row")
    }

    pub fn rust_name(self) -> &'static str {
        self.row().1
    }

    pub fn is_float(self) -> bool {
        matches!(self, Base::F32 | Base::F64 | Base::F16 | Base::Bf16)
    }

    /// Half and bfloat16: CUDA has them alone and in pairs (`half2`), not in 3s or 4s.
    fn max_lanes(self) -> usize {
        if matches!(self, Base::F16 | Base::Bf16) { 2 } else { 4 }
    }

    /// numpy's dtype string (`<f4`, `|u1`, ...). numpy has no bfloat16: its bits are stored as
    /// `<u2`.
    pub fn npy_descr(self) -> String {
        let kind = if self.is_float() && self != Base::Bf16 {
            'f'
        } else if matches!(self, Base::I8 | Base::I16 | Base::I32 | Base::I64) {
            'i'
        } else {
            'u'
        };
        let order = if self.size() == 1 { '|' } else { '<' };
        format!("{order}{kind}{}", self.size())
    }

    pub fn from_npy_descr(d: &str) -> Option<Base> {
        BASES.iter().map(|r| r.0).find(|b| b.npy_descr() == d || (b.size() == 1 && d == format!("<{}", &b.npy_descr()[1..])))
    }

    /// Whether `x` is a value of this type: integers whole and in range, floats in range (inf
    /// and nan allowed).
    pub fn check_fits(self, x: f64) -> Result<(), String> {
        let (lo, hi): (f64, f64) = match self {
            Base::F32 => {
                return if x.is_finite() && x.abs() > f32::MAX as f64 {
                    Err(format!("{x} is out of range for f32 (largest: {:e})", f32::MAX))
                } else {
                    Ok(())
                };
            }
            Base::F64 => return Ok(()),
            Base::F16 | Base::Bf16 => {
                let max = if self == Base::F16 { gpubook::gpu::f16::MAX.to_f64() } else { gpubook::gpu::bf16::MAX.to_f64() };
                return if x.is_finite() && x.abs() > max {
                    Err(format!("{x} is out of range for {} (largest: {max:e})", self.rust_name()))
                } else {
                    Ok(())
                };
            }
            Base::I8 => (i8::MIN as f64, i8::MAX as f64),
            Base::U8 => (0.0, u8::MAX as f64),
            Base::I16 => (i16::MIN as f64, i16::MAX as f64),
            Base::U16 => (0.0, u16::MAX as f64),
            Base::I32 => (i32::MIN as f64, i32::MAX as f64),
            Base::U32 => (0.0, u32::MAX as f64),
            Base::I64 => (i64::MIN as f64, i64::MAX as f64),
            Base::U64 => (0.0, u64::MAX as f64),
        };
        let name = self.rust_name();
        if !x.is_finite() || x.fract() != 0.0 {
            return Err(format!("{x} is not a whole number, as {name} needs"));
        }
        // i64 and u64's extremes round up as floats: 2^63 is not an i64 though it compares equal.
        let too_big = x > hi || (matches!(self, Base::I64 | Base::U64) && x >= hi);
        if x < lo || too_big {
            return Err(format!("{x} is out of range for {name} ({lo} to {hi})"));
        }
        Ok(())
    }

    /// Appends `x` (checked to fit) as little-endian bytes.
    pub fn encode(self, x: f64, out: &mut Vec<u8>) {
        match self {
            Base::F32 => out.extend((x as f32).to_le_bytes()),
            Base::F64 => out.extend(x.to_le_bytes()),
            Base::I8 => out.extend((x as i8).to_le_bytes()),
            Base::U8 => out.extend((x as u8).to_le_bytes()),
            Base::I16 => out.extend((x as i16).to_le_bytes()),
            Base::U16 => out.extend((x as u16).to_le_bytes()),
            Base::I32 => out.extend((x as i32).to_le_bytes()),
            Base::U32 => out.extend((x as u32).to_le_bytes()),
            Base::I64 => out.extend((x as i64).to_le_bytes()),
            Base::U64 => out.extend((x as u64).to_le_bytes()),
            Base::F16 => out.extend(gpubook::gpu::f16::from_f64(x).to_le_bytes()),
            Base::Bf16 => out.extend(gpubook::gpu::bf16::from_f64(x).to_le_bytes()),
        }
    }

    /// The value of `self.size()` little-endian bytes (64-bit integers beyond 2^53 round).
    pub fn decode(self, b: &[u8]) -> f64 {
        fn a<const N: usize>(b: &[u8]) -> [u8; N] {
            b[..N].try_into().expect("the caller passes size() bytes")
        }
        match self {
            Base::F32 => f32::from_le_bytes(a(b)) as f64,
            Base::F64 => f64::from_le_bytes(a(b)),
            Base::I8 => i8::from_le_bytes(a(b)) as f64,
            Base::U8 => b[0] as f64,
            Base::I16 => i16::from_le_bytes(a(b)) as f64,
            Base::U16 => u16::from_le_bytes(a(b)) as f64,
            Base::I32 => i32::from_le_bytes(a(b)) as f64,
            Base::U32 => u32::from_le_bytes(a(b)) as f64,
            Base::I64 => i64::from_le_bytes(a(b)) as f64,
            Base::U64 => u64::from_le_bytes(a(b)) as f64,
            Base::F16 => gpubook::gpu::f16::from_le_bytes(a(b)).to_f64(),
            Base::Bf16 => gpubook::gpu::bf16::from_le_bytes(a(b)).to_f64(),
        }
    }

    /// One value as text: integers exactly, floats as Rust prints them.
    pub fn show(self, b: &[u8]) -> String {
        match self {
            Base::F32 => format!("{:?}", f32::from_le_bytes(b[..4].try_into().expect("4 bytes"))),
            Base::F64 => format!("{:?}", f64::from_le_bytes(b[..8].try_into().expect("8 bytes"))),
            Base::I64 => i64::from_le_bytes(b[..8].try_into().expect("8 bytes")).to_string(),
            Base::U64 => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")).to_string(),
            Base::F16 | Base::Bf16 => format!("{:?}", self.decode(b) as f32),
            _ => format!("{}", self.decode(b)),
        }
    }
}

/// An element type: a scalar, or a CUDA vector of 1 to 4 of them (`float4`: F32 x 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElemType {
    pub base: Base,
    pub lanes: usize,
}

impl ElemType {
    /// `f32`, `float`, `float4`, `int2`, `ulonglong3`, `f32x4`, `f16`, `half2`, `__nv_bfloat162`,
    /// or any C scalar name.
    pub fn parse(s: &str) -> Result<ElemType, String> {
        let s = s.trim();
        // `__half2`, `__nv_bfloat162`: the toolkit's own names of the pairs.
        let s = match s.strip_prefix("__") {
            Some(t) if t.starts_with("half") || t.starts_with("nv_bfloat16") => t,
            _ => s,
        };
        for &(base, rust, prefix, c) in BASES {
            if s == rust || c.contains(&s) {
                return Ok(ElemType { base, lanes: 1 });
            }
            let tails = [s.strip_prefix(prefix), s.strip_prefix(rust).and_then(|t| t.strip_prefix('x'))];
            for tail in tails.into_iter().flatten() {
                match tail.parse::<usize>() {
                    Ok(lanes) if (1..=base.max_lanes()).contains(&lanes) => return Ok(ElemType { base, lanes }),
                    _ => {}
                }
            }
        }
        Err(format!(
            "unknown type `{s}`: use f32 f64 f16 bf16 i8 u8 i16 u16 i32 u32 i64 u64, their C names (float, \
             int, half, __nv_bfloat16, ...) or CUDA vectors (float4, int2, double3, longlong4, half2, ...)"
        ))
    }

    pub fn size(self) -> usize {
        self.base.size() * self.lanes
    }

    /// The C name: `float`, `float4`.
    pub fn c_name(self) -> String {
        let (_, _, prefix, c) = self.base.row();
        if self.lanes == 1 { c[0].to_string() } else { format!("{prefix}{}", self.lanes) }
    }

    /// Whether a kernel parameter of C type `c` (`float`, `float4`, `const float4`) holds this.
    pub fn matches_c(self, c: &str) -> bool {
        let c = c.trim();
        let c = if matches!(self.base, Base::F16 | Base::Bf16) { c.strip_prefix("__").unwrap_or(c) } else { c };
        let (_, _, prefix, names) = self.base.row();
        if self.lanes == 1 {
            names.contains(&c) || c == format!("{prefix}1")
        } else {
            c == format!("{prefix}{}", self.lanes) || (self.base == Base::I64 && c == format!("long{}", self.lanes))
        }
    }
}

/// An element of N bytes, whatever its type: `gpubook run` and the fidelity suite keep every
/// buffer as `DeviceSlice<Elem<N>>` and check the C type themselves (`ElemType::matches_c`).
/// Its `C_NAMES` are the C types of that size, so the API's own check still catches a size
/// mismatch.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elem<const N: usize>(pub [u8; N]);

macro_rules! elem_names {
    ($($n:literal => [$($c:literal),*];)*) => {$(
        // SAFETY: a byte array has no padding and every bit pattern is valid.
        unsafe impl DeviceRepr for Elem<$n> {
            const C_NAMES: &'static [&'static str] = &[$($c),*];
            const RUST_NAME: &'static str = concat!("Elem<", $n, ">");
        }
    )*};
}

elem_names! {
    1 => ["char", "signed char", "unsigned char", "int8_t", "uint8_t", "uchar", "bool", "char1", "uchar1"];
    2 => ["short", "unsigned short", "int16_t", "uint16_t", "ushort", "char2", "uchar2", "short1", "ushort1",
          "half", "__half", "__nv_bfloat16", "nv_bfloat16"];
    3 => ["char3", "uchar3"];
    4 => ["float", "int", "signed", "unsigned", "unsigned int", "int32_t", "uint32_t", "uint", "char4", "uchar4",
          "short2", "ushort2", "float1", "int1", "uint1", "half2", "__half2", "__nv_bfloat162", "nv_bfloat162"];
    6 => ["short3", "ushort3"];
    8 => ["double", "long", "unsigned long", "long long", "unsigned long long", "int64_t", "uint64_t", "size_t",
          "ptrdiff_t", "float2", "int2", "uint2", "short4", "ushort4", "double1", "longlong1", "ulonglong1",
          "long1", "ulong1"];
    12 => ["float3", "int3", "uint3"];
    16 => ["float4", "int4", "uint4", "double2", "longlong2", "ulonglong2", "long2", "ulong2"];
    24 => ["double3", "longlong3", "ulonglong3", "long3", "ulong3"];
    32 => ["double4", "longlong4", "ulonglong4", "long4", "ulong4"];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_types() {
        assert_eq!(ElemType::parse("float4").unwrap(), ElemType { base: Base::F32, lanes: 4 });
        assert_eq!(ElemType::parse("f32x2").unwrap(), ElemType { base: Base::F32, lanes: 2 });
        assert_eq!(ElemType::parse("longlong4").unwrap().size(), 32);
        assert_eq!(ElemType::parse("int").unwrap(), ElemType { base: Base::I32, lanes: 1 });
        assert_eq!(ElemType::parse("uchar4").unwrap(), ElemType { base: Base::U8, lanes: 4 });
        assert!(ElemType::parse("float5").is_err());
        assert!(ElemType::parse("quux").is_err());
        assert!(ElemType::parse("double3").unwrap().matches_c("double3"));
        assert!(!ElemType::parse("float4").unwrap().matches_c("float"));
        assert!(ElemType::parse("f32").unwrap().matches_c("float"));
    }

    #[test]
    fn half_and_bfloat16_buffers_round_to_nearest_even() {
        let h2 = ElemType::parse("half2").unwrap();
        assert_eq!(h2, ElemType { base: Base::F16, lanes: 2 });
        assert_eq!(ElemType::parse("__half2").unwrap(), h2);
        assert!(h2.matches_c("__half2") && h2.matches_c("half2") && !h2.matches_c("float"));
        let b = ElemType::parse("bf16").unwrap();
        assert_eq!((b.base, b.size()), (Base::Bf16, 2));
        assert!(b.matches_c("__nv_bfloat16") && b.matches_c("nv_bfloat16") && !b.matches_c("half"));
        assert_eq!(ElemType::parse("__nv_bfloat162").unwrap(), ElemType { base: Base::Bf16, lanes: 2 });
        assert!(ElemType::parse("half4").is_err(), "CUDA has no half4");
        // 1 + 2^-11 lies halfway between two halves: it rounds to the even one, 1.0.
        let mut out = Vec::new();
        Base::F16.encode(1.0 + 2f64.powi(-11), &mut out);
        Base::Bf16.encode(3.0, &mut out);
        assert_eq!(out, [0x00, 0x3c, 0x40, 0x40]);
        assert_eq!((Base::F16.decode(&out[..2]), Base::Bf16.decode(&out[2..])), (1.0, 3.0));
        assert!(Base::F16.check_fits(70000.0).unwrap_err().contains("out of range for f16"));
        assert!(Base::Bf16.check_fits(70000.0).is_ok());
        assert_eq!((Base::F16.npy_descr(), Base::Bf16.npy_descr()), ("<f2".to_string(), "<u2".to_string()));
    }

    #[test]
    fn values_round_trip_and_must_fit() {
        for b in [Base::F32, Base::I8, Base::U16, Base::I64] {
            let mut v = Vec::new();
            b.encode(-1.0f64.max(if b == Base::U16 { 0.0 } else { -1.0 }), &mut v);
            assert_eq!(v.len(), b.size());
        }
        assert!(Base::I32.check_fits(3e9).is_err());
        assert!(Base::I32.check_fits(2147483647.0).is_ok());
        assert!(Base::U8.check_fits(256.0).is_err());
        assert!(Base::I64.check_fits(9223372036854775807.0).is_err(), "2^63 rounds up: not an i64");
        assert!(Base::F32.check_fits(1e39).is_err());
        assert!(Base::F32.check_fits(f64::INFINITY).is_ok());
        assert!(Base::I32.check_fits(1.5).unwrap_err().contains("not a whole number"));
    }
}
