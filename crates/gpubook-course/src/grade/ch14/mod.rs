//! Chapter 14: SMs, channels and warp roles.
//!
//! The ring grader runs the learner's `send_token` and `receive_token` on the stage of
//! gpubook/channel_ring.cuh, three times per case: with the receiver slowed down by random
//! pauses (so a sender that does not wait for the head overwrites slots), with the sender slowed
//! down (so a receiver that does not wait for the tail reads slots too early), and with both at
//! random. What came out tells which rule was broken: a token from later in the channel means a
//! slot was overwritten before it was read, one from earlier (or a slot nobody wrote) means it
//! was read before it was written, anything else a token lost or duplicated.
//!
//! The warp-roles grader runs the learner's kernel through the solution's host code on a node
//! of 1 to 8 GPUs and checks every GPU's receive buffers, both counters of every ring, and (on
//! the emulator) that the forwarders read the tokens from the ring.

#[cfg(test)]
mod wrong;

use super::GradeReport;
use super::concepts::counted_launches;
use super::explain::Explain;
use super::{Failure, Rng, Tolerance, check_f32, grade};
use gpubook::cudac::DiagClass;
use gpubook::ep::{ChannelConfig, Incoming, Rings, Symmetric, Topology, World};
use gpubook::gpu::{DeviceSlice, Function, GpuError, LaunchConfig, Result, Source};

/// Bytes a slot's token index holds before anybody wrote it: a read of it means the receiver
/// read the slot too early (distinct from the -1 poison of the receive buffers).
const UNSENT_BYTE: u8 = 0xFE;
const UNSENT: i32 = i32::from_ne_bytes([UNSENT_BYTE; 4]);
/// What the receive buffers hold where nothing was written.
const POISON: i32 = -1;

// ---- ch14-channel-ring ------------------------------------------------------------------------

/// Threads per block of the ring's stage: fewer than some rows' floats, so the copy loops.
const RING_BLOCK: u32 = 64;

/// (channels, tokens, hidden, slots, name).
type RingCase = (usize, usize, usize, usize, &'static str);

const RING_CASES: [RingCase; 5] = [
    (1, 1, 8, 1, "one token, a ring of one slot"),
    (1, 24, 16, 4, "24 tokens through 4 slots"),
    (3, 50, 40, 3, "3 channels of 17, 17 and 16 tokens, 3 slots each"),
    (4, 5, 8, 2, "5 tokens on 4 channels: the last one gets none"),
    (2, 130, 72, 5, "130 tokens of 72 floats, 5 slots"),
];

/// Which side the grader slows down.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Skew {
    /// The receiver pauses before every token: the sender runs ahead and fills the ring.
    SlowReceiver,
    /// The sender pauses before every token: the receiver runs ahead and finds it empty.
    SlowSender,
    /// Both pause at random.
    Both,
}

impl Skew {
    const ALL: [Skew; 3] = [Skew::SlowReceiver, Skew::SlowSender, Skew::Both];

    fn describe(self) -> &'static str {
        match self {
            Skew::SlowReceiver => "the receiver slowed down by random pauses, so the sender runs ahead",
            Skew::SlowSender => "the sender slowed down by random pauses, so the receiver runs ahead",
            Skew::Both => "both sides paused at random",
        }
    }

    /// Rounds of pause before each call: `[2 × channels][per]`, the sender's block first.
    fn pauses(self, rng: &mut Rng, channels: usize, per: usize) -> Vec<i32> {
        let mut p = Vec::with_capacity(2 * channels * per);
        for block in 0..2 * channels {
            let sender = block % 2 == 0;
            for _ in 0..per {
                p.push(match (self, sender) {
                    (Skew::SlowReceiver, false) | (Skew::SlowSender, true) => rng.i32(1, 4),
                    (Skew::SlowReceiver, true) | (Skew::SlowSender, false) => 0,
                    (Skew::Both, _) => rng.i32(0, 3),
                });
            }
        }
        p
    }
}

