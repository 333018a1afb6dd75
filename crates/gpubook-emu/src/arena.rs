//! Emulated device memory: one memfd, mapped in this process and in the worker at the same
//! virtual address, so a device pointer means the same thing on both sides and host<->device
//! copies are plain memcpys. The memory outlives a worker that crashes.
//!
//! Layout of one allocation (a "slot"), chosen so mistakes show:
//!
//! ```text
//! | guard gap (>= 64 KiB, never allocated) | slack | buffer ........ |page boundary| guard gap |
//!                                                  ^ 256-byte aligned, END on a page boundary
//! ```
//! Ending buffers on a page boundary lets fast mode's guard pages catch the first element past
//! the end; check mode catches every byte anyway. New memory is poisoned with 0xFF (NaN as
//! f32/f64, -1 as an integer) so outputs a kernel never wrote stand out.

use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::EmuError;

/// A live device buffer, as `EmuDevice::buffer_at` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferInfo {
    /// Device address of the first byte.
    pub addr: u64,
    pub bytes: usize,
    /// Size of one element, for messages in elements (`c[1024]`) rather than bytes.
    pub elem_size: usize,
    /// The name given at allocation, e.g. `c`.
    pub label: String,
}

impl BufferInfo {
    pub fn elements(&self) -> usize {
        self.bytes / self.elem_size.max(1)
    }

    pub fn end(&self) -> u64 {
        self.addr + self.bytes as u64
    }

    /// `` `c` (1024 elements of 4 bytes at 0x200000010000) ``.
    pub fn describe(&self) -> String {
        if self.elem_size > 1 {
            format!("`{}` ({} elements of {} bytes at {:#x})", self.label, self.elements(), self.elem_size, self.addr)
        } else {
            format!("`{}` ({} bytes at {:#x})", self.label, self.bytes, self.addr)
        }
    }
}

/// What the worker must be told before the next launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Notice {
    Alloc(BufferInfo),
    Free(u64),
    /// These bytes hold no data yet (a fresh buffer, only poisoned): reading them in check mode
    /// is an `uninitialized_read`.
    Unwritten(u64, usize),
    /// The host filled these bytes (a copy in, a memset, a device-to-device copy).
    Wrote(u64, usize),
}

const ALIGN: u64 = 256;
const MIN_GUARD: u64 = 64 << 10;
/// Freed buffers remembered to explain a use after free.
const FREED_MEMORY: usize = 64;
/// Where arenas go (see `map_shared`): 32 TiB, and 32 slots of 1 TiB from there.
const PREFERRED_BASE: u64 = 0x2000_0000_0000;
const PREFERRED_SLOTS: u64 = 32;

struct Slot {
    info: BufferInfo,
    /// Page-aligned start of the slot (the buffer may begin later, see the module docs).
    start: u64,
    /// Page-aligned end: the buffer's end rounded up to 256 bytes.
    end: u64,
}

pub(crate) struct Arena {
    fd: OwnedFd,
    base: u64,
    bytes: u64,
    page: u64,
    guard: u64,
    slots: BTreeMap<u64, Slot>,
    freed: VecDeque<BufferInfo>,
    pending: Vec<Notice>,
}

