//! Chapter 12: MoE routing and the all-to-all. Every grader compares against the host (a gate in
//! f64, a layout counted token by token, a dense MoE layer), on seeded inputs at edge sizes (one
//! token, tokens that fill no whole block, rank and expert counts that are not powers of two, a
//! large case). Beyond the values they read the trace: no token data may pass through the host
//! while the answer runs (no copy to or from it at all), the kernels must have run, a world
//! barrier must separate a kernel that reads peers' stores from the kernels that made them, and
//! the layout's counters must sit in shared memory. An answer that calls the library's reference
//! code (`gpubook::ep::reference`, `gpubook::ep::moe`) is refused (by `Ctx::call`).

#[cfg(test)]
pub(crate) mod wrong;

use super::GradeReport;
use super::explain::Explain;
use super::{Failure, Tolerance, check_f32, check_values, grade};
use gpubook::ep::{GateConfig, Layout, MoeShape, RankTokens, Received, Routing, Symmetric, Topology, World};
use gpubook::gpu::{CopyDir, DeviceSlice, Gpu, OpKind, Result, Trace};
use gpubook_labs::ep::reference::{GateVariant, gate_as};

// ---- What every grader of chapters 12 and 13 checks -------------------------------------------

/// Refuses copies between the host and the device in `trace`: the data stays on the GPUs.
pub(crate) fn no_host_copies(trace: &Trace, what: &str, input: &str) -> Result<(), Failure> {
    let host = |o: &&gpubook::gpu::TraceOp| matches!(o.kind, OpKind::Copy { dir: CopyDir::HostToDevice | CopyDir::DeviceToHost, .. });
    if let Some(op) = trace.ops.iter().find(host) {
        let n = trace.ops.iter().filter(host).count();
        return Err(Failure::new(format!(
            "{} between the host and the device while your code ran (the first: `{}`)",
            plural(n, "copy", "copies"),
            op.kind.short()
        ))
        .concept(format!(
            "{what} happens on the GPU, where the data already is: a round trip through the host stalls every rank and moves \
             the tokens twice over PCIe"
        ))
        .input(input));
    }
    Ok(())
}

/// The world a grader runs an exchange on: every rank on the grader's device, or spread over
/// `GPUBOOK_EP_DEVICES` devices (the two-GPU run; with one GPU, several handles on it), each
/// poisoning and digesting as the grader's device does.
pub(crate) fn grading_world(ctx: &super::Ctx, topo: Topology) -> Result<World> {
    let gpus = gpubook::ep::spread_devices(&ctx.gpu, gpubook::ep::devices_from_env())?;
    for g in &gpus[1..] {
        g.set_poison(true);
        g.set_content_digests(true);
    }
    World::spread(&gpus, topo)
}

/// The distinct devices of `world`, in slot order.
fn world_devices(world: &World) -> Vec<&Gpu> {
    let mut seen: Vec<&Gpu> = Vec::new();
    for g in world.devices() {
        if !seen.iter().any(|s| s.is_same_device(g)) {
            seen.push(g);
        }
    }
    seen
}

/// Clears the trace of every device of `world` (before the answer runs).
pub(crate) fn clear_world_traces(world: &World) -> Result<()> {
    world_devices(world).into_iter().try_for_each(Gpu::clear_trace)
}

/// The trace of every device of `world`, in slot order.
pub(crate) fn world_traces(world: &World) -> Result<Vec<Trace>> {
    world_devices(world).into_iter().map(Gpu::trace).collect()
}

/// Requires `kernel` to have been launched; returns its launch ops.
pub(crate) fn launched<'t>(trace: &'t Trace, kernel: &str, input: &str) -> Result<Vec<&'t gpubook::gpu::TraceOp>, Failure> {
    let ops: Vec<_> = trace.ops.iter().filter(|o| matches!(&o.kind, OpKind::Launch { kernel: k, .. } if k == kernel)).collect();
    if ops.is_empty() {
        let names: Vec<String> = trace
            .launches()
            .filter_map(|o| if let OpKind::Launch { kernel, .. } = &o.kind { Some(kernel.clone()) } else { None })
            .collect();
        return Err(Failure::new(format!("`{kernel}` was never launched"))
            .concept("the kernel does the work: the host only launches it")
            .detail(if names.is_empty() { "no kernel was launched at all".to_string() } else { format!("launched: {}", names.join(", ")) })
            .input(input));
    }
    Ok(ops)
}

/// Requires `kernel` to have been launched on some device of the world.
pub(crate) fn launched_anywhere(traces: &[Trace], kernel: &str, input: &str) -> Result<(), Failure> {
    match traces.iter().find(|t| launched(t, kernel, input).is_ok()) {
        Some(_) => Ok(()),
        None => launched(traces.first().unwrap_or(&Trace { ops: Vec::new() }), kernel, input).map(|_| ()),
    }
}

