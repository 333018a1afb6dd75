//! The source rewrite: turns a learner's .cu into the C++ that g++ compiles against
//! gpubook_device.h (the contract table in DESIGN.md), and refuses, by name and line, CUDA
//! features the emulator does not model.
//!
//! Every line keeps its number: a rewritten declaration stays on its line (padded with the
//! newlines it spanned), and a `#line` directive names the learner's file, so compiler errors
//! and DWARF line tables point at what the learner wrote.

use std::path::Path;

use crate::error::EmuError;
use gpubook_cudac::decl::{Scope, SharedDecl, classify_brace, statement_start};
use gpubook_cudac::lex::{Kind, Token, tokenize};
use gpubook_cudac::signature::{KernelSignature, find_kernel};

/// The rewritten source, ready for the compiler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rewritten {
    pub text: String,
    /// Kernels a launch can name, each exported through `GPUBOOK_EXPORT_KERNEL_AS`.
    pub exported: Vec<Export>,
}

/// A kernel entry point the worker finds with dlsym: `__gpubook_kernel_<symbol>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Export {
    /// What `load_function` was given: `vector_add`, `reduce<256>`.
    pub name: String,
    /// The C identifier the entry point is named by.
    pub symbol: String,
}

impl Rewritten {
    pub fn symbol(&self, name: &str) -> Option<&str> {
        self.exported.iter().find(|e| e.name == name).map(|e| e.symbol.as_str())
    }

    /// The same module with one more entry point, for the template instantiation `expr` of the
    /// kernel defined at `line` (what NVRTC's name expressions do on a GPU).
    pub fn with_instance(&self, path: &Path, line: u32, expr: &str) -> Rewritten {
        let symbol = instance_symbol(expr);
        let mut text = self.text.clone();
        text.push_str(&format!("#line {line} {}\nGPUBOOK_EXPORT_KERNEL_AS({symbol}, {expr})\n", quoted(path)));
        let mut exported = self.exported.clone();
        exported.push(Export { name: expr.to_string(), symbol });
        Rewritten { text, exported }
    }
}

/// `reduce<float, 256>` → `reduce_float__256_<hash>`: a C identifier, distinct per expression.
fn instance_symbol(expr: &str) -> String {
    let readable: String = expr.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    // FNV-1a: two expressions that read the same once sanitised (`a<1>` and `a(1)`) still differ.
    let hash = expr.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    format!("{readable}_{:08x}", hash as u32)
}

/// CUDA headers whose contents gpubook_device.h already provides: the include is dropped.
const PROVIDED_HEADERS: &[&str] = &["cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h", "device_functions.h"];

/// Headers the emulator cannot offer, with what a learner would call the feature.
const UNSUPPORTED_HEADERS: &[(&str, &str)] = &[
    ("cooperative_groups/memcpy_async.h", "cooperative groups' asynchronous copies (`cooperative_groups/memcpy_async.h`)"),
    ("cooperative_groups/scan.h", "cooperative groups' scans (`cooperative_groups/scan.h`)"),
    ("cub/", "CUB (`#include <cub/...>`)"),
    ("thrust/", "Thrust (`#include <thrust/...>`)"),
    ("cuda/", "libcu++ (`#include <cuda/...>`)"),
    ("curand_kernel.h", "cuRAND's device API (`#include <curand_kernel.h>`)"),
];

/// Identifiers that mean an unsupported feature wherever they appear in code.
const UNSUPPORTED_WORDS: &[(&str, &str)] = &[
    ("this_grid", "grid groups (`cooperative_groups::this_grid`, which need a cooperative launch)"),
    ("cudaTextureObject_t", "texture objects (`cudaTextureObject_t`)"),
    ("cudaSurfaceObject_t", "surface objects (`cudaSurfaceObject_t`)"),
    ("tex1Dfetch", "texture fetches (`tex1Dfetch`)"),
    ("tex1D", "texture fetches (`tex1D`)"),
    ("tex2D", "texture fetches (`tex2D`)"),
    ("tex3D", "texture fetches (`tex3D`)"),
    ("surf2Dread", "surface memory (`surf2Dread`)"),
    ("surf2Dwrite", "surface memory (`surf2Dwrite`)"),
    ("asm", "inline PTX assembly (`asm`)"),
    ("__asm__", "inline PTX assembly (`__asm__`)"),
    ("__asm", "inline PTX assembly (`__asm`)"),
];

