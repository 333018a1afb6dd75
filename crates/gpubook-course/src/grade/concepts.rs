//! Checks that hold an exercise's concept, not only its numbers: the kernel did the work (what a
//! function returns is what a kernel wrote, copied back as it was), and what went to the device
//! was the input, not an answer computed on the host. They read the trace, whose host↔device
//! copies carry a digest of their bytes while a grader runs, on a GPU as on the emulator.

use super::Failure;
use gpubook::gpu::{CopyDir, DeviceRepr, OpKind, Trace, Writer, digest, digest_of};

/// The idea these checks hold, as a report names it.
pub const KERNEL_DOES_THE_WORK: &str = "the kernel does the work: the result is what the kernel wrote into device memory, \
     copied back as it is (clone_dtoh or memcpy_dtoh), not values the host computed, patched or rebuilt";

/// `values` (what the learner's function returned as `name`) must be the bytes of one device→host
/// copy of a buffer that a kernel wrote last (through device-to-device copies, if any).
pub fn written_by_a_kernel<T: DeviceRepr>(trace: &Trace, name: &str, values: &[T]) -> Result<(), Failure> {
    let bytes = std::mem::size_of_val(values);
    let downloads = trace.copies_with_digest(CopyDir::DeviceToHost, digest_of(values));
    let Some(&at) = downloads.last() else {
        return Err(Failure::new(format!(
            "`{name}` is not what came back from the device: no device→host copy carried these {bytes} bytes, so they were \
             computed or changed on the host"
        ))
        .concept(KERNEL_DOES_THE_WORK));
    };
    let OpKind::Copy { src: Some(buffer), .. } = trace.ops[at].kind else { unreachable!("a download has a source") };
    match origin(trace, buffer, at) {
        Writer::Launch(_) => Ok(()),
        Writer::Upload(_) => Err(Failure::new(format!(
            "`{name}` came back exactly as it had been copied to the device: no kernel wrote the buffer it came from \
             (the host computed it?)"
        ))
        .concept(KERNEL_DOES_THE_WORK)),
        Writer::Memset(_) | Writer::Nothing | Writer::DeviceCopy(_) => {
            Err(Failure::new(format!("no kernel wrote the device buffer that `{name}` was copied back from")).concept(KERNEL_DOES_THE_WORK))
        }
    }
}

/// What last wrote `buffer` before op `at`, looking through device-to-device copies to their source.
fn origin(trace: &Trace, buffer: gpubook::gpu::BufferId, at: usize) -> Writer<'_> {
    match trace.last_writer(buffer, at) {
        Writer::DeviceCopy(op) => {
            let pos = trace.ops.iter().position(|o| std::ptr::eq(o, op)).expect("an op of this trace");
            match op.kind {
                OpKind::Copy { src: Some(src), .. } => origin(trace, src, pos),
                _ => Writer::Nothing,
            }
        }
        w => w,
    }
}

/// Every host→device copy carried one of `inputs` (as given to the learner's function), whole:
/// a copy of anything else is an answer (or part of one) computed on the host. A copy from pinned
/// memory is digested when the host next waits for that memory (freeing it does): one never
/// waited for cannot be checked, and fails too.
pub fn uploads_are_inputs(trace: &Trace, inputs: &[(&str, u64)]) -> Result<(), Failure> {
    for op in &trace.ops {
        if let OpKind::Copy { dir: CopyDir::HostToDevice, digest: None, bytes, .. } = op.kind {
            return Err(Failure::new(format!(
                "a copy to the device carried {bytes} bytes from pinned memory that the host never waited for or freed \
                 afterwards, so what they were cannot be checked"
            ))
            .concept(format!("{KERNEL_DOES_THE_WORK}; only the inputs go to the device, and the answer is computed there")));
        }
        if let OpKind::Copy { dir: CopyDir::HostToDevice, digest: Some(d), bytes, .. } = op.kind
            && !inputs.iter().any(|(_, i)| *i == d)
        {
            let mut names: Vec<&str> = Vec::new();
            for (n, _) in inputs {
                if !names.contains(n) {
                    names.push(n);
                }
            }
            let what = if names.is_empty() {
                format!("{bytes} bytes were copied to the device, where the exercise gives no data to copy")
            } else {
                format!("a copy to the device carried {bytes} bytes that are none of the inputs ({})", names.join(", "))
            };
            return Err(Failure::new(what)
                .concept(format!("{KERNEL_DOES_THE_WORK}; only the inputs go to the device, and the answer is computed there")));
        }
    }
    Ok(())
}

