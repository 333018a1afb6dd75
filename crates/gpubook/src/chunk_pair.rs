//! One DualPipe chunk pair on two streams: the stage chapter 11's last exercise schedules
//! (`gpubook-labs`' chunk_pair measures it, `gpubook overlap` prints it).
//!
//! DualPipe runs the forward chunk of one micro-batch beside the backward chunk of another, so
//! that each one's communication hides under the other's computation. In an MoE layer each
//! chunk alternates the two (the names are the DeepSeek-V3 report's):
//!
//! ```text
//! forward chunk  (micro-batch F):  ATTN(F) ─► DISPATCH(F) ─► MLP(F) ─► COMBINE(F)
//! backward chunk (micro-batch B):  COMBINE(B) ─► MLP(B) ─► DISPATCH(B) ─► ATTN(B)
//! ```
//!
//! Here each computation is one launch of `layer` (kernels/demos/chunk_pair.cu) and each
//! communication, by default, a device-to-device copy standing for the all-to-all. On the
//! emulator the copy has an engine of its own; on an H200 it needs room on the SMs, which is why
//! [`PairConfig`] keeps the computation to half of each SM. [`Comm::Kernel`] does it the
//! DeepSeek way instead: the communication is a kernel (chapter 14's `comm_copy`) on k SMs of
//! its own, the channels, and the computation fills every other SM. The buffers of each chunk
//! form a chain, every step reading one and writing the next:
//!
//! ```text
//! forward:  tokens ─ATTN─► attn_out ─DISPATCH─► at_experts ─MLP─► experts_out ─COMBINE─► out
//! backward: grad_out ─COMBINE─► grad_at_experts ─MLP─► grad_experts_in ─DISPATCH─► grad_home ─ATTN─► grad_in
//! ```
//!
//! [`ChunkPair::run`] issues one step on a stream and waits for nothing: ordering the steps is
//! the schedule's job.

use crate::gpu::{BackendKind, CopyDir, DeviceSlice, Function, Gpu, GpuError, LaunchConfig, OpKind, Result, Source, Stream, TraceOp};
use std::fmt;

/// The eight steps of a chunk pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    AttnF,
    DispatchF,
    MlpF,
    CombineF,
    CombineB,
    MlpB,
    DispatchB,
    AttnB,
}

use Step::*;

impl Step {
    /// The forward chunk's steps, in the order its data flows through them.
    pub const FORWARD: [Step; 4] = [AttnF, DispatchF, MlpF, CombineF];
    /// The backward chunk's: the gradient enters where the forward left (the combine) and
    /// leaves where it entered (attention).
    pub const BACKWARD: [Step; 4] = [CombineB, MlpB, DispatchB, AttnB];

    /// Dispatch and combine move data between ranks; attention and the MLP compute.
    pub fn is_communication(self) -> bool {
        matches!(self, DispatchF | CombineF | CombineB | DispatchB)
    }

