//! Peer access between CUDA devices (`cuCtxEnablePeerAccess`): after it, a kernel on one GPU may
//! load from and store to another GPU's memory through an ordinary pointer, over NVLink where the
//! GPUs have it (PCIe otherwise). DeepEP gets the same from CUDA IPC handles, since its ranks are
//! separate processes; the ranks of a `World` share one process, so enabling peer access is enough.

use crate::gpu::{Gpu, GpuError, Result};
use cudarc::driver::sys;

/// Enables access from every device in `gpus` to every other distinct one.
pub(crate) fn enable_all(gpus: &[Gpu]) -> Result<()> {
    for a in gpus {
        for b in gpus {
            if a.is_same_device(b) {
                continue;
            }
            let (Some(ca), Some(cb)) = (a.cuda(), b.cuda()) else { continue };
            if ca.cu_ctx() == cb.cu_ctx() {
                continue; // two handles on one context: one memory already
            }
            let mut can = 0;
            // SAFETY: plain driver queries and settings on live contexts owned by `a` and `b`.
            unsafe {
                check("cuDeviceCanAccessPeer", sys::cuDeviceCanAccessPeer(&mut can, ca.cu_device(), cb.cu_device()))?;
                if can == 0 {
                    return Err(GpuError::Unavailable {
                        backend: "cuda",
                        reason: format!("GPU {} cannot access GPU {}'s memory (no peer access between them)", a.ordinal(), b.ordinal()),
                        fix: "spread the ranks over GPUs connected by NVLink or one PCIe switch (nvidia-smi topo -m)".into(),
                    });
                }
                ca.bind_to_thread().map_err(|e| GpuError::driver("cuCtxSetCurrent", e))?;
                let r = sys::cuCtxEnablePeerAccess(cb.cu_ctx(), 0);
                if r != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                    check("cuCtxEnablePeerAccess", r)?;
                }
            }
        }
    }
    Ok(())
}

fn check(call: &'static str, r: sys::CUresult) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(GpuError::driver(call, format!("{r:?}"))) }
}
