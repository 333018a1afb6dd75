//! Seeded inputs: every grader draws from one seed, printed on failure, so a failing case can
//! be replayed with `GPUBOOK_SEED=<seed>`. The generator is gpubook-labs' [`Rng`], which the
//! labs' inputs are drawn from too.

pub use gpubook_labs::rng::Rng;

/// The seed for this run: `GPUBOOK_SEED` when set, else fresh.
pub fn seed() -> u64 {
    if let Some(s) = std::env::var("GPUBOOK_SEED").ok().and_then(|s| s.trim().parse().ok()) {
        return s;
    }
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    (t as u64 ^ (std::process::id() as u64) << 32) % 1_000_000_007
}

/// The sizes every element-wise grader tries, with their names: 1, block - 1, block, block + 1,
/// and a large size that is not a power of two.
pub fn edge_sizes(block: usize, large: usize) -> Vec<(usize, String)> {
    let mut v = vec![
        (1, "a single element".to_string()),
        (block - 1, "block - 1".to_string()),
        (block, "block".to_string()),
        (block + 1, "block + 1".to_string()),
        (large, "large, not a power of two".to_string()),
    ];
    v.dedup_by_key(|(n, _)| *n);
    v
}

/// [`edge_sizes`], then one more drawn from the seed between `large` and 4 × `large`: no size a
/// learner could hard-code a grid or a buffer count for covers it.
pub fn sizes(rng: &mut Rng, block: usize, large: usize) -> Vec<(usize, String)> {
    let mut v = edge_sizes(block, large);
    let n = rng.usize(large + 1, 4 * large);
    v.push((n, format!("{n}, drawn from the seed")));
    v
}
