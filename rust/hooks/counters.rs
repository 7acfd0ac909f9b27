// SPDX-License-Identifier: GPL-2.0

//! The hooks' statistics: one block of `u64` slots per CPU, written with
//! one `%gs`-relative instruction, as the C `this_cpu_add()` writes, and
//! summed over the CPUs only when debugfs reads a counter.
//!
//! The trickiest `unsafe` of the module lives here, alone: inline asm that
//! writes per-CPU memory, and a block whose lifetime is the table's
//! registration. Two rules make it sound:
//!
//! - The block's address is published in [`BLOCK`] with `Release` before
//!   the table is registered, and cleared after it is unregistered (which
//!   waits for every running callback) and the debugfs files are gone;
//!   readers load it with `Acquire`.
//! - Only a callback of the registered table writes: [`Counts`] is made by
//!   an `unsafe fn` whose contract is that, and [`HookStats::record()`]
//!   passes the same contract on to its callers.

use core::ffi::c_void;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use kernel::bindings;
use kernel::prelude::*;

use super::NR_SLOTS;

// `Counts::add()` is a `this_cpu_add()`: x86-64's `%gs`-relative add.
#[cfg(not(all(target_arch = "x86_64", CONFIG_SMP)))]
compile_error!("sched_lb_rs's per-CPU counters are written for x86-64 SMP kernels");

/// The `__percpu` pointer to every CPU's `[u64; NR_SLOTS]`, or 0 while
/// there is none.
///
/// # Invariants
///
/// Non-zero only between [`CounterMemory::alloc()`], which stores a
/// pointer from `pcpu_alloc_noprof()` (with `Release`, so a CPU that loads
/// it with `Acquire` sees the zeroed block) before the table is
/// registered, and the drop of that [`CounterMemory`], after the table is
/// unregistered (and an RCU grace period passed) and the debugfs files
/// are removed.
static BLOCK: AtomicUsize = AtomicUsize::new(0);

/// A statistics counter, as debugfs shows it: the sum of some slots of the
/// per-CPU block, each of which only its CPU writes, over the CPUs.
/// `sis_select` runs at every wakeup and `detach_skip` for every candidate
/// task, so a counter in one shared cache line would bounce between all
/// the CPUs that wake or balance. Additions wrap, which after 2^64 events
/// is harmless for a statistic.
///
/// The slots are `first + i` for each `i < n` with every bit of `mask`
/// set in `i`: one slot for a plain counter, or the part of a hook's
/// histogram (see [`HookStats`]) with a given answer or flag.
#[derive(Clone, Copy)]
pub(crate) struct Counter {
    first: usize,
    n: usize,
    mask: usize,
}

impl Counter {
    /// Counts nothing (a placeholder while a table is built).
    pub(super) const NONE: Counter = Counter {
        first: 0,
        n: 0,
        mask: 0,
    };

    /// The one slot `slot`.
    pub(super) const fn at(slot: usize) -> Self {
        Counter {
            first: slot,
            n: 1,
            mask: 0,
        }
    }

    /// Whether the counter sums any slot (a flag's counter that no hook's
    /// histogram carries sums none).
    pub(super) const fn is_none(&self) -> bool {
        self.n == 0
    }

    /// The sum over the CPUs and over the counter's slots.
    pub(crate) fn sum(&self) -> u64 {
        let mut total = 0u64;
        for i in 0..self.n {
            if i & self.mask == self.mask {
                total = total.wrapping_add(slot_sum(self.first.saturating_add(i)));
            }
        }
        total
    }
}

/// Element `i` of the array at `array`, or `None` past its end, read
/// through the raw pointer: no reference to the array is made.
///
/// # Safety
///
/// `array` is valid for reads of the whole array, and no CPU writes the
/// element while it is read.
unsafe fn element<T: Copy, const LEN: usize>(array: *const [T; LEN], i: usize) -> Option<T> {
    if i >= LEN {
        return None;
    }
    // SAFETY: `i` is within the array, which the caller says is readable
    // and not being written.
    Some(unsafe { array.cast::<T>().add(i).read() })
}

