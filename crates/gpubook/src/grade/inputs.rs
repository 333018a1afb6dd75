//! Seeded inputs: every grader draws from one seed, printed on failure, so a failing case can
//! be replayed with `GPUBOOK_SEED=<seed>`.

/// splitmix64: tiny, fast, and good enough to make test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    pub fn i32(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next_u64() % (hi - lo) as u64) as i32
    }
    pub fn usize(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo) as u64) as usize
    }
    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32(lo, hi)).collect()
    }
    pub fn vec_i32(&mut self, n: usize, lo: i32, hi: i32) -> Vec<i32> {
        (0..n).map(|_| self.i32(lo, hi)).collect()
    }
}

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