/// Requires a world barrier between the last launch of `before` and the first of `after`, on
/// whichever devices they ran: a kernel that reads what other ranks' kernels stored must wait
/// for all of them. `traces` are the world's, cleared together before the answer ran.
pub(crate) fn barrier_between(world: &World, traces: &[Trace], before: &str, after: &str, input: &str) -> Result<(), Failure> {
    let devices = world_devices(world);
    let epochs = |kernel: &str| -> Vec<usize> { devices.iter().zip(traces).flat_map(|(g, t)| world.launch_epochs(g, t, kernel)).collect() };
    let (a, b) = (epochs(before), epochs(after));
    let (Some(&last_a), Some(&first_b)) = (a.iter().max(), b.iter().min()) else { return Ok(()) };
    if last_a < first_b {
        return Ok(());
    }
    Err(Failure::new(format!("no world barrier between the last `{before}` and the first `{after}`"))
        .concept(format!(
            "`{after}` on one rank reads what `{before}` on the others stored: every rank's `{before}` must be done first. \
             Streams of different ranks are not ordered; `world.barrier()` between the two loops orders them (DeepEP's \
             barrier_block does it inside the kernels)"
        ))
        .input(input))
}

/// Turns a failed call into a failure that names the exercise's concept.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ---- Seeded inputs ------------------------------------------------------------------------------

/// `tokens × topk` distinct experts per token, and positive weights.
pub(crate) fn random_routing(rng: &mut super::Rng, tokens: usize, experts: usize, topk: usize) -> (Vec<i32>, Vec<f32>) {
    let mut idx = Vec::with_capacity(tokens * topk);
    for _ in 0..tokens {
        let mut row: Vec<i32> = Vec::with_capacity(topk);
        while row.len() < topk {
            let e = rng.usize(0, experts) as i32;
            if !row.contains(&e) {
                row.push(e);
            }
        }
        idx.extend(row);
    }
    let w = rng.vec_f32(tokens * topk, 0.05, 1.0);
    (idx, w)
}

/// The layout of one rank, counted on the host: (num_tokens_per_rank, num_tokens_per_expert, send_pos).
pub(crate) fn host_layout(idx: &[i32], tokens: usize, topk: usize, experts: usize, ranks: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let per_rank = experts / ranks;
    let (mut per_rank_n, mut per_expert, mut send_pos) = (vec![0i32; ranks], vec![0i32; experts], vec![-1i32; tokens * ranks]);
    for t in 0..tokens {
        let row = &idx[t * topk..(t + 1) * topk];
        for &e in row {
            per_expert[e as usize] += 1;
        }
        for d in 0..ranks {
            if row.iter().any(|&e| e as usize / per_rank == d) {
                send_pos[t * ranks + d] = per_rank_n[d];
                per_rank_n[d] += 1;
            }
        }
    }
    (per_rank_n, per_expert, send_pos)
}

/// What rank d receives, slot by slot: (source rank, token), in DeepEP's order.
pub(crate) fn host_slots(idx: &[Vec<i32>], tokens: usize, topk: usize, experts: usize, ranks: usize) -> Vec<Vec<(usize, usize)>> {
    let per_rank = experts / ranks;
    let mut slots = vec![Vec::new(); ranks];
    for (s, rows) in idx.iter().enumerate() {
        for t in 0..tokens {
            let row = &rows[t * topk..(t + 1) * topk];
            for (d, list) in slots.iter_mut().enumerate() {
                if row.iter().any(|&e| e as usize / per_rank == d) {
                    list.push((s, t));
                }
            }
        }
    }
    slots
}

/// The receive buffers rank d should hold: x rows, local topk_idx, weights, sources.
pub(crate) struct ExpectedRecv {
    pub x: Vec<f32>,
    pub topk_idx: Vec<i32>,
    pub topk_weights: Vec<f32>,
    pub src: Vec<i32>,
}

pub(crate) fn expected_recv(
    slots: &[(usize, usize)],
    d: usize,
    shape: &MoeShape,
    ranks: usize,
    xs: &[Vec<f32>],
    idx: &[Vec<i32>],
    w: &[Vec<f32>],
) -> ExpectedRecv {
    let (h, k, per_rank) = (shape.hidden, shape.topk, shape.experts / ranks);
    let mut out = ExpectedRecv { x: Vec::new(), topk_idx: Vec::new(), topk_weights: Vec::new(), src: Vec::new() };
    for &(s, t) in slots {
        out.x.extend_from_slice(&xs[s][t * h..(t + 1) * h]);
        for j in 0..k {
            let e = idx[s][t * k + j] as usize;
            let here = e / per_rank == d;
            out.topk_idx.push(if here { (e - d * per_rank) as i32 } else { -1 });
            out.topk_weights.push(if here { w[s][t * k + j] } else { 0.0 });
        }
        out.src.push((s * shape.tokens + t) as i32);
    }
    out
}

/// Every rank's tokens uploaded, with their routing.
pub(crate) fn upload_tokens(world: &World, xs: &[Vec<f32>], idx: &[Vec<i32>], w: &[Vec<f32>]) -> Result<Vec<RankTokens>> {
    world
        .ranks()
        .iter()
        .enumerate()
        .map(|(r, rank)| {
            let s = rank.stream();
            let mut x = s.clone_htod(&xs[r])?;
            x.set_label(format!("x@{r}"));
            Ok(RankTokens { x, topk_idx: s.clone_htod(&idx[r])?, topk_weights: s.clone_htod(&w[r])? })
        })
        .collect()
}