impl Arena {
    /// Creates a sparse memfd of `bytes` and maps it. `index` spreads the arenas of several
    /// devices in one process over different preferred addresses.
    pub fn new(bytes: u64, index: usize) -> Result<Arena, EmuError> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        let bytes = bytes.max(16 << 20).next_multiple_of(page);
        // SAFETY: a valid NUL-terminated name; the returned fd is owned below.
        let raw = unsafe { libc::memfd_create(c"gpubook-emu-arena".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(EmuError::io("creating the emulator's device memory (memfd_create)", last_os_error()));
        }
        // SAFETY: raw is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: fd is valid; ftruncate on a memfd only sets its size (no pages are allocated).
        if unsafe { libc::ftruncate(fd.as_raw_fd(), bytes as libc::off_t) } != 0 {
            return Err(EmuError::io(format!("sizing the emulator's device memory to {} GiB (ftruncate)", bytes >> 30), last_os_error()));
        }
        let base = map_shared(&fd, bytes, index)?;
        let guard = MIN_GUARD.max(page);
        Ok(Arena { fd, base, bytes, page, guard, slots: BTreeMap::new(), freed: VecDeque::new(), pending: Vec::new() })
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
    pub fn base(&self) -> u64 {
        self.base
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Bytes handed out to live buffers.
    pub fn used(&self) -> u64 {
        self.slots.values().map(|s| s.info.bytes as u64).sum()
    }

    /// First fit: the lowest address whose slot plus guard gaps fits. Poisons the buffer.
    pub fn alloc(&mut self, bytes: usize, elem_size: usize, label: &str) -> Result<u64, EmuError> {
        let rounded = (bytes as u64).max(1).next_multiple_of(ALIGN);
        let need = rounded.next_multiple_of(self.page);
        let mut cursor = self.base + self.guard;
        for slot in self.slots.values() {
            if cursor + need + self.guard <= slot.start {
                break;
            }
            cursor = slot.end + self.guard;
        }
        if cursor + need + self.guard > self.base + self.bytes {
            return Err(EmuError::Memory(format!(
                "out of device memory: allocating {bytes} bytes for `{label}` failed \
                 ({} bytes in {} live buffers, {} GiB emulated); free buffers you no longer need",
                self.used(),
                self.slots.len(),
                self.bytes >> 30
            )));
        }
        let end = cursor + need;
        let addr = end - rounded;
        let info = BufferInfo { addr, bytes, elem_size: elem_size.max(1), label: clean_label(label) };
        // SAFETY: [addr, end) lies inside our mapping and belongs to no other buffer.
        unsafe { std::ptr::write_bytes(addr as *mut u8, 0xFF, rounded as usize) };
        self.pending.push(Notice::Alloc(info.clone()));
        self.pending.push(Notice::Unwritten(addr, bytes));
        self.slots.insert(addr, Slot { info, start: cursor, end });
        Ok(addr)
    }

    pub fn free(&mut self, addr: u64) -> Result<(), EmuError> {
        let Some(slot) = self.slots.remove(&addr) else {
            return Err(EmuError::Memory(self.explain_free(addr)));
        };
        // Give the pages back to the system (a memfd holds them until punched out), so tests
        // that allocate and free in a loop do not grow. Best effort: on failure they just stay.
        // SAFETY: the range is inside the memfd and no buffer uses it any more.
        unsafe {
            libc::fallocate(
                self.fd.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                (slot.start - self.base) as libc::off_t,
                (slot.end - slot.start) as libc::off_t,
            );
        }
        self.pending.push(Notice::Free(addr));
        if self.freed.len() == FREED_MEMORY {
            self.freed.pop_front();
        }
        self.freed.push_back(slot.info);
        Ok(())
    }

    /// Gives a live buffer a new name for messages (the worker hears of it before the next launch).
    pub fn relabel(&mut self, addr: u64, label: &str) -> Result<(), EmuError> {
        let slot =
            self.slots.get_mut(&addr).ok_or_else(|| EmuError::Memory(format!("cannot rename {addr:#x}: no device buffer starts there")))?;
        slot.info.label = clean_label(label);
        let info = slot.info.clone();
        self.pending.push(Notice::Alloc(info));
        Ok(())
    }

    fn explain_free(&self, addr: u64) -> String {
        if let Some(b) = self.buffer_at(addr) {
            return format!(
                "cannot free {addr:#x}: it is {} bytes into buffer {}; free the address the \
                 allocation returned",
                addr - b.addr,
                b.describe()
            );
        }
        if let Some(b) = self.freed.iter().rev().find(|b| b.addr == addr) {
            return format!("double free: buffer {} was already freed", b.describe());
        }
        format!("cannot free {addr:#x}: no device buffer starts there")
    }

    /// The live buffer whose bytes include `addr`.
    pub fn buffer_at(&self, addr: u64) -> Option<BufferInfo> {
        let (_, slot) = self.slots.range(..=addr).next_back()?;
        (addr < slot.info.end() || (slot.info.bytes == 0 && addr == slot.info.addr)).then(|| slot.info.clone())
    }

    /// Checks that `[addr, addr+len)` lies inside one live buffer; `what` names the operation
    /// for the message ("write of 16 bytes").
    pub fn check_range(&self, addr: u64, len: usize, what: &str) -> Result<(), EmuError> {
        if len == 0 {
            return Ok(()); // an empty copy touches nothing, wherever it points
        }
        let Some(b) = self.buffer_at(addr) else {
            return Err(EmuError::Memory(format!("{what} at {addr:#x}: {}", self.explain_stray(addr))));
        };
        let end = addr.saturating_add(len as u64);
        if end > b.end() {
            let offset = addr - b.addr;
            return Err(EmuError::Memory(format!(
                "{what} at byte {offset} of buffer {} runs {} bytes past its end (the buffer holds {} bytes)",
                b.describe(),
                end - b.end(),
                b.bytes
            )));
        }
        Ok(())
    }

    /// Why `addr` is not inside a buffer, naming the nearest one.
    fn explain_stray(&self, addr: u64) -> String {
        if let Some(b) = self.freed.iter().rev().find(|b| addr >= b.addr && addr < b.end())
            && self.buffer_at(addr).is_none()
        {
            return format!("buffer {} was freed", b.describe());
        }
        if let Some((_, s)) = self.slots.range(..=addr).next_back()
            && addr < s.end + self.guard
        {
            return format!("{} bytes past the end of buffer {}", addr - s.info.end(), s.info.describe());
        }
        if let Some((_, s)) = self.slots.range(addr..).next()
            && s.info.addr - addr <= self.guard
        {
            return format!("{} bytes before buffer {}", s.info.addr - addr, s.info.describe());
        }
        if addr < self.base || addr >= self.base + self.bytes {
            "not a device address (a host pointer, or an uninitialized one?)".into()
        } else {
            "no device buffer there".into()
        }
    }

    /// Host -> device. The range must lie inside a live buffer.
    pub fn write(&mut self, dst: u64, src: &[u8]) -> Result<(), EmuError> {
        self.check_range(dst, src.len(), &format!("host-to-device copy of {} bytes", src.len()))?;
        // SAFETY: checked to lie inside a live buffer of our mapping; src is a distinct host slice.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        self.wrote(dst, src.len());
        Ok(())
    }

    /// Device -> host.
    pub fn read(&self, src: u64, dst: &mut [u8]) -> Result<(), EmuError> {
        self.check_range(src, dst.len(), &format!("device-to-host copy of {} bytes", dst.len()))?;
        // SAFETY: as in `write`.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Device -> device; the ranges may overlap (memmove).
    pub fn copy(&mut self, dst: u64, src: u64, bytes: usize) -> Result<(), EmuError> {
        self.check_range(src, bytes, &format!("device-to-device copy of {bytes} bytes, reading"))?;
        self.check_range(dst, bytes, &format!("device-to-device copy of {bytes} bytes, writing"))?;
        // SAFETY: both ranges checked; `copy` tolerates overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) };
        self.wrote(dst, bytes);
        Ok(())
    }

    pub fn fill(&mut self, dst: u64, byte: u8, bytes: usize) -> Result<(), EmuError> {
        self.check_range(dst, bytes, &format!("memset of {bytes} bytes"))?;
        // SAFETY: checked.
        unsafe { std::ptr::write_bytes(dst as *mut u8, byte, bytes) };
        self.wrote(dst, bytes);
        Ok(())
    }

    /// Remembers host writes for the worker's never-written tracking; consecutive writes to
    /// one range (a loop of chunked copies) stay one notice each, which is cheap to send.
    fn wrote(&mut self, dst: u64, bytes: usize) {
        if bytes > 0 {
            self.pending.push(Notice::Wrote(dst, bytes));
        }
    }

    /// Notices since the last call, in order.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.pending)
    }

    /// What a freshly started worker must hear: every live buffer, then what the host marked as
    /// never written or wrote since the last launch (so the first launch of a new worker checks
    /// reads of never-written memory too). Pending allocs and frees are moot.
    pub fn fresh_worker_notices(&mut self) -> Vec<Notice> {
        let mut out: Vec<Notice> = self.slots.values().map(|s| Notice::Alloc(s.info.clone())).collect();
        out.extend(self.pending.drain(..).filter(|n| matches!(n, Notice::Unwritten(..) | Notice::Wrote(..))));
        out
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: base/bytes are exactly what mmap returned; no references into it outlive us
        // (the device hands out addresses, never Rust references).
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.bytes as usize) };
    }
}