    /// The DeepSeek-V3 report's name: `ATTN(F)`, `DISPATCH(B)`, ...
    pub fn name(self) -> &'static str {
        match self {
            AttnF => "ATTN(F)",
            DispatchF => "DISPATCH(F)",
            MlpF => "MLP(F)",
            CombineF => "COMBINE(F)",
            CombineB => "COMBINE(B)",
            MlpB => "MLP(B)",
            DispatchB => "DISPATCH(B)",
            AttnB => "ATTN(B)",
        }
    }

    /// The step of the same chunk whose output this one reads (`None` for a chunk's first step).
    pub fn after(self) -> Option<Step> {
        let (chunk, pos) = self.place();
        let chain = if chunk == 0 { Self::FORWARD } else { Self::BACKWARD };
        pos.checked_sub(1).map(|p| chain[p])
    }

    /// (chunk, position in its chain): chunk 0 is the forward.
    fn place(self) -> (usize, usize) {
        let chunk = usize::from(Self::BACKWARD.contains(&self));
        let chain = if chunk == 0 { Self::FORWARD } else { Self::BACKWARD };
        (chunk, chain.iter().position(|s| *s == self).expect("every step is in its chain"))
    }

    /// `layer`'s a and b for each computation: distinct, so a result computed by the wrong step
    /// (or from the wrong buffer) shows.
    pub fn coefficients(self) -> (f32, f32) {
        match self {
            AttnF => (0.5, 0.25),
            MlpF => (2.0, -1.0),
            MlpB => (1.5, 0.5),
            AttnB => (-0.75, 0.125),
            _ => (1.0, 0.0),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Buffer names, shown in the trace and in hazard messages.
const NAMES: [[&str; 5]; 2] = [
    ["forward.tokens", "forward.attn_out", "forward.at_experts", "forward.experts_out", "forward.out"],
    ["backward.grad_out", "backward.grad_at_experts", "backward.grad_experts_in", "backward.grad_home", "backward.grad_in"],
];

/// Threads per block of the `layer` launches.
const BLOCK: u32 = 256;

/// How the pair's kernels run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairConfig {
    /// Work per element in each `layer` launch (see kernels/demos/chunk_pair.cu).
    pub rounds: i32,
    /// Blocks of 256 threads per SM that a `layer` launch may use (its grid-stride loop covers
    /// the rest); `None`: one thread per element, as many blocks as that takes. With
    /// [`Comm::Kernel`] the computation's blocks are laid out as that says instead.
    pub blocks_per_sm: Option<u32>,
    /// How the communication steps run.
    pub comm: Comm,
}

/// How a chunk pair communicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comm {
    /// Device-to-device copies (`memcpy_dtod`): the driver decides where they run.
    Copies,
    /// DeepSeek's way: a copy kernel (`comm_copy`, kernels/ep/sm_share.cu) of `sms` blocks,
    /// each copying a contiguous slice of the buffer as a channel copies its slice of the
    /// tokens, and `layer` with `compute_sms` blocks in a grid-stride loop. Every block of both
    /// holds a whole SM ([`DeviceInfo::whole_sm_shared_bytes`](crate::gpu::DeviceInfo::whole_sm_shared_bytes)), so
    /// with `sms + compute_sms` at most the device's SMs both kernels are resident at once,
    /// whichever starts first: no block waits for the other kernel's blocks to drain.
    Kernel { sms: u32, compute_sms: u32 },
}

impl Comm {
    /// Communication on `sms` SMs, computation on all the others.
    pub fn kernel(gpu: &Gpu, sms: u32) -> Result<Comm> {
        let all = gpu.info().multiprocessors;
        if sms == 0 || sms >= all {
            return Err(GpuError::Size(format!(
                "the communication kernel needs between 1 and {} SMs here ({all} SMs, and the computation needs one), not {sms}",
                all.saturating_sub(1)
            )));
        }
        Ok(Comm::Kernel { sms, compute_sms: all - sms })
    }

    /// What a table calls it: `copies` or `kernel on 16 SMs`.
    pub fn describe(self) -> String {
        match self {
            Comm::Copies => "copies".to_string(),
            Comm::Kernel { sms, .. } => format!("kernel on {sms} SM{}", if sms == 1 { "" } else { "s" }),
        }
    }
}

impl PairConfig {
    /// The settings `gpubook overlap` and the chapter 11 grader use.
    ///
    /// On a GPU: 256 rounds, so that a computation outlasts a copy of its buffer several times,
    /// and at most 4 blocks of 256 threads per SM: half of what an SM can hold, so the
    /// computation leaves room on every SM. That room matters. Measured on an H200, a
    /// device-to-device copy issued beside a kernel that fills the GPU (one thread per element)
    /// crawls until the kernel's blocks drain, and DualPipe's order then hides about half the
    /// communication; with 4 blocks per SM it hides over 90%.
    ///
    /// On the emulator: 1 round (its timeline charges a kernel for the bytes it touches, not
    /// its arithmetic, and its CPU really runs every round), and the same 4 blocks per SM.
    pub fn for_device(gpu: &Gpu) -> PairConfig {
        let rounds = match gpu.backend() {
            BackendKind::Cuda => 256,
            BackendKind::Emulator => 1,
        };
        PairConfig { rounds, blocks_per_sm: Some(4), comm: Comm::Copies }
    }
}

/// A chunk pair's buffers and kernels, on one device.
pub struct ChunkPair {
    /// `chains[0]`: the forward chunk's five buffers, `chains[1]` the backward chunk's.
    chains: [Vec<DeviceSlice<f32>>; 2],
    layer: Function,
    n: usize,
    rounds: i32,
    compute: LaunchConfig,
    /// The communication kernel and its launch, with [`Comm::Kernel`]; copies otherwise.
    comm: Option<(Function, LaunchConfig)>,
}

/// The name of the communication kernel in traces.
pub const COMM_KERNEL: &str = "comm_copy";

