//! Chapter 14's measurements (`gpubook moe channels`): how fast a channelled dispatch goes with
//! more channels (two SMs each), and what a communication kernel holding k SMs costs a matrix
//! multiply that fills the rest, and how much of the communication the multiply hides.
//!
//! Everything runs on one device: the node's GPUs are ranks of a [`World`] on it, so the
//! "NVLink" stores are stores into the same memory, and the figures are the kernels' own speed,
//! not a link's. Reference code: it calls [`gpubook::reference::called`].

use crate::rng::Rng;
use anyhow::Context;
use gpubook::ep::{PeerPtr, Symmetric, Topology, World};
use gpubook::gpu::{BackendKind, DeviceSlice, Function, Gpu, LaunchConfig, Result, Source, Stream};

/// A sweep's settings: `tokens` of `hidden` floats from one sender to a node of `gpus` GPUs,
/// each token placed on `fanout` of them at random.
#[derive(Debug, Clone, Copy)]
pub struct SweepConfig {
    pub tokens: usize,
    pub hidden: usize,
    pub gpus: usize,
    pub fanout: usize,
    pub slots: usize,
    pub chunk: usize,
    pub senders: usize,
    pub reps: usize,
}

impl SweepConfig {
    /// DeepEP-like sizes on a GPU (4096 tokens of 7168 floats, 8 GPUs, 7 sender warps); a
    /// small problem on the emulator, whose timings are a model's. Slots are a multiple of the
    /// sender warps (see the grader of ch14-warp-roles: the emulator's race detector needs it).
    pub fn for_device(gpu: &Gpu) -> SweepConfig {
        match gpu.backend() {
            BackendKind::Cuda => SweepConfig { tokens: 4096, hidden: 7168, gpus: 8, fanout: 3, slots: 28, chunk: 4, senders: 7, reps: 5 },
            BackendKind::Emulator => SweepConfig { tokens: 96, hidden: 64, gpus: 4, fanout: 2, slots: 8, chunk: 2, senders: 4, reps: 1 },
        }
    }
}

/// One channel count of the sweep.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub channels: usize,
    pub ms: f64,
    /// Bytes stored into the GPUs' receive buffers.
    pub bytes: usize,
}

impl SweepRow {
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / (self.ms * 1e-3) / 1e9
    }
}

/// Median milliseconds of `f` between two events on `s`, after one warm-up run.
fn time_ms(s: &Stream, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut ms = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let start = s.record_event()?;
        f()?;
        let end = s.record_event()?;
        ms.push(start.elapsed_ms(&end)? as f64);
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}

