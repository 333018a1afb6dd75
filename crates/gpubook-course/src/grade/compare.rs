//! Comparing what came back with what was expected, and saying it well: the first mismatches
//! with their indices, and "never written" where an output still holds the poison pattern that
//! graders fill every new allocation with.

use super::report::Failure;

/// How close a float must be: |got - want| <= abs + rel * |want|.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Tolerance {
    /// Exact: integer-valued data, copies.
    pub const EXACT: Tolerance = Tolerance { abs: 0.0, rel: 0.0 };
    /// One float32 rounding per operation, a few operations deep.
    pub const F32: Tolerance = Tolerance { abs: 1e-5, rel: 1e-5 };
    /// Sums and products of many terms, compared with a float64 reference.
    pub fn sum_of(terms: usize) -> Tolerance {
        Tolerance { abs: 1e-5, rel: 4e-7 * (terms as f64).sqrt().max(4.0) }
    }
}

/// f32 outputs against a reference (any precision). `name` is the output as the learner knows it.
pub fn check_f32(name: &str, got: &[f32], want: &[f64], tol: Tolerance) -> Result<(), Failure> {
    if got.len() != want.len() {
        return Err(Failure::new(format!(
            "`{name}` came back with {}, expected {}",
            super::words::count(got.len(), "element"),
            want.len()
        ))
        .concept("the output has one element per input element"));
    }
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| {
            let (g, w) = (got[i] as f64, want[i]);
            !(g - w).abs().le(&(tol.abs + tol.rel * w.abs()))
        })
        .collect();
    report(name, &bad, |i| poisoned_f32(got[i]), |i| format!("{}", want[i]), |i| format!("{}", got[i]), got.len())
}

/// Values compared exactly (integers, bytes, anything `PartialEq`).
pub fn check_values<T: PartialEq + std::fmt::Debug + Copy>(name: &str, got: &[T], want: &[T], poison: Option<T>) -> Result<(), Failure> {
    if got.len() != want.len() {
        return Err(Failure::new(format!(
            "`{name}` came back with {}, expected {}",
            super::words::count(got.len(), "element"),
            want.len()
        )));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    let is_poison = |i: usize| poison.is_some_and(|p| got[i] == p && want[i] != p);
    report(name, &bad, is_poison, |i| format!("{:?}", want[i]), |i| format!("{:?}", got[i]), got.len())
}

/// The poison pattern (all bits set) as an f32 is a NaN.
/// The never-written fill (0xFF bytes) as an f32.
pub(crate) fn poisoned_f32(x: f32) -> bool {
    x.to_bits() == u32::MAX
}

fn report(
    name: &str,
    bad: &[usize],
    poisoned: impl Fn(usize) -> bool,
    want: impl Fn(usize) -> String,
    got: impl Fn(usize) -> String,
    len: usize,
) -> Result<(), Failure> {
    let Some(&first) = bad.first() else { return Ok(()) };
    let unwritten = bad.iter().filter(|&&i| poisoned(i)).count();
    let what = if unwritten == bad.len() {
        format!(
            "{name}[{first}] was never written{}: every element needs a thread that stores it",
            if bad.len() > 1 { format!(" (nor were {} more elements)", bad.len() - 1) } else { String::new() }
        )
    } else {
        format!(
            "{} of {} of `{name}` {} wrong, the first at index {first}",
            bad.len(),
            super::words::count(len, "element"),
            if bad.len() == 1 { "is" } else { "are" }
        )
    };
    let f = Failure::new(what);
    let mut lines = Vec::new();
    for &i in bad.iter().take(5) {
        let note = if poisoned(i) { " (never written)" } else { "" };
        lines.push(format!("{name}[{i}]: expected {}, got {}{note}", want(i), got(i)));
    }
    if bad.len() > 5 {
        lines.push(format!("... and {} more; the last wrong index is {}", bad.len() - 5, bad[bad.len() - 1]));
    }
    Err(f.detail(lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_written_outputs_are_named() {
        let poison = f32::from_bits(u32::MAX);
        let e = check_f32("c", &[1.0, poison, poison], &[1.0, 2.0, 3.0], Tolerance::F32).unwrap_err();
        assert!(e.what.starts_with("c[1] was never written (nor were 1 more"), "{}", e.what);
    }

    #[test]
    fn wrong_values_show_first_mismatches() {
        let e = check_values("out", &[1, 5, 3, 9], &[1, 2, 3, 4], Some(-1)).unwrap_err();
        assert!(e.what.contains("2 of 4 elements"), "{}", e.what);
        assert!(e.details[0].contains("out[1]: expected 2, got 5"), "{:?}", e.details);
        assert!(check_f32("c", &[1.0, 2.0], &[1.0, 2.000001], Tolerance::F32).is_ok());
    }
}
