//! Chapter 12's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.
#![allow(clippy::type_complexity)]

use crate::grade::ch12;
use crate::grade::testing::{expect_failure, expect_failure_on_emulator};
use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, Received, Routing, Symmetric, Topology, World};
use gpubook::gpu::{DeviceSlice, Gpu, LaunchConfig, Result, Source};
use gpubook::testing::workspace_file;
use gpubook_labs::ep::reference;

// The answers' shapes are the exercises' signatures, spelled out.
/// The solution's kernel `rel` (under solutions/kernels/) with each `(from, to)` replaced once;
/// a pattern that is not there fails the test, so a mutation cannot silently stop applying.
pub(crate) fn mutated(rel: &str, edits: &[(&str, &str)]) -> Source {
    let path = workspace_file(&format!("solutions/kernels/{rel}"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    for (from, to) in edits {
        assert!(text.contains(from), "{rel} no longer contains `{from}`: update this wrong answer");
        text = text.replacen(from, to, 1);
    }
    Source::text(rel.rsplit('/').next().unwrap_or(rel), text)
}

pub(crate) fn solution(rel: &str) -> Source {
    mutated(rel, &[])
}

pub(crate) fn cfg(blocks: (u32, u32), threads: u32, shared: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks.0.max(1), blocks.1.max(1), 1), block_dim: (threads, 1, 1), shared_mem_bytes: shared as u32 }
}

/// A gate with `source`'s kernel `name`, launched as the solutions launch theirs.
pub(crate) fn gate_with(
    source: Source,
    name: &'static str,
) -> impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing> {
    move |gpu, logits, bias, tokens, g| {
        let f = gpu.load_module(source.clone())?.load_function(name)?;
        let s = gpu.default_stream();
        // SAFETY: every gate here writes all topk entries of every token before the grader reads them.
        let mut r = unsafe { Routing { topk_idx: s.alloc::<i32>(tokens * g.topk)?, topk_weights: s.alloc::<f32>(tokens * g.topk)? } };
        let (t, e, gr, tg, k) = (tokens as i32, g.experts as i32, g.groups as i32, g.topk_groups as i32, g.topk as i32);
        let mut l = s.launch_builder(&f);
        l.arg(logits).arg(bias).arg(&mut r.topk_idx).arg(&mut r.topk_weights).arg(&t).arg(&e);
        if name == "moe_gate_node_limited" {
            l.arg(&gr).arg(&tg);
        }
        l.arg(&k).arg(&g.route_scale);
        // SAFETY: logits hold tokens × experts floats, the routing tokens × topk, and GateConfig keeps
        // experts and groups within the kernels' arrays; the t < tokens guard stops the last block.
        // gate_without_a_guard drops it on purpose: the emulator's check mode stops the first access past
        // logits; on a GPU that is undefined.
        unsafe { l.launch(cfg(((tokens as u32).div_ceil(128), 1), 128, 0)) }?;
        Ok(r)
    }
}

fn gate12(edits: &[(&str, &str)]) -> impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing> {
    gate_with(mutated("ch12/gate.cu", edits), "moe_gate")
}

#[test]
fn gate_that_ignores_the_bias() {
    let f = gate12(&[("biased[e] = 1.0f / (1.0f + expf(-z[e])) + bias[e];", "biased[e] = 1.0f / (1.0f + expf(-z[e]));")]);
    expect_failure("gate_that_ignores_the_bias", &["topk_idx", "the bias chooses"], || ch12::gate(f));
}

#[test]
fn gate_that_weighs_with_the_bias() {
    let f = gate12(&[("float s = 1.0f / (1.0f + expf(-z[best]));", "float s = biased[best];")]);
    expect_failure("gate_that_weighs_with_the_bias", &["topk_weights", "never weighs"], || ch12::gate(f));
}

#[test]
fn gate_that_does_not_normalise() {
    let f = gate12(&[("topk_weights[t * topk + k] / sum * route_scale", "topk_weights[t * topk + k] * route_scale")]);
    expect_failure("gate_that_does_not_normalise", &["topk_weights", "divided by their sum"], || ch12::gate(f));
}

#[test]
fn gate_with_softmax() {
    // Softmax weights would need a pass over all experts; the mistake that shows is scoring by
    // raw logits (a softmax is monotone in them) with weights from them.
    let f = gate12(&[("float s = 1.0f / (1.0f + expf(-z[best]));", "float s = expf(z[best]);")]);
    expect_failure("gate_with_softmax", &["topk_weights", "sigmoid"], || ch12::gate(f));
}

