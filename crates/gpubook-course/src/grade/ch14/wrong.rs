//! Chapter 14's graders against plausible wrong answers: each must fail, and its report must
//! name the concept the mistake is about (a grader that cannot fail is a bug). Most are small
//! mutations of the solution (its host code, or its kernel as text), so they follow it when it
//! changes.
#![allow(clippy::type_complexity)]

use crate::grade::ch14;
use crate::grade::testing::{expect_failure, expect_failure_on_emulator, mutant, with_kernel};
use gpubook::ep::{ChannelConfig, Incoming, Rings, Symmetric, World};
use gpubook::gpu::{BackendKind, Result, Source};
use gpubook::testing::device_or_skip;

/// Whether to run a test whose mistake only the emulator is sure to catch (or that traps).
fn on_the_emulator(test: &str) -> bool {
    let Some(gpu) = device_or_skip(test) else { return false };
    if gpu.backend() != BackendKind::Emulator {
        println!("SKIPPED {test}: the emulator's check mode shows this mistake for certain; a GPU may not, or traps");
        return false;
    }
    true
}

fn ring(edits: &[(&str, &str)]) -> impl Fn() -> Source {
    let text = mutant("ch14/channel_ring.cu", edits);
    move || Source::text("channel_ring.cu", text.clone())
}

#[test]
fn ring_that_overwrites_an_unread_slot() {
    // The sender never waits for the head.
    let f = ring(&[("if (threadIdx.x == 0) ring_wait_above(r, r.head, i - r.slots);", "")]);
    expect_failure("ring_that_overwrites_an_unread_slot", &["overwritten before the receiver read it", "the receiver slowed down"], || {
        ch14::channel_ring(f)
    });
}

#[test]
fn ring_that_reads_a_slot_before_its_tail_moved() {
    // Off by one: waits only until the tail reaches i, when token i is not there yet. How it
    // shows depends on the random pauses: a token from the lap before, or (the ring's first lap)
    // a read of never-written memory, under either skew. The report is held to the concept.
    let f = ring(&[("ring_wait_above(r, r.tail, i);", "ring_wait_above(r, r.tail, i - 1);")]);
    expect_failure("ring_that_reads_a_slot_before_its_tail_moved", &["before the sender's tail moved past it"], || ch14::channel_ring(f));
}

#[test]
fn ring_that_drops_and_duplicates_tokens() {
    // The receiver reads the slot after its token's.
    let f = ring(&[("int slot = i % r.slots;\n    const float* src", "int slot = (i + 1) % r.slots;\n    const float* src")]);
    expect_failure_on_emulator("ring_that_drops_and_duplicates_tokens", &["comes out twice or never", "came out twice"], || {
        ch14::channel_ring(f)
    });
}

#[test]
fn ring_whose_receiver_never_frees_a_slot() {
    let f = ring(&[("*(volatile int*)r.head = i + 1;", "")]);
    expect_failure("ring_whose_receiver_never_frees_a_slot", &["ended with head 0", "moves the head to i + 1"], || ch14::channel_ring(f));
}

#[test]
fn ring_that_publishes_the_tail_without_a_fence() {
    if !on_the_emulator("ring_that_publishes_the_tail_without_a_fence") {
        return;
    }
    let f = ring(&[("__threadfence(); // the row, before the tail that announces it", "")]);
    expect_failure(
        "ring_that_publishes_the_tail_without_a_fence",
        &["data race", "calls __threadfence() and only then moves the tail"],
        || ch14::channel_ring(f),
    );
}

#[test]
fn ring_with_a_plain_store_to_the_tail() {
    if !on_the_emulator("ring_with_a_plain_store_to_the_tail") {
        return;
    }
    let f = ring(&[("*(volatile int*)r.tail = i + 1;", "*r.tail = i + 1;")]);
    expect_failure("ring_with_a_plain_store_to_the_tail", &["counters[", "through volatile pointers"], || ch14::channel_ring(f));
}

#[test]
fn ring_that_publishes_before_the_row_is_written() {
    if !on_the_emulator("ring_that_publishes_before_the_row_is_written") {
        return;
    }
    // Thread 0 moves the tail without waiting for the other threads' parts of the row.
    let f = ring(&[("__syncthreads(); // every part of the row is written", "")]);
    expect_failure("ring_that_publishes_before_the_row_is_written", &["data race", "the tail did not yet cover"], || ch14::channel_ring(f));
}

#[test]
fn ring_that_frees_a_slot_before_reading_it() {
    if !on_the_emulator("ring_that_frees_a_slot_before_reading_it") {
        return;
    }
    // Thread 0 moves the head while the other threads still read the row.
    let f = ring(&[("__syncthreads(); // every part of the row is read", "")]);
    expect_failure("ring_that_frees_a_slot_before_reading_it", &["data race", "the head that freed it"], || ch14::channel_ring(f));
}