/// Every rank's layout, counted on the host and uploaded.
pub(crate) fn upload_layouts(world: &World, idx: &[Vec<i32>], shape: &MoeShape) -> Result<Vec<Layout>> {
    let ranks = world.size();
    world
        .ranks()
        .iter()
        .enumerate()
        .map(|(r, rank)| {
            let (n_rank, n_expert, pos) = host_layout(&idx[r], shape.tokens, shape.topk, shape.experts, ranks);
            let s = rank.stream();
            Ok(Layout {
                num_tokens_per_rank: s.clone_htod(&n_rank)?,
                num_tokens_per_expert: s.clone_htod(&n_expert)?,
                send_pos: s.clone_htod(&pos)?,
            })
        })
        .collect()
}

/// The count matrix every rank should hold after notify_dispatch.
pub(crate) fn count_matrix(idx: &[Vec<i32>], shape: &MoeShape, ranks: usize) -> Vec<i32> {
    idx.iter().flat_map(|rows| host_layout(rows, shape.tokens, shape.topk, shape.experts, ranks).0).collect()
}

/// Receive buffers with room for `cap` tokens on every rank (poisoned when the device poisons).
pub(crate) fn alloc_received(world: &World, cap: usize, shape: &MoeShape) -> Result<Received> {
    // SAFETY: the grader reads only slots the dispatch should have written; poison shows the rest.
    unsafe {
        Ok(Received {
            x: Symmetric::alloc(world, cap * shape.hidden, "recv_x")?,
            topk_idx: Symmetric::alloc(world, cap * shape.topk, "recv_topk_idx")?,
            topk_weights: Symmetric::alloc(world, cap * shape.topk, "recv_topk_weights")?,
            src: Symmetric::alloc(world, cap, "recv_src")?,
        })
    }
}

/// Compares what arrived on every rank with what should have, and says what the difference
/// means in this chapter's terms.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_received(
    world: &World,
    recv: &Received,
    slots: &[Vec<(usize, usize)>],
    shape: &MoeShape,
    xs: &[Vec<f32>],
    idx: &[Vec<i32>],
    w: &[Vec<f32>],
    input: &str,
) -> Result<(), Failure> {
    let ranks = world.size();
    let (got_x, got_idx, got_w, got_src) =
        (recv.x.to_host(world)?, recv.topk_idx.to_host(world)?, recv.topk_weights.to_host(world)?, recv.src.to_host(world)?);
    for d in 0..ranks {
        let want = expected_recv(&slots[d], d, shape, ranks, xs, idx, w);
        let n = slots[d].len();
        let name = |what: &str| format!("{what} on rank {d}");
        let slot_concept = "token t of rank s lands in slot (tokens every LOWER rank sends to d) + send_pos[t][d] of rank d \
             (column d of per_rank_buffer summed over the rows above s), and every slot below num_recv gets one token: a slot \
             left unwritten means two tokens landed in one, or one never came";
        check_values(&name("recv_src"), &got_src[d][..n], &want.src, Some(-1)).map_err(|f| f.concept(slot_concept).input(input))?;
        let local_concept = "recv_topk_idx holds the receiving rank's LOCAL expert numbers (e - d · experts_per_rank), and \
             -1 with weight 0 for the token's experts that live elsewhere: the receiver runs only its own experts";
        check_values(&name("recv_topk_idx"), &got_idx[d][..n * shape.topk], &want.topk_idx, Some(-1))
            .map_err(|f| f.concept(local_concept).input(input))?;
        check_f32(&name("recv_topk_weights"), &got_w[d][..n * shape.topk], &as_f64(&want.topk_weights), Tolerance::EXACT)
            .map_err(|f| f.concept(local_concept).input(input))?;
        check_f32(&name("recv_x"), &got_x[d][..n * shape.hidden], &as_f64(&want.x), Tolerance::EXACT)
            .map_err(|f| f.concept("each received slot holds the token's whole row of hidden floats, copied").input(input))?;
    }
    Ok(())
}

pub(crate) fn as_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

// ---- ch12-gate ------------------------------------------------------------------------------------

/// What each of the gate's mistakes is about, in a teacher's words.
pub(crate) fn gate_concept(v: GateVariant) -> &'static str {
    match v {
        GateVariant::Right => "",
        GateVariant::BiasIgnored => {
            "the bias chooses: rank experts by sigmoid(logit) + bias (DeepSeek-V3's auxiliary-loss-free load balancing \
             tunes the bias to steer tokens away from busy experts)"
        }
        GateVariant::BiasedWeights => {
            "the bias chooses but never weighs: the weights come from the affinities sigmoid(logit) of the chosen experts, \
             without the bias"
        }
        GateVariant::NotNormalised => "the chosen affinities are divided by their sum (then scaled): with sigmoids they do not sum to 1",
        GateVariant::NoRouteScale => "after normalising, the weights are multiplied by route_scale (2.5 in V3)",
        GateVariant::Softmax | GateVariant::SoftmaxWeights => {
            "DeepSeek-V3's affinities are sigmoids of the logits, each on its own, not a softmax over the experts"
        }
        GateVariant::GroupsIgnored => {
            "node-limited routing: only the experts of the topk_groups best groups may be chosen, so a token reaches at \
             most that many nodes"
        }
        GateVariant::GroupMax => "with a bias, V3 scores a group by the sum of its TWO best biased scores, not by its best alone",
    }
}

