//! Chapter 9's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.

use crate::grade::ch09;
use crate::grade::testing::{KERNEL_DOES_THE_WORK, cfg_1d, expect_failure, mutant, solution_kernel, with_kernel, workspace_kernel};
use gpubook::ep::CombineInput;
use gpubook::gpu::{Gpu, LaunchConfig, MappedHostSlice, Result, Source};
use gpubook::testing::workspace_file;

#[derive(Clone, Copy, PartialEq)]
enum Combine {
    /// The reference: staged rows, copied into the messages.
    Copy,
    /// "Zero copy" that still stages the rows and copies them.
    Staged,
    /// A view of the send buffer that forgets the header: rows start at byte 0.
    NoHeaderOffset,
}

fn combine(how: Combine) -> impl Fn(&Gpu, &CombineInput) -> Result<Vec<f32>> {
    move |gpu, p| {
        let s = gpu.default_stream();
        let m = gpu.load_module(workspace_kernel("solutions/kernels/ch09/combine.cu"))?;
        let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
        let msg_words = 4 + hidden;
        let (x, expert_of, weight, scale, bias) =
            (s.clone_htod(&p.x)?, s.clone_htod(&p.expert_of)?, s.clone_htod(&p.weight)?, s.clone_htod(&p.scale)?, s.clone_htod(&p.bias)?);
        // SAFETY: write_headers fills each message's header and the expert rows its payload before combine
        // reads them; NoHeaderOffset leaves 4 words a message unwritten on purpose (poison, a valid value).
        let mut send = unsafe { s.alloc::<u8>(rows * msg_words * 4) }?;
        let (mw, r, k, h, t) = (msg_words as i32, rows as i32, p.top_k as i32, hidden as i32, p.tokens as i32);
        {
            let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
            let wh = m.load_function("write_headers")?;
            let mut l = s.launch_builder(&wh);
            l.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
            // SAFETY: words views send's rows × msg_words ints, and write_headers' m < rows guard keeps
            // each thread to its message's 4 header words.
            unsafe { l.launch(cfg_1d(rows)) }?;
        }
        let grid = |rows: usize| LaunchConfig {
            grid_dim: ((hidden as u32).div_ceil(64), rows as u32, 1),
            block_dim: (64, 1, 1),
            shared_mem_bytes: 0,
        };
        let expert = m.load_function("expert_forward")?;
        if how == Combine::NoHeaderOffset {
            let mut payload = send.view_2d_mut::<f32>(0, rows, hidden, msg_words)?;
            let mut l = s.launch_builder(&expert);
            l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
            // SAFETY: payload is a rows × hidden view of send, rows msg_words apart; expert_forward's c <
            // hidden && m < rows guard keeps stores inside, and its reads stay within the input's sizes.
            unsafe { l.launch(grid(rows)) }?;
        } else {
            // SAFETY: expert_forward writes all rows × hidden values of y before the copies read them.
            let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
            let mut l = s.launch_builder(&expert);
            l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&h).arg(&r).arg(&h);
            // SAFETY: y holds rows × hidden floats (ld = hidden); expert_forward's c < hidden && m < rows
            // guard keeps stores inside, and its reads stay within the input's sizes.
            unsafe { l.launch(grid(rows)) }?;
            let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
            for i in 0..rows {
                s.memcpy_dtod(&y.slice(i * hidden..(i + 1) * hidden), &mut payload.row_mut(i))?;
            }
        }
        // SAFETY: combine writes all tokens × hidden values before the copy back reads them.
        let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
        let words = send.view_as::<i32>(0, rows * msg_words)?;
        let f = m.load_function("combine")?;
        let mut l = s.launch_builder(&f);
        l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
        // SAFETY: words views all of send and combine reads messages t × top_k + k < rows; its c < hidden
        // && t < tokens guard keeps its stores inside out (tokens × hidden floats).
        unsafe { l.launch(grid(p.tokens)) }?;
        s.clone_dtoh(&out)
    }
}

#[test]
fn zero_copy_combine_that_still_stages() {
    expect_failure(
        "zero_copy_combine_that_still_stages",
        &["device-to-device cop", "the expert output was staged", "view of the send buffer"],
        || ch09::zero_copy_combine(combine(Combine::Copy), combine(Combine::Staged)),
    );
}

