//! Chapter 5: memory performance. The kernels' values are checked as usual; then what the
//! emulator counted holds the technique: the gather's loads and stores must use the sectors they
//! move (coalescing), the row sums must read their shared tile without bank conflicts (and `m`
//! coalesced). The occupancy calculator is checked against a table worked out by hand, against
//! cases drawn from the seed, and against the device itself: the driver's own answer on a GPU
//! (`cuOccupancyMaxActiveBlocksPerMultiprocessor`), the emulated SM's on the emulator.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::{computed_on_the_device, counted_launches};
use super::explain::Explain;
use super::words::count;
use super::{Ctx, Failure, Tolerance, check_f32, grade};
use gpubook::gpu::digest_of;
use gpubook::gpu::{BlockResources, BufferAccesses, GlobalRequests, Gpu, Result, SmLimits, Source, Trace, block_limits};

const COALESCING: &str = "coalescing: a warp's 32 accesses at one instruction are served in 32-byte sectors, so 32 \
     neighbouring floats cost 4 sectors and 32 floats a row apart cost 32. Let the lanes of a warp walk along a row \
     together (lane l takes elements l, l + 32, ...), not each lane along a row of its own";

/// `gather_rows(gpu, x, hidden, index) -> out`, with `out[r] = x[index[r]]` (rows of `hidden`).
pub fn gather_rows(f: impl Fn(&Gpu, &[f32], usize, &[i32]) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        out_of_bounds: Some(
            "the host launches whole blocks of 8 warps, so the last block may have warps past the last row: they must \
             return before reading index[r]; and a lane stops at the row's end (j < hidden)",
        ),
        uninitialized: Some("every element of every output row is written: lane l of row r's warp writes elements l, l + 32, ... < hidden"),
        ..Default::default()
    };
    grade("ch05-coalesce", |ctx| {
        // (rows of x, rows gathered, floats a row)
        let shapes: [(usize, usize, usize, &str); 7] = [
            (1, 1, 1, "one row of one float"),
            (4, 3, 31, "rows of 31 floats"),
            (5, 8, 32, "rows of 32 floats, one block of warps"),
            (9, 17, 33, "rows of 33 floats"),
            (40, 100, 100, "100 rows of 100 floats"),
            (64, 257, 256, "257 rows of 256 floats"),
            (30, 40, 1000, "long rows"),
        ];
        let drawn = (ctx.rng.usize(20, 200), ctx.rng.usize(100, 600), ctx.rng.usize(64, 700), "drawn from the seed");
        for (rows_in, rows, hidden, name) in shapes.into_iter().chain([drawn]) {
            let input = format!("{} gathered from {} of {hidden} floats ({name})", count(rows, "row"), rows_in);
            let x = ctx.rng.vec_f32(rows_in * hidden, -100.0, 100.0);
            // Rows gathered in any order, some twice, as tokens are.
            let index: Vec<i32> = (0..rows).map(|_| ctx.rng.usize(0, rows_in) as i32).collect();
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &x, hidden, &index))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want: Vec<f64> =
                index.iter().flat_map(|&r| x[r as usize * hidden..(r as usize + 1) * hidden].iter().map(|&v| v as f64)).collect();
            check_f32("out", &got, &want, Tolerance::EXACT).map_err(|e| {
                e.input(&input).concept("row r of `out` is row index[r] of `in`: out[r * hidden + j] = in[index[r] * hidden + j]")
            })?;
            computed_on_the_device(&trace, "out", &got, &[("x", digest_of(&x)), ("index", digest_of(&index))])
                .map_err(|e| e.input(&input))?;
            if hidden >= 64 && rows >= 8 {
                coalesced(ctx, &trace, "that the gather is coalesced", COALESCING).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

const BANKS: &str = "shared-memory banks: word w of shared memory is in bank w % 32, and a warp's request takes one \
     pass per distinct word in its busiest bank. Lane tx reading tile[tx][j] of a float tile[32][32] hits words 32 apart, \
     all in one bank: 32 passes. One spare column, tile[32][33], puts them 33 apart, in 32 banks";

/// `row_sums(gpu, m, rows, cols) -> sums`, through a shared tile.
pub fn row_sums(f: impl Fn(&Gpu, &[f32], usize, usize) -> Result<Vec<f32>>) -> GradeReport {
    let explain = Explain {
        race: Some(
            "two __syncthreads per tile: after staging it (warp 0 reads what the other warps stored) and after adding it \
             up (no warp may overwrite the tile while warp 0 still reads it)",
        ),
        out_of_bounds: Some(
            "the last tile of a row may hang past column cols - 1, and the last block past row rows - 1: stage 0.0f \
             there instead of reading m, and write sums only for rows < rows",
        ),
        divergence: Some(
            "every thread of the block must reach both __syncthreads, whatever its threadIdx.y: guard the work, not the barrier",
        ),
        uninitialized: Some("every element of the tile is stored (0.0f outside the matrix) before warp 0 reads it"),
        ..Default::default()
    };
    grade("ch05-padded-tile", |ctx| {
        let shapes: [(usize, usize, &str); 8] = [
            (1, 1, "a single element"),
            (1, 100, "a single row"),
            (100, 1, "a single column"),
            (32, 32, "one tile"),
            (33, 31, "33 × 31"),
            (31, 65, "31 × 65"),
            (64, 96, "whole tiles"),
            (200, 150, "200 × 150"),
        ];
        let drawn = (ctx.rng.usize(100, 500), ctx.rng.usize(100, 500), "drawn from the seed");
        for (rows, cols, name) in shapes.into_iter().chain([drawn]) {
            let input = format!("{} × {} ({name})", count(rows, "row"), count(cols, "column"));
            let m = ctx.rng.vec_f32(rows * cols, 0.0, 1.0);
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let got = ctx.call_explained(&input, &explain, || f(&ctx.gpu, &m, rows, cols))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            let want: Vec<f64> = m.chunks(cols).map(|r| r.iter().map(|&v| v as f64).sum()).collect();
            check_f32("sums", &got, &want, Tolerance::sum_of(cols))
                .map_err(|e| e.input(&input).concept("sums[r] is the sum of row r: m[r * cols + 0] + ... + m[r * cols + cols - 1]"))?;
            computed_on_the_device(&trace, "sums", &got, &[("m", digest_of(&m))]).map_err(|e| e.input(&input))?;
            if rows >= 32 && cols >= 32 {
                coalesced(ctx, &trace, "that m is read coalesced", TILE_LOADS).map_err(|e| e.input(&input))?;
                no_bank_conflicts(ctx, &trace).map_err(|e| e.input(&input))?;
            }
        }
        Ok(())
    })
}

const TILE_LOADS: &str = "coalescing through a shared tile: the warps stage the tile reading along the rows of m (lane tx \
     reads column c0 + tx), where 32 lanes read 32 neighbouring floats; the reading down a row of the tile happens in \
     shared memory, where it costs no sectors";

/// The buffer a kernel read most from, and the one it wrote most to, must use at least 60% of
/// the bytes their sectors move: a coalesced warp uses 80-100% (rows that do not start on a
/// sector cost one more), a warp of lanes a row apart 12.5% (4-byte loads) or 50% (float4).
fn coalesced(ctx: &mut Ctx, trace: &Trace, check: &str, concept: &str) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, check) else { return Ok(()) };
    let buffers: Vec<&BufferAccesses> = counts.iter().flat_map(|c| c.buffers.iter()).collect();
    let busiest = |pick: &dyn Fn(&BufferAccesses) -> GlobalRequests| {
        buffers.iter().map(|b| (b.label.clone(), pick(b))).max_by_key(|(_, g)| g.bytes).filter(|(_, g)| g.requests > 0)
    };
    let reads = busiest(&|b| b.loads).map(|(l, g)| (format!("reads of `{l}`"), g));
    let writes = busiest(&|b| b.stores).map(|(l, g)| (format!("writes to `{l}`"), g));
    for (what, g) in reads.into_iter().chain(writes) {
        if g.efficiency() < 0.6 {
            return Err(Failure::new(format!(
                "the {what} touched {:.1} sectors of 32 bytes per warp request and used {:.0}% of the bytes those sectors \
                 moved; a warp reading 32 neighbouring floats touches 4 sectors and uses all of them",
                g.sectors_per_request(),
                100.0 * g.efficiency()
            ))
            .concept(concept));
        }
    }
    Ok(())
}

