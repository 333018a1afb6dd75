//! The expert-parallel kernels of `moe run`, loaded once and launched with their arguments in
//! order: the gate and the layout are the chapters' own answers (solutions/kernels/ch13 and ch12,
//! one copy each); dispatch, combine and the experts are the library's (`kernels/ep/`), which
//! also count the traffic the links are modelled from.

use super::config::MoeConfig;
use gpubook::ep::GateConfig;
use gpubook::ep::Layout;
use gpubook::ep::{PeerPtr, Symmetric};
use gpubook::ep::{RdmaBuffers as Rdma, Received};
use gpubook::gpu::{DeviceSlice, Function, Gpu, LaunchConfig, Result, Source, Stream};

pub(crate) struct Kernels {
    gate: Function,
    layout: Function,
    notify: Function,
    dispatch: Function,
    combine: Function,
    combine_reduce: Function,
    dispatch_rdma: Function,
    dispatch_forward: Function,
    combine_local: Function,
    combine_forward: Function,
    experts: Function,
}

const BLOCK: u32 = 256;

pub(crate) fn launch_cfg(blocks: usize, shared_mem_bytes: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks.max(1) as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: shared_mem_bytes as u32 }
}

fn i(v: usize) -> i32 {
    v as i32
}

impl Kernels {
    pub(crate) fn load(gpu: &Gpu) -> Result<Kernels> {
        let load = |file: &str| gpu.load_module(Source::library(&format!("ep/{file}")));
        let gate = gpu.load_module(crate::solutions::kernel("ch13/gate_node_limited.cu"))?;
        let layout = gpu.load_module(crate::solutions::kernel("ch12/dispatch_layout.cu"))?;
        let (intra, inter, experts) = (load("intranode.cu")?, load("internode.cu")?, load("experts.cu")?);
        Ok(Kernels {
            gate: gate.load_function("moe_gate_node_limited")?,
            layout: layout.load_function("get_dispatch_layout")?,
            notify: intra.load_function("notify_dispatch")?,
            dispatch: intra.load_function("dispatch")?,
            combine: intra.load_function("combine")?,
            combine_reduce: intra.load_function("combine_reduce")?,
            dispatch_rdma: inter.load_function("dispatch_rdma")?,
            dispatch_forward: inter.load_function("dispatch_forward")?,
            combine_local: inter.load_function("combine_local")?,
            combine_forward: inter.load_function("combine_forward")?,
            experts: experts.load_function("moe_experts")?,
        })
    }

