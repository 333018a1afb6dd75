//! Access counts: what a check-mode launch asked of global and shared memory, counted the way a
//! GPU's memory system sees it. The worker counts (runtime/worker/access/counts.cpp, and DESIGN.md
//! "Access counts" for how warp-level requests are formed); this is its reply, typed.

use serde::{Deserialize, Serialize};

/// One check-mode launch's memory traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessCounts {
    /// CUDA threads that ran to the end.
    pub threads: u64,
    pub global: GlobalAccesses,
    pub shared: SharedAccesses,
    /// The most any one thread did of each kind: how evenly the work is spread.
    pub per_thread_max: ThreadAccesses,
    /// The least any one thread did of each kind.
    pub per_thread_min: ThreadAccesses,
    /// Global traffic per device buffer, in address order.
    pub buffers: Vec<BufferAccesses>,
}

/// Global memory: loads and stores as warp-level requests, and atomics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalAccesses {
    pub loads: GlobalRequests,
    pub stores: GlobalRequests,
    /// Atomic operations (one per thread that called one), e.g. `atomicAdd`.
    pub atomics: u64,
}

/// Warp-level requests to global memory of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalRequests {
    /// Warp-level requests: one per access instruction a warp executed.
    pub requests: u64,
    /// Bytes the threads asked for.
    pub bytes: u64,
    /// Of those, the distinct bytes of each request: a float that 16 lanes read (a broadcast)
    /// counts once.
    pub unique_bytes: u64,
    /// 32-byte sectors the requests touched (each counted once per request).
    pub sectors: u64,
}

impl GlobalRequests {
    /// Sectors per request: 4 for 32 consecutive floats (coalesced), 32 for a stride of 32
    /// floats or more (every lane its own sector).
    pub fn sectors_per_request(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.sectors as f64 / self.requests as f64 }
    }

    /// Distinct bytes used per byte moved in sectors: 1.0 when every byte of every sector is
    /// used, 0.125 when each lane's float sits in a sector of its own.
    pub fn efficiency(&self) -> f64 {
        if self.sectors == 0 { 0.0 } else { self.unique_bytes as f64 / (self.sectors * 32) as f64 }
    }
}

/// Shared memory: loads and stores as warp-level requests, and atomics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedAccesses {
    pub loads: SharedRequests,
    pub stores: SharedRequests,
    pub atomics: u64,
}

/// Warp-level requests to shared memory of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedRequests {
    pub requests: u64,
    pub bytes: u64,
    /// Passes through the 32 banks (4 bytes wide) the requests took: one per request without
    /// bank conflicts (for 4-byte accesses), up to 32 when every lane hits the same bank.
    pub wavefronts: u64,
    /// The fewest passes the same requests could take: one per 32 distinct words.
    pub ideal_wavefronts: u64,
}

impl SharedRequests {
    /// Extra passes caused by bank conflicts (wavefronts beyond the ideal).
    pub fn bank_conflicts(&self) -> u64 {
        self.wavefronts.saturating_sub(self.ideal_wavefronts)
    }
}

/// Thread-level counts (each thread's own accesses, not warp-level requests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadAccesses {
    pub global_loads: u64,
    pub global_stores: u64,
    pub shared_loads: u64,
    pub shared_stores: u64,
    pub atomics: u64,
    /// `__syncthreads()` calls passed.
    pub barriers: u64,
}

/// The global traffic of one device buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferAccesses {
    /// Device address of the buffer's first byte (as `EmuDevice::alloc` returned it).
    pub addr: u64,
    /// Its name in diagnostics.
    pub label: String,
    pub loads: GlobalRequests,
    pub stores: GlobalRequests,
    pub atomics: u64,
    /// Who wrote each element, when the device records it (`EmuConfig::writers`) and this
    /// launch stored to the buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writers: Option<Writers>,
}

/// Who wrote each element of one buffer in one check-mode launch, from the race detector's
/// shadow (the last write of each 4-byte word). An element wider than a word is credited to the
/// writer of its first word; one narrower (a byte, a half) only when the word's last store
/// covered it, else it reads as not written by this launch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writers {
    /// Bytes per element (the buffer's element size; 4 when the allocation did not say).
    pub elem_size: u64,
    /// Per element: 0 when this launch did not write it, else the global linear id of the
    /// thread that wrote it last plus one (linear block id x threads per block + linear thread
    /// id within the block + 1).
    pub thread_plus_one: Vec<u64>,
}

