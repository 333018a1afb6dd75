//! Check mode's compiler pass: runtime/pass/gpubook_pass.cpp, a GCC plugin that puts the checks
//! of loads and stores through a pointer before the inliner runs (DESIGN.md, "Check mode's
//! instrumentation"). A plugin loads only into the g++ it was built for, so it is built here,
//! with the module's own compiler and that compiler's plugin headers, once per runtime; where
//! there are none (clang, or g++ without its plugin-dev package) check mode keeps
//! ThreadSanitizer's hooks for every access, and `gpubook doctor` says so.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin's source under the runtime folder, and what it is built into there.
const SOURCE: &str = "pass/gpubook_pass.cpp";
const PLUGIN: &str = "gpubook-pass.so";
const FLAGS: &[&str] = &["-std=c++17", "-shared", "-fPIC", "-fno-rtti", "-fno-exceptions", "-O2"];

/// Where g++ keeps the headers a plugin is built against, or why there are none.
pub(crate) fn plugin_headers(cxx: &Path, clang: bool) -> Result<PathBuf, String> {
    if clang {
        return Err("the compiler is clang; the pass is a GCC plugin".into());
    }
    let ask = |flag: &str| {
        Command::new(cxx)
            .arg(flag)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let dir = ask("-print-file-name=plugin").map(|d| PathBuf::from(d).join("include"));
    match dir {
        Some(dir) if dir.join("gcc-plugin.h").is_file() => Ok(dir),
        _ => {
            let major = ask("-dumpversion").and_then(|v| v.split('.').next().map(str::to_string)).unwrap_or_else(|| "N".into());
            Err(format!("{} has no plugin headers (Debian/Ubuntu: `sudo apt install gcc-{major}-plugin-dev`)", cxx.display()))
        }
    }
}

/// Builds the plugin into `runtime_dir` (a finished build is reused: the folder is named by the
/// hash of the sources and the compiler), or says why it could not.
pub(crate) fn build(cxx: &Path, headers: &Path, runtime_dir: &Path) -> Result<PathBuf, String> {
    let plugin = runtime_dir.join(PLUGIN);
    if plugin.is_file() {
        return Ok(plugin);
    }
    let tmp = runtime_dir.join(format!("{PLUGIN}.tmp-{}", std::process::id()));
    let out = Command::new(cxx)
        .args(FLAGS)
        .arg(format!("-I{}", headers.display()))
        .arg(runtime_dir.join(SOURCE))
        .arg("-o")
        .arg(&tmp)
        .output()
        .map_err(|e| format!("running {}: {e}", cxx.display()))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let log = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = log.lines().take(8).collect();
        return Err(format!("building the pass failed (a bug in gpubook):\n{}", first.join("\n")));
    }
    std::fs::rename(&tmp, &plugin).map_err(|e| format!("moving the pass into {}: {e}", plugin.display()))?;
    Ok(plugin)
}

/// The flags that load the plugin into a check-mode compile (after the mode's own: a later
/// -O wins) and tell the device header that the checks are inlined (device/check_inline.h) and
/// the block runs as a loop. -O2, as the experiment measured it: at -O1 g++ reloads the
/// thread-local state's address at every use (no global common-subexpression elimination),
/// and -fno-semantic-interposition lets it inline the kernel into its block loop, as fast mode.
/// The check (fewer than 200 of the inliner's instructions) is inlined wherever g++'s limit on a
/// unit's growth allows: everywhere in a small kernel, in part in one of many force-inlined
/// helpers (a 1000-line body per access there took minutes to compile). -O2 would also turn a
/// division by a zero it can prove into a trap: -fno-isolate-erroneous-paths-dereference keeps
/// the division, which faults as on a GPU (and the report says "division by zero"). A check is
/// inlined whole or called whole (-fno-partial-inlining): the called rest of a split one carried
/// a neighbouring statement's line, and a report named the line after the bad access. The pass
/// itself keeps a recursion a recursion (-O2 would turn `scratch[n] + walk(n - 2)` into a loop).
pub(crate) fn flags(plugin: &Path) -> [String; 8] {
    [
        format!("-fplugin={}", plugin.display()),
        "-DGPUBOOK_CHECK_PASS=1".to_string(),
        "-O2".to_string(),
        "-fno-semantic-interposition".to_string(),
        "-fno-isolate-erroneous-paths-dereference".to_string(),
        "-fno-partial-inlining".to_string(),
        "--param".to_string(),
        "max-inline-insns-single=200".to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_has_no_gcc_plugins() {
        assert!(plugin_headers(Path::new("clang++"), true).unwrap_err().contains("clang"));
    }

    #[test]
    fn a_compiler_without_headers_says_what_to_install() {
        let e = plugin_headers(Path::new("/nonexistent/g++"), false).unwrap_err();
        assert!(e.contains("/nonexistent/g++") && e.contains("plugin-dev"), "{e}");
    }
}