#[test]
fn gate_without_a_guard() {
    let f = gate12(&[("if (t >= tokens) return;", "")]);
    expect_failure_on_emulator("gate_without_a_guard", &["guard t < tokens"], || ch12::gate(f));
}

#[test]
fn gate_on_the_host() {
    let f = |gpu: &Gpu, logits: &DeviceSlice<f32>, bias: &DeviceSlice<f32>, tokens: usize, g: &GateConfig| -> Result<Routing> {
        let s = gpu.default_stream();
        let (l, b) = (s.clone_dtoh(logits)?, s.clone_dtoh(bias)?);
        let mut idx = vec![0i32; tokens * g.topk];
        let mut w = vec![0f32; tokens * g.topk];
        for t in 0..tokens {
            let row = &l[t * g.experts..(t + 1) * g.experts];
            let aff: Vec<f32> = row.iter().map(|z| 1.0 / (1.0 + (-z).exp())).collect();
            let mut order: Vec<usize> = (0..g.experts).collect();
            order.sort_by(|&x, &y| (aff[y] + b[y]).total_cmp(&(aff[x] + b[x])).then(x.cmp(&y)));
            let sum: f32 = order[..g.topk].iter().map(|&e| aff[e]).sum();
            for (k, &e) in order[..g.topk].iter().enumerate() {
                idx[t * g.topk + k] = e as i32;
                w[t * g.topk + k] = aff[e] / sum * g.route_scale;
            }
        }
        Ok(Routing { topk_idx: s.clone_htod(&idx)?, topk_weights: s.clone_htod(&w)? })
    };
    expect_failure("gate_on_the_host", &["between the host and the device", "routing happens on the GPU"], || ch12::gate(f));
}

/// An answer that hands back the library's reference routing.
pub(crate) fn gate_from_reference(
    gpu: &Gpu,
    logits: &DeviceSlice<f32>,
    bias: &DeviceSlice<f32>,
    _tokens: usize,
    g: &GateConfig,
) -> Result<Routing> {
    let s = gpu.default_stream();
    let r = reference::gate(&s.clone_dtoh(logits)?, &s.clone_dtoh(bias)?, g).expect("valid settings");
    Ok(Routing { topk_idx: s.clone_htod(&r.topk_idx)?, topk_weights: s.clone_htod(&r.topk_weights)? })
}

#[test]
fn gate_that_calls_the_reference() {
    expect_failure("gate_that_calls_the_reference", &["called gpubook's own", "ep::reference::gate"], || ch12::gate(gate_from_reference));
}

/// The solution's host code with `source`'s kernel and `shared` bytes of dynamic shared memory
/// (None: the solution's amount).
fn layout_with(source: Source, shared: Option<usize>) -> impl Fn(&Gpu, &DeviceSlice<i32>, usize, usize, usize, usize) -> Result<Layout> {
    move |gpu, topk_idx, tokens, topk, experts, ranks| {
        let f = gpu.load_module(source.clone())?.load_function("get_dispatch_layout")?;
        let s = gpu.default_stream();
        let mut out = Layout {
            num_tokens_per_rank: s.alloc_zeros::<i32>(ranks)?,
            num_tokens_per_expert: s.alloc_zeros::<i32>(experts)?,
            send_pos: s.alloc_zeros::<i32>(tokens * ranks)?,
        };
        let bytes = shared.unwrap_or((experts / ranks + 256) * 4);
        let (t, k, e, r) = (tokens as i32, topk as i32, experts as i32, ranks as i32);
        let mut l = s.launch_builder(&f);
        l.arg(topk_idx).arg(&mut out.num_tokens_per_rank).arg(&mut out.num_tokens_per_expert).arg(&mut out.send_pos);
        l.arg(&t).arg(&k).arg(&e).arg(&r);
        // SAFETY: out holds ranks, experts and tokens × ranks ints, topk_idx tokens × topk ids below
        // experts; one block per rank, and `bytes` covers the counters and a scan slot per thread (the
        // global-atomics mutant needs only the scan's 256). The other mutants change values, not addresses.
        unsafe { l.launch(cfg((ranks as u32, 1), 256, bytes)) }?;
        Ok(out)
    }
}