impl ChunkPair {
    /// Puts `tokens` at the start of the forward chain and `grads` at the start of the backward
    /// chain (both `n` long) and allocates the rest. Ends with a device synchronisation, so any
    /// stream may start on the pair without waiting for the set-up.
    pub fn new(gpu: &Gpu, tokens: &[f32], grads: &[f32], config: PairConfig) -> Result<ChunkPair> {
        let n = tokens.len();
        if n == 0 || grads.len() != n {
            return Err(crate::gpu::GpuError::Size(format!(
                "a chunk pair needs as many gradients as tokens, at least one ({} tokens, {} gradients)",
                n,
                grads.len()
            )));
        }
        let module = gpu.load_module(Source::library("demos/chunk_pair.cu"))?;
        let layer = module.load_function("layer")?;
        let stream = gpu.default_stream();
        let chain = |input: &[f32], names: &[&str; 5]| -> Result<Vec<DeviceSlice<f32>>> {
            let mut bufs = vec![stream.clone_htod(input)?];
            for _ in 1..5 {
                // SAFETY: the step that outputs this buffer writes all n floats before a later step reads it.
                // Uninitialised on purpose: under a grader it is poisoned, so a step that never ran
                // leaves NaNs where its output should be.
                bufs.push(unsafe { stream.alloc::<f32>(n) }?);
            }
            for (b, name) in bufs.iter_mut().zip(names) {
                b.set_label(*name);
            }
            Ok(bufs)
        };
        let chains = [chain(tokens, &NAMES[0])?, chain(grads, &NAMES[1])?];
        let (compute, comm) = match config.comm {
            Comm::Copies => {
                let blocks = (n as u32).div_ceil(BLOCK);
                let grid = match config.blocks_per_sm {
                    Some(per_sm) => blocks.min(per_sm.max(1) * gpu.info().multiprocessors.max(1)),
                    None => blocks,
                };
                (LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }, None)
            }
            Comm::Kernel { sms, compute_sms } => whole_sm_launches(gpu, &layer, n, sms, compute_sms)?,
        };
        let pair = ChunkPair { chains, layer, n, rounds: config.rounds, compute, comm };
        pair.warm_up(&stream)?;
        gpu.synchronize()?;
        Ok(pair)
    }

    /// One small launch and one small copy on scratch buffers: a GPU loads a kernel (and its
    /// copy path) on first use, which would otherwise land in the first timed step.
    fn warm_up(&self, stream: &Stream) -> Result<()> {
        let x = stream.alloc_zeros::<f32>(1)?;
        let mut y = stream.alloc_zeros::<f32>(1)?;
        let (one, zero) = (1i32, 0i32);
        let mut launch = stream.launch_builder(&self.layer);
        launch.arg(&x).arg(&mut y).arg(&one).arg(&1.0f32).arg(&0.0f32).arg(&zero);
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), ..self.compute };
        // SAFETY: x and y hold one float each and the kernel gets n = 1, so its grid-stride loop
        // touches element 0 only.
        unsafe { launch.launch(cfg) }?;
        match &self.comm {
            Some((f, cfg)) => comm_launch(stream, f, LaunchConfig { grid_dim: (1, 1, 1), ..*cfg }, &x, &mut y, 0),
            None => stream.memcpy_dtod(&x, &mut y),
        }
    }

    /// Elements per buffer.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Issues `step` on `stream`: a `layer` launch for a computation; for a communication a
    /// device-to-device copy, or the communication kernel ([`Comm::Kernel`]). It waits for
    /// nothing: making it run after the step it reads from ([`Step::after`]) is the caller's
    /// job, with an event when that step ran on another stream.
    pub fn run(&mut self, step: Step, stream: &Stream) -> Result<()> {
        let (chunk, pos) = step.place();
        let (done, todo) = self.chains[chunk].split_at_mut(pos + 1);
        let (x, y) = (&done[pos], &mut todo[0]);
        if step.is_communication() {
            return match &self.comm {
                Some((f, cfg)) => comm_launch(stream, f, *cfg, x, y, self.n),
                None => stream.memcpy_dtod(x, y),
            };
        }
        let (a, b) = step.coefficients();
        let n = self.n as i32;
        let mut launch = stream.launch_builder(&self.layer);
        launch.arg(x).arg(y).arg(&n).arg(&a).arg(&b).arg(&self.rounds);
        // SAFETY: x and y are neighbouring buffers of one chain, n floats each, and `layer`'s
        // grid-stride loop stops at n.
        unsafe { launch.launch(self.compute) }
    }

    /// Which step a traced operation was: the one that writes the buffer it wrote.
    pub fn step_of(&self, op: &TraceOp) -> Option<Step> {
        let written = match &op.kind {
            OpKind::Copy { dir: CopyDir::DeviceToDevice, dst, .. } => (*dst)?,
            OpKind::Launch { kernel, buffers, .. } if kernel == "layer" || kernel == COMM_KERNEL => {
                buffers.iter().find(|(_, write)| *write)?.0
            }
            _ => return None,
        };
        Step::FORWARD.into_iter().chain(Step::BACKWARD).find(|s| {
            let (chunk, pos) = s.place();
            self.chains[chunk][pos + 1].id() == written
        })
    }

    /// The forward chunk's output and the backward chunk's input gradient, copied to the host
    /// on `stream` (order it after the pair's last steps first, e.g. `gpu.synchronize()`).
    pub fn results(&self, stream: &Stream) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((stream.clone_dtoh(&self.chains[0][4])?, stream.clone_dtoh(&self.chains[1][4])?))
    }
}

