//! Chapter 3: SPMD and indexing.

use super::{Failure, Tolerance, check_f32, edge_sizes, grade};
use crate::gpu::{CopyDir, Gpu, OpKind, Result};

/// `vector_add(gpu, a, b) -> c`: c[i] = a[i] + b[i].
pub fn vector_add(f: impl Fn(&Gpu, &[f32], &[f32]) -> Result<Vec<f32>>) {
    grade("ch03-vector-add", |ctx| {
        for (n, name) in edge_sizes(256, 100_003) {
            let a = ctx.rng.vec_f32(n, -100.0, 100.0);
            let b = ctx.rng.vec_f32(n, -100.0, 100.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let c = ctx.call(|| f(&ctx.gpu, &a, &b)).map_err(|e| e.or_input(format!("n = {n} ({name})")))?;
            let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| *x as f64 + *y as f64).collect();
            check_f32("c", &c, &want, Tolerance::F32).map_err(|e| {
                e.or_input(format!("n = {n} ({name})")).concept(
                    "one thread per element: i = blockIdx.x * blockDim.x + threadIdx.x, a grid of ceil(n / block) \
                     blocks, and `if (i < n)` for the threads past the end",
                )
            })?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let launches = trace.launches().count();
            if launches != 1 {
                return Err(Failure::new(format!("{launches} kernel launches for one vector add"))
                    .concept("one launch covers all n elements when the grid is big enough"));
            }
            if trace.bytes_copied(CopyDir::HostToDevice) != 2 * n * 4 || trace.bytes_copied(CopyDir::DeviceToHost) != n * 4 {
                return Err(Failure::new("copies move more or fewer bytes than a, b in and c out")
                    .concept("copy each input to the device once and the result back once"));
            }
            let leaks = trace.leaks();
            if !leaks.is_empty() {
                return Err(Failure::new(format!("{} device buffers were never freed", leaks.len())).concept("drop device buffers (cudaFree) when done"));
            }
            let _ = OpKind::SynchronizeDevice;
        }
        Ok(())
    });
}