#[test]
fn layout_with_global_atomics() {
    // Counts straight into global memory; the launch gives shared memory to the scan only.
    let src = mutated(
        "ch12/dispatch_layout.cu",
        &[
            ("atomicAdd(&expert_count[e - d * per_rank], 1);", "atomicAdd(&num_tokens_per_expert[e], 1);"),
            ("for (int j = tid; j < per_rank; j += n)\n        num_tokens_per_expert[d * per_rank + j] = expert_count[j];", ""),
            ("int* scan = smem + per_rank;", "int* scan = smem;"),
            ("for (int j = tid; j < per_rank; j += n) expert_count[j] = 0;", ""),
        ],
    );
    expect_failure("layout_with_global_atomics", &["dynamic shared memory", "count in shared memory"], || {
        ch12::layout(layout_with(src, Some(256 * 4)))
    });
}

/// The counters and the scan as two `extern __shared__` arrays: both start at the same address.
#[test]
fn layout_with_two_extern_shared_arrays() {
    let src = mutated(
        "ch12/dispatch_layout.cu",
        &[
            ("int* expert_count = smem;     // per_rank counters, one per expert of rank d", "extern __shared__ int expert_count[];"),
            ("int* scan = smem + per_rank;  // a flag per thread of the tile, scanned in place", "extern __shared__ int scan[];"),
        ],
    );
    expect_failure_on_emulator(
        "layout_with_two_extern_shared_arrays",
        &["the compiler warned", "`extern __shared__` in this function", "overlap"],
        || ch12::layout(layout_with(src, None)),
    );
}

#[test]
fn layout_that_counts_experts_not_tokens() {
    let src = mutated("ch12/dispatch_layout.cu", &[("flag = 1;", "flag += 1;")]);
    expect_failure("layout_that_counts_experts_not_tokens", &["num_tokens_per_rank", "a token goes to a rank ONCE"], || {
        ch12::layout(layout_with(src, None))
    });
}

#[test]
fn layout_scan_without_a_barrier() {
    let src = mutated(
        "ch12/dispatch_layout.cu",
        &[("int v = tid >= off ? scan[tid - off] : 0;\n            __syncthreads();", "int v = tid >= off ? scan[tid - off] : 0;")],
    );
    expect_failure_on_emulator("layout_scan_without_a_barrier", &["race", "__syncthreads"], || ch12::layout(layout_with(src, None)));
}

#[test]
fn layout_computed_on_the_host() {
    let f = |gpu: &Gpu, topk_idx: &DeviceSlice<i32>, tokens: usize, topk: usize, experts: usize, ranks: usize| -> Result<Layout> {
        let s = gpu.default_stream();
        let idx = s.clone_dtoh(topk_idx)?;
        let per_rank = experts / ranks;
        let (mut n_rank, mut n_expert, mut pos) = (vec![0i32; ranks], vec![0i32; experts], vec![-1i32; tokens * ranks]);
        for t in 0..tokens {
            let row = &idx[t * topk..(t + 1) * topk];
            row.iter().for_each(|&e| n_expert[e as usize] += 1);
            for d in 0..ranks {
                if row.iter().any(|&e| e as usize / per_rank == d) {
                    pos[t * ranks + d] = n_rank[d];
                    n_rank[d] += 1;
                }
            }
        }
        Ok(Layout {
            num_tokens_per_rank: s.clone_htod(&n_rank)?,
            num_tokens_per_expert: s.clone_htod(&n_expert)?,
            send_pos: s.clone_htod(&pos)?,
        })
    };
    expect_failure("layout_computed_on_the_host", &["between the host and the device", "the layout happens on the GPU"], || {
        ch12::layout(f)
    });
}

#[test]
fn layout_that_calls_the_reference() {
    let f = |gpu: &Gpu, topk_idx: &DeviceSlice<i32>, tokens: usize, topk: usize, experts: usize, ranks: usize| -> Result<Layout> {
        // Uses the reference's traffic count as an excuse to call it, then the solution's kernel.
        let _ = reference::direct_traffic(Topology::single_node(ranks).unwrap(), experts, topk, &[], 1);
        layout_with(solution("ch12/dispatch_layout.cu"), None)(gpu, topk_idx, tokens, topk, experts, ranks)
    };
    expect_failure("layout_that_calls_the_reference", &["called gpubook's own", "direct_traffic"], || ch12::layout(f));
}

/// How a wrong dispatch issues its kernels.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Issue {
    Right,
    /// No barrier between notify_dispatch and dispatch.
    NoBarrier,
    /// The rows go through the host: downloaded, then uploaded into the peers' buffers.
    ThroughHost,
    /// Calls the reference first.
    CallsReference,
}