impl Writers {
    /// The global linear thread id that wrote element `i` last, if this launch wrote it.
    pub fn writer(&self, i: usize) -> Option<u64> {
        self.thread_plus_one.get(i).and_then(|&w| w.checked_sub(1))
    }

    /// Parses the worker's writers file: per buffer a u64 address, element size and element
    /// count, then a u64 per element (all little-endian). Returns (address, writers) pairs.
    pub(crate) fn parse_file(bytes: &[u8]) -> Result<Vec<(u64, Writers)>, String> {
        let mut words = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
        if !bytes.len().is_multiple_of(8) {
            return Err(format!("{} bytes is not a whole number of u64s", bytes.len()));
        }
        let mut out = Vec::new();
        while let Some(addr) = words.next() {
            let (Some(elem_size), Some(n)) = (words.next(), words.next()) else {
                return Err("a buffer's header is cut short".into());
            };
            let thread_plus_one: Vec<u64> = words.by_ref().take(n as usize).collect();
            if thread_plus_one.len() as u64 != n {
                return Err(format!("buffer at {addr:#x}: {} of {n} elements", thread_plus_one.len()));
            }
            out.push((addr, Writers { elem_size, thread_plus_one }));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_figures() {
        let coalesced = GlobalRequests { requests: 2, bytes: 256, unique_bytes: 256, sectors: 8 };
        assert_eq!((coalesced.sectors_per_request(), coalesced.efficiency()), (4.0, 1.0));
        let strided = GlobalRequests { requests: 1, bytes: 128, unique_bytes: 128, sectors: 32 };
        let broadcast = GlobalRequests { requests: 1, bytes: 128, unique_bytes: 4, sectors: 1 };
        assert_eq!(broadcast.efficiency(), 0.125);
        assert_eq!((strided.sectors_per_request(), strided.efficiency()), (32.0, 0.125));
        assert_eq!(GlobalRequests::default().efficiency(), 0.0);
        let conflicted = SharedRequests { requests: 1, bytes: 128, wavefronts: 32, ideal_wavefronts: 1 };
        assert_eq!(conflicted.bank_conflicts(), 31);
    }

    #[test]
    fn the_workers_reply_parses() {
        let c: AccessCounts = serde_json::from_str(
            r#"{"threads":64,"global":{"loads":{"requests":2,"bytes":256,"unique_bytes":256,"sectors":8},
                "stores":{"requests":2,"bytes":256,"unique_bytes":256,"sectors":8},"atomics":0},
                "shared":{"loads":{"requests":0,"bytes":0,"wavefronts":0,"ideal_wavefronts":0},
                "stores":{"requests":0,"bytes":0,"wavefronts":0,"ideal_wavefronts":0},"atomics":0},
                "per_thread_max":{"global_loads":1,"global_stores":1,"shared_loads":0,"shared_stores":0,"atomics":0,"barriers":0},
                "per_thread_min":{"global_loads":1,"global_stores":1,"shared_loads":0,"shared_stores":0,"atomics":0,"barriers":0},
                "buffers":[{"addr":4096,"label":"a","loads":{"requests":2,"bytes":256,"unique_bytes":256,"sectors":8},
                "stores":{"requests":0,"bytes":0,"unique_bytes":0,"sectors":0},"atomics":0}]}"#,
        )
        .unwrap();
        assert_eq!(c.global.loads.sectors_per_request(), 4.0);
        assert_eq!(c.buffers[0].label, "a");
        assert_eq!(c.buffers[0].writers, None);
    }

    #[test]
    fn the_writers_file_parses() {
        let words: Vec<u64> = vec![4096, 4, 3, 0, 1, 70, 8192, 8, 1, 5];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let parsed = Writers::parse_file(&bytes).unwrap();
        assert_eq!(parsed.len(), 2);
        let (addr, w) = &parsed[0];
        assert_eq!((*addr, w.elem_size), (4096, 4));
        assert_eq!((w.writer(0), w.writer(1), w.writer(2), w.writer(3)), (None, Some(0), Some(69), None));
        assert_eq!((parsed[1].0, parsed[1].1.writer(0)), (8192, Some(4)));
        assert!(Writers::parse_file(&bytes[..bytes.len() - 8]).is_err());
        assert!(Writers::parse_file(&bytes[..12]).is_err());
    }
}