/// Logits and a bias whose choices are clear-cut: in every row the biased scores around each
/// decision (and the group scores at the group cut) are at least `GAP` apart, so a float32 gate
/// and the f64 host agree. Rows that are too close are drawn again.
pub(crate) fn clear_cut_inputs(rng: &mut super::Rng, tokens: usize, g: &GateConfig) -> (Vec<f32>, Vec<f32>) {
    const GAP: f64 = 2e-4;
    let bias = rng.vec_f32(g.experts, -0.1, 0.1);
    let mut logits = Vec::with_capacity(tokens * g.experts);
    while logits.len() < tokens * g.experts {
        let row = rng.vec_f32(g.experts, -4.0, 4.0);
        let biased: Vec<f64> = row.iter().zip(&bias).map(|(&z, &b)| 1.0 / (1.0 + (-(z as f64)).exp()) + b as f64).collect();
        let clear = |v: &[f64], n: usize| {
            let mut s = v.to_vec();
            s.sort_by(|a, b| b.total_cmp(a));
            s.windows(2).take(n).all(|w| w[0] - w[1] >= GAP)
        };
        let mut ok = clear(&biased, g.topk.min(g.experts - 1) + 1);
        if g.groups > 1 {
            let per = g.experts_per_group();
            let score: Vec<f64> = biased
                .chunks(per)
                .map(|c| {
                    let mut s = c.to_vec();
                    s.sort_by(|a, b| b.total_cmp(a));
                    s[0] + s[1]
                })
                .collect();
            ok = ok
                && clear(&score, g.topk_groups.min(g.groups - 1) + 1)
                && (0..g.groups).all(|gr| clear(&biased[gr * per..(gr + 1) * per], 2));
            // And within the kept groups' experts: the chosen ones apart from each other and from
            // the best one left out (a near tie there is decided by f32 rounding, not the concept).
            let mut groups: Vec<usize> = (0..g.groups).collect();
            groups.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
            let mut allowed: Vec<f64> =
                groups[..g.topk_groups].iter().flat_map(|&gr| biased[gr * per..(gr + 1) * per].iter().copied()).collect();
            allowed.sort_by(|a, b| b.total_cmp(a));
            ok = ok && clear(&allowed, g.topk.min(allowed.len() - 1) + 1);
        }
        if ok {
            logits.extend(row);
        }
    }
    (logits, bias)
}

/// The gate cases: (tokens, gate settings, name).
type GateCase = (usize, GateConfig, &'static str);

/// Grades a gate (chapter 12's or 13's) on `cases`, naming the first mistake it recognises.
pub(crate) fn grade_gate(
    id: &str,
    cases: &[GateCase],
    kernel: &str,
    variants: &[GateVariant],
    f: impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing>,
) -> GradeReport {
    grade(id, |ctx| {
        for &(tokens, g, name) in cases {
            let input = format!(
                "{tokens} token{}, {} experts{}, top-{}, route_scale {} ({name})",
                if tokens == 1 { "" } else { "s" },
                g.experts,
                if g.groups > 1 { format!(" in {} groups, {} kept", g.groups, g.topk_groups) } else { String::new() },
                g.topk,
                g.route_scale
            );
            let (logits, bias) = clear_cut_inputs(&mut ctx.rng, tokens, &g);
            let s = ctx.gpu.default_stream();
            let (mut logits_d, mut bias_d) = (s.clone_htod(&logits).map_err(Failure::from)?, s.clone_htod(&bias).map_err(Failure::from)?);
            logits_d.set_label("logits");
            bias_d.set_label("bias");
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let routing = ctx.call_explained(&input, &GATE_EXPLAIN, || f(&ctx.gpu, &logits_d, &bias_d, tokens, &g))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            no_host_copies(&trace, "routing", &input)?;
            launched(&trace, kernel, &input)?;
            let got_idx = s.clone_dtoh(&routing.topk_idx).map_err(Failure::from)?;
            let got_w = s.clone_dtoh(&routing.topk_weights).map_err(Failure::from)?;
            if got_idx.len() != tokens * g.topk || got_w.len() != tokens * g.topk {
                return Err(Failure::new(format!(
                    "topk_idx and topk_weights came back with {} and {} elements; tokens × topk is {}",
                    got_idx.len(),
                    got_w.len(),
                    tokens * g.topk
                ))
                .input(input));
            }
            let (want_idx, want_w) = gate_as(&logits, &bias, &g, GateVariant::Right);
            let idx_ok = got_idx == want_idx;
            let w_ok = check_f32("topk_weights", &got_w, &want_w, Tolerance { abs: 1e-5, rel: 1e-5 }).is_ok();
            if idx_ok && w_ok {
                continue;
            }
            // Which mistake gives exactly what came back?
            for &v in variants {
                let (vi, vw) = gate_as(&logits, &bias, &g, v);
                let same_w = check_f32("w", &got_w, &vw, Tolerance { abs: 1e-5, rel: 1e-5 }).is_ok();
                if got_idx == vi && (same_w || !idx_ok) {
                    let what = if !idx_ok { "topk_idx" } else { "topk_weights" };
                    let f = if what == "topk_idx" {
                        check_values("topk_idx", &got_idx, &want_idx, Some(-1)).unwrap_err()
                    } else {
                        check_f32("topk_weights", &got_w, &want_w, Tolerance { abs: 1e-5, rel: 1e-5 }).unwrap_err()
                    };
                    return Err(f.concept(gate_concept(v)).input(input));
                }
            }
            if !idx_ok {
                let f = check_values("topk_idx", &got_idx, &want_idx, Some(-1)).unwrap_err();
                let same_sets = got_idx.chunks(g.topk).zip(want_idx.chunks(g.topk)).all(|(a, b)| {
                    let (mut a, mut b) = (a.to_vec(), b.to_vec());
                    a.sort();
                    b.sort();
                    a == b
                });
                let concept = if same_sets {
                    "the right experts in the wrong order: list them by descending biased score, the best first (ties: the lower index)"
                } else {
                    "a token's experts are the topk highest biased scores sigmoid(logit) + bias, best first"
                };
                return Err(f.concept(concept).input(input));
            }
            let f = check_f32("topk_weights", &got_w, &want_w, Tolerance { abs: 1e-5, rel: 1e-5 }).unwrap_err();
            return Err(f.concept("weights: the chosen experts' affinities (no bias) over their sum, times route_scale").input(input));
        }
        Ok(())
    })
}

const GATE_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some(
        "an index past a buffer: guard t < tokens (the last block is partial), and keep every local array index below \
         the number of experts",
    ),
    race: None,
    divergence: None,
    uninitialized: None,
    launch_config: None,
};

