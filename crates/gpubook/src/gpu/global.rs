//! A module's `__device__` and `__constant__` variables (`cuModuleGetGlobal`; cudarc's
//! `CudaModule::get_global`): `module.get_global("coeffs")?` finds one, and `write` and `read`
//! copy into and out of it, as `cudaMemcpyToSymbol` and `cudaMemcpyFromSymbol` do. A kernel
//! that reads a `__constant__` table the host filled, or a `__device__` counter the host reads
//! back after the launches, uses them.
//!
//! On a GPU the variable is device memory in the module; on the emulator it lives in the
//! worker's copy of the module (the device's mode), which starts as the source initialises it.

use super::backend::BackendModule;
use super::error::{GpuError, Result};
use super::function::Module;
use super::repr::DeviceRepr;
use super::stream::Stream;
use std::sync::Arc;

/// One `__device__` or `__constant__` variable of a loaded module.
#[derive(Clone)]
pub struct Global {
    module: Arc<dyn BackendModule>,
    name: String,
    addr: u64,
    bytes: usize,
}

impl Module {
    /// The `__device__` or `__constant__` variable `name` (declared at file scope, outside any
    /// namespace). An unknown name is an error that lists the variables the source declares.
    pub fn get_global(&self, name: &str) -> Result<Global> {
        let (addr, bytes) = self.inner.global(name).map_err(|e| {
            let declared = declared_globals(&self.source.text);
            let list = if declared.is_empty() { "it declares none".to_string() } else { format!("it declares: {}", declared.join(", ")) };
            GpuError::Size(format!(
                "no `__device__` or `__constant__` variable named `{name}` in {} ({list}; {e})",
                self.source.display_path()
            ))
        })?;
        Ok(Global { module: self.inner.clone(), name: name.into(), addr, bytes })
    }
}

impl Global {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size as the device has it (`sizeof` the variable).
    pub fn num_bytes(&self) -> usize {
        self.bytes
    }

    /// Its address: a device address on a GPU, the worker's address on the emulator (which a
    /// kernel argument may also carry).
    pub fn device_ptr(&self) -> u64 {
        self.addr
    }

    /// Writes the whole variable (`cudaMemcpyToSymbol`) after the stream's earlier work; `src`
    /// must be exactly its size.
    pub fn write<T: DeviceRepr>(&self, stream: &Stream, src: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(src);
        if bytes != self.bytes {
            return Err(self.size_error(bytes, src.len(), T::RUST_NAME));
        }
        // SAFETY: `T: DeviceRepr` is plain data with no padding.
        let raw = unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), bytes) };
        self.write_bytes(stream, raw)
    }

    /// The same with raw bytes.
    pub fn write_bytes(&self, stream: &Stream, src: &[u8]) -> Result<()> {
        if src.len() != self.bytes {
            return Err(self.size_error(src.len(), src.len(), "u8"));
        }
        self.module.write_global(&*stream.gpu().inner.backend, stream.id(), self.addr, src)
    }

    /// Reads the whole variable (`cudaMemcpyFromSymbol`) after the stream's earlier work, as
    /// `T`s: its size must be a whole number of them.
    pub fn read<T: DeviceRepr>(&self, stream: &Stream) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if size == 0 || !self.bytes.is_multiple_of(size) {
            return Err(GpuError::Size(format!(
                "`{}` is {} bytes on the device, not a whole number of {} ({size} bytes)",
                self.name,
                self.bytes,
                T::RUST_NAME
            )));
        }
        let bytes = self.read_bytes(stream)?;
        // SAFETY: every bit pattern of the variable's bytes is a valid `T` (`DeviceRepr`), and
        // read_unaligned copes with the Vec<u8>'s alignment.
        Ok(bytes.chunks_exact(size).map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr().cast::<T>()) }).collect())
    }

    /// The variable's bytes.
    pub fn read_bytes(&self, stream: &Stream) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.bytes];
        self.module.read_global(&*stream.gpu().inner.backend, stream.id(), self.addr, &mut out)?;
        Ok(out)
    }

    fn size_error(&self, bytes: usize, count: usize, ty: &str) -> GpuError {
        GpuError::Size(format!("`{}` is {} bytes on the device; {bytes} bytes were given ({count} × {ty})", self.name, self.bytes))
    }
}

/// The file-scope variables a source declares `__device__` or `__constant__` (for messages:
/// a quick reading of the text, line by line, comments left out; not a parser).
pub(crate) fn declared_globals(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_comment = false;
    for line in text.lines() {
        // Block comments: whole lines inside one are skipped; enough for a message.
        if in_comment || line.trim_start().starts_with("/*") {
            in_comment = !line.contains("*/");
            continue;
        }
        let code = line.split("//").next().unwrap_or_default();
        for kw in ["__constant__", "__device__"] {
            let Some(at) = code.find(kw) else { continue };
            let rest = &code[at + kw.len()..];
            let Some(end) = rest.find([';', '=', '(', '{', '[']) else { continue };
            // A function (`(`) or a body (`{`): not a variable.
            if matches!(rest[end..].chars().next(), Some('(' | '{')) {
                continue;
            }
            let decl = rest[..end].trim_end();
            let start = decl.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let name = &decl[start..];
            if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_variables_are_found_and_functions_are_not() {
        let src = "// __device__ x; a comment\n/* __device__ int y;\n*/\n__constant__ float taps[5] = {1, 2};\n__device__ unsigned counter;\n\
                   __device__ float f(float x) { return x; }\n__device__ __forceinline__ int g() { return 1; }\n\
                   static __device__ int table[4];\n";
        assert_eq!(declared_globals(src), ["taps", "counter", "table"]);
    }
}