#[test]
fn zero_copy_combine_without_the_header_offset() {
    // The emulator sees the combine read payload bytes nothing wrote; a GPU returns other bits.
    let report = expect_failure("zero_copy_combine_without_the_header_offset", &["HEADER_BYTES"], || {
        ch09::zero_copy_combine(combine(Combine::Copy), combine(Combine::NoHeaderOffset))
    });
    if let Some(report) = report {
        let said = ["not bit-identical to the copy path", "did not all land in the payload slots"];
        assert!(said.iter().any(|s| report.contains(s)), "the report should say where the rows went:{report}");
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Counts {
    /// The counts are read before the kernel is known to be done.
    NoSync,
    /// Counted in device memory, then copied into the mapped buffer.
    Detour,
}

fn counts(how: Counts) -> impl Fn(&Gpu, &[i32], usize) -> Result<MappedHostSlice<u32>> {
    move |gpu, ids, experts| {
        let f = gpu.load_module(workspace_kernel("solutions/kernels/ch09/count_experts.cu"))?.load_function("count_experts")?;
        let s = gpu.default_stream();
        let ids_d = s.clone_htod(ids)?;
        let n = ids.len() as i32;
        let mut counts = gpu.alloc_mapped::<u32>(experts)?;
        counts.set_label("counts");
        if how == Counts::NoSync {
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut counts);
            // SAFETY: counts holds one word per expert and every id is below experts; count_experts' i < n
            // guard keeps reads inside ids_d.
            unsafe { l.launch(cfg_1d(ids.len())) }?;
        } else {
            let mut c = s.alloc_zeros::<u32>(experts)?;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut c);
            // SAFETY: c holds a word per expert (ids are below experts); i < n keeps reads inside ids_d.
            unsafe { l.launch(cfg_1d(ids.len())) }?;
            s.memcpy_dtod(&c, &mut counts)?;
            s.synchronize()?;
        }
        Ok(counts)
    }
}

#[test]
fn expert_counts_read_before_the_kernel_is_done() {
    expect_failure(
        "expert_counts_read_before_the_kernel_is_done",
        &["mapped buffer `counts`", "count_experts", "has not waited for it"],
        || ch09::expert_counts(counts(Counts::NoSync)),
    );
}

#[test]
fn expert_counts_through_a_device_buffer() {
    expect_failure("expert_counts_through_a_device_buffer", &["copied after the counting", "straight into the mapped memory"], || {
        ch09::expert_counts(counts(Counts::Detour))
    });
}

/// The right bits, from a run on another device, returned after a run on the grader's device
/// whose combine stores nothing.
#[test]
fn zero_copy_combine_from_another_device() {
    let idle = mutant("ch09/combine.cu", &[("out[t * hidden + c] = acc;", "(void)acc;")]);
    expect_failure("zero_copy_combine_from_another_device", &["`out` is not what came back", KERNEL_DOES_THE_WORK], || {
        ch09::zero_copy_combine(solutions::ch09::combine_with_copy, |gpu, p| {
            let out = solutions::ch09::combine_with_copy(&Gpu::new()?, p)?;
            with_kernel(gpu, "ch09/combine.cu", idle.clone(), || solutions::ch09::combine_zero_copy(gpu, p))?;
            Ok(out)
        })
    });
}

/// A kernel of the answer's own that copies staged rows into the payload slots.
const STAGE_ROWS: &str = r#"
extern "C" __global__ void stage_rows(const float* y, float* payload, int ld, int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c < hidden && m < rows) payload[m * ld + c] = y[m * hidden + c];
}
"#;