/// `gate(gpu, logits, bias, tokens, g) -> Routing`, g with one group.
pub fn gate(f: impl Fn(&Gpu, &DeviceSlice<f32>, &DeviceSlice<f32>, usize, &GateConfig) -> Result<Routing>) -> GradeReport {
    let cases = [
        (1, GateConfig::plain(8, 2, 1.0), "a single token"),
        (127, GateConfig::plain(12, 3, 2.5), "block - 1 tokens"),
        (129, GateConfig::plain(9, 9, 1.0), "block + 1 tokens, every expert chosen"),
        (257, GateConfig::plain(256, 8, 2.5), "V3's 256 experts, top-8"),
        (1000, GateConfig::plain(37, 5, 2.5), "large, 37 experts"),
    ];
    let variants = [
        GateVariant::BiasIgnored,
        GateVariant::BiasedWeights,
        GateVariant::Softmax,
        GateVariant::SoftmaxWeights,
        GateVariant::NotNormalised,
        GateVariant::NoRouteScale,
    ];
    grade_gate("ch12-gate", &cases, "moe_gate", &variants, f)
}

// ---- ch12-layout --------------------------------------------------------------------------------

const LAYOUT_EXPLAIN: Explain<'static> = Explain {
    race: Some(
        "two threads touched one shared word between barriers: in the scan, every thread reads scan[tid - off] into a \
         register, then __syncthreads, then adds, then __syncthreads; and the counters are only changed with atomicAdd",
    ),
    out_of_bounds: Some(
        "an index past a buffer: guard t < tokens in the last tile, and size the dynamic shared memory for the \
         experts / ranks counters plus one scan entry per thread",
    ),
    divergence: Some(
        "every thread of the block reaches every __syncthreads: threads past the last token still take part in the scan, with flag 0",
    ),
    uninitialized: Some("the shared counters start as garbage: zero them (and __syncthreads) before the first atomicAdd"),
    launch_config: None,
};