fn dispatch_with(
    source: Source,
    how: Issue,
) -> impl Fn(&World, &MoeShape, &[RankTokens], &[Layout], &mut Symmetric<i32>, &mut Received) -> Result<()> {
    move |world, shape, tokens, layouts, per_rank_buffer, recv| {
        if how == Issue::CallsReference {
            let _ = reference::gate(&[0.0; 4], &[0.0; 4], &GateConfig::plain(4, 1, 1.0));
        }
        let module = world.rank(0).gpu().load_module(source.clone())?;
        let (notify, send) = (module.load_function("notify_dispatch")?, module.load_function("dispatch")?);
        let ranks = world.size();
        let (t, h, k, e, r_n) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, shape.experts as i32, ranks as i32);
        for (r, layout) in layouts.iter().enumerate() {
            let rank = r as i32;
            let mut l = world.rank(r).stream().launch_builder(&notify);
            l.arg(&layout.num_tokens_per_rank).arg(per_rank_buffer.peers(r)).arg(&r_n).arg(&rank);
            // SAFETY: each peer's per_rank_buffer holds ranks × ranks ints and notify_dispatch writes row
            // `rank` of them (the own-copy mutant, of its own copy only); num_tokens_per_rank holds ranks.
            unsafe { l.launch(cfg((1, 1), 1024, 0)) }?;
        }
        if how != Issue::NoBarrier {
            world.barrier()?;
        }
        for r in 0..ranks {
            let rank = r as i32;
            let mut l = world.rank(r).stream().launch_builder(&send);
            l.arg(&tokens[r].x).arg(&tokens[r].topk_idx).arg(&tokens[r].topk_weights).arg(&layouts[r].send_pos).arg(per_rank_buffer.on(r));
            l.arg(recv.x.peers(r)).arg(recv.topk_idx.peers(r)).arg(recv.topk_weights.peers(r)).arg(recv.src.peers(r));
            l.arg(&t).arg(&h).arg(&k).arg(&e).arg(&r_n).arg(&rank);
            // SAFETY: the receive buffers hold cap slots, at least what any rank receives, so offset + pos
            // stays inside when per_rank_buffer holds the counts. NoBarrier and the own-copy mutant can
            // read poison (-1) counts and store before recv_x: the emulator's check mode stops that; on a
            // GPU it is undefined behaviour.
            unsafe { l.launch(cfg((shape.tokens as u32, 1), 128, 0)) }?;
        }
        world.barrier()?;
        if how == Issue::ThroughHost {
            // Round trip of every received row through the host (as a copy-based all-to-all would).
            for d in 0..ranks {
                let rows = world.rank(d).stream().clone_dtoh(recv.x.on(d))?;
                world.rank(d).stream().memcpy_htod(&rows, recv.x.on_mut(d))?;
            }
        }
        Ok(())
    }
}

#[test]
fn dispatch_without_a_barrier() {
    expect_failure("dispatch_without_a_barrier", &["no world barrier between the last `notify_dispatch` and the first `dispatch`"], || {
        ch12::dispatch(dispatch_with(solution("ch12/dispatch.cu"), Issue::NoBarrier))
    });
}

#[test]
fn dispatch_through_the_host() {
    expect_failure("dispatch_through_the_host", &["between the host and the device", "the dispatch happens on the GPU"], || {
        ch12::dispatch(dispatch_with(solution("ch12/dispatch.cu"), Issue::ThroughHost))
    });
}

#[test]
fn dispatch_that_calls_the_reference() {
    expect_failure("dispatch_that_calls_the_reference", &["called gpubook's own"], || {
        ch12::dispatch(dispatch_with(solution("ch12/dispatch.cu"), Issue::CallsReference))
    });
}

#[test]
fn dispatch_without_the_lower_ranks_offset() {
    let src = mutated("ch12/dispatch.cu", &[("for (int s = 0; s < rank; ++s) offset +=", "for (int s = 0; s < 0; ++s) offset +=")]);
    expect_failure("dispatch_without_the_lower_ranks_offset", &["recv_src on rank", "every LOWER rank"], || {
        ch12::dispatch(dispatch_with(src, Issue::Right))
    });
}

