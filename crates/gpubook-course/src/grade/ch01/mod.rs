//! Chapter 1: heterogeneous computing. The first kernel (every thread finds its own slot) and the
//! first launch (a configuration of blocks and threads, given and obeyed).

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::ch02::{no_leaks, story};
use super::concepts::computed_on_the_device;
use super::words::count;
use super::{Failure, check_values, grade, sizes};
use gpubook::gpu::{CopyDir, Gpu, GpuError, OpKind, Result, Trace};

/// Every new device allocation is filled with 0xFF bytes under a grader: as an `i32`, -1.
const POISON_I32: i32 = -1;

const GLOBAL_INDEX: &str = "slot i belongs to the thread whose global index is i = blockIdx.x * blockDim.x + threadIdx.x \
     (all the threads of the blocks before mine, then my place in mine); threads with i >= n must do nothing";

/// `who_am_i(gpu, n, block) -> (block_of, thread_of)`: slot i records the block and the thread,
/// within that block, of the thread whose global index is i.
pub fn who_am_i(f: impl Fn(&Gpu, usize, u32) -> Result<(Vec<i32>, Vec<i32>)>) -> GradeReport {
    grade("ch01-who-am-i", |ctx| {
        let mut cases: Vec<(usize, u32, String)> = sizes(&mut ctx.rng, 256, 100_003).into_iter().map(|(n, name)| (n, 256, name)).collect();
        cases.push((1000, 32, "many small blocks".into()));
        cases.push((37, 1024, "one large block, mostly idle".into()));
        cases.push((ctx.rng.usize(2, 20_000), ctx.rng.usize(1, 1025) as u32, "random size and block".into()));
        for (n, block, name) in cases {
            let input = format!("n = {n} ({name}), {} per block", count(block as usize, "thread"));
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let (blocks, threads) =
                ctx.call(|| Ok(f(&ctx.gpu, n, block)))?.map_err(|e| kernel_failure(e, GLOBAL_INDEX).or_input(&input))?;

            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let started: u64 = launches(&trace).iter().map(|(g, b)| threads_of(g) * threads_of(b)).sum();
            if started < n as u64 {
                return Err(Failure::new(format!("the launch started {} for {n} slots", count(started as usize, "thread")))
                    .input(input)
                    .concept("a grid of ceil(n / block) blocks gives every slot a thread: (n as u32).div_ceil(block)"));
            }

            let b = block as usize;
            let want_block: Vec<i32> = (0..n).map(|i| (i / b) as i32).collect();
            let want_thread: Vec<i32> = (0..n).map(|i| (i % b) as i32).collect();
            for (name, got, want) in [("block", &blocks, &want_block), ("thread", &threads, &want_thread)] {
                check_values(name, got, want, Some(POISON_I32))
                    .map_err(|e| first_block_only(e, got, n, b).or_input(&input).concept(GLOBAL_INDEX))?;
                computed_on_the_device(&trace, name, got, &[]).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

/// A kernel that indexes with `threadIdx.x` alone writes only the first block's slots (every
/// block the same ones): say so, since that is the classic first mistake.
fn first_block_only(e: Failure, got: &[i32], n: usize, block: usize) -> Failure {
    let written = |i: &i32| *i != POISON_I32;
    if got.len() == n && n > block && got[..block].iter().all(written) && !got[block..].iter().any(written) {
        let mut only = Failure::new(format!(
            "only slots 0..{block} were written, by every block in turn: the blocks after the first need slots of their own"
        ));
        only.details = e.details;
        only
    } else {
        e
    }
}

/// `first_launch(gpu, grid, block) -> out`: `hello` launched on exactly `grid` blocks of `block`
/// threads; `out[i]` = 10000 * block index + thread index, for i the global index.
pub fn first_launch(f: impl Fn(&Gpu, u32, u32) -> Result<Vec<i32>>) -> GradeReport {
    grade("ch01-first-launch", |ctx| {
        let mut cases: Vec<(u32, u32)> = vec![(1, 1), (1, 255), (2, 256), (3, 1), (7, 33), (1, 1024), (1000, 1), (391, 256)];
        cases.push((ctx.rng.usize(1, 300) as u32, ctx.rng.usize(1, 1025) as u32));
        for (grid, block) in cases {
            let total = grid as usize * block as usize;
            let input = format!("grid_dim = ({grid}, 1, 1), block_dim = ({block}, 1, 1): {} in all", count(total, "thread"));
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let out = ctx.call(|| f(&ctx.gpu, grid, block)).map_err(|e| e.or_input(&input))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;

            check_configuration(&launches(&trace), grid, block).map_err(|e| e.input(&input))?;
            if out.len() != total {
                return Err(Failure::new(format!("`out` came back with {} for {}", count(out.len(), "element"), count(total, "thread")))
                    .input(input)
                    .concept("one i32 per thread of the whole grid: grid × block elements"));
            }
            let b = block as usize;
            let want: Vec<i32> = (0..total).map(|i| ((i / b) * 10000 + i % b) as i32).collect();
            check_values("out", &out, &want, Some(POISON_I32)).map_err(|e| {
                e.input(&input).concept("out[i] is written by the thread with global index i: thread t of block b writes 10000 * b + t")
            })?;
            computed_on_the_device(&trace, "out", &out, &[]).map_err(|e| e.input(&input))?;
            let back = trace.bytes_copied(CopyDir::DeviceToHost);
            if back != 4 * total {
                return Err(Failure::new(format!(
                    "{back} bytes were copied device→host for {} ({} bytes)",
                    count(total, "i32 result"),
                    4 * total
                ))
                .input(input)
                .detail(story(&trace))
                .concept("copy the result home once, when the kernel is done: stream.clone_dtoh(&out)"));
            }
            no_leaks(&trace).map_err(|e| e.input(&input))?;
        }
        Ok(())
    })
}

/// The launch must be the one asked for: `grid` blocks of `block` threads, one launch.
fn check_configuration(launches: &[([u32; 3], [u32; 3])], grid: u32, block: u32) -> Result<(), Failure> {
    const CONFIG: &str = "LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads per block, 1, 1), .. }: \
         grid_dim is the number of blocks, block_dim the number of threads in each (CUDA C's kernel<<<grid, block>>>)";
    let (want_g, want_b) = ([grid, 1, 1], [block, 1, 1]);
    match launches {
        [] => Err(Failure::new("no kernel was launched")
            .concept("a launch: stream.launch_builder(&f), .arg(..) for each kernel parameter, then unsafe { launch.launch(cfg) }")),
        [(g, b)] if *g == want_g && *b == want_b => Ok(()),
        [(g, b)] if *g == want_b && *b == want_g => Err(Failure::new(format!(
            "grid and block are swapped: the launch ran {} of {} each; the exercise asks for {} of {} each",
            count(g[0] as usize, "block"),
            count(b[0] as usize, "thread"),
            count(grid as usize, "block"),
            count(block as usize, "thread"),
        ))
        .concept(CONFIG)),
        [(g, b)] => Err(Failure::new(format!(
            "the launch ran grid {g:?} × block {b:?}; the exercise asks for grid [{grid}, 1, 1] × block [{block}, 1, 1]"
        ))
        .concept(CONFIG)),
        many => Err(Failure::new(format!("{} kernel launches; one launch starts the whole grid", many.len())).concept(CONFIG)),
    }
}

/// (grid, block) of every launch in the trace.
fn launches(trace: &Trace) -> Vec<([u32; 3], [u32; 3])> {
    trace
        .launches()
        .filter_map(|o| match &o.kind {
            OpKind::Launch { grid, block, .. } => Some((*grid, *block)),
            _ => None,
        })
        .collect()
}

fn threads_of(dim: &[u32; 3]) -> u64 {
    dim.iter().map(|&d| d as u64).product()
}

/// An error from a run whose host code is given: a kernel fault (out of bounds, say) points to
/// the exercise's concept rather than the generic one, and a race between blocks, which here can
/// only mean two threads computed the same slot, is said in those words.
fn kernel_failure(e: GpuError, concept: &str) -> Failure {
    let in_kernel = matches!(e, GpuError::Kernel(_));
    let between_blocks = in_kernel && e.to_string().contains("between blocks");
    let f = Failure::from(e);
    if between_blocks {
        let mut same = Failure::new("threads of two different blocks wrote the same slot: their global indices were equal");
        same.details = f.details;
        same.concept(concept)
    } else if in_kernel {
        f.concept(concept)
    } else {
        f
    }
}
