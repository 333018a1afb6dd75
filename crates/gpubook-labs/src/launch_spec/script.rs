//! A launch script inside a .cu file: comment lines that say how to launch its kernels and
//! what they must produce. The fidelity suite (crates/gpubook/tests/fidelity/) is made of such
//! files, and `gpubook run FILE.cu` with no `--kernel` runs a file's own script.
//!
//! ```text
//! // @feature: what the file exercises, in one line
//! // @symbol: NAME=TYPE[N]:INIT or NAME=TYPE=X   a __constant__/__device__ variable, set first
//! // @launch: KERNEL grid=X,Y,Z block=X,Y,Z shared=BYTES ARG...   (one or more, run in order)
//! // @expect: NAME[i] = EXPR          every scalar of buffer NAME
//! // @expect: NAME[3] = EXPR          one scalar
//! // @expect: NAME[0..64] = EXPR      a range of scalars
//! // @tolerance: 1e-6                 |got - want| <= tol * max(1, |want|); default exact
//! // @ranks: 2                         every launch once per rank, rank 0 first (default 1)
//! // @expect: NAME@1[i] = EXPR        rank 1's copy (NAME alone is rank 0's)
//! ```
//!
//! ARGs are [`spec`](super::spec)'s; a buffer is named after the parameter it is passed as, so
//! `@expect` and later launches (`@name`) refer to it by that name; `@expect` may also name a
//! variable of a `@symbol` line (every symbol is written before the first launch). EXPR is [`Expr`]'s
//! arithmetic over `i` (the scalar's index: vectors count lane by lane) and `n`.

use super::expr::Expr;
use super::session::Session;
use super::spec::{LaunchLine, SymbolSpec, parse_launch, parse_symbol};
use std::path::Path;

/// What one `@expect` line asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub buffer: String,
    /// Scalars `from..to`; `to` None for "to the end".
    pub from: usize,
    pub to: Option<usize>,
    pub value: Expr,
    pub text: String,
}

/// A file's launch script.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub feature: String,
    pub symbols: Vec<SymbolSpec>,
    pub launches: Vec<LaunchLine>,
    pub expects: Vec<Expect>,
    pub tolerance: f64,
    /// Ranks sharing the device (`// @ranks:`); 0 when the file does not say, which runs one.
    pub ranks: usize,
}

impl Script {
    /// The script in `source` (the text of a .cu file in `dir`).
    pub fn parse(source: &str, dir: &Path) -> Result<Script, String> {
        let mut s = Script::default();
        for (no, line) in source.lines().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("// @") else { continue };
            let ctx = |e: String| format!("line {}: {e}", no + 1);
            let (key, value) = rest.split_once(':').ok_or_else(|| ctx(format!("`// @{rest}` has no `:`")))?;
            let value = value.trim();
            match key.trim() {
                "feature" => s.feature = value.to_string(),
                "launch" => s.launches.push(parse_launch(value, dir).map_err(ctx)?),
                "symbol" => s.symbols.push(parse_symbol(value, dir).map_err(ctx)?),
                "expect" => s.expects.push(parse_expect(value).map_err(ctx)?),
                "tolerance" => s.tolerance = value.parse().map_err(|_| ctx(format!("`{value}` is not a number")))?,
                "ranks" => {
                    s.ranks = value
                        .parse()
                        .ok()
                        .filter(|&r| r >= 1)
                        .ok_or_else(|| ctx(format!("`{value}` is not a number of ranks (1 or more)")))?
                }
                other => return Err(ctx(format!("unknown `// @{other}`: use feature, symbol, launch, expect, tolerance or ranks"))),
            }
        }
        Ok(s)
    }

    /// Every way the session's buffers differ from what the script expects (at most a few
    /// scalars named per line), empty when they all match.
    pub fn check(&self, session: &Session) -> anyhow::Result<Vec<String>> {
        let mut problems = Vec::new();
        for e in &self.expects {
            let Some(found) = session.contents(&e.buffer) else {
                problems.push(format!("`{}`: no buffer or variable `{}` (there are: {})", e.text, e.buffer, session.names().join(", ")));
                continue;
            };
            let (ty, data) = found?;
            let size = ty.base.size();
            let n = data.len() / size;
            let to = e.to.unwrap_or(n);
            if to > n || e.from >= to {
                problems.push(format!("`{}`: the range {}..{to} is not inside `{}`'s {n} scalars", e.text, e.from, e.buffer));
                continue;
            }
            let mut bad = Vec::new();
            let mut count = 0;
            for k in e.from..to {
                let got = ty.base.decode(&data[k * size..(k + 1) * size]);
                let want = e.value.eval(k as f64, n as f64);
                let close = got == want || (got - want).abs() <= self.tolerance * want.abs().max(1.0) || (got.is_nan() && want.is_nan());
                if !close {
                    count += 1;
                    if bad.len() < 4 {
                        bad.push(format!("{}[{k}] = {got}, expected {want}", e.buffer));
                    }
                }
            }
            if count > 0 {
                problems.push(format!("`{}`: {count} scalar(s) differ: {}", e.text, bad.join("; ")));
            }
        }
        Ok(problems)
    }
}

/// `NAME[i] = EXPR`, `NAME[3] = EXPR`, `NAME[0..64] = EXPR`.
fn parse_expect(s: &str) -> Result<Expect, String> {
    let (lhs, rhs) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME[i] = EXPR"))?;
    let (buffer, index) = lhs.trim().split_once('[').ok_or_else(|| format!("`{lhs}` is not NAME[i], NAME[K] or NAME[A..B]"))?;
    let index = index.trim_end_matches(']').trim();
    let num = |x: &str| x.trim().parse::<usize>().map_err(|_| format!("`{x}` is not an index"));
    let (from, to) = match index {
        "i" => (0, None),
        r if r.contains("..") => {
            let (a, b) = r.split_once("..").unwrap_or_default();
            (num(a)?, Some(num(b)?))
        }
        k => (num(k)?, Some(num(k)? + 1)),
    };
    Ok(Expect { buffer: buffer.trim().to_string(), from, to, value: Expr::parse(rhs.trim())?, text: s.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse() {
        let src = "// @feature: adds\n// @symbol: scale=f32=2\n// @launch: add grid=2 block=64 f32[100]:iota f32[100]:ones f32[100] i32=100\n\
                   // @expect: c[i] = i + 1\n// @expect: c[3] = 4\n// @expect: c[0..8] = i + 1\n// @tolerance: 1e-6\n";
        let s = Script::parse(src, Path::new(".")).unwrap();
        assert_eq!((s.feature.as_str(), s.launches.len(), s.expects.len(), s.tolerance), ("adds", 1, 3, 1e-6));
        assert_eq!(s.symbols[0].name, "scale");
        assert_eq!((s.expects[1].from, s.expects[1].to), (3, Some(4)));
        assert_eq!((s.expects[2].from, s.expects[2].to), (0, Some(8)));
        assert!(Script::parse("// @lunch: x", Path::new(".")).unwrap_err().contains("line 1"));
        assert_eq!(Script::parse("// @ranks: 2", Path::new(".")).unwrap().ranks, 2);
        assert!(Script::parse("// @ranks: 0", Path::new(".")).is_err());
        assert!(Script::parse("// @expect: c = 1", Path::new(".")).is_err());
    }
}