fn map_shared(fd: &OwnedFd, bytes: u64, index: usize) -> Result<u64, EmuError> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_SHARED | libc::MAP_NORESERVE;
    // Candidates 1 TiB apart in [32 TiB, 64 TiB): below where PIE binaries and their heaps
    // load (~85 TiB) and far below the top-down mmap area, so the worker, whose own layout is
    // randomized, finds the same range free. Several devices or processes each take the next.
    for k in 0..PREFERRED_SLOTS {
        let hint = PREFERRED_BASE + ((index as u64 + k) % PREFERRED_SLOTS) * (1 << 40);
        if bytes > 1 << 40 {
            break;
        }
        // SAFETY: a fresh mapping of our own fd; FIXED_NOREPLACE never replaces an existing one.
        let p = unsafe { libc::mmap(hint as *mut _, bytes as usize, prot, flags | libc::MAP_FIXED_NOREPLACE, fd.as_raw_fd(), 0) };
        if p == hint as *mut libc::c_void {
            return Ok(hint);
        }
        if p != libc::MAP_FAILED {
            // An old kernel treats FIXED_NOREPLACE as a hint and may map elsewhere: undo.
            // SAFETY: p/bytes is the mapping just made.
            unsafe { libc::munmap(p, bytes as usize) };
        }
    }
    // SAFETY: as above, the kernel picks the address.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), bytes as usize, prot, flags, fd.as_raw_fd(), 0) };
    if p == libc::MAP_FAILED {
        return Err(EmuError::io(format!("mapping {} GiB of emulated device memory (mmap)", bytes >> 30), last_os_error()));
    }
    Ok(p as u64)
}