/// Rewrites `text` (the contents of `path`, which is what messages and `#line` will show);
/// `kernels` are its `__global__` functions (`parse_kernels`, read once by whoever loads it).
pub(crate) fn rewrite(path: &Path, text: &str, kernels: &[KernelSignature]) -> Result<Rewritten, EmuError> {
    let tokens = tokenize(text);
    check_host_program(path, &tokens)?;
    check_supported(path, &tokens)?;
    check_no_kernel_calls(path, &tokens, kernels)?;
    let mut out = String::with_capacity(text.len() + 256);
    out.push_str(&format!("#line 1 {}\n", quoted(path)));
    let mut copied = 0; // bytes of `text` already emitted
    let mut scopes: Vec<Scope> = Vec::new();
    let mut next_id = 0u32;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        match t.kind {
            Kind::Directive => {
                if let Some(header) = included_header(t.text)
                    && PROVIDED_HEADERS.contains(&header)
                {
                    splice(&mut out, text, &mut copied, t.start, t.end(), "/* provided by gpubook_device.h */");
                }
            }
            Kind::Punct('{') => {
                scopes.push(classify_brace(&tokens[..i], &scopes));
            }
            Kind::Punct('}') => {
                scopes.pop();
            }
            Kind::Ident if t.text == "__shared__" => {
                let start = statement_start(&tokens, i);
                let Some(end) = (i..tokens.len()).find(|&j| tokens[j].is_punct(';')) else {
                    return Err(EmuError::Compile {
                        file: path.into(),
                        line: Some(t.line),
                        message: "a `__shared__` declaration without its closing `;`".into(),
                        log: String::new(),
                    });
                };
                let decl = &tokens[start..end];
                let is_extern = decl.iter().any(|t| t.is_ident("extern"));
                if !scopes.contains(&Scope::Code) {
                    let feature = if is_extern {
                        "`extern __shared__` outside a function (declare it inside the kernel: \
                         `extern __shared__ float s[];`)"
                    } else {
                        "`__shared__` outside a function (declare it inside the kernel that uses \
                         it, where each block gets its own copy)"
                    };
                    return Err(EmuError::Unsupported { feature: feature.into(), file: path.into(), line: t.line });
                }
                let replacement = shared_declaration(decl, &mut next_id).ok_or_else(|| EmuError::Compile {
                    file: path.into(),
                    line: Some(t.line),
                    message: "the emulator could not read this `__shared__` declaration; write it \
                                  as `__shared__ float name[SIZE];`"
                        .into(),
                    log: String::new(),
                })?;
                splice(&mut out, text, &mut copied, tokens[start].start, tokens[end].end(), &replacement);
                i = end + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let mut exported = Vec::new();
    for kernel in kernels {
        // Kernels a plain name launches (C linkage, or C++ linkage without overloads); template
        // kernels get theirs when an instantiation is asked for (`with_instance`).
        let Ok(found) = find_kernel(kernels, &kernel.name) else { continue };
        if found.signature() != kernel || kernel.template_params.is_some() {
            continue;
        }
        // Errors in the trampoline (an argument type it cannot unpack) point at the kernel.
        let expr = kernel.qualified_name();
        out.push_str(&format!("#line {} {}\nGPUBOOK_EXPORT_KERNEL_AS({}, {expr})\n", kernel.line, quoted(path), kernel.name));
        exported.push(Export { name: kernel.name.clone(), symbol: kernel.name.clone() });
    }
    Ok(Rewritten { text: out, exported })
}

/// `[static|extern] __shared__ [__align__(N)] TYPE a[N], *b;` → one runtime call per declarator;
/// `None` when the declaration cannot be read or has an initializer (CUDA forbids those too).
fn shared_declaration(decl: &[Token], next_id: &mut u32) -> Option<String> {
    let d = SharedDecl::parse(decl)?;
    let ty = &d.ty;
    let mut out = Vec::new();
    for x in &d.declarators {
        if x.initialized {
            return None;
        }
        let (name, stars, dims) = (x.name, "*".repeat(x.stars), &x.dims);
        if d.is_extern {
            out.push(format!("{ty}{stars}* {name} = ::gpubook::dynamic_shared<{ty}{stars}>(\"{name}\");"));
        } else {
            let id = *next_id;
            *next_id += 1;
            let align = d.align.as_ref().map(|a| format!(", {a}")).unwrap_or_default();
            out.push(format!("auto& {name} = *::gpubook::shared_var<{ty}{stars}{dims}{align}>({id}, \"{name}\");"));
        }
    }
    Some(out.join(" "))
}

/// Emits `text[copied..start]`, then `replacement` and as many newlines as `text[start..end]`
/// held, so the lines after it keep their numbers.
fn splice(out: &mut String, text: &str, copied: &mut usize, start: usize, end: usize, replacement: &str) {
    out.push_str(&text[*copied..start]);
    out.push_str(replacement);
    for _ in text[start..end].matches('\n') {
        out.push('\n');
    }
    *copied = end;
}

/// `#include <a/b.h>` or `#include "b.h"` → `a/b.h`.
fn included_header(directive: &str) -> Option<&str> {
    let rest = directive.strip_prefix('#')?.trim_start().strip_prefix("include")?.trim();
    let inner = rest.strip_prefix('<').and_then(|r| r.split('>').next());
    inner.or_else(|| rest.strip_prefix('"').and_then(|r| r.split('"').next())).map(str::trim)
}

/// A whole CUDA program (host `main()` and all) is not a kernel file: say so, before its
/// `<<<...>>>` launches read as dynamic parallelism.
fn check_host_program(path: &Path, tokens: &[Token]) -> Result<(), EmuError> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Punct('{') => depth += 1,
            Kind::Punct('}') => depth = depth.saturating_sub(1),
            Kind::Ident
                if depth == 0
                    && t.text == "main"
                    && tokens.get(i + 1).is_some_and(|n| n.is_punct('('))
                    && i >= 1
                    && matches!(tokens[i - 1].text, "int" | "void") =>
            {
                let feature = format!(
                    "a whole CUDA program: this file has a host `main()` (line {}); the emulator compiles \
                     kernel files as NVRTC does. Keep the `__global__` functions (and what they call) in \
                     a .cu of their own and launch them from Rust",
                    t.line
                );
                return Err(EmuError::Unsupported { feature, file: path.to_path_buf(), line: t.line });
            }
            _ => {}
        }
    }
    Ok(())
}