/// The sum over the possible CPUs of slot `slot`, read while they add to it.
fn slot_sum(slot: usize) -> u64 {
    let base = BLOCK.load(Ordering::Acquire);
    if base == 0 || slot >= NR_SLOTS {
        return 0;
    }
    let pcpu = base.wrapping_add(slot * core::mem::size_of::<u64>());
    // SAFETY: `nr_cpu_ids` is set during boot, before any module loads,
    // and not written after.
    let nr_cpu_ids = unsafe { bindings::nr_cpu_ids };
    let mut total = 0u64;
    for cpu in 0..nr_cpu_ids as usize {
        // SAFETY: `__cpu_possible_mask` and `__per_cpu_offset` are set up
        // during boot and `__ro_after_init`: nothing writes them once a
        // module can load. `&raw const` makes no reference to the
        // `static mut`s, and `element()` reads one word of each through
        // the raw pointer.
        let (word, offset) = unsafe {
            (
                element(
                    &raw const bindings::__cpu_possible_mask.bits,
                    cpu / usize::BITS as usize,
                ),
                element(&raw const bindings::__per_cpu_offset, cpu),
            )
        };
        let (Some(word), Some(offset)) = (word, offset) else {
            break;
        };
        if word & (1 << (cpu % usize::BITS as usize)) == 0 {
            continue;
        }
        // `per_cpu_ptr(pcpu, cpu)`.
        let p = pcpu.wrapping_add(offset) as *mut u64;
        // SAFETY: `p` is `cpu`'s copy of a slot of the live block (the
        // invariants of `BLOCK`; a debugfs reader runs before the files,
        // and so the block, are removed), aligned, which that CPU writes
        // with one 8-byte `add` or `inc`: an atomic load reads it whole.
        let v = unsafe { AtomicU64::from_ptr(p) }.load(Ordering::Relaxed);
        total = total.wrapping_add(v);
    }
    total
}

/// This CPU's counters, for one callback: the block's pointer is loaded
/// once, and each addition is then one instruction.
///
/// # Invariants
///
/// `base` is the `__percpu` address of the live block of `NR_SLOTS`
/// slots, and the block outlives the value: it is made only inside a
/// callback of the registered table ([`Counts::get()`]) and dropped before
/// that callback returns, while the block is freed only after the table
/// is unregistered, which waits for every callback to return.
pub(super) struct Counts {
    base: usize,
}

impl Counts {
    /// This CPU's counters, or `None` while there is no block (never while
    /// a callback of the registered table runs, see [`BLOCK`]).
    ///
    /// # Safety
    ///
    /// Called from a callback of the table this module registered, and the
    /// value is dropped before that callback returns.
    #[inline(always)]
    pub(super) unsafe fn get() -> Option<Self> {
        match BLOCK.load(Ordering::Acquire) {
            0 => None,
            // INVARIANT: the block is live (`BLOCK`'s invariants), and the
            // caller keeps the value inside the callback, which
            // unregistration waits for before the block is freed.
            base => Some(Counts { base }),
        }
    }

    /// Adds one to this CPU's copy of slot `FIRST + index`, `index` being
    /// below 64: one `inc` with the slot's offset folded in, which an
    /// interrupt on this CPU cannot split either.
    #[inline(always)]
    fn bump<const FIRST: usize>(&self, index: usize) {
        const { assert!(FIRST < NR_SLOTS, "a histogram outside the block") };
        if index >= 64 || FIRST + index >= NR_SLOTS {
            return;
        }
        // SAFETY: `%gs:base + 8 * (FIRST + index)` is this CPU's copy of
        // a slot of the live per-CPU block (the type's invariants), as in
        // `add()`.
        unsafe {
            core::arch::asm!(
                "inc qword ptr gs:[{base} + {index} * 8 + {offset}]",
                base = in(reg) self.base,
                index = in(reg) index,
                offset = const FIRST * core::mem::size_of::<u64>(),
                options(nostack)
            )
        };
    }