/// `dispatch_layout(gpu, topk_idx, tokens, topk, experts, ranks) -> Layout`.
pub fn layout(f: impl Fn(&Gpu, &DeviceSlice<i32>, usize, usize, usize, usize) -> Result<Layout>) -> GradeReport {
    grade("ch12-layout", |ctx| {
        let cases = [
            (1, 2, 8, 4, "a single token"),
            (255, 3, 9, 3, "255 tokens (a block is 256), 9 experts on 3 ranks"),
            (256, 4, 16, 8, "one full tile"),
            (257, 8, 64, 8, "a tile and one token, top-8 of 64"),
            (300, 1, 5, 5, "one expert per rank, top-1"),
            (1500, 6, 30, 5, "large: 1500 tokens, 30 experts on 5 ranks"),
        ];
        for (tokens, topk, experts, ranks, name) in cases {
            let input = format!("{tokens} tokens, top-{topk} of {experts} experts on {ranks} ranks ({name})");
            let (idx, _) = random_routing(&mut ctx.rng, tokens, experts, topk);
            let s = ctx.gpu.default_stream();
            let mut idx_d = s.clone_htod(&idx).map_err(Failure::from)?;
            idx_d.set_label("topk_idx");
            ctx.gpu.clear_trace().map_err(Failure::from)?;
            let layout = ctx.call_explained(&input, &LAYOUT_EXPLAIN, || f(&ctx.gpu, &idx_d, tokens, topk, experts, ranks))?;
            let trace = ctx.gpu.trace().map_err(Failure::from)?;
            no_host_copies(&trace, "the layout", &input)?;
            let ops = launched(&trace, "get_dispatch_layout", &input)?;
            // The kernel's contract: experts / ranks counters, then one scan entry per thread.
            let short = ops.iter().find_map(|o| match o.kind {
                OpKind::Launch { shared_mem_bytes, block, .. } => {
                    let need = (experts / ranks + (block[0] * block[1] * block[2]) as usize) * 4;
                    ((shared_mem_bytes as usize) < need).then_some((shared_mem_bytes, need))
                }
                _ => None,
            });
            if let Some((shared_mem_bytes, need)) = short {
                return Err(Failure::new(format!(
                    "get_dispatch_layout was launched with {shared_mem_bytes} bytes of dynamic shared memory; its {} expert \
                     counters and its scan need {need}",
                    experts / ranks
                ))
                .concept(
                    "count in shared memory: each block keeps its rank's expert counters on chip and updates them with \
                     shared-memory atomics, writing global memory once at the end (global atomics from every thread contend)",
                )
                .input(input));
            }
            let (want_rank, want_expert, want_pos) = host_layout(&idx, tokens, topk, experts, ranks);
            let got_rank = s.clone_dtoh(&layout.num_tokens_per_rank).map_err(Failure::from)?;
            let got_expert = s.clone_dtoh(&layout.num_tokens_per_expert).map_err(Failure::from)?;
            let got_pos = s.clone_dtoh(&layout.send_pos).map_err(Failure::from)?;
            check_values("num_tokens_per_expert", &got_expert, &want_expert, Some(-1))
                .map_err(|f| f.concept("num_tokens_per_expert[e] counts the tokens that chose expert e").input(&input))?;
            check_values("num_tokens_per_rank", &got_rank, &want_rank, Some(-1)).map_err(|f| {
                let per_expert: Vec<i32> = want_expert.chunks(experts / ranks).map(|c| c.iter().sum()).collect();
                let concept = if got_rank == per_expert {
                    "a token goes to a rank ONCE, however many of its experts live there: count tokens, not (token, expert) pairs"
                } else {
                    "num_tokens_per_rank[d] counts the tokens with at least one expert on rank d"
                };
                f.concept(concept).input(&input)
            })?;
            if got_pos != want_pos {
                let f = check_values("send_pos", &got_pos, &want_pos, Some(-1)).unwrap_err();
                let same_places = (0..ranks).all(|d| {
                    let mut a: Vec<i32> = (0..tokens).map(|t| got_pos[t * ranks + d]).filter(|&p| p >= 0).collect();
                    let b: Vec<i32> = (0..tokens).map(|t| want_pos[t * ranks + d]).filter(|&p| p >= 0).collect();
                    a.sort();
                    a == b && (0..tokens).all(|t| (got_pos[t * ranks + d] >= 0) == (want_pos[t * ranks + d] >= 0))
                });
                let concept = if same_places {
                    "places in token order: an atomic counter hands them out in whatever order threads arrive, and a token's \
                     place must not depend on timing. A scan of the flags gives token t the number of earlier tokens going to d"
                } else {
                    "send_pos[t][d] = the number of tokens before t (in all tiles) that go to d, or -1: an exclusive prefix sum \
                     of the flags, plus the carry from the tiles before"
                };
                return Err(f.concept(concept).input(input));
            }
        }
        Ok(())
    })
}

// ---- ch12-dispatch ------------------------------------------------------------------------------

/// A case of the exchange graders: (ranks, tokens, hidden, experts, topk, name).
type Exchange = (usize, usize, usize, usize, usize, &'static str);

const EXCHANGE_CASES: [Exchange; 4] = [
    (1, 1, 8, 2, 1, "one rank, one token"),
    (3, 1, 16, 9, 3, "one token, 9 experts on 3 ranks"),
    (4, 129, 24, 8, 3, "129 tokens per rank on 4 ranks"),
    (5, 300, 20, 15, 4, "large: 300 tokens per rank, 15 experts on 5 ranks"),
];

const DISPATCH_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some(
        "a store past a receive buffer: a token's slot in rank d is (tokens every LOWER rank sends to d) + send_pos[t][d], \
         below the number d receives; and per_rank_buffer is ranks × ranks",
    ),
    race: Some("two blocks wrote one slot: each (token, rank) pair has its own slot, from per_rank_buffer and send_pos"),
    divergence: None,
    uninitialized: Some(
        "a read of a count nobody wrote: notify_dispatch must fill row `rank` of every rank's per_rank_buffer, and every \
         rank's notify must be done (a world barrier) before any dispatch reads the matrix",
    ),
    launch_config: None,
};

fn case_input(c: &Exchange) -> String {
    let (ranks, tokens, hidden, experts, topk, name) = *c;
    format!(
        "{ranks} rank{}, {tokens} token{} each of {hidden} floats, top-{topk} of {experts} experts ({name})",
        if ranks == 1 { "" } else { "s" },
        if tokens == 1 { "" } else { "s" }
    )
}