/// The usual pair: `values` came from a kernel, and only `inputs` went to the device.
pub fn computed_on_the_device<T: DeviceRepr>(trace: &Trace, name: &str, values: &[T], inputs: &[(&str, u64)]) -> Result<(), Failure> {
    uploads_are_inputs(trace, inputs)?;
    written_by_a_kernel(trace, name, values)
}

/// `values`, which the learner's code left in pinned host memory starting at host address `base`
/// (`name`: the output buffer it was given), must have arrived there by device→host copies, one
/// per byte, each carrying bytes a kernel wrote: the pipelines of chapters 7 and 8, whose chunks
/// come back asynchronously. The host must have waited for the copies (reading the buffer does).
pub fn downloaded_from_kernels<T: DeviceRepr>(trace: &Trace, name: &str, base: u64, values: &[T]) -> Result<(), Failure> {
    // SAFETY: DeviceRepr types are plain data; the bytes are read only.
    let bytes = unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, std::mem::size_of_val(values)) };
    let elem = std::mem::size_of::<T>().max(1);
    let end = base + bytes.len() as u64;
    let mut covered = vec![false; bytes.len()];
    for (at, op) in trace.ops.iter().enumerate() {
        let OpKind::Copy { dir: CopyDir::DeviceToHost, host: Some(h), bytes: n, digest: carried, src: Some(buffer), .. } = op.kind else {
            continue;
        };
        if h < base || h >= end {
            continue;
        }
        let lo = (h - base) as usize;
        let hi = (lo + n).min(bytes.len());
        let elements = format!("`{name}`[{}..{}]", lo / elem, hi / elem);
        if covered[lo..hi].iter().any(|&c| c) {
            return Err(Failure::new(format!("{elements} was copied back more than once"))
                .concept(format!("{KERNEL_DOES_THE_WORK}; each chunk of the result comes back once, from the buffer its kernel wrote")));
        }
        covered[lo..hi].iter_mut().for_each(|c| *c = true);
        if carried != Some(digest(&bytes[lo..hi])) {
            return Err(Failure::new(format!(
                "{elements} is not what the device→host copy into it carried: it was changed on the host afterwards"
            ))
            .concept(KERNEL_DOES_THE_WORK));
        }
        if !matches!(origin(trace, buffer, at), Writer::Launch(_)) {
            return Err(
                Failure::new(format!("{elements} came back from a device buffer that no kernel wrote")).concept(KERNEL_DOES_THE_WORK)
            );
        }
    }
    if let Some(first) = covered.iter().position(|&c| !c) {
        let last = first + covered[first..].iter().position(|&c| c).unwrap_or(covered.len() - first);
        let what = if covered.iter().all(|&c| !c) {
            format!("no device→host copy wrote `{name}`: its values were written on the host")
        } else {
            format!("`{name}`[{}..{}] was not copied back from the device: it was written on the host", first / elem, last / elem)
        };
        return Err(Failure::new(what).concept(KERNEL_DOES_THE_WORK));
    }
    Ok(())
}

/// The access counts of every launch in `trace`, when the backend counted them (the emulator's
/// check mode); `None` (after noting the check as skipped) on a GPU.
pub fn counted_launches<'t>(ctx: &mut super::Ctx, trace: &'t Trace, check: &str) -> Option<Vec<&'t gpubook::gpu::AccessCounts>> {
    let counts: Option<Vec<_>> = trace.launches().map(|op| op.access_counts()).collect();
    if counts.is_none() {
        ctx.skip_check(format!("{check} (the emulator's access counts; this device does not count accesses)"));
    }
    counts
}