/// The warp-roles dispatch (chapter 14's solution, solutions/kernels/ch14/warp_roles.cu) at each channel count of `channels`.
pub fn channel_sweep(gpu: &Gpu, cfg: &SweepConfig, channels: &[usize]) -> anyhow::Result<Vec<SweepRow>> {
    gpubook::reference::called("gpubook_labs::channels::channel_sweep");
    let sms = gpu.info().multiprocessors as usize;
    let world = World::new(gpu, Topology::single_node(cfg.gpus)?)?;
    let f = gpu.load_module(crate::solutions::kernel("ch14/warp_roles.cu"))?.load_function("dispatch_roles")?;
    let mut rng = Rng::new(14);
    let (t, h, g) = (cfg.tokens, cfg.hidden, cfg.gpus);
    let mut place = vec![-1i32; t * g];
    let mut counts = vec![0usize; g];
    for tok in 0..t {
        let mut chosen = 0;
        while chosen < cfg.fanout.clamp(1, g) {
            let d = rng.usize(0, g);
            if place[tok * g + d] < 0 {
                place[tok * g + d] = counts[d] as i32;
                counts[d] += 1;
                chosen += 1;
            }
        }
    }
    let bytes = counts.iter().sum::<usize>() * h * 4;
    let s = world.rank(0).stream();
    let x = s.clone_htod(&rng.vec_f32(t * h, -1.0, 1.0))?;
    let place_d = s.clone_htod(&place)?;
    let cap = counts.iter().copied().max().unwrap_or(1).max(1);
    // SAFETY: every placed row is written by the kernel before anything reads it.
    let recv_x = unsafe { Symmetric::<f32>::alloc(&world, cap * h, "recv_x") }?;
    // SAFETY: the kernel writes each placed row's source index before anything reads it.
    let recv_src = unsafe { Symmetric::<i32>::alloc(&world, cap, "recv_src") }?;
    let mut rows = Vec::new();
    for &c in channels {
        if c == 0 || 2 * c > sms {
            continue; // every block of a persistent kernel must be resident at once
        }
        // SAFETY: the senders write each slot before a forwarder reads it.
        let (mut ring_x, mut ring_src) = unsafe { (s.alloc::<f32>(c * cfg.slots * h)?, s.alloc::<i32>(c * cfg.slots)?) };
        let mut counters = s.alloc_zeros::<i32>(2 * c)?;
        let warps = cfg.senders.max(g) + 1;
        let launch = LaunchConfig { grid_dim: (2 * c as u32, 1, 1), block_dim: (32 * warps as u32, 1, 1), shared_mem_bytes: 0 };
        let ms = time_ms(s, cfg.reps, || {
            s.memset_zeros(&mut counters)?;
            roles_launch(&f, s, launch, cfg, &x, &place_d, (&mut ring_x, &mut ring_src, &mut counters), recv_x.peers(0), recv_src.peers(0))
        })?;
        // The zeroing of the counters is inside the timed span; it is 8 bytes a channel.
        let got = recv_src.to_host(&world)?;
        check_received(&got, &place, t, g).with_context(|| format!("the dispatch with {c} channels"))?;
        rows.push(SweepRow { channels: c, ms, bytes });
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn roles_launch(
    f: &Function,
    s: &Stream,
    launch: LaunchConfig,
    cfg: &SweepConfig,
    x: &DeviceSlice<f32>,
    place: &DeviceSlice<i32>,
    ring: (&mut DeviceSlice<f32>, &mut DeviceSlice<i32>, &mut DeviceSlice<i32>),
    recv_x: &DeviceSlice<PeerPtr<f32>>,
    recv_src: &DeviceSlice<PeerPtr<i32>>,
) -> Result<()> {
    let (t, h, g) = (cfg.tokens as i32, cfg.hidden as i32, cfg.gpus as i32);
    let (slots, chunk, senders) = (cfg.slots as i32, cfg.chunk as i32, cfg.senders as i32);
    let mut l = s.launch_builder(f);
    l.arg(x).arg(place).arg(ring.0).arg(ring.1).arg(ring.2).arg(recv_x).arg(recv_src);
    l.arg(&t).arg(&h).arg(&g).arg(&slots).arg(&chunk).arg(&senders);
    // SAFETY: the arguments are the kernel's, in its order, with the sizes it indexes.
    unsafe { l.launch(launch) }
}

/// A measurement that is not checked is not a measurement: every placed row arrived.
fn check_received(got: &[Vec<i32>], place: &[i32], tokens: usize, gpus: usize) -> anyhow::Result<()> {
    for t in 0..tokens {
        for g in 0..gpus {
            let p = place[t * gpus + g];
            if p >= 0 && got[g][p as usize] != t as i32 {
                anyhow::bail!("token {t} did not arrive at GPU {g} (row {p} holds {})", got[g][p as usize]);
            }
        }
    }
    Ok(())
}

/// The sweep as a table: channels, SMs, time, GB/s delivered, and the speed-up over one channel.
pub fn sweep_table(gpu: &Gpu, cfg: &SweepConfig, rows: &[SweepRow]) -> String {
    let mut out = format!(
        "{} tokens of {} floats to {} GPUs ({} each), on {} ({} SMs)\n",
        cfg.tokens,
        cfg.hidden,
        cfg.gpus,
        cfg.fanout,
        gpu.info().name,
        gpu.info().multiprocessors
    );
    out += &format!(
        "(at most {} channels here: every block of the persistent kernel must be resident, one per SM)\n",
        gpu.info().multiprocessors / 2
    );
    out += "channels  SMs    time ms    GB/s  vs 1 channel\n";
    let base = rows.first().map(|r| r.ms).unwrap_or(1.0);
    for r in rows {
        out += &format!("{:>8}  {:>3}  {:>9.3}  {:>6.1}  {:>11.2}x\n", r.channels, 2 * r.channels, r.ms, r.gbps(), base / r.ms);
    }
    out
}

/// The SM-sharing measurement's settings: an `n` x `n` multiply, and a copy of `comm_mib` MiB
/// `rounds` times by blocks of `comm_threads` threads.
#[derive(Debug, Clone, Copy)]
pub struct ShareConfig {
    pub n: usize,
    pub comm_mib: usize,
    pub rounds: usize,
    pub comm_threads: u32,
    pub reps: usize,
}

impl ShareConfig {
    pub fn for_device(gpu: &Gpu) -> ShareConfig {
        match gpu.backend() {
            BackendKind::Cuda => ShareConfig { n: 4096, comm_mib: 256, rounds: 4, comm_threads: 1024, reps: 5 },
            BackendKind::Emulator => ShareConfig { n: 64, comm_mib: 1, rounds: 1, comm_threads: 256, reps: 1 },
        }
    }
}

/// One k of the SM-sharing measurement.
#[derive(Debug, Clone)]
pub struct ShareRow {
    /// Blocks of the communication kernel (one per SM it holds).
    pub comm_sms: usize,
    pub gemm_alone_ms: f64,
    /// The multiply's own time while the communication kernel runs beside it.
    pub gemm_beside_ms: f64,
    pub comm_alone_ms: f64,
    /// Both, launched together on two streams, first launch to last end.
    pub together_ms: f64,
}

impl ShareRow {
    /// How much longer the multiply takes beside the communication kernel.
    pub fn slowdown(&self) -> f64 {
        self.gemm_beside_ms / self.gemm_alone_ms
    }

    /// The share of the shorter of the two that disappears when they run together.
    pub fn hidden(&self) -> f64 {
        let saved = self.gemm_alone_ms + self.comm_alone_ms - self.together_ms;
        (saved / self.gemm_alone_ms.min(self.comm_alone_ms)).clamp(0.0, 1.0)
    }
}

/// For each k of `comm_sms`: the multiply alone, the copy on k blocks alone, and the two at once.
pub fn sm_share(gpu: &Gpu, cfg: &ShareConfig, comm_sms: &[usize]) -> anyhow::Result<Vec<ShareRow>> {
    gpubook::reference::called("gpubook_labs::channels::sm_share");
    let m = gpu.load_module(Source::library("ep/sm_share.cu"))?;
    let (gemm, copy) = (m.load_function("gemm_tiled")?, m.load_function("comm_copy")?);
    let compute = gpu.default_stream();
    let comm = gpu.new_stream()?;
    let mut rng = Rng::new(15);
    let n = cfg.n;
    let a = compute.clone_htod(&rng.vec_f32(n * n, -1.0, 1.0))?;
    let b = compute.clone_htod(&rng.vec_f32(n * n, -1.0, 1.0))?;
    let mut c = compute.alloc_zeros::<f32>(n * n)?;
    let n4 = cfg.comm_mib * (1 << 20) / 16;
    let src = comm.alloc_zeros::<f32>(4 * n4)?;
    let mut dst = comm.alloc_zeros::<f32>(4 * n4)?;
    compute.synchronize()?;
    comm.synchronize()?;
    let tiles = n.div_ceil(16) as u32;
    let gemm_cfg = LaunchConfig { grid_dim: (tiles, tiles, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 };
    let run_gemm = |c: &mut DeviceSlice<f32>| -> Result<()> {
        let mut l = compute.launch_builder(&gemm);
        let ni = n as i32;
        l.arg(&a).arg(&b).arg(c).arg(&ni);
        // SAFETY: three n x n matrices, as the kernel indexes them.
        unsafe { l.launch(gemm_cfg) }
    };
    let run_copy = |dst: &mut DeviceSlice<f32>, k: usize| -> Result<()> {
        let mut l = comm.launch_builder(&copy);
        let (len, rounds) = (n4 as i64, cfg.rounds as i32);
        l.arg(&src).arg(dst).arg(&len).arg(&rounds);
        let launch = LaunchConfig { grid_dim: (k as u32, 1, 1), block_dim: (cfg.comm_threads, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: src and dst hold n4 float4s each.
        unsafe { l.launch(launch) }
    };
    let gemm_alone_ms = time_ms(&compute, cfg.reps, || run_gemm(&mut c))?;
    let sms = gpu.info().multiprocessors as usize;
    let mut rows = Vec::new();
    for &k in comm_sms.iter().filter(|&&k| k >= 1 && k < sms) {
        let comm_alone_ms = time_ms(&comm, cfg.reps, || run_copy(&mut dst, k))?;
        // Together: the copy first, so its blocks take their SMs, then the multiply on the
        // other stream; the span runs from the copy's start to the later of the two ends.
        let mut beside = Vec::new();
        let mut together = Vec::new();
        for _ in 0..cfg.reps.max(1) + 1 {
            let start = comm.record_event()?;
            compute.wait(&start)?;
            run_copy(&mut dst, k)?;
            let g0 = compute.record_event()?;
            run_gemm(&mut c)?;
            let g1 = compute.record_event()?;
            comm.wait(&g1)?;
            let end = comm.record_event()?;
            end.synchronize()?;
            beside.push(g0.elapsed_ms(&g1)? as f64);
            together.push(start.elapsed_ms(&end)? as f64);
        }
        // The first run warms up.
        let median = |v: &mut Vec<f64>| {
            v.remove(0);
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        rows.push(ShareRow {
            comm_sms: k,
            gemm_alone_ms,
            gemm_beside_ms: median(&mut beside),
            comm_alone_ms,
            together_ms: median(&mut together),
        });
    }
    Ok(rows)
}

/// The measurement as a table.
pub fn share_table(gpu: &Gpu, cfg: &ShareConfig, rows: &[ShareRow]) -> String {
    let mut out = format!(
        "{n} x {n} multiply ({} blocks of 256 threads) beside a copy of {} MiB x {} on k blocks of {} threads, on {} ({} SMs)\n",
        cfg.n.div_ceil(16).pow(2),
        cfg.comm_mib,
        cfg.rounds,
        cfg.comm_threads,
        gpu.info().name,
        gpu.info().multiprocessors,
        n = cfg.n
    );
    out += "  k  GEMM alone  GEMM beside  slowdown  copy alone  together  hidden\n";
    for r in rows {
        out += &format!(
            "{:>3}  {:>7.3} ms  {:>8.3} ms  {:>7.1}%  {:>7.3} ms  {:>5.3} ms  {:>5.0}%\n",
            r.comm_sms,
            r.gemm_alone_ms,
            r.gemm_beside_ms,
            (r.slowdown() - 1.0) * 100.0,
            r.comm_alone_ms,
            r.together_ms,
            r.hidden() * 100.0
        );
    }
    out
}