    pub(crate) fn gate(
        &self,
        s: &Stream,
        logits: &DeviceSlice<f32>,
        bias: &DeviceSlice<f32>,
        tokens: usize,
        g: &GateConfig,
    ) -> Result<(DeviceSlice<i32>, DeviceSlice<f32>)> {
        // SAFETY: the kernel writes every token's row.
        let (mut idx, mut w) = unsafe { (s.alloc::<i32>(tokens * g.topk)?, s.alloc::<f32>(tokens * g.topk)?) };
        let mut l = s.launch_builder(&self.gate);
        let (t, e, gr, tg, k) = (i(tokens), i(g.experts), i(g.groups), i(g.topk_groups), i(g.topk));
        l.arg(logits).arg(bias).arg(&mut idx).arg(&mut w).arg(&t).arg(&e).arg(&gr).arg(&tg).arg(&k).arg(&g.route_scale);
        let cfg = LaunchConfig { grid_dim: (tokens.div_ceil(128) as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: logits hold tokens × experts, idx and w tokens × topk; the kernel's t < tokens
        // guard stops the last block, and check_for_kernels bounds experts and groups.
        unsafe { l.launch(cfg) }?;
        Ok((idx, w))
    }

    pub(crate) fn layout(
        &self,
        s: &Stream,
        topk_idx: &DeviceSlice<i32>,
        tokens: usize,
        topk: usize,
        experts: usize,
        ranks: usize,
    ) -> Result<Layout> {
        // SAFETY: every element is written by the kernel.
        let mut out = unsafe {
            Layout {
                num_tokens_per_rank: s.alloc::<i32>(ranks)?,
                num_tokens_per_expert: s.alloc::<i32>(experts)?,
                send_pos: s.alloc::<i32>(tokens * ranks)?,
            }
        };
        let mut l = s.launch_builder(&self.layout);
        let (t, k, e, r) = (i(tokens), i(topk), i(experts), i(ranks));
        l.arg(topk_idx).arg(&mut out.num_tokens_per_rank).arg(&mut out.num_tokens_per_expert).arg(&mut out.send_pos);
        l.arg(&t).arg(&k).arg(&e).arg(&r);
        // SAFETY: out holds ranks, experts and tokens × ranks ints, topk_idx tokens × topk; one
        // block per rank, with shared memory for experts / ranks counters and a scan slot a thread.
        unsafe { l.launch(launch_cfg(ranks, (experts / ranks + BLOCK as usize) * 4)) }?;
        Ok(out)
    }

    pub(crate) fn notify(
        &self,
        s: &Stream,
        per_rank: &DeviceSlice<i32>,
        peers: &DeviceSlice<PeerPtr<i32>>,
        moved: &mut DeviceSlice<i32>,
        ranks: usize,
        rank: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.notify);
        let (r_n, r) = (i(ranks), i(rank));
        l.arg(per_rank).arg(peers).arg(moved).arg(&r_n).arg(&r);
        // SAFETY: per_rank holds ranks ints, each peer's count matrix ranks × ranks (moe::run
        // sizes them), and moved 2 × ranks; the kernel writes only row `rank` of each matrix.
        unsafe { l.launch(launch_cfg(1, 0)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch(
        &self,
        s: &Stream,
        c: &MoeConfig,
        x: &DeviceSlice<f32>,
        idx: &DeviceSlice<i32>,
        w: &DeviceSlice<f32>,
        send_pos: &DeviceSlice<i32>,
        counts: &DeviceSlice<i32>,
        recv: &Received,
        moved: &mut DeviceSlice<i32>,
        rank: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.dispatch);
        l.arg(x).arg(idx).arg(w).arg(send_pos).arg(counts);
        l.arg(recv.x.peers(rank)).arg(recv.topk_idx.peers(rank)).arg(recv.topk_weights.peers(rank)).arg(recv.src.peers(rank));
        let (t, h, k, e, r_n, r) = (i(c.tokens), i(c.hidden), i(c.topk), i(c.experts), i(c.ranks()), i(rank));
        l.arg(moved).arg(&t).arg(&h).arg(&k).arg(&e).arg(&r_n).arg(&r);
        // SAFETY: the receive buffers hold `cap` slots, at least what any rank receives (summed
        // from the count matrix), so offset + pos stays inside; shared memory holds ranks ints.
        unsafe { l.launch(launch_cfg(c.channels, c.ranks() * 4)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_rdma(
        &self,
        s: &Stream,
        c: &MoeConfig,
        x: &DeviceSlice<f32>,
        idx: &DeviceSlice<i32>,
        w: &DeviceSlice<f32>,
        send_pos: &DeviceSlice<i32>,
        rdma: &Rdma,
        moved: &mut DeviceSlice<i32>,
        rank: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.dispatch_rdma);
        l.arg(x).arg(idx).arg(w).arg(send_pos);
        l.arg(rdma.x.peers(rank)).arg(rdma.meta.peers(rank)).arg(rdma.topk_weights.peers(rank)).arg(rdma.count.peers(rank));
        let (t, h, k, e, n, g, r) = (i(c.tokens), i(c.hidden), i(c.topk), i(c.experts), i(c.nodes), i(c.gpus_per_node), i(rank));
        l.arg(moved).arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&r);
        // SAFETY: each peer's RDMA buffers hold nodes × tokens messages, one region of `tokens`
        // per source node, and a node sends each token at most once to a region.
        unsafe { l.launch(launch_cfg(c.channels, 0)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_forward(
        &self,
        s: &Stream,
        c: &MoeConfig,
        rdma: &Rdma,
        counts: &DeviceSlice<i32>,
        recv: &Received,
        moved: &mut DeviceSlice<i32>,
        rank: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.dispatch_forward);
        l.arg(rdma.x.on(rank)).arg(rdma.meta.on(rank)).arg(rdma.topk_weights.on(rank)).arg(rdma.count.on(rank)).arg(counts);
        l.arg(recv.x.peers(rank)).arg(recv.topk_idx.peers(rank)).arg(recv.topk_weights.peers(rank)).arg(recv.src.peers(rank));
        let (t, h, k, e, n, g, r) = (i(c.tokens), i(c.hidden), i(c.topk), i(c.experts), i(c.nodes), i(c.gpus_per_node), i(rank));
        l.arg(moved).arg(&t).arg(&h).arg(&k).arg(&e).arg(&n).arg(&g).arg(&r);
        // SAFETY: the RDMA messages read were written by dispatch_rdma, and the receive buffers
        // hold `cap` slots, at least what any rank receives, as in `dispatch`.
        unsafe { l.launch(launch_cfg(c.channels, 0)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn experts(
        &self,
        s: &Stream,
        c: &MoeConfig,
        recv: &Received,
        rank: usize,
        w1: &DeviceSlice<f32>,
        w2: &DeviceSlice<f32>,
        out: &mut DeviceSlice<f32>,
        num_recv: usize,
    ) -> Result<()> {
        if num_recv == 0 {
            return Ok(());
        }
        let mut l = s.launch_builder(&self.experts);
        let (n, h, f, k) = (i(num_recv), i(c.hidden), i(c.ffn()), i(c.topk));
        l.arg(recv.x.on(rank)).arg(recv.topk_idx.on(rank)).arg(w1).arg(w2).arg(out).arg(&n).arg(&h).arg(&f).arg(&k);
        // SAFETY: rows 0..num_recv of recv were written by the dispatch, `out` holds cap × topk
        // rows of hidden floats, and shared memory holds hidden + ffn floats (hidden checked).
        unsafe { l.launch(launch_cfg(num_recv, (c.hidden + c.ffn()) * 4)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn combine(
        &self,
        s: &Stream,
        c: &MoeConfig,
        recv: &Received,
        rank: usize,
        expert_out: &DeviceSlice<f32>,
        combine_buf: &Symmetric<f32>,
        moved: &mut DeviceSlice<i32>,
        num_recv: usize,
    ) -> Result<()> {
        if num_recv == 0 {
            return Ok(());
        }
        let mut l = s.launch_builder(&self.combine);
        l.arg(recv.topk_idx.on(rank)).arg(recv.topk_weights.on(rank)).arg(recv.src.on(rank)).arg(expert_out);
        let (n, t, h, k, r_n, r) = (i(num_recv), i(c.tokens), i(c.hidden), i(c.topk), i(c.ranks()), i(rank));
        l.arg(combine_buf.peers(rank)).arg(moved).arg(&n).arg(&t).arg(&h).arg(&k).arg(&r_n).arg(&r);
        // SAFETY: reads rows 0..num_recv of recv and expert_out (written before), and writes row
        // (t, rank) of the source's combine_buf, which holds tokens × ranks rows.
        unsafe { l.launch(launch_cfg(c.channels, 0)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn combine_local(
        &self,
        s: &Stream,
        c: &MoeConfig,
        recv: &Received,
        rank: usize,
        expert_out: &DeviceSlice<f32>,
        partial: &mut DeviceSlice<f32>,
        num_recv: usize,
    ) -> Result<()> {
        if num_recv == 0 {
            return Ok(());
        }
        let mut l = s.launch_builder(&self.combine_local);
        let (n, h, k) = (i(num_recv), i(c.hidden), i(c.topk));
        l.arg(recv.topk_idx.on(rank)).arg(recv.topk_weights.on(rank)).arg(expert_out).arg(partial).arg(&n).arg(&h).arg(&k);
        // SAFETY: partial holds cap ≥ num_recv rows of hidden floats, and the grid-stride loop
        // stops at num_recv × hidden.
        unsafe { l.launch(launch_cfg((num_recv * c.hidden).div_ceil(BLOCK as usize).min(65_535), 0)) }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn combine_forward(
        &self,
        s: &Stream,
        c: &MoeConfig,
        rdma: &Rdma,
        counts: &DeviceSlice<i32>,
        partial: &Symmetric<f32>,
        combine_buf: &Symmetric<f32>,
        moved: &mut DeviceSlice<i32>,
        rank: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.combine_forward);
        l.arg(rdma.meta.on(rank)).arg(rdma.count.on(rank)).arg(counts).arg(partial.peers(rank)).arg(combine_buf.peers(rank));
        let (t, h, k, n, g, r) = (i(c.tokens), i(c.hidden), i(c.topk), i(c.nodes), i(c.gpus_per_node), i(rank));
        l.arg(moved).arg(&t).arg(&h).arg(&k).arg(&n).arg(&g).arg(&r);
        // SAFETY: the messages and counts were written by the dispatch, and each peer's
        // combine_buf holds tokens × nodes rows of hidden floats, one per route.
        unsafe { l.launch(launch_cfg(c.channels, 0)) }
    }

    pub(crate) fn combine_reduce(
        &self,
        s: &Stream,
        c: &MoeConfig,
        combine_buf: &DeviceSlice<f32>,
        send_pos: &DeviceSlice<i32>,
        out: &mut DeviceSlice<f32>,
        group: usize,
    ) -> Result<()> {
        let mut l = s.launch_builder(&self.combine_reduce);
        let (t, h, r_n, g) = (i(c.tokens), i(c.hidden), i(c.ranks()), i(group));
        l.arg(combine_buf).arg(send_pos).arg(out).arg(&t).arg(&h).arg(&r_n).arg(&g);
        // SAFETY: combine_buf holds tokens × routes rows of hidden floats, send_pos tokens ×
        // ranks and out tokens × hidden; the grid-stride loop stops at tokens × hidden.
        unsafe { l.launch(launch_cfg((c.tokens * c.hidden).div_ceil(BLOCK as usize).min(65_535), 0)) }
    }
}