/// Labels travel on one protocol line: no control characters.
fn clean_label(label: &str) -> String {
    let l: String = label.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let l = l.trim();
    if l.is_empty() { "buffer".into() } else { l.to_string() }
}

fn last_os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arena() -> Arena {
        Arena::new(1 << 30, 63).unwrap()
    }

    #[test]
    fn alloc_aligns_poisons_and_ends_on_a_page() {
        let mut a = arena();
        let x = a.alloc(4000, 4, "x").unwrap();
        assert_eq!(x % 256, 0);
        assert_eq!((x + 4000u64.next_multiple_of(256)) % a.page, 0);
        let mut back = vec![0u8; 4000];
        a.read(x, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0xFF));
        let f = f32::from_le_bytes(back[..4].try_into().unwrap());
        assert!(f.is_nan());
        assert_eq!(a.take_notices(), vec![Notice::Alloc(a.buffer_at(x).unwrap()), Notice::Unwritten(x, 4000)]);
        a.fill(x, 0, 8).unwrap();
        assert_eq!(a.take_notices(), vec![Notice::Wrote(x, 8)]);
    }

    #[test]
    fn round_trip_copy_fill() {
        let mut a = arena();
        let x = a.alloc(16, 4, "x").unwrap();
        let y = a.alloc(16, 4, "y").unwrap();
        a.write(x, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]).unwrap();
        a.copy(y, x + 4, 8).unwrap();
        a.fill(y + 8, 7, 8).unwrap();
        let mut out = [0u8; 16];
        a.read(y, &mut out).unwrap();
        assert_eq!(out, [5, 6, 7, 8, 9, 10, 11, 12, 7, 7, 7, 7, 7, 7, 7, 7]);
    }

    #[test]
    fn guard_gaps_separate_buffers() {
        let mut a = arena();
        let x = a.alloc(256, 4, "x").unwrap();
        let y = a.alloc(256, 4, "y").unwrap();
        assert!(y >= x + 256 + MIN_GUARD);
        assert_eq!(a.buffer_at(x + 255).unwrap().label, "x");
        assert_eq!(a.buffer_at(x + 256), None);
    }

    #[test]
    fn first_fit_reuses_freed_space() {
        let mut a = arena();
        let x = a.alloc(100, 1, "x").unwrap();
        let _y = a.alloc(100, 1, "y").unwrap();
        a.free(x).unwrap();
        let z = a.alloc(50, 1, "z").unwrap();
        assert_eq!(z, x);
        // Reused memory is poisoned again, not left with the old contents.
        let mut b = [0u8; 50];
        a.read(z, &mut b).unwrap();
        assert!(b.iter().all(|&v| v == 0xFF));
    }

    #[test]
    fn bad_ranges_are_explained() {
        let mut a = arena();
        let x = a.alloc(4096, 4, "c").unwrap();
        let e = a.write(x, &[0u8; 4100]).unwrap_err().to_string();
        assert!(e.contains("runs 4 bytes past its end") && e.contains("`c` (1024 elements of 4 bytes"), "{e}");
        let e = a.write(x + 4096 + 8, &[0u8; 4]).unwrap_err().to_string();
        assert!(e.contains("8 bytes past the end of buffer `c`"), "{e}");
        let e = a.write(16, &[0u8; 4]).unwrap_err().to_string();
        assert!(e.contains("not a device address"), "{e}");
        a.free(x).unwrap();
        let e = a.free(x).unwrap_err().to_string();
        assert!(e.starts_with("double free: buffer `c`"), "{e}");
        let e = a.write(x, &[0u8; 4]).unwrap_err().to_string();
        assert!(e.contains("was freed"), "{e}");
        let y = a.alloc(64, 4, "y").unwrap();
        let e = a.free(y + 4).unwrap_err().to_string();
        assert!(e.contains("4 bytes into buffer `y`"), "{e}");
        a.write(y + 64, &[]).unwrap(); // empty copies touch nothing
    }

    #[test]
    fn out_of_memory_is_an_error_not_a_crash() {
        let mut a = Arena::new(16 << 20, 62).unwrap();
        let e = a.alloc(1 << 30, 4, "huge").unwrap_err().to_string();
        assert!(e.starts_with("out of device memory"), "{e}");
    }

    #[test]
    fn a_fresh_worker_hears_of_live_buffers_and_what_is_unwritten() {
        let mut a = arena();
        let gone = a.alloc(8, 1, "gone").unwrap();
        a.free(gone).unwrap();
        let x = a.alloc(8, 1, "x\ny").unwrap();
        a.fill(x, 0, 4).unwrap();
        let n = a.fresh_worker_notices();
        let Notice::Alloc(info) = &n[0] else { panic!("{n:?}") };
        assert_eq!((info.addr, info.label.as_str()), (x, "x y"));
        // The frees and allocs before are moot; what was never written (and what the host
        // wrote since) is not, or the first launch could not report reads of unwritten memory.
        assert_eq!(n[1..], [Notice::Unwritten(gone, 8), Notice::Unwritten(x, 8), Notice::Wrote(x, 4)]);
        assert!(a.take_notices().is_empty());
    }
}