/// The launches of [`Comm::Kernel`]: `layer` on `compute_sms` blocks and `comm_copy` on `sms`,
/// every block of 1024 threads (or the device's most) with enough shared memory to hold its SM
/// alone, checked with the occupancy calculator (the driver's, on a GPU).
fn whole_sm_launches(
    gpu: &Gpu,
    layer: &Function,
    n: usize,
    sms: u32,
    compute_sms: u32,
) -> Result<(LaunchConfig, Option<(Function, LaunchConfig)>)> {
    if !n.is_multiple_of(4) || sms == 0 || compute_sms == 0 {
        return Err(GpuError::Size(format!(
            "the communication kernel copies float4s and the pair needs SMs on both sides: \
             {n} elements (a multiple of 4, please), {sms} SMs for it, {compute_sms} for the computation"
        )));
    }
    let copy = gpu.load_module(Source::library("ep/sm_share.cu"))?.load_function(COMM_KERNEL)?;
    let threads = gpu.info().max_threads_per_block.min(1024);
    let shared = gpu.info().whole_sm_shared_bytes()?;
    for f in [layer, &copy] {
        f.set_max_dynamic_shared_bytes(shared)?;
        let per_sm = f.max_active_blocks_per_sm(threads, shared)?;
        if per_sm != 1 {
            return Err(GpuError::Size(format!(
                "a block of {threads} threads with {shared} bytes of shared memory should hold an SM alone, but {per_sm} fit"
            )));
        }
    }
    let launch = |grid: u32| LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: shared };
    Ok((launch(compute_sms), Some((copy, launch(sms)))))
}

/// `comm_copy` moving `n` floats (a multiple of 4) from `x` to `y`, once: each block copies its
/// contiguous slice, as a channel copies its slice of the tokens.
fn comm_launch(stream: &Stream, f: &Function, cfg: LaunchConfig, x: &DeviceSlice<f32>, y: &mut DeviceSlice<f32>, n: usize) -> Result<()> {
    let (n4, rounds) = ((n / 4) as i64, 1i32);
    let mut launch = stream.launch_builder(f);
    launch.arg(x).arg(y).arg(&n4).arg(&rounds);
    // SAFETY: x and y hold n floats; the kernel touches the first n / 4 float4s of each.
    unsafe { launch.launch(cfg) }
}

/// Elements per buffer: enough that a copy takes far longer than the gaps between steps (on
/// a GPU a few µs each, where one stream waits for an event of the other). 2^24 floats (64 MiB)
/// on a GPU, where a copy then takes some 35 µs; 2^19 on the emulator, whose model charges the
/// host 2 µs an operation and whose CPU runs every thread.
pub fn default_len(gpu: &Gpu) -> usize {
    match gpu.backend() {
        BackendKind::Cuda => 1 << 24,
        BackendKind::Emulator => 1 << 19,
    }
}

/// Runs worth timing: a GPU's times vary from run to run, so take the fastest of 3; the
/// emulator's timeline does not vary.
pub fn default_reps(gpu: &Gpu) -> usize {
    match gpu.backend() {
        BackendKind::Cuda => 3,
        BackendKind::Emulator => 1,
    }
}