/// Shared-memory requests must take one pass through the banks each (a tenth of a pass extra on
/// average is allowed).
fn no_bank_conflicts(ctx: &mut Ctx, trace: &Trace) -> Result<(), Failure> {
    let Some(counts) = counted_launches(ctx, trace, "that the tile is read without bank conflicts") else { return Ok(()) };
    let (mut requests, mut wavefronts, mut conflicts) = (0u64, 0u64, 0u64);
    for c in &counts {
        for s in [c.shared.loads, c.shared.stores] {
            requests += s.requests;
            wavefronts += s.wavefronts;
            conflicts += s.bank_conflicts();
        }
    }
    if requests > 0 && conflicts * 10 > requests {
        return Err(Failure::new(format!(
            "the shared-memory requests took {:.1} passes through the banks on average ({} extra passes for {}): \
             bank conflicts",
            wavefronts as f64 / requests as f64,
            conflicts,
            count(requests as usize, "request")
        ))
        .concept(BANKS));
    }
    Ok(())
}

// ---- the occupancy calculator ------------------------------------------------------------------

/// An SM of compute capability 8.6 (the RTX 30 and A10/A40 class): fewer threads and blocks,
/// 100 KiB of shared memory.
const SM_86: SmLimits =
    SmLimits { max_threads: 1536, max_blocks: 16, shared_memory: 100 << 10, max_shared_memory_per_block: 99 << 10, ..SmLimits::A100 };