    /// Adds `n` to this CPU's copy of the plain counter `c` (one slot): the
    /// C `this_cpu_add()`, one instruction that an interrupt on this CPU
    /// cannot split, so it needs neither a lock prefix nor disabled
    /// preemption to be exact (the callbacks run with preemption disabled
    /// anyway).
    #[inline(always)]
    pub(super) fn add(&self, c: &Counter, n: u64) {
        let slot = c.first;
        if slot >= NR_SLOTS {
            return;
        }
        let pcpu = self.base.wrapping_add(slot * core::mem::size_of::<u64>());
        // SAFETY: `pcpu` is a slot of the live per-CPU block (the type's
        // invariants). On x86-64 SMP the `%gs` base is this CPU's per-CPU
        // offset, so `%gs:pcpu` is this CPU's copy, as the C
        // `this_cpu_add()` addresses it; nothing else writes it.
        unsafe {
            core::arch::asm!(
                "add qword ptr gs:[{pcpu}], {n}",
                pcpu = in(reg) pcpu,
                n = in(reg) n,
                options(nostack)
            )
        };
    }
}

/// The per-CPU block of counters; dropping it clears [`BLOCK`] and frees
/// the block, so it must outlive the registration and the debugfs files.
pub(super) struct CounterMemory;

impl CounterMemory {
    /// Allocates the block, zeroed, and publishes it in [`BLOCK`].
    pub(super) fn alloc() -> Result<Self> {
        let size = NR_SLOTS * core::mem::size_of::<u64>();
        // SAFETY: a plain allocation; the memory comes zeroed.
        let p = unsafe {
            bindings::pcpu_alloc_noprof(
                size,
                core::mem::align_of::<u64>(),
                false,
                bindings::GFP_KERNEL,
            )
        };
        if p.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a per-CPU pointer to `NR_SLOTS` zeroed `u64`s, set
        // before the table is registered; `Release` orders the zeroing
        // before it for the `Acquire` loads.
        BLOCK.store(p as usize, Ordering::Release);
        Ok(CounterMemory)
    }
}

impl Drop for CounterMemory {
    fn drop(&mut self) {
        let p = BLOCK.swap(0, Ordering::AcqRel);
        if p != 0 {
            // SAFETY: `p` came from `pcpu_alloc_noprof()` and is freed
            // once: the swap took it. No callback runs any more (the owner
            // unregistered the table first) and no debugfs file reads it
            // (removed before this runs).
            unsafe { bindings::free_percpu(p as *mut c_void) };
        }
    }
}

/// How often the scheduler asked a hook, with what answer and which of its
/// `N` flags on, published in debugfs so a run can show that its hooks were
/// exercised and that each call site passes its flags.
///
/// A call costs one addition, to the slot of its combination: slot
/// `first + (hit | on[0] << 1 | on[1] << 2 ...)` of the hook's `2 << N`
/// slots. The calls, the `true` answers and each flag's calls are sums of
/// those slots, made when debugfs reads them, not on the scheduler's path.
pub(crate) struct HookStats<const N: usize, const FIRST: usize> {
    /// Every slot of the hook.
    pub(super) calls: Counter,
    /// The slots of a `true` answer.
    pub(super) hits: Counter,
}

impl<const N: usize, const FIRST: usize> HookStats<N, FIRST> {
    /// Slots of the hook: one per answer and combination of flags.
    const SLOTS: usize = 2 << N;

    pub(super) const NEW: Self = HookStats {
        calls: Self::part(0),
        hits: Self::part(1),
    };

    /// The hook's slots whose combination has every bit of `mask` set.
    const fn part(mask: usize) -> Counter {
        Counter {
            first: FIRST,
            n: Self::SLOTS,
            mask,
        }
    }

    /// The slots of the calls that carried the hook's flag number `bit` on.
    pub(super) const fn with_flag(&self, bit: usize) -> Counter {
        Self::part(2 << bit)
    }

    /// Counts one call, its answer `hit` and its flags `on` (in the order
    /// of the hook's line in `hook_table!`), when `COUNT`: the KUnit
    /// table's instances count nothing. Returns `hit`.
    ///
    /// # Safety
    ///
    /// With `COUNT`, as for [`Counts::get()`]: called from a callback of
    /// the registered table.
    #[inline(always)]
    pub(crate) unsafe fn record<const COUNT: bool>(&self, hit: bool, on: [bool; N]) -> bool {
        if !COUNT {
            return hit;
        }
        // SAFETY: the caller's contract.
        if let Some(counts) = unsafe { Counts::get() } {
            let mut combination = usize::from(hit);
            for (bit, flag) in on.into_iter().enumerate() {
                combination |= usize::from(flag) << (bit + 1);
            }
            counts.bump::<FIRST>(combination & (Self::SLOTS - 1));
        }
        hit
    }
}