/// The solution's host code with a mutation of its kernel.
fn roles(
    edits: &[(&str, &str)],
) -> impl Fn(&World, usize, &ChannelConfig, &Incoming, &mut Rings, &mut Symmetric<f32>, &mut Symmetric<i32>) -> Result<()> {
    let text = mutant("ch14/warp_roles.cu", edits);
    move |world, rank, cfg, input, rings, recv_x, recv_src| {
        with_kernel(world.rank(rank).gpu(), "ch14/warp_roles.cu", text.clone(), || {
            solutions::ch14::dispatch_roles(world, rank, cfg, input, rings, recv_x, recv_src)
        })
    }
}

#[test]
fn roles_whose_forwarders_release_slots_only_at_the_end() {
    if !on_the_emulator("roles_whose_forwarders_release_slots_only_at_the_end") {
        return;
    }
    // The forwarder coordinator frees the ring only once the whole channel is through: the
    // senders wait for a head that cannot move before they go on. A deadlock.
    let f = roles(&[("if (done > released) {", "if (done > released && done == n) {")]);
    expect_failure("roles_whose_forwarders_release_slots_only_at_the_end", &["trap", "roles that wait for each other in a circle"], || {
        ch14::dispatch_roles(f)
    });
}

#[test]
fn roles_with_a_barrier_inside_a_role() {
    if !on_the_emulator("roles_with_a_barrier_inside_a_role") {
        return;
    }
    // A __syncthreads in the senders' loop, to "wait for the coordinator": the coordinator never
    // reaches it.
    let f = roles(&[(
        "if (lane == 0) ring_token[slot] = begin + i;\n            __syncwarp();",
        "if (lane == 0) ring_token[slot] = begin + i;\n            __syncthreads();",
    )]);
    expect_failure("roles_with_a_barrier_inside_a_role", &["a __syncthreads inside one role"], || ch14::dispatch_roles(f));
}

#[test]
fn roles_whose_tail_follows_the_fastest_sender() {
    if !on_the_emulator("roles_whose_tail_follows_the_fastest_sender") {
        return;
    }
    let f = roles(&[(
        "int ready = min((int)__reduce_min_sync(0xffffffffu, (unsigned)mine), n);",
        "int ready = min((int)__reduce_max_sync(0xffffffffu, (unsigned)mine), n);",
    )]);
    expect_failure("roles_whose_tail_follows_the_fastest_sender", &["EVERY sender warp has written"], || ch14::dispatch_roles(f));
}

#[test]
fn roles_whose_head_follows_the_fastest_forwarder() {
    if !on_the_emulator("roles_whose_head_follows_the_fastest_forwarder") {
        return;
    }
    let f = roles(&[(
        "int done = (int)__reduce_min_sync(0xffffffffu, (unsigned)mine);",
        "int done = (int)__reduce_max_sync(0xffffffffu, (unsigned)mine);",
    )]);
    expect_failure("roles_whose_head_follows_the_fastest_forwarder", &["the minimum of the forwarders' progress"], || {
        ch14::dispatch_roles(f)
    });
}

#[test]
fn roles_whose_forwarders_read_x_instead_of_the_ring() {
    if !on_the_emulator("roles_whose_forwarders_read_x_instead_of_the_ring") {
        return;
    }
    let f = roles(&[(
        "recv_x[g][(long long)p * hidden + h] = __ldcg(src + h);",
        "recv_x[g][(long long)p * hidden + h] = x[(long long)t * hidden + h];",
    )]);
    expect_failure("roles_whose_forwarders_read_x_instead_of_the_ring", &["loaded", "read each token from the ring"], || {
        ch14::dispatch_roles(f)
    });
}

#[test]
fn roles_whose_forwarders_serve_the_wrong_gpu() {
    // Every forwarder stores into GPU (index + 1) % gpus, with index's places.
    let f = roles(&[
        ("recv_x[g][(long long)p * hidden + h]", "recv_x[(g + 1) % gpus][(long long)p * hidden + h]"),
        ("if (lane == 0) recv_src[g][p] = t;", "if (lane == 0) recv_src[(g + 1) % gpus][p] = t;"),
    ]);
    expect_failure("roles_whose_forwarders_serve_the_wrong_gpu", &["forwarder warp w serves one GPU"], || ch14::dispatch_roles(f));
}

#[test]
fn roles_whose_sender_coordinator_drops_the_last_chunk() {
    if !on_the_emulator("roles_whose_sender_coordinator_drops_the_last_chunk") {
        return;
    }
    // Only whole chunks are published: the forwarders wait for a partial last chunk forever.
    let f = roles(&[("(ready - published >= chunk || ready == n)", "(ready - published >= chunk)")]);
    expect_failure("roles_whose_sender_coordinator_drops_the_last_chunk", &["roles that wait for each other in a circle"], || {
        ch14::dispatch_roles(f)
    });
}