/// Channel c's tokens: [begin, end), as the stage (and DeepEP) splits them.
fn channel_range(tokens: usize, channels: usize, c: usize) -> (usize, usize) {
    let per = tokens.div_ceil(channels);
    let begin = tokens.min(c * per);
    (begin, tokens.min(begin + per))
}

const OVERWRITTEN: &str = "a slot was overwritten before the receiver read it: before writing token i into slot \
     i % slots, the sender waits until the receiver has read token i - slots, that is until the head is past \
     i - slots (ring_wait_above(r, r.head, i - r.slots))";
const READ_EARLY: &str = "the receiver read a slot before the sender's tail moved past it: token i is in slot \
     i % slots only once the tail is past i, so the receiver waits for that (ring_wait_above(r, r.tail, i)) before \
     it reads";
const ONCE_EACH: &str = "every token passes through the ring once, in order: the sender's token i goes into slot \
     i % slots and the receiver's token i comes out of slot i % slots; a token that comes out twice or never means \
     the two sides disagree on a slot";
const TORN_ROW: &str = "the receiver read a row before all of it was written: the sender moves the tail only after \
     every thread has written its part (a __syncthreads), and thread 0 calls __threadfence() before it stores the \
     tail";
const COUNTERS: &str = "the head and the tail count tokens: after token i the sender moves the tail to i + 1 and \
     the receiver, once it has read it, moves the head to i + 1; both end at the channel's number of tokens";
const VOLATILE: &str = "the counters are how the two blocks talk: read and write them through volatile pointers \
     (ring_wait_above reads them so), never with plain loads and stores";
const STUCK: &str = "flow control that never lets go: a side waited for a counter the other side never moves. The \
     sender moves the tail after each token and waits only while the ring is full; the receiver moves the head \
     after each read and waits only until the tail is past its token";
const RELEASED_EARLY: &str = "the sender wrote a slot again while the receiver's read of it was not ordered before \
     the head that freed it: the receiver calls __threadfence() before it moves the head, and the sender writes \
     slot i % slots only once the head is past i - slots";
const PUBLISHED_EARLY: &str = "the receiver read a row the tail did not yet cover: the sender writes the row, \
     __syncthreads, then thread 0 calls __threadfence() and only then moves the tail; the receiver reads only once \
     the tail is past its token";

const RING_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some("an index past a buffer: token i of a channel lives in slot i % r.slots, whose row is r.hidden floats"),
    race: None, // which side broke the hand-over depends on the access: see ring_error
    divergence: Some(
        "every thread of the block calls send_token and receive_token, and must reach each __syncthreads in them: let \
         thread 0 wait, then a __syncthreads for all",
    ),
    uninitialized: Some(READ_EARLY),
    launch_config: None,
};

/// `channel_ring() -> Source`: the kernel file the stage runs.
pub fn channel_ring(source: impl Fn() -> Source) -> GradeReport {
    grade("ch14-channel-ring", |ctx| {
        let module = ctx.call(|| ctx.gpu.load_module(source()))?;
        let f = module.load_function("channel_ring").map_err(Failure::from)?;
        for case in RING_CASES {
            for skew in Skew::ALL {
                run_ring(ctx, &f, case, skew)?;
            }
        }
        Ok(())
    })
}

