//! Symmetric buffers: every rank allocates the same buffer, and each rank's kernels get a table
//! of everyone's addresses, so rank s reaches rank d's copy as `table[d][i]`. This is DeepEP's
//! NVLink path: its `Buffer` allocates one region per rank, exchanges CUDA IPC handles, and
//! passes kernels `void** buffer_ptrs`. Here a table is typed: a kernel parameter `float* const*
//! recv_x` takes `recv_x.peers(rank)`.

use super::world::World;
use crate::gpu::{DeviceRepr, DeviceSlice, Result};
use std::marker::PhantomData;

/// A device address of a `T` on some rank, as a kernel sees it: `T*`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerPtr<T>(u64, PhantomData<T>);

impl<T> PeerPtr<T> {
    pub fn addr(&self) -> u64 {
        self.0
    }
}

// SAFETY: a u64 (an address), no padding; the table's elements are pointers to T, so a kernel
// parameter `T* const* ptrs` (whose element type the launch checks as T) matches.
unsafe impl<T: DeviceRepr> DeviceRepr for PeerPtr<T> {
    const C_NAMES: &'static [&'static str] = T::C_NAMES;
    const RUST_NAME: &'static str = "PeerPtr";
}

/// One buffer of `len` `T`s on every rank, and on every rank the table of all their addresses.
pub struct Symmetric<T: DeviceRepr> {
    label: String,
    len: usize,
    slices: Vec<DeviceSlice<T>>,
    tables: Vec<DeviceSlice<PeerPtr<T>>>,
}

impl<T: DeviceRepr> Symmetric<T> {
    /// Allocates the buffers (their contents unspecified: poisoned when the device poisons) and
    /// the tables, on each device's default stream: they outlive the world's streams, and the
    /// device frees them after every use it knows of. Peer stores are uses it does not know of:
    /// synchronize the world before dropping a symmetric buffer that peers still write. `label` names them in diagnostics: `recv_x@3` is rank 3's copy.
    ///
    /// # Safety
    /// As `Stream::alloc`: the buffers hold garbage until written.
    pub unsafe fn alloc(world: &World, len: usize, label: &str) -> Result<Symmetric<T>> {
        let mut slices = Vec::with_capacity(world.size());
        for rank in world.ranks() {
            // SAFETY: the caller's contract.
            let mut s = unsafe { rank.gpu().default_stream().alloc::<T>(len) }?;
            s.set_label(format!("{label}@{}", rank.index()));
            slices.push(s);
        }
        Symmetric::with_tables(world, label, len, slices)
    }

    /// Allocates the buffers zeroed.
    pub fn zeros(world: &World, len: usize, label: &str) -> Result<Symmetric<T>> {
        let mut slices = Vec::with_capacity(world.size());
        for rank in world.ranks() {
            let mut s = rank.gpu().default_stream().alloc_zeros::<T>(len)?;
            s.set_label(format!("{label}@{}", rank.index()));
            slices.push(s);
        }
        Symmetric::with_tables(world, label, len, slices)
    }

    fn with_tables(world: &World, label: &str, len: usize, slices: Vec<DeviceSlice<T>>) -> Result<Symmetric<T>> {
        let addrs: Vec<PeerPtr<T>> = slices.iter().map(|s| PeerPtr(s.device_ptr(), PhantomData)).collect();
        let mut tables = Vec::with_capacity(world.size());
        for rank in world.ranks() {
            let mut t = rank.gpu().default_stream().clone_htod(&addrs)?;
            t.set_label(format!("{label}_ptrs@{}", rank.index()));
            tables.push(t);
        }
        Ok(Symmetric { label: label.to_string(), len, slices, tables })
    }

    /// Elements per rank.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn label(&self) -> &str {
        &self.label
    }
    pub fn ranks(&self) -> usize {
        self.slices.len()
    }

    /// Rank `rank`'s own copy.
    pub fn on(&self, rank: usize) -> &DeviceSlice<T> {
        &self.slices[rank]
    }
    pub fn on_mut(&mut self, rank: usize) -> &mut DeviceSlice<T> {
        &mut self.slices[rank]
    }

    /// The table rank `rank`'s kernels use: entry d is rank d's copy (DeepEP's `buffer_ptrs`).
    pub fn peers(&self, rank: usize) -> &DeviceSlice<PeerPtr<T>> {
        &self.tables[rank]
    }

    /// Every rank's copy, on the host, after the world's work is done (the host waits for it).
    pub fn to_host(&self, world: &World) -> Result<Vec<Vec<T>>> {
        world.synchronize()?;
        self.slices.iter().zip(world.ranks()).map(|(s, rank)| rank.stream().clone_dtoh(s)).collect()
    }

    /// Sets every rank's copy to zero bytes, each on its rank's stream.
    pub fn zero(&mut self, world: &World) -> Result<()> {
        for (s, rank) in self.slices.iter_mut().zip(world.ranks()) {
            rank.stream().memset_zeros(s)?;
        }
        Ok(())
    }
}

impl<T: DeviceRepr> std::fmt::Debug for Symmetric<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Symmetric<{}>({} × {} on {} ranks)", T::RUST_NAME, self.label, self.len, self.slices.len())
    }
}
