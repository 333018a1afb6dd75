//! Which Rust types may live in device memory, and which C types they stand for in a kernel.

/// A plain value that may be copied to and from a device byte for byte.
///
/// # Safety
/// The type must have no padding and no invalid bit patterns (every byte pattern a kernel could
/// leave behind must be a valid value), and `C_NAMES` must name C types of the same layout.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {
    /// C spellings a kernel parameter may use for this type (`float`, `unsigned int`, ...).
    const C_NAMES: &'static [&'static str];
    /// The Rust name, for messages.
    const RUST_NAME: &'static str;
}

macro_rules! device_repr {
    ($($t:ty => [$($c:literal),*];)*) => {
        $(
            // SAFETY: each scalar is plain data: no padding, every bit pattern valid, and the C
            // names listed have its size on the LP64 targets CUDA supports.
            unsafe impl DeviceRepr for $t {
                const C_NAMES: &'static [&'static str] = &[$($c),*];
                const RUST_NAME: &'static str = stringify!($t);
            }
        )*
        /// (Rust name, C names) of every scalar `DeviceRepr`, in the order written.
        const SCALARS: &[(&str, &[&str])] = &[$((stringify!($t), &[$($c),*])),*];
    };
}

device_repr! {
    f32 => ["float"];
    f64 => ["double"];
    i8 => ["char", "signed char", "int8_t"];
    u8 => ["unsigned char", "uint8_t", "uchar", "char"];
    i16 => ["short", "short int", "int16_t"];
    u16 => ["unsigned short", "uint16_t", "ushort"];
    i32 => ["int", "signed", "signed int", "int32_t"];
    u32 => ["unsigned", "unsigned int", "uint32_t", "uint"];
    i64 => ["long long", "long long int", "int64_t", "long", "ptrdiff_t"];
    u64 => ["unsigned long long", "unsigned long", "uint64_t", "size_t"];
    usize => ["size_t", "unsigned long", "unsigned long long", "uint64_t"];
    isize => ["ptrdiff_t", "long", "long long", "int64_t"];
    half::f16 => ["__half", "half"];
    half::bf16 => ["__nv_bfloat16", "nv_bfloat16"];
}

/// Every C scalar name some `DeviceRepr` answers to: a parameter of another type (a struct, a
/// template parameter) is not checked, since gpubook cannot know its layout.
pub(crate) fn is_known_c_type(base: &str) -> bool {
    const KNOWN: &[&str] = &[
        "float",
        "double",
        "char",
        "signed char",
        "unsigned char",
        "short",
        "unsigned short",
        "int",
        "unsigned",
        "unsigned int",
        "long",
        "unsigned long",
        "long long",
        "unsigned long long",
        "int8_t",
        "uint8_t",
        "int16_t",
        "uint16_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
        "size_t",
        "float2",
        "float4",
        "int2",
        "int4",
        "uint2",
        "uint4",
        "double2",
        "__half",
        "half",
        "__nv_bfloat16",
        "nv_bfloat16",
    ];
    KNOWN.contains(&base)
}

/// The Rust type to pass for a C scalar parameter (`int` → `i32`), when there is one.
pub(crate) fn rust_type_for(c: &str) -> Option<&'static str> {
    SCALARS.iter().find(|(_, names)| names.contains(&c)).map(|(rust, _)| *rust)
}

/// Bytes of the C types a kernel parameter may have, the ones no `DeviceRepr` stands for included
/// (`bool`, `int3`, `dim3`): a value of another size is an error even where its type cannot be
/// checked. `None` for structs and template parameters.
pub(crate) fn c_size(base: &str) -> Option<usize> {
    Some(match base {
        "bool" | "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" | "char1" | "uchar1" => 1,
        "short" | "unsigned short" | "int16_t" | "uint16_t" | "char2" | "uchar2" | "short1" | "ushort1" | "__half" | "half"
        | "__nv_bfloat16" | "nv_bfloat16" => 2,
        "char3" | "uchar3" => 3,
        "int" | "unsigned" | "unsigned int" | "float" | "int32_t" | "uint32_t" | "char4" | "uchar4" | "short2" | "ushort2" | "int1"
        | "uint1" | "float1" | "__half2" | "half2" | "__nv_bfloat162" | "nv_bfloat162" => 4,
        "short3" | "ushort3" => 6,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "double" | "size_t" | "ptrdiff_t" | "int64_t" | "uint64_t"
        | "intptr_t" | "uintptr_t" | "int2" | "uint2" | "float2" | "short4" | "ushort4" | "long1" | "ulong1" | "longlong1"
        | "ulonglong1" | "double1" | "clock_t" => 8,
        "int3" | "uint3" | "float3" | "dim3" => 12,
        "int4" | "uint4" | "float4" | "double2" | "long2" | "ulong2" | "longlong2" | "ulonglong2" => 16,
        "double3" | "long3" | "ulong3" | "longlong3" | "ulonglong3" => 24,
        "double4" | "long4" | "ulong4" | "longlong4" | "ulonglong4" => 32,
        _ => return None,
    })
}

/// CUDA's vector types, laid out as CUDA lays them out (float4 is 16-byte aligned, so a kernel
/// can load it with one 128-bit instruction).
pub mod vector {
    use super::DeviceRepr;

    macro_rules! vector_type {
        ($name:ident, $c:literal, $align:literal, $t:ty, $($f:ident),+) => {
            #[repr(C, align($align))]
            #[derive(Debug, Clone, Copy, Default, PartialEq)]
            pub struct $name { $(pub $f: $t),+ }
            // SAFETY: repr(C) over fields of one plain type, aligned to exactly the struct's size
            // as CUDA aligns `$c`: no padding, and every bit pattern is valid.
            unsafe impl DeviceRepr for $name {
                const C_NAMES: &'static [&'static str] = &[$c];
                const RUST_NAME: &'static str = stringify!($name);
            }
        };
    }
    vector_type!(Float2, "float2", 8, f32, x, y);
    vector_type!(Float4, "float4", 16, f32, x, y, z, w);
    vector_type!(Int2, "int2", 8, i32, x, y);
    vector_type!(Int4, "int4", 16, i32, x, y, z, w);
    vector_type!(Uint2, "uint2", 8, u32, x, y);
    vector_type!(Uint4, "uint4", 16, u32, x, y, z, w);
    vector_type!(Double2, "double2", 16, f64, x, y);
}

pub(crate) fn as_bytes<T: DeviceRepr>(s: &[T]) -> &[u8] {
    // SAFETY: DeviceRepr types have no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}