fn run_ring(ctx: &mut super::Ctx, f: &Function, case: RingCase, skew: Skew) -> Result<(), Failure> {
    let (channels, tokens, hidden, slots, name) = case;
    let input = format!(
        "{} on {}, {} of {hidden} floats, a ring of {} ({name}); {}",
        super::words::count(tokens, "token"),
        super::words::count(channels, "channel"),
        if tokens == 1 { "its row" } else { "rows" },
        super::words::count(slots, "slot"),
        skew.describe()
    );
    let per = tokens.div_ceil(channels);
    let x = ctx.rng.vec_f32(tokens * hidden, -1.0, 1.0);
    let pauses = skew.pauses(&mut ctx.rng, channels, per);
    let s = ctx.gpu.default_stream();
    let e = |r: Result<DeviceSlice<i32>>| r.map_err(Failure::from);
    let mut x_d = s.clone_htod(&x).map_err(Failure::from)?;
    x_d.set_label("x");
    // SAFETY: the receiver should write every row; poison shows a row it did not. The ring is
    // written by the sender before it is read; the emulator reports a read of a row it did not.
    let (mut recv_x, mut recv_src, mut ring_x, mut ring_src) = unsafe {
        (
            s.alloc::<f32>(tokens * hidden).map_err(Failure::from)?,
            e(s.alloc::<i32>(tokens))?,
            s.alloc::<f32>(channels * slots * hidden).map_err(Failure::from)?,
            e(s.alloc::<i32>(channels * slots))?,
        )
    };
    s.memset_bytes(&mut ring_src, UNSENT_BYTE).map_err(Failure::from)?;
    let mut counters = e(s.alloc_zeros::<i32>(2 * channels))?;
    let pauses_d = s.clone_htod(&pauses).map_err(Failure::from)?;
    let mut scratch = e(s.alloc_zeros::<i32>(2 * channels))?;
    for (b, label) in [(&mut recv_src, "recv_src"), (&mut ring_src, "ring_src"), (&mut counters, "counters")] {
        b.set_label(label);
    }
    recv_x.set_label("recv_x");
    ring_x.set_label("ring_x");
    let cfg = LaunchConfig { grid_dim: (2 * channels as u32, 1, 1), block_dim: (RING_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let (t, h, sl) = (tokens as i32, hidden as i32, slots as i32);
    let ran = ctx.call(|| {
        Ok((|| {
            let mut l = s.launch_builder(f);
            l.arg(&x_d).arg(&mut recv_x).arg(&mut recv_src).arg(&mut ring_x).arg(&mut ring_src).arg(&mut counters);
            l.arg(&pauses_d).arg(&mut scratch).arg(&t).arg(&h).arg(&sl);
            // SAFETY: every buffer is sized for the case (tokens × hidden rows, channels × slots ring
            // slots, two counters a channel); staying inside them is the learner's kernel's part, which the
            // emulator's check mode checks (on a GPU it is trusted).
            unsafe { l.launch(cfg) }?;
            s.synchronize()
        })())
    })?;
    if let Err(err) = ran {
        return Err(ring_error(err, &input, skew));
    }
    let got_src = s.clone_dtoh(&recv_src).map_err(Failure::from)?;
    let got_x = s.clone_dtoh(&recv_x).map_err(Failure::from)?;
    let got_counters = s.clone_dtoh(&counters).map_err(Failure::from)?;
    let skewed = |f: Failure| f.input(&input).detail(format!("with {}", skew.describe()));
    for c in 0..channels {
        let (begin, end) = channel_range(tokens, channels, c);
        if let Some(f) = ring_order(&got_src, c, begin, end, slots) {
            return Err(skewed(f));
        }
    }
    let want_x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    check_f32("recv_x", &got_x, &want_x, Tolerance::EXACT).map_err(|f| skewed(f.concept(row_concept(&got_x, hidden))))?;
    for c in 0..channels {
        let (begin, end) = channel_range(tokens, channels, c);
        let n = (end - begin) as i32;
        let (head, tail) = (got_counters[2 * c], got_counters[2 * c + 1]);
        if (head, tail) != (n, n) {
            return Err(skewed(
                Failure::new(format!("channel {c} ended with head {head} and tail {tail}; it carried {n} tokens, so both should be {n}"))
                    .concept(COUNTERS),
            ));
        }
    }
    Ok(())
}

/// Why rows came out wrong. A row no part of which was ever written means the receiver copied the
/// slot before the sender wrote any of it: it did not wait for the tail (on a GPU the off-by-one
/// wait shows so on the ring's first lap, the token index read a moment later being right). A
/// row partly written means the tail announced it before every thread had written its part.
fn row_concept(got_x: &[f32], hidden: usize) -> &'static str {
    let never_written = |row: &[f32]| row.iter().all(|&v| super::compare::poisoned_f32(v));
    if got_x.chunks(hidden.max(1)).any(never_written) { READ_EARLY } else { TORN_ROW }
}

/// The first token of channel `c` that came out wrong, in the words of the rule it broke.
fn ring_order(got: &[i32], c: usize, begin: usize, end: usize, slots: usize) -> Option<Failure> {
    let n = end - begin;
    let k = (0..n).find(|&k| got[begin + k] != (begin + k) as i32)?;
    let (want, g) = (begin + k, got[begin + k]);
    let at = format!("channel {c}'s token number {k} (token {want})");
    if g == POISON {
        return Some(Failure::new(format!("{at} never came out: recv_src[{want}] was never written")).concept(ONCE_EACH));
    }
    if g == UNSENT {
        return Some(
            Failure::new(format!("{at} came out of a slot the sender had not written yet (its token index was never set)"))
                .concept(READ_EARLY),
        );
    }
    let in_channel = (begin as i32..end as i32).contains(&g);
    let gap = g as i64 - want as i64;
    if in_channel && gap > 0 && gap % slots as i64 == 0 {
        return Some(
            Failure::new(format!(
                "{at} came out as token {g}, which the sender put into the same slot {gap} tokens later: it overwrote token \
                 {want} before the receiver read it"
            ))
            .concept(OVERWRITTEN),
        );
    }
    if in_channel && gap < 0 && gap % slots as i64 == 0 {
        return Some(
            Failure::new(format!(
                "{at} came out as token {g}, which the same slot held {} tokens earlier: the receiver read the slot before \
                 the sender had put token {want} there",
                -gap
            ))
            .concept(READ_EARLY),
        );
    }
    let seen: Vec<i32> = got[begin..end].to_vec();
    let twice: Vec<i32> = (begin as i32..end as i32).filter(|t| seen.iter().filter(|s| *s == t).count() > 1).take(4).collect();
    let never: Vec<i32> = (begin as i32..end as i32).filter(|t| !seen.contains(t)).take(4).collect();
    Some(
        Failure::new(format!("{at} came out as token {g}"))
            .concept(ONCE_EACH)
            .detail(format!("in channel {c}, tokens that came out twice: {twice:?}; tokens that never came out: {never:?}")),
    )
}

/// A failed run of the stage, in the ring's terms.
fn ring_error(err: GpuError, input: &str, skew: Skew) -> Failure {
    let concept = match &err {
        GpuError::Kernel(d) => match d.class {
            DiagClass::Race if d.message.contains("counters[") => Some(VOLATILE),
            // The access that completed the race is the one named first: the sender's blocks
            // are the even ones.
            DiagClass::Race if d.message.contains("ring_") => match d.block.map(|b| b[0] % 2) {
                Some(0) => Some(RELEASED_EARLY),
                Some(_) => Some(PUBLISHED_EARLY),
                None => None,
            },
            DiagClass::Trap | DiagClass::Hang => Some(STUCK),
            _ => RING_EXPLAIN.concept_for(&err),
        },
        _ => RING_EXPLAIN.concept_for(&err),
    };
    let mut f = Failure::from(err);
    if let Some(c) = concept {
        f = f.concept(c);
    }
    f.input(input).detail(format!("with {}", skew.describe()))
}

// ---- ch14-warp-roles ----------------------------------------------------------------------------

/// (GPUs of the node, tokens, hidden, channels, slots, chunk, sender warps, name).
type RolesCase = (usize, usize, usize, usize, usize, usize, usize, &'static str);

/// Every ring's slots are a multiple of the sender warps, so a slot is always written by the same
/// warp (token i by warp i % senders, into slot i % slots). On a GPU any ring would do; the
/// emulator's race detector orders two threads of one block only at a barrier, and would report
/// two sender warps writing one slot on different laps, ordered only through the other block's
/// head.
const ROLES_CASES: [RolesCase; 5] = [
    (1, 1, 8, 1, 1, 1, 1, "one token, one GPU, a ring of one slot"),
    (2, 33, 16, 2, 6, 2, 3, "2 GPUs, 33 tokens on 2 channels, chunks of 2"),
    (3, 100, 40, 3, 6, 6, 2, "3 GPUs, chunks as large as the ring"),
    (4, 7, 8, 5, 4, 1, 4, "7 tokens on 5 channels: the last one gets none"),
    (8, 300, 36, 4, 14, 4, 7, "a V3 node: 8 GPUs, 7 sender warps, 300 tokens"),
];

const ROLES_STUCK: &str = "roles that wait for each other in a circle: the senders wait for the head, which only \
     the forwarders' coordinator moves, as soon as every forwarder is past a slot; the forwarders wait for the tail, \
     which only the senders' coordinator moves, as soon as every sender has written a chunk. A coordinator that \
     waits for more (the whole channel, a chunk the ring cannot hold) never lets the other side go on, and a \
     __syncthreads inside one role waits for warps of other roles that never come";
const ROLES_BARRIER: &str = "no __syncthreads once the roles split: warps of other roles never reach it (some have \
     already returned, some wait for a counter). Roles wait for each other only through memory: a counter, a \
     progress word, __syncwarp inside one warp";
const ROLES_TAIL: &str = "the tail may cover only tokens EVERY sender warp has written: the sender coordinator \
     publishes the minimum of the senders' progress (each after a __threadfence), never the maximum";
const ROLES_HEAD: &str = "a slot is free only once EVERY forwarder is past its token: the forwarder coordinator moves \
     the head to the minimum of the forwarders' progress, after a __threadfence, never further";
const ROLES_FORWARD: &str = "forwarder warp w serves one GPU (index): it reads every token of the channel from the \
     ring and stores the ones with a place in that GPU (place[t * gpus + index] >= 0) into its receive buffer, row p";
const ROLES_MISSING: &str = "every token reaches every GPU it is placed on: the forwarder serving that GPU reads \
     EVERY token of the channel from the ring (slot i % slots) and stores the ones placed there; and no slot is \
     reused before every forwarder has read it, since the forwarder coordinator moves the head only to the minimum \
     of the forwarders' progress";
const ROLES_COUNTERS: &str = "both counters end at the channel's number of tokens: the sender coordinator publishes \
     the last, partial chunk too, and the forwarder coordinator releases every slot";
const ROLES_THROUGH_RING: &str = "the forwarders read each token from the ring, where the senders put it; a forwarder \
     that reads x itself skips the channel (on a real system x is on another node)";

const ROLES_EXPLAIN: Explain<'static> = Explain {
    out_of_bounds: Some(
        "an index past a buffer: a channel's ring has `slots` rows (token i in slot i % slots), and GPU g's receive \
         buffer has a row for each token with place[t * gpus + g] >= 0, at that place. A token index read from a slot \
         no sender has written yet is garbage: the tail may cover only tokens EVERY sender warp has written (the \
         minimum of their progress)",
    ),
    race: None, // see roles_error
    divergence: Some(ROLES_BARRIER),
    uninitialized: Some(ROLES_TAIL),
    launch_config: None,
};

/// The learner's kernel, launched by the solution's host code.
type RolesFn<'a> =
    dyn Fn(&World, usize, &ChannelConfig, &Incoming, &mut Rings, &mut Symmetric<f32>, &mut Symmetric<i32>) -> Result<()> + 'a;

/// `dispatch_roles(world, rank, cfg, input, rings, recv_x, recv_src)`.
pub fn dispatch_roles(
    f: impl Fn(&World, usize, &ChannelConfig, &Incoming, &mut Rings, &mut Symmetric<f32>, &mut Symmetric<i32>) -> Result<()>,
) -> GradeReport {
    let f: &RolesFn<'_> = &f;
    grade("ch14-warp-roles", |ctx| {
        for case in ROLES_CASES {
            run_roles(ctx, f, case)?;
        }
        Ok(())
    })
}

fn run_roles(ctx: &mut super::Ctx, f: &RolesFn<'_>, case: RolesCase) -> Result<(), Failure> {
    let (gpus, tokens, hidden, channels, slots, chunk, senders, name) = case;
    let input = format!(
        "{} of {hidden} floats to a node of {}, {} with rings of {}, chunks of {chunk}, {} ({name})",
        super::words::count(tokens, "token"),
        super::words::count(gpus, "GPU"),
        super::words::count(channels, "channel"),
        super::words::count(slots, "slot"),
        super::words::count(senders, "sender warp"),
    );
    let world = super::ch12::grading_world(ctx, Topology::single_node(gpus).expect("a valid topology")).map_err(Failure::from)?;
    let x = ctx.rng.vec_f32(tokens * hidden, -1.0, 1.0);
    // Each token goes to a random non-empty set of the node's GPUs, in token order on each.
    let mut place = vec![-1i32; tokens * gpus];
    let mut counts = vec![0usize; gpus];
    for t in 0..tokens {
        let first = ctx.rng.usize(0, gpus);
        for g in 0..gpus {
            if g == first || ctx.rng.usize(0, 2) == 1 {
                place[t * gpus + g] = counts[g] as i32;
                counts[g] += 1;
            }
        }
    }
    let cap = counts.iter().copied().max().unwrap_or(0).max(1);
    let rank = 0;
    let s = world.rank(rank).stream();
    let fail = Failure::from;
    let mut x_d = s.clone_htod(&x).map_err(fail)?;
    x_d.set_label("x");
    let mut place_d = s.clone_htod(&place).map_err(fail)?;
    place_d.set_label("place");
    let input_d = Incoming { x: x_d, place: place_d, tokens, hidden };
    // SAFETY: the senders write every ring slot before a forwarder reads it (ring_src is marked
    // unsent just below; the counters start at zero).
    let mut rings = unsafe {
        Rings {
            x: s.alloc::<f32>(channels * slots * hidden).map_err(fail)?,
            src: s.alloc::<i32>(channels * slots).map_err(fail)?,
            counters: s.alloc_zeros::<i32>(2 * channels).map_err(fail)?,
        }
    };
    s.memset_bytes(&mut rings.src, UNSENT_BYTE).map_err(fail)?;
    rings.x.set_label("ring_x");
    rings.src.set_label("ring_src");
    rings.counters.set_label("counters");
    // SAFETY: the forwarders write every placed row, the only rows the grader reads (poison shows a miss).
    let mut recv_x = unsafe { Symmetric::<f32>::alloc(&world, cap * hidden, "recv_x") }.map_err(fail)?;
    // SAFETY: as for recv_x: the forwarders write each placed slot's source, and the grader reads only
    // those.
    let mut recv_src = unsafe { Symmetric::<i32>::alloc(&world, cap, "recv_src") }.map_err(fail)?;
    let cfg = ChannelConfig { channels, slots, chunk, senders };
    world.synchronize().map_err(fail)?;
    super::ch12::clear_world_traces(&world).map_err(fail)?;
    let ran = ctx.call(|| Ok(f(&world, rank, &cfg, &input_d, &mut rings, &mut recv_x, &mut recv_src).and_then(|_| world.synchronize())))?;
    if let Err(err) = ran {
        return Err(roles_error(err, &input));
    }
    let traces = super::ch12::world_traces(&world).map_err(fail)?;
    for trace in &traces {
        super::ch12::no_host_copies(trace, "the dispatch", &input)?;
    }
    super::ch12::launched_anywhere(&traces, "dispatch_roles", &input)?;

    // What every GPU received.
    let (got_src, got_x) = (recv_src.to_host(&world).map_err(fail)?, recv_x.to_host(&world).map_err(fail)?);
    for g in 0..gpus {
        for t in 0..tokens {
            let p = place[t * gpus + g];
            if p < 0 {
                continue;
            }
            let p = p as usize;
            let got = got_src[g][p];
            if got == t as i32 {
                let row = &got_x[g][p * hidden..(p + 1) * hidden];
                if row != &x[t * hidden..(t + 1) * hidden] {
                    let want: Vec<f64> = x[t * hidden..(t + 1) * hidden].iter().map(|&v| v as f64).collect();
                    let f = check_f32(&format!("recv_x on GPU {g}, row {p}"), row, &want, Tolerance::EXACT).unwrap_err();
                    return Err(f.concept(ROLES_TAIL).input(input));
                }
                continue;
            }
            let what = if got == POISON {
                format!("GPU {g}'s row {p} was never written: token {t} was never forwarded there")
            } else if got == UNSENT {
                format!("GPU {g}'s row {p} holds a token index nobody sent: a forwarder read a slot before a sender wrote it")
            } else {
                format!("GPU {g}'s row {p} holds token {got}; token {t} goes there")
            };
            // A later token of the same channel, in the same slot: the slot was reused before
            // this GPU's forwarder read it.
            let c = (0..channels).find(|&c| channel_range(tokens, channels, c).1 > t).unwrap_or(0);
            let (begin, end) = channel_range(tokens, channels, c);
            let reused = (begin as i32..end as i32).contains(&got) && got > t as i32 && (got as usize - t).is_multiple_of(slots);
            let concept = match got {
                UNSENT => ROLES_TAIL,
                POISON => ROLES_MISSING,
                _ if reused => ROLES_HEAD,
                _ => ROLES_FORWARD,
            };
            return Err(Failure::new(what).concept(concept).input(input));
        }
    }
    let counters = s.clone_dtoh(&rings.counters).map_err(fail)?;
    for c in 0..channels {
        let (begin, end) = channel_range(tokens, channels, c);
        let n = (end - begin) as i32;
        let (head, tail) = (counters[2 * c], counters[2 * c + 1]);
        if (head, tail) != (n, n) {
            return Err(Failure::new(format!(
                "channel {c}'s ring ended with head {head} and tail {tail}; the channel carried {n} tokens, so both should be {n}"
            ))
            .concept(ROLES_COUNTERS)
            .input(input));
        }
    }
    // The forwarders read every forwarded row from the ring (the emulator counts the bytes).
    if let Some(counted) = counted_launches(ctx, &traces[0], "the forwarders read the ring") {
        let from_ring: u64 = counted.iter().flat_map(|c| &c.buffers).filter(|b| b.label == "ring_x").map(|b| b.loads.bytes).sum();
        let forwarded = (place.iter().filter(|&&p| p >= 0).count() * hidden * 4) as u64;
        if from_ring < forwarded {
            return Err(Failure::new(format!(
                "the kernel loaded {from_ring} bytes from the rings, but forwarded {forwarded} bytes of rows"
            ))
            .concept(ROLES_THROUGH_RING)
            .input(input));
        }
    }
    Ok(())
}

/// A failed launch, in the roles' terms.
fn roles_error(err: GpuError, input: &str) -> Failure {
    let concept = match &err {
        GpuError::Kernel(d) => match d.class {
            DiagClass::Trap | DiagClass::Hang => Some(ROLES_STUCK),
            DiagClass::Race if d.message.contains("counters[") => Some(VOLATILE),
            // The even blocks forward, the odd ones send: who completed the race says which
            // coordinator let the other side in too early.
            DiagClass::Race if d.message.contains("ring_") => match d.block.map(|b| b[0] % 2) {
                Some(0) => Some(ROLES_TAIL),
                Some(_) => Some(ROLES_HEAD),
                None => None,
            },
            _ => ROLES_EXPLAIN.concept_for(&err),
        },
        _ => ROLES_EXPLAIN.concept_for(&err),
    };
    let f = Failure::from(err);
    match concept {
        Some(c) => f.concept(c),
        None => f,
    }
    .input(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_never_written_at_all_was_read_before_the_tail_moved() {
        let poison = f32::from_bits(u32::MAX);
        assert_eq!(row_concept(&[1.0, 2.0, poison, poison], 2), READ_EARLY);
        assert_eq!(row_concept(&[1.0, poison, 3.0, 4.0], 2), TORN_ROW);
        assert_eq!(row_concept(&[1.0, 2.0, 3.5, 4.0], 2), TORN_ROW); // wrong values, none poison
    }
}