/// `dispatch(world, shape, tokens, layouts, per_rank_buffer, recv)`.
pub fn dispatch(f: impl Fn(&World, &MoeShape, &[RankTokens], &[Layout], &mut Symmetric<i32>, &mut Received) -> Result<()>) -> GradeReport {
    grade("ch12-dispatch", |ctx| {
        for c in EXCHANGE_CASES {
            let (ranks, tokens, hidden, experts, topk, _) = c;
            let input = case_input(&c);
            let shape = MoeShape { tokens, hidden, experts, topk };
            let world = grading_world(ctx, Topology::single_node(ranks).expect("a valid topology")).map_err(Failure::from)?;
            let xs: Vec<Vec<f32>> = (0..ranks).map(|_| ctx.rng.vec_f32(tokens * hidden, -1.0, 1.0)).collect();
            let (idx, w): (Vec<Vec<i32>>, Vec<Vec<f32>>) = (0..ranks).map(|_| random_routing(&mut ctx.rng, tokens, experts, topk)).unzip();
            let slots = host_slots(&idx, tokens, topk, experts, ranks);
            let cap = slots.iter().map(Vec::len).max().unwrap_or(0).max(1);
            let rank_tokens = upload_tokens(&world, &xs, &idx, &w).map_err(Failure::from)?;
            let layouts = upload_layouts(&world, &idx, &shape).map_err(Failure::from)?;
            // SAFETY: notify_dispatch fills it; poison shows a row it missed.
            let mut per_rank_buffer =
                unsafe { Symmetric::<i32>::alloc(&world, ranks * ranks, "per_rank_buffer") }.map_err(Failure::from)?;
            let mut recv = alloc_received(&world, cap, &shape).map_err(Failure::from)?;
            world.synchronize().map_err(Failure::from)?;
            clear_world_traces(&world).map_err(Failure::from)?;
            ctx.call_explained(&input, &DISPATCH_EXPLAIN, || f(&world, &shape, &rank_tokens, &layouts, &mut per_rank_buffer, &mut recv))?;
            world.synchronize().map_err(Failure::from)?;
            let traces = world_traces(&world).map_err(Failure::from)?;
            for trace in &traces {
                no_host_copies(trace, "the dispatch", &input)?;
            }
            launched_anywhere(&traces, "notify_dispatch", &input)?;
            launched_anywhere(&traces, "dispatch", &input)?;
            barrier_between(&world, &traces, "notify_dispatch", "dispatch", &input)?;
            let want_matrix = count_matrix(&idx, &shape, ranks);
            for (d, got) in per_rank_buffer.to_host(&world).map_err(Failure::from)?.iter().enumerate() {
                check_values(&format!("per_rank_buffer on rank {d}"), got, &want_matrix, Some(-1)).map_err(|f| {
                    f.concept(
                        "notify_dispatch: rank s writes its num_tokens_per_rank into row s of EVERY rank's per_rank_buffer \
                         (per_rank_buffer[d] through the peer table), so each rank ends with the whole matrix",
                    )
                    .input(&input)
                })?;
            }
            check_received(&world, &recv, &slots, &shape, &xs, &idx, &w, &input)?;
        }
        Ok(())
    })
}

// ---- ch12-combine -------------------------------------------------------------------------------

const COMBINE_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some(
        "an index past a buffer: combine runs one block per received slot (num_recv of them), and a token's row in its \
         rank's combine_buf is (t · ranks + this rank)",
    ),
    race: Some("two blocks wrote one row of combine_buf: each (token, rank) pair has its own row, t · ranks + rank"),
    divergence: None,
    uninitialized: Some(
        "a read of a row nobody wrote: expert_out has rows only for the experts on this rank (recv_topk_idx >= 0), and \
         combine_buf only for the ranks a token went to (send_pos >= 0); and every combine must be done (a world barrier) \
         before combine_reduce reads",
    ),
    launch_config: Some("an empty grid: a rank that received no token has nothing to send back; skip its combine launch"),
};

/// The learner's combine.
type CombineFn<'a> = dyn Fn(&World, &MoeShape, &[Layout], &Received, &[usize], &[DeviceSlice<f32>], &mut Symmetric<f32>, &mut [DeviceSlice<f32>]) -> Result<()>
    + 'a;