/// The expert output staged in a tensor of its own and copied into the messages by a kernel (no
/// device-to-device copy in sight), with an expert launch of no rows into the send buffer, so
/// that expert_forward "writes" a buffer the combine reads.
fn combine_staged_by_a_kernel(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let s = gpu.default_stream();
    let m = gpu.load_module(Source::file(workspace_file("solutions/kernels/ch09/combine.cu")))?;
    let stage = gpu.load_module(Source::text("stage_rows.cu", STAGE_ROWS))?.load_function("stage_rows")?;
    let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
    let msg_words = 4 + hidden;
    let (x, expert_of, weight, scale, bias) =
        (s.clone_htod(&p.x)?, s.clone_htod(&p.expert_of)?, s.clone_htod(&p.weight)?, s.clone_htod(&p.scale)?, s.clone_htod(&p.bias)?);
    // SAFETY: write_headers fills each header and stage_rows each payload before combine reads them.
    let mut send = unsafe { s.alloc::<u8>(rows * msg_words * 4) }?;
    let (mw, r, k, h, t) = (msg_words as i32, rows as i32, p.top_k as i32, hidden as i32, p.tokens as i32);
    {
        let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
        let wh = m.load_function("write_headers")?;
        let mut l = s.launch_builder(&wh);
        l.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
        // SAFETY: words views send's rows × msg_words ints, and write_headers' m < rows guard keeps each
        // thread to its message's 4 header words.
        unsafe { l.launch(cfg_1d(rows)) }?;
    }
    let grid = |rows: usize| LaunchConfig {
        grid_dim: ((hidden as u32).div_ceil(64), rows.max(1) as u32, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    let expert = m.load_function("expert_forward")?;
    // SAFETY: the first expert_forward writes all rows × hidden values of y before stage_rows reads them.
    let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
    {
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&h).arg(&r).arg(&h);
        // SAFETY: y holds rows × hidden floats (ld = hidden); expert_forward's c < hidden && m < rows guard
        // keeps stores inside, and its reads stay within the input's sizes.
        unsafe { l.launch(grid(rows)) }?;
    }
    {
        let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
        let none = 0i32;
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&none).arg(&h);
        // SAFETY: with rows = 0 every thread returns at expert_forward's guard, touching nothing.
        unsafe { l.launch(grid(1)) }?;
        let mut l = s.launch_builder(&stage);
        l.arg(&y).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
        // SAFETY: y holds rows × hidden floats and payload is a rows × hidden view of send (rows msg_words
        // apart); stage_rows' c < hidden && m < rows guard keeps both inside.
        unsafe { l.launch(grid(rows)) }?;
    }
    // SAFETY: combine writes all tokens × hidden values before the copy back reads them.
    let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
    let words = send.view_as::<i32>(0, rows * msg_words)?;
    let f = m.load_function("combine")?;
    let mut l = s.launch_builder(&f);
    l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
    // SAFETY: words views all of send and combine reads messages t × top_k + k < rows; its c < hidden && t
    // < tokens guard keeps its stores inside out (tokens × hidden floats).
    unsafe { l.launch(grid(p.tokens)) }?;
    s.clone_dtoh(&out)
}

#[test]
fn zero_copy_combine_staged_by_a_kernel() {
    expect_failure("zero_copy_combine_staged_by_a_kernel", &["expert_forward ran 2 times", "zero copy"], || {
        ch09::zero_copy_combine(solutions::ch09::combine_with_copy, combine_staged_by_a_kernel)
    });
}

fn counts_on_the_host(ids: &[i32], experts: usize) -> Vec<u32> {
    let mut c = vec![0u32; experts];
    for &i in ids {
        c[i as usize] += 1;
    }
    c
}