/// (SM, name, threads, registers per thread, shared bytes, blocks per SM, why), each worked out
/// by hand from the rules in `blocks_per_sm`'s documentation.
const TABLE: &[(SmLimits, &str, u32, u32, u32, u32, &str)] = &[
    (SmLimits::H200, "H200", 256, 32, 0, 8, "64 warp slots / 8 warps; registers allow 8 too"),
    (SmLimits::H200, "H200", 128, 0, 0, 16, "64 warp slots / 4 warps"),
    (SmLimits::H200, "H200", 32, 16, 0, 32, "the 32 block slots"),
    (SmLimits::H200, "H200", 256, 64, 0, 4, "registers: 2048 a warp, 8 warps a partition, 32 an SM, / 8 warps"),
    (SmLimits::H200, "H200", 96, 40, 0, 16, "registers: 1280 a warp, 12 warps a partition (not 51 / 3 = 17 blocks)"),
    (SmLimits::H200, "H200", 160, 40, 0, 9, "registers: 48 warps an SM / 5 warps"),
    (SmLimits::H200, "H200", 128, 32, 48 << 10, 4, "shared: 233,472 / (49,152 + 1,024)"),
    (SmLimits::H200, "H200", 1024, 64, 0, 1, "registers: exactly 65,536 for the block"),
    (SmLimits::H200, "H200", 1024, 65, 0, 0, "registers: 65 round up to 72 a thread, 73,728 for the block: it cannot launch"),
    (SmLimits::H200, "H200", 32, 0, 7 << 10, 28, "shared: 233,472 / (7,168 + 1,024 reserved)"),
    (SmLimits::H200, "H200", 64, 0, 227 << 10, 1, "shared: the most a block may have"),
    (SmLimits::H200, "H200", 64, 0, (227 << 10) + 1, 0, "shared: one byte more than a block may have"),
    (SmLimits::H200, "H200", 1000, 24, 100, 2, "warps: 1000 threads take 32 warp slots"),
    (SmLimits::H200, "H200", 256, 255, 0, 1, "registers: 255 round up to 256 a thread, 2 warps a partition"),
    (SmLimits::H200, "H200", 256, 256, 0, 0, "registers: more than 255 a thread"),
    (SmLimits::H200, "H200", 192, 48, 20000, 6, "registers: 1536 a warp, 10 warps a partition, 40 an SM / 6 warps"),
    (SmLimits::H200, "H200", 256, 33, 0, 6, "registers: 33 round up to 40 a thread, 1280 a warp, 12 warps a partition, 48 an SM / 8 warps"),
    (SmLimits::H200, "H200", 32, 0, 8193, 24, "shared: 8,193 bytes round up to 8,320, + 1,024 reserved: 233,472 / 9,344"),
    (SmLimits::A100, "A100", 32, 0, 81 << 10, 2, "shared: 167,936 / (82,944 + 1,024)"),
    (SmLimits::A100, "A100", 32, 0, (82 << 10) - 1, 1, "shared: 83,967 bytes round up to 83,968, + 1,024 reserved"),
    (SmLimits::A100, "A100", 512, 32, 0, 4, "64 warp slots / 16 warps"),
    (SmLimits::A100, "A100", 64, 0, 0, 32, "the 32 block slots"),
    (SmLimits::A100, "A100", 128, 0, 40000, 4, "shared: 40,000 round up to 40,064, + 1,024 reserved"),
    (SM_86, "compute capability 8.6", 256, 32, 0, 6, "48 warp slots / 8 warps"),
    (SM_86, "compute capability 8.6", 64, 0, 0, 16, "the 16 block slots"),
    (SM_86, "compute capability 8.6", 128, 0, 32 << 10, 3, "shared: 102,400 / (32,768 + 1,024)"),
];