/// `combine(world, shape, layouts, recv, num_recv, expert_out, combine_buf, out)`.
#[allow(clippy::type_complexity)]
pub fn combine(
    f: impl Fn(
        &World,
        &MoeShape,
        &[Layout],
        &Received,
        &[usize],
        &[DeviceSlice<f32>],
        &mut Symmetric<f32>,
        &mut [DeviceSlice<f32>],
    ) -> Result<()>,
) -> GradeReport {
    let f: &CombineFn<'_> = &f;
    grade("ch12-combine", |ctx| {
        for c in EXCHANGE_CASES {
            let (ranks, tokens, hidden, experts, topk, _) = c;
            let input = case_input(&c);
            let shape = MoeShape { tokens, hidden, experts, topk };
            let world = grading_world(ctx, Topology::single_node(ranks).expect("a valid topology")).map_err(Failure::from)?;
            let ffn = (hidden / 2).max(1);
            let weights = gpubook_labs::ep::reference::Experts::random(experts, hidden, ffn, &mut ctx.rng);
            let xs: Vec<Vec<f32>> = (0..ranks).map(|_| ctx.rng.vec_f32(tokens * hidden, -1.0, 1.0)).collect();
            let (idx, w): (Vec<Vec<i32>>, Vec<Vec<f32>>) = (0..ranks).map(|_| random_routing(&mut ctx.rng, tokens, experts, topk)).unzip();
            let slots = host_slots(&idx, tokens, topk, experts, ranks);
            let num_recv: Vec<usize> = slots.iter().map(Vec::len).collect();
            let cap = num_recv.iter().copied().max().unwrap_or(0).max(1);
            let layouts = upload_layouts(&world, &idx, &shape).map_err(Failure::from)?;
            let mut recv = alloc_received(&world, cap, &shape).map_err(Failure::from)?;
            let per_rank = experts / ranks;
            let mut expert_out = Vec::with_capacity(ranks);
            for d in 0..ranks {
                let want = expected_recv(&slots[d], d, &shape, ranks, &xs, &idx, &w);
                let s = world.rank(d).stream();
                let n = num_recv[d];
                if n > 0 {
                    s.memcpy_htod(&want.x, &mut recv.x.on_mut(d).slice_mut(..n * hidden)).map_err(Failure::from)?;
                    s.memcpy_htod(&want.topk_idx, &mut recv.topk_idx.on_mut(d).slice_mut(..n * topk)).map_err(Failure::from)?;
                    s.memcpy_htod(&want.topk_weights, &mut recv.topk_weights.on_mut(d).slice_mut(..n * topk)).map_err(Failure::from)?;
                    s.memcpy_htod(&want.src, &mut recv.src.on_mut(d).slice_mut(..n)).map_err(Failure::from)?;
                }
                // The experts' outputs, computed on the host: rows of experts elsewhere stay poisoned.
                // SAFETY: the rows of local experts are written below; the rest must not be read.
                let mut out = unsafe { s.alloc::<f32>(cap * topk * hidden) }.map_err(Failure::from)?;
                out.set_label(format!("expert_out@{d}"));
                for (i, &(src, t)) in slots[d].iter().enumerate() {
                    for j in 0..topk {
                        let e = idx[src][t * topk + j] as usize;
                        if e / per_rank == d {
                            let y: Vec<f32> = weights.apply(e, &xs[src][t * hidden..(t + 1) * hidden]).iter().map(|&v| v as f32).collect();
                            let at = (i * topk + j) * hidden;
                            s.memcpy_htod(&y, &mut out.slice_mut(at..at + hidden)).map_err(Failure::from)?;
                        }
                    }
                }
                expert_out.push(out);
            }
            // SAFETY: rows of routes a token took are written by combine; the rest must not be read.
            let mut combine_buf =
                unsafe { Symmetric::<f32>::alloc(&world, tokens * ranks * hidden, "combine_buf") }.map_err(Failure::from)?;
            let mut outs: Vec<DeviceSlice<f32>> = Vec::with_capacity(ranks);
            for r in 0..ranks {
                // SAFETY: combine_reduce should write every element; poison shows one it missed.
                let mut o = unsafe { world.rank(r).stream().alloc::<f32>(tokens * hidden) }.map_err(Failure::from)?;
                o.set_label(format!("out@{r}"));
                outs.push(o);
            }
            world.synchronize().map_err(Failure::from)?;
            clear_world_traces(&world).map_err(Failure::from)?;
            ctx.call_explained(&input, &COMBINE_EXPLAIN, || {
                f(&world, &shape, &layouts, &recv, &num_recv, &expert_out, &mut combine_buf, &mut outs)
            })?;
            world.synchronize().map_err(Failure::from)?;
            let traces = world_traces(&world).map_err(Failure::from)?;
            for trace in &traces {
                no_host_copies(trace, "the combine", &input)?;
            }
            launched_anywhere(&traces, "combine_reduce", &input)?;
            if num_recv.iter().any(|&n| n > 0) {
                launched_anywhere(&traces, "combine", &input)?;
                barrier_between(&world, &traces, "combine", "combine_reduce", &input)?;
            }
            for r in 0..ranks {
                let got = world.rank(r).stream().clone_dtoh(&outs[r]).map_err(Failure::from)?;
                let routing = gpubook_labs::ep::HostRouting { topk, topk_idx: idx[r].clone(), topk_weights: w[r].clone() };
                let want = gpubook_labs::ep::reference::dense_moe(&xs[r], &routing, &weights);
                let tol = Tolerance::sum_of(topk * ffn);
                if check_f32("out", &got, &want, tol).is_err() {
                    let unweighted = gpubook_labs::ep::reference::dense_moe(
                        &xs[r],
                        &gpubook_labs::ep::HostRouting { topk, topk_idx: idx[r].clone(), topk_weights: vec![1.0; w[r].len()] },
                        &weights,
                    );
                    let f = check_f32(&format!("out on rank {r}"), &got, &want, tol).unwrap_err();
                    let concept = if check_f32("out", &got, &unweighted, tol).is_ok() {
                        "combine sums the experts' outputs WEIGHTED by the gate: Σ_k recv_topk_weights[k] · expert_out[k]"
                    } else {
                        "out[t] = Σ over the token's experts of weight · expert output: each rank sends back the weighted sum of \
                         its experts' rows, and the token's rank adds up the rows of the ranks it went to"
                    };
                    return Err(f.concept(concept).input(input).detail("the reference is a dense MoE layer computed on the host, in f64"));
                }
            }
        }
        Ok(())
    })
}