/// nvcc refuses a `__global__` function called like a function from device code ("a
/// __global__ function call must be configured"); so does the emulator, where it would run.
fn check_no_kernel_calls(path: &Path, tokens: &[Token], kernels: &[KernelSignature]) -> Result<(), EmuError> {
    let mut scopes: Vec<Scope> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Punct('{') => scopes.push(classify_brace(&tokens[..i], &scopes)),
            Kind::Punct('}') => {
                scopes.pop();
            }
            Kind::Ident if scopes.contains(&Scope::Code) && tokens.get(i + 1).is_some_and(|n| n.is_punct('(')) => {
                // `s.run(`, `p->run(`, `cg::reduce(`: another function of that name.
                let member = i >= 1 && matches!(tokens[i - 1].kind, Kind::Punct('.' | '>' | ':'));
                if !member && let Some(k) = kernels.iter().find(|k| k.name == t.text) {
                    return Err(EmuError::Compile {
                        file: path.to_path_buf(),
                        line: Some(t.line),
                        message: format!(
                            "a __global__ function call must be configured: `{}(...)` calls the kernel \
                             defined at line {} from device code, which nvcc and NVRTC reject too (launch \
                             it from the host; to share its code, move it into a `__device__` function \
                             both call)",
                            t.text, k.line
                        ),
                        log: String::new(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The first feature the emulator does not model, as an `Unsupported` error.
fn check_supported(path: &Path, tokens: &[Token]) -> Result<(), EmuError> {
    let unsupported =
        |feature: &str, line: u32| Err(EmuError::Unsupported { feature: feature.to_string(), file: path.to_path_buf(), line });
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Directive => {
                if let Some(header) = included_header(t.text)
                    && let Some((_, feature)) = UNSUPPORTED_HEADERS.iter().find(|(h, _)| header.starts_with(h))
                {
                    return unsupported(feature, t.line);
                }
            }
            Kind::Ident => {
                if let Some((_, feature)) = UNSUPPORTED_WORDS.iter().find(|(w, _)| *w == t.text) {
                    return unsupported(feature, t.line);
                }
                // The legacy `texture<float, 1> tex;` reference type.
                if t.text == "texture" && tokens.get(i + 1).is_some_and(|n| n.is_punct('<')) {
                    return unsupported("texture references (`texture<...>`)", t.line);
                }
            }
            // `kernel<<<grid, block>>>(...)` in a .cu without a host main(): device code.
            Kind::Punct('<')
                if tokens.get(i + 1).is_some_and(|n| n.is_punct('<') && n.start == t.start + 1)
                    && tokens.get(i + 2).is_some_and(|n| n.is_punct('<') && n.start == t.start + 2) =>
            {
                return unsupported(
                    "a `<<<...>>>` launch: from device code that is dynamic parallelism; host code (a \
                     function that launches kernels) is not compiled by the emulator, which runs the \
                     kernels Rust launches",
                    t.line,
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// A path as a C string literal for `#line`.
fn quoted(path: &Path) -> String {
    let s = path.to_string_lossy();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpubook_cudac::parse_kernels;

    fn rw(src: &str) -> Rewritten {
        rewrite(Path::new("k/t.cu"), src, &parse_kernels(src)).unwrap()
    }

    fn names(r: &Rewritten) -> Vec<&str> {
        r.exported.iter().map(|e| e.name.as_str()).collect()
    }

    /// The rewritten body without the leading `#line` and the trailing exports.
    fn body(r: &Rewritten) -> &str {
        let t = r.text.strip_prefix("#line 1 \"k/t.cu\"\n").unwrap();
        t.split("#line ").next().unwrap()
    }

    #[test]
    fn vector_add_gets_an_export_and_keeps_lines() {
        let src = "extern \"C\" __global__ void vector_add(const float* a, float* c, int n) {\n\
                   \x20   int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                   \x20   if (i < n) c[i] = a[i];\n}\n";
        let r = rw(src);
        assert_eq!(names(&r), ["vector_add"]);
        assert_eq!(body(&r), src);
        assert!(r.text.ends_with("#line 1 \"k/t.cu\"\nGPUBOOK_EXPORT_KERNEL_AS(vector_add, vector_add)\n"), "{}", r.text);
    }

    #[test]
    fn shared_declarations_follow_the_contract() {
        let src = "#define TILE 16\n\
                   extern \"C\" __global__ void k(float* out) {\n\
                   \x20 __shared__ float tile[16][TILE];\n\
                   \x20 __shared__ int count;\n\
                   \x20 extern __shared__ float s[];\n\
                   \x20 __shared__ __align__(16) unsigned char raw[N >> 1], *p;\n\
                   \x20 static __shared__\n    volatile int flag;\n\
                   \x20 out[0] = tile[0][0] + count + s[0] + raw[0] + flag;\n}\n";
        let r = rw(src);
        let b = body(&r);
        let lines: Vec<&str> = b.lines().collect();
        assert_eq!(lines[2], "  auto& tile = *::gpubook::shared_var<float[16][TILE]>(0, \"tile\");");
        assert_eq!(lines[3], "  auto& count = *::gpubook::shared_var<int>(1, \"count\");");
        assert_eq!(lines[4], "  float* s = ::gpubook::dynamic_shared<float>(\"s\");");
        assert_eq!(
            lines[5],
            "  auto& raw = *::gpubook::shared_var<unsigned char[N >> 1], 16>(2, \"raw\"); \
             auto& p = *::gpubook::shared_var<unsigned char*, 16>(3, \"p\");"
        );
        assert_eq!(lines[6], "  auto& flag = *::gpubook::shared_var<volatile int>(4, \"flag\");");
        assert_eq!(lines[7], "");
        assert_eq!(b.lines().count(), src.lines().count());
    }

    #[test]
    fn shared_in_device_functions_and_templates() {
        let src = "template <typename T, int N> __device__ T sum(T v) {\n  __shared__ T buf[N];\n  return buf[0];\n}\n";
        let r = rw(src);
        assert!(body(&r).contains("auto& buf = *::gpubook::shared_var<T[N]>(0, \"buf\");"), "{}", r.text);
        assert!(r.exported.is_empty());
    }

    #[test]
    fn file_scope_shared_is_refused_with_its_line() {
        for src in ["\n__shared__ float tile[256];\n", "namespace x {\n\nextern __shared__ float s[];\n}"] {
            match rewrite(Path::new("k/t.cu"), src, &parse_kernels(src)) {
                Err(EmuError::Unsupported { feature, line, .. }) => {
                    assert!(feature.contains("outside a function"), "{feature}");
                    assert!(line == 2 || line == 3);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn kernels_a_plain_name_launches_are_exported() {
        let src = "__global__ void cpp(int* p) {}\nextern \"C\" {\n__global__ void a(int* p) {}\n__global__ void b() {}\n}\n\
                   __global__ void o(int* p) {}\n__global__ void o(float* p) {}\n\
                   template <int N> __global__ void t(int* p) {}\nnamespace ns { __global__ void q() {} }\n";
        let r = rw(src);
        assert_eq!(names(&r), ["cpp", "a", "b", "q"]);
        assert!(
            r.text.contains("#line 3 \"k/t.cu\"\nGPUBOOK_EXPORT_KERNEL_AS(a, a)\n#line 4 \"k/t.cu\"\nGPUBOOK_EXPORT_KERNEL_AS(b, b)\n")
        );
        assert!(r.text.contains("GPUBOOK_EXPORT_KERNEL_AS(q, ns::q)"), "{}", r.text);
        let inst = r.with_instance(Path::new("k/t.cu"), 8, "t<4>");
        let sym = inst.symbol("t<4>").unwrap();
        assert!(sym.starts_with("t_4__") && sym.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{sym}");
        assert!(inst.text.ends_with(&format!("#line 8 \"k/t.cu\"\nGPUBOOK_EXPORT_KERNEL_AS({sym}, t<4>)\n")));
        assert_ne!(instance_symbol("a<1>"), instance_symbol("a(1)"));
    }

    #[test]
    fn provided_headers_are_dropped_others_kept() {
        let src = "#include <cuda_runtime.h>\n#include \"common.cuh\"\n#include <stdint.h>\n";
        let r = rw(src);
        assert_eq!(body(&r), "/* provided by gpubook_device.h */\n#include \"common.cuh\"\n#include <stdint.h>\n");
    }

    #[test]
    fn unsupported_features_are_named() {
        let cases = [
            ("\n#include <cooperative_groups/memcpy_async.h>\n", 2, "asynchronous copies"),
            ("__global__ void k() {\n  auto g = cg::this_grid();\n}", 2, "grid groups"),
            ("texture<float, 1> t;\n", 1, "texture references"),
            ("__global__ void k(cudaTextureObject_t t) {}", 1, "texture objects"),
            ("__global__ void k() {\n\n  child<<<1, 1>>>();\n}", 3, "dynamic parallelism"),
            ("__global__ void k() { asm(\"trap;\"); }", 1, "inline PTX"),
            ("__global__ void k() {\n  asm volatile(\"trap;\");\n}", 2, "inline PTX assembly (`asm`)"),
            ("__device__ int f() { int x; __asm__(\"mov.u32 %0, 1;\" : \"=r\"(x)); return x; }", 1, "`__asm__`"),
            ("__global__ void k(int* p) { p[0] = 1; }\n\nint main() {\n  k<<<1, 1>>>(0);\n}\n", 3, "host `main()` (line 3)"),
        ];
        for (src, want_line, want) in cases {
            match rewrite(Path::new("k/t.cu"), src, &parse_kernels(src)) {
                Err(EmuError::Unsupported { feature, line, file }) => {
                    assert!(feature.contains(want), "{src}: {feature}");
                    assert_eq!(line, want_line, "{src}");
                    assert_eq!(file, Path::new("k/t.cu"));
                }
                other => panic!("{src}: {other:?}"),
            }
        }
        // Look-alikes are fine: a shift, a comment, a string, a variable named `texture`.
        rw("// tex2D<<<\nint a = 1 << 2; const char* s = \"<<<\"; float texture = 1;");
    }

    #[test]
    fn a_kernel_called_from_a_kernel_is_rejected_as_nvcc_does() {
        let src = "__global__ void inner(int* p) { p[0] = 1; }\n__global__ void outer(int* p) {\n  inner(p);\n}\n";
        match rewrite(Path::new("k/t.cu"), src, &parse_kernels(src)) {
            Err(EmuError::Compile { line, message, .. }) => {
                assert_eq!(line, Some(3));
                assert!(message.starts_with("a __global__ function call must be configured"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // A member call or a device function of another name is fine.
        rw("__global__ void run(int* p) {}\nstruct S { __device__ void run() {} };\n__global__ void k(int* p) { S s; s.run(); }\n");
    }

    /// The rules added for whole programs and kernel calls refuse none of the repository's kernels.
    #[test]
    fn the_repositorys_kernels_are_not_refused_as_programs_or_kernel_calls() {
        fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if p.is_dir() && !name.starts_with('.') && name != "target" {
                    walk(&p, out);
                } else if name.ends_with(".cu") {
                    out.push(p);
                }
            }
        }
        // The checkout on this machine: where the crate was built, else GPUBOOK_ROOT (a test
        // binary may run from another folder).
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = if built.is_dir() { built } else { std::env::var_os("GPUBOOK_ROOT").map(std::path::PathBuf::from).unwrap_or_default() };
        let mut files = Vec::new();
        for dir in ["kernels", "solutions", "exercises", "crates"] {
            walk(&root.join(dir), &mut files);
        }
        assert!(files.len() > 20, "found only {} .cu files", files.len());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let refused = match rewrite(&f, &text, &parse_kernels(&text)) {
                Err(EmuError::Compile { message, .. }) => message.contains("must be configured").then_some(message),
                Err(EmuError::Unsupported { feature, .. }) => feature.contains("host `main()`").then_some(feature),
                _ => None,
            };
            assert!(refused.is_none(), "{}: {}", f.display(), refused.unwrap_or_default());
        }
    }

    #[test]
    fn line_paths_are_escaped() {
        let r = rewrite(Path::new("we\"ird\\x.cu"), "", &[]).unwrap();
        assert!(r.text.starts_with("#line 1 \"we\\\"ird\\\\x.cu\"\n"));
    }
}