const OCCUPANCY: &str = "occupancy: an SM holds as many blocks as its warp slots, its block slots, its registers and \
     its shared memory all allow, each counted in the units the hardware allocates (registers per warp in multiples of \
     256, in four partitions of whole warps; shared memory in multiples of 128 bytes, plus 1 KiB reserved per block)";

/// `blocks_per_sm(sm, block) -> blocks`.
pub fn blocks_per_sm(f: impl Fn(&SmLimits, &BlockResources) -> u32) -> GradeReport {
    grade("ch05-occupancy", |ctx| {
        for &(sm, device, threads, registers_per_thread, shared_bytes, want, why) in TABLE {
            let block = BlockResources { threads, registers_per_thread, shared_bytes };
            check_occupancy(ctx, &f, &sm, device, &block, want, why)?;
        }
        // Cases no table could list: limits and blocks drawn from the seed.
        for _ in 0..300 {
            let sm = random_sm(ctx);
            let block = random_block(ctx, &sm);
            let limits = block_limits(&sm, &block);
            let why = format!(
                "warp slots allow {}, block slots {}, registers {}, shared memory {}",
                limit(limits.warps),
                limit(limits.blocks),
                limit(limits.registers),
                limit(limits.shared)
            );
            check_occupancy(ctx, &f, &sm, "an SM drawn from the seed", &block, limits.resident(), &why)?;
        }
        against_the_device(ctx, &f)
    })
}

fn limit(n: u32) -> String {
    if n == u32::MAX { "any number".into() } else { n.to_string() }
}

fn check_occupancy(
    ctx: &Ctx,
    f: &impl Fn(&SmLimits, &BlockResources) -> u32,
    sm: &SmLimits,
    device: &str,
    block: &BlockResources,
    want: u32,
    why: &str,
) -> Result<(), Failure> {
    let input = format!(
        "{} of {}, {} a thread, {} of shared memory, on {device}",
        count(1, "block"),
        count(block.threads as usize, "thread"),
        count(block.registers_per_thread as usize, "register"),
        count(block.shared_bytes as usize, "byte")
    );
    let got = ctx.call(|| Ok(f(sm, block))).map_err(|e| e.or_input(&input))?;
    if got != want {
        return Err(Failure::new(format!("you said {got} blocks per SM; the SM holds {want}"))
            .detail(format!("why: {why}"))
            .detail(format!("the SM: {sm:?}"))
            .input(&input)
            .concept(OCCUPANCY));
    }
    Ok(())
}