#[test]
fn dispatch_with_global_expert_numbers() {
    let src = mutated("ch12/dispatch.cu", &[("here ? e - d * per_rank : -1", "here ? e : -1")]);
    expect_failure("dispatch_with_global_expert_numbers", &["recv_topk_idx on rank", "LOCAL expert numbers"], || {
        ch12::dispatch(dispatch_with(src, Issue::Right))
    });
}

#[test]
fn notify_that_writes_only_its_own_copy() {
    let src = mutated("ch12/dispatch.cu", &[("per_rank_buffer[d][rank * ranks + j]", "per_rank_buffer[rank][rank * ranks + j]")]);
    expect_failure("notify_that_writes_only_its_own_copy", &["per_rank_buffer"], || ch12::dispatch(dispatch_with(src, Issue::Right)));
}

fn combine_with(
    source: Source,
    how: Issue,
) -> impl Fn(&World, &MoeShape, &[Layout], &Received, &[usize], &[DeviceSlice<f32>], &mut Symmetric<f32>, &mut [DeviceSlice<f32>]) -> Result<()>
{
    move |world, shape, layouts, recv, num_recv, expert_out, combine_buf, out| {
        if how == Issue::CallsReference {
            let _ = reference::gate(&[0.0; 4], &[0.0; 4], &GateConfig::plain(4, 1, 1.0));
        }
        let module = world.rank(0).gpu().load_module(source.clone())?;
        let (back, reduce) = (module.load_function("combine")?, module.load_function("combine_reduce")?);
        let ranks = world.size();
        let (t, h, k, r_n) = (shape.tokens as i32, shape.hidden as i32, shape.topk as i32, ranks as i32);
        for r in 0..ranks {
            if num_recv[r] == 0 {
                continue;
            }
            let (rank, n) = (r as i32, num_recv[r] as i32);
            let mut l = world.rank(r).stream().launch_builder(&back);
            l.arg(recv.topk_idx.on(r)).arg(recv.topk_weights.on(r)).arg(recv.src.on(r)).arg(&expert_out[r]);
            l.arg(combine_buf.peers(r)).arg(&n).arg(&t).arg(&h).arg(&k).arg(&r_n).arg(&rank);
            // SAFETY: one block per received row, all written by the grader (recv_src names a real rank and
            // token); it stores row (t, rank) of its source's combine_buf, tokens × ranks rows.
            unsafe { l.launch(cfg((num_recv[r] as u32, 1), 128, 0)) }?;
        }
        if how != Issue::NoBarrier {
            world.barrier()?;
        }
        for (r, o) in out.iter_mut().enumerate() {
            let n = (shape.tokens * shape.hidden) as u32;
            let mut l = world.rank(r).stream().launch_builder(&reduce);
            l.arg(combine_buf.on(r)).arg(&layouts[r].send_pos).arg(o).arg(&t).arg(&h).arg(&r_n);
            // SAFETY: combine_buf holds tokens × ranks rows of hidden floats, send_pos tokens × ranks and
            // out tokens × hidden; the i < tokens × hidden guard stops the last block. The every-rank
            // mutant reads rows nothing wrote: poison, which the emulator reports.
            unsafe { l.launch(cfg((n.div_ceil(256), 1), 256, 0)) }?;
        }
        world.barrier()
    }
}

#[test]
fn combine_that_ignores_the_weights() {
    let src = mutated("ch12/combine.cu", &[("z += recv_topk_weights[i * topk + k] *\n", "z += ")]);
    expect_failure("combine_that_ignores_the_weights", &["out on rank", "WEIGHTED by the gate"], || {
        ch12::combine(combine_with(src, Issue::Right))
    });
}

#[test]
fn combine_reduce_over_every_rank() {
    let src = mutated("ch12/combine.cu", &[("if (send_pos[t * ranks + d] >= 0)\n", "")]);
    expect_failure_on_emulator("combine_reduce_over_every_rank", &["combine_buf only for the ranks a token went to"], || {
        ch12::combine(combine_with(src, Issue::Right))
    });
}

#[test]
fn combine_without_a_barrier() {
    expect_failure("combine_without_a_barrier", &["no world barrier between the last `combine` and the first `combine_reduce`"], || {
        ch12::combine(combine_with(solution("ch12/combine.cu"), Issue::NoBarrier))
    });
}

#[test]
fn combine_that_calls_the_reference() {
    expect_failure("combine_that_calls_the_reference", &["called gpubook's own"], || {
        ch12::combine(combine_with(solution("ch12/combine.cu"), Issue::CallsReference))
    });
}