/// The host counts into the mapped memory; a launch of no ids is there to be counted.
#[test]
fn expert_counts_written_by_the_host() {
    expect_failure("expert_counts_written_by_the_host", &["the host wrote the counts (as_mut_slice)", KERNEL_DOES_THE_WORK], || {
        ch09::expert_counts(|gpu, ids, experts| {
            let f = solution_kernel(gpu, "ch09/count_experts.cu", "count_experts")?;
            let s = gpu.default_stream();
            let ids_d = s.clone_htod(ids)?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            counts.as_mut_slice()?.copy_from_slice(&counts_on_the_host(ids, experts));
            let none = 0i32;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&none).arg(&mut counts);
            // SAFETY: with n = 0 no thread passes count_experts' i < n guard, so it touches nothing.
            unsafe { l.launch(cfg_1d(1)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

const COPY_COUNTS: &str = r#"
extern "C" __global__ void copy_counts(const unsigned* from, unsigned* to, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) to[i] = from[i];
}
"#;

/// The host counts, uploads the counts, and a kernel copies them into the mapped memory.
#[test]
fn expert_counts_uploaded_from_the_host() {
    expect_failure("expert_counts_uploaded_from_the_host", &["none of the inputs (the ids)", KERNEL_DOES_THE_WORK], || {
        ch09::expert_counts(|gpu, ids, experts| -> Result<MappedHostSlice<u32>> {
            let f = gpu.load_module(Source::text("copy_counts.cu", COPY_COUNTS))?.load_function("copy_counts")?;
            let s = gpu.default_stream();
            let from = s.clone_htod(&counts_on_the_host(ids, experts))?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            let n = experts as i32;
            let mut l = s.launch_builder(&f);
            l.arg(&from).arg(&mut counts).arg(&n);
            // SAFETY: from and counts hold `experts` words, and copy_counts' i < n guard keeps it inside.
            unsafe { l.launch(cfg_1d(experts)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

/// The solution with a grid sized for the book's largest case (100,003 ids): the seed's case
/// is larger.
#[test]
fn expert_counts_with_a_fixed_grid() {
    expect_failure("expert_counts_with_a_fixed_grid", &["drawn from the seed"], || {
        ch09::expert_counts(|gpu, ids, experts| {
            let f = solution_kernel(gpu, "ch09/count_experts.cu", "count_experts")?;
            let s = gpu.default_stream();
            let ids_d = s.clone_htod(ids)?;
            let mut counts = gpu.alloc_mapped::<u32>(experts)?;
            let n = ids.len() as i32;
            let mut l = s.launch_builder(&f);
            l.arg(&ids_d).arg(&n).arg(&mut counts);
            // SAFETY: counts holds one word per expert and every id is below experts; the i < n guard keeps
            // the fixed grid inside ids_d, whatever n is.
            unsafe { l.launch(cfg_1d(100_003)) }?;
            s.synchronize()?;
            Ok(counts)
        })
    });
}

/// Whether this test can run: the rule it shows reads the emulator's access counts.
fn on_the_emulator(test: &str) -> bool {
    match Gpu::new() {
        Ok(gpu) if gpu.backend() == gpubook::gpu::BackendKind::Emulator => true,
        Ok(_) => {
            println!("SKIPPED {test}: the rule reads the emulator's access counts; a GPU grader reports it as a skipped check");
            false
        }
        Err(e) => {
            println!("SKIPPED {test}: no device: {e}");
            false
        }
    }
}

/// The expert kernel under another name, writing a staging tensor.
const MY_EXPERT: &str = r#"
extern "C" __global__ void my_expert(const float* x, const int* expert_of, const float* scale, const float* bias, float* y,
                                     int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c >= hidden || m >= rows) return;
    int e = expert_of[m];
    float v = x[m * hidden + c] * scale[e * hidden + c] + bias[e * hidden + c];
    y[m * hidden + c] = v > 0.0f ? v : 0.0f;
}
extern "C" __global__ void stage_rows(const float* y, float* payload, int ld, int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c < hidden && m < rows) payload[m * ld + c] = y[m * hidden + c];
}
"#;

/// The expert rows computed by a renamed copy of expert_forward into a staging tensor and copied
/// into the messages by a kernel; then one expert_forward of no rows "writes" the send buffer,
/// last, so that every rule about which kernel wrote what holds.
fn combine_by_a_renamed_expert(gpu: &Gpu, p: &CombineInput) -> Result<Vec<f32>> {
    let s = gpu.default_stream();
    let m = gpu.load_module(Source::file(workspace_file("solutions/kernels/ch09/combine.cu")))?;
    let mine = gpu.load_module(Source::text("my_expert.cu", MY_EXPERT))?;
    let (rows, hidden) = (p.tokens * p.top_k, p.hidden);
    let msg_words = 4 + hidden;
    let (x, expert_of, weight, scale, bias) =
        (s.clone_htod(&p.x)?, s.clone_htod(&p.expert_of)?, s.clone_htod(&p.weight)?, s.clone_htod(&p.scale)?, s.clone_htod(&p.bias)?);
    // SAFETY: write_headers fills each header and stage_rows each payload before combine reads them.
    let mut send = unsafe { s.alloc::<u8>(rows * msg_words * 4) }?;
    let (mw, r, k, h, t) = (msg_words as i32, rows as i32, p.top_k as i32, hidden as i32, p.tokens as i32);
    {
        let mut words = send.view_as_mut::<i32>(0, rows * msg_words)?;
        let wh = m.load_function("write_headers")?;
        let mut l = s.launch_builder(&wh);
        l.arg(&mut words).arg(&mw).arg(&weight).arg(&expert_of).arg(&r).arg(&k);
        // SAFETY: words views send's rows × msg_words ints, and write_headers' m < rows guard keeps each
        // thread to its message's 4 header words.
        unsafe { l.launch(cfg_1d(rows)) }?;
    }
    let grid = |rows: usize| LaunchConfig {
        grid_dim: ((hidden as u32).div_ceil(64), rows.max(1) as u32, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: my_expert writes all rows × hidden values of y before stage_rows reads them.
    let mut y = unsafe { s.alloc::<f32>(rows * hidden) }?;
    {
        let f = mine.load_function("my_expert")?;
        let mut l = s.launch_builder(&f);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut y).arg(&r).arg(&h);
        // SAFETY: y holds rows × hidden floats; my_expert's c < hidden && m < rows guard keeps its stores
        // inside, and its reads of x, scale and bias stay within the input's sizes.
        unsafe { l.launch(grid(rows)) }?;
    }
    {
        let mut payload = send.view_2d_mut::<f32>(16, rows, hidden, msg_words)?;
        let stage = mine.load_function("stage_rows")?;
        let mut l = s.launch_builder(&stage);
        l.arg(&y).arg(&mut payload).arg(&mw).arg(&r).arg(&h);
        // SAFETY: y holds rows × hidden floats and payload is a rows × hidden view of send (rows msg_words
        // apart); stage_rows' c < hidden && m < rows guard keeps both inside.
        unsafe { l.launch(grid(rows)) }?;
        let (expert, none) = (m.load_function("expert_forward")?, 0i32);
        let mut l = s.launch_builder(&expert);
        l.arg(&x).arg(&expert_of).arg(&scale).arg(&bias).arg(&mut payload).arg(&mw).arg(&none).arg(&h);
        // SAFETY: with rows = 0 every thread returns at expert_forward's guard, touching nothing.
        unsafe { l.launch(grid(1)) }?;
    }
    // SAFETY: combine writes all tokens × hidden values before the copy back reads them.
    let mut out = unsafe { s.alloc::<f32>(p.tokens * hidden) }?;
    let words = send.view_as::<i32>(0, rows * msg_words)?;
    let f = m.load_function("combine")?;
    let mut l = s.launch_builder(&f);
    l.arg(&words).arg(&mw).arg(&mut out).arg(&t).arg(&k).arg(&h);
    // SAFETY: words views all of send and combine reads messages t × top_k + k < rows; its c < hidden && t
    // < tokens guard keeps its stores inside out (tokens × hidden floats).
    unsafe { l.launch(grid(p.tokens)) }?;
    s.clone_dtoh(&out)
}

#[test]
fn zero_copy_combine_by_a_renamed_expert() {
    if !on_the_emulator("zero_copy_combine_by_a_renamed_expert") {
        return;
    }
    expect_failure(
        "zero_copy_combine_by_a_renamed_expert",
        &["expert_forward stored 0 bytes into the send buffer, where the expert rows", "zero copy"],
        || ch09::zero_copy_combine(solutions::ch09::combine_with_copy, combine_by_a_renamed_expert),
    );
}

const SERIAL_COUNTS: &str = r#"
extern "C" __global__ void count_serial(const int* ids, int n, unsigned int* counts) {
    for (int i = 0; i < n; i++) atomicAdd(&counts[ids[i]], 1u);
}
extern "C" __global__ void count_plain(const int* ids, int n, unsigned int* counts) {
    for (int i = 0; i < n; i++) counts[ids[i]] += 1u;
}
"#;

/// The counts made by one thread, `kernel` of SERIAL_COUNTS, launched as <<<1, 1>>>.
fn counted_by_one_thread(kernel: &'static str) -> impl Fn(&Gpu, &[i32], usize) -> Result<MappedHostSlice<u32>> {
    move |gpu, ids, experts| {
        let f = gpu.load_module(Source::text("serial_counts.cu", SERIAL_COUNTS))?.load_function(kernel)?;
        let s = gpu.default_stream();
        let ids_d = s.clone_htod(ids)?;
        let mut counts = gpu.alloc_mapped::<u32>(experts)?;
        let n = ids.len() as i32;
        let mut l = s.launch_builder(&f);
        l.arg(&ids_d).arg(&n).arg(&mut counts);
        // SAFETY: the one thread bumps counts[id] for each of the n ids, and every id is below experts.
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 }) }?;
        s.synchronize()?;
        Ok(counts)
    }
}

#[test]
fn expert_counts_by_one_thread() {
    if !on_the_emulator("expert_counts_by_one_thread") {
        return;
    }
    expect_failure(
        "expert_counts_by_one_thread",
        &["one thread of `count_serial` made 1000 atomic adds, for 1000 token ids", "the work is spread over the threads"],
        || ch09::expert_counts(counted_by_one_thread("count_serial")),
    );
}

#[test]
fn expert_counts_without_atomics() {
    if !on_the_emulator("expert_counts_without_atomics") {
        return;
    }
    expect_failure(
        "expert_counts_without_atomics",
        &["the kernels made 0 atomic adds into the counts for 1 token id", "atomicAdd(&counts[id], 1)"],
        || ch09::expert_counts(counted_by_one_thread("count_plain")),
    );
}