fn random_sm(ctx: &mut Ctx) -> SmLimits {
    let base = [SmLimits::H200, SmLimits::A100, SM_86][ctx.rng.usize(0, 3)];
    SmLimits {
        max_blocks: [16, 24, 32][ctx.rng.usize(0, 3)],
        max_threads: [1024, 1536, 2048][ctx.rng.usize(0, 3)],
        registers: [32768, 65536][ctx.rng.usize(0, 2)],
        shared_memory: ctx.rng.usize(32, 229) as u32 * 1024,
        ..base
    }
}

fn random_block(ctx: &mut Ctx, sm: &SmLimits) -> BlockResources {
    let threads = if ctx.rng.usize(0, 2) == 0 { 32 * ctx.rng.usize(1, 33) as u32 } else { ctx.rng.usize(1, 1025) as u32 };
    let registers_per_thread = match ctx.rng.usize(0, 5) {
        0 => 0,
        4 => ctx.rng.usize(128, 260) as u32,
        _ => ctx.rng.usize(8, 128) as u32,
    };
    let shared_bytes = match ctx.rng.usize(0, 3) {
        0 => 0,
        1 => ctx.rng.usize(1, 16 << 10) as u32,
        _ => ctx.rng.usize(1, sm.max_shared_memory_per_block as usize + 4096) as u32,
    };
    BlockResources { threads, registers_per_thread, shared_bytes }
}

/// Kernels of the library, with what the compiler gave them (registers, static shared memory on
/// a GPU), at several block sizes and amounts of dynamic shared memory: the answer must be the
/// device's own (`Function::max_active_blocks_per_sm`).
fn against_the_device(ctx: &mut Ctx, f: &impl Fn(&SmLimits, &BlockResources) -> u32) -> Result<(), Failure> {
    let kernels = [
        ("perf/memory.cu", "gather_rows_thread"),
        ("perf/memory.cu", "row_sums_padded"),
        ("perf/scan.cu", "scan_decoupled"),
        ("perf/roofline.cu", "fma_peak"),
        ("perf/roofline.cu", "matmul_tiled"),
        ("perf/occupancy.cu", "registers_hungry"),
    ];
    let sm = ctx.gpu.info().sm;
    let device = format!("this device ({})", ctx.gpu.info().name);
    for (file, name) in kernels {
        // The library's own kernels: failing to load or query them is gpubook's bug, not the answer's.
        let function = ctx
            .gpu
            .load_module(Source::library(file))
            .and_then(|m| m.load_function(name))
            .unwrap_or_else(|e| panic!("the grader could not load {name} from {file}: {e}"));
        let res = function.resources().unwrap_or_else(|e| panic!("the resources of {name}: {e}"));
        let registers_per_thread = res.registers_per_thread.unwrap_or(0);
        let static_shared = res.static_shared_bytes.unwrap_or(0);
        for threads in [32, 64, 96, 128, 160, 192, 256, 384, 512, 640, 768, 1024] {
            for dynamic in [0u32, 1000, 12 << 10, 40 << 10] {
                if static_shared + dynamic > 48 << 10 {
                    continue; // past 48 KiB a kernel must opt in, which gpubook's API does not offer
                }
                let want = function
                    .max_active_blocks_per_sm(threads, dynamic)
                    .unwrap_or_else(|e| panic!("max_active_blocks_per_sm of {name}: {e}"));
                let block = BlockResources { threads, registers_per_thread, shared_bytes: static_shared + dynamic };
                let why = format!(
                    "the device's own answer (Function::max_active_blocks_per_sm) for `{name}` ({file}: {} a thread, \
                     {} of static shared memory) with {} of dynamic shared memory",
                    count(registers_per_thread as usize, "register"),
                    count(static_shared as usize, "byte"),
                    count(dynamic as usize, "byte")
                );
                check_occupancy(ctx, f, &sm, &device, &block, want, &why)?;
            }
        }
    }
    Ok(())
}
