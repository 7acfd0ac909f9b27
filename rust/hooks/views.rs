// SPDX-License-Identifier: GPL-2.0

//! How the policy sees the kernel's memory during one callback: the SIS
//! shim's masks and callbacks as an [`LlcView`] and [`SmtView`], and one
//! steal attempt's masks.
//!
//! CPU masks and STEAL's sparsemask are memory that other CPUs write at
//! any time (`set_bit()` on a 1 <-> 2 crossing, a steal clearing its
//! victim's bit in the middle of our walk, hotplug rewriting a span): they
//! are read as `[AtomicU64]` with relaxed loads, the Rust form of
//! `READ_ONCE()`, never as `&[u64]`. Each view carries the lifetime `'call`
//! of the callback it was made for (as `ArcBorrow<'a, T>` carries its
//! borrow), so the compiler keeps the view, and every slice it lends,
//! inside that call.

use core::ffi::c_int;
use core::marker::PhantomData;
use core::sync::atomic::AtomicU64;

use kernel::bindings;

use crate::policy::sis_chain::{LlcView, SmtView};
use crate::policy::sis_select::{bit_is_set, IdleView};
use crate::policy::sparsemask;

// cpumask words are `unsigned long`; the policy reads them as 64-bit words.
const _: () = assert!(
    usize::BITS == u64::BITS,
    "sched_lb_rs assumes 64-bit cpumask words"
);

// The shim lays out the overloaded mask as the policy reads it.
const _: () = assert!(
    bindings::SCHED_LB_STEAL_LINE_BYTES == sparsemask::LINE_BYTES,
    "sparsemask line size differs between kernel and policy"
);

/// Words of a cpumask of `nbits` bits.
fn cpumask_words(nbits: u32) -> u32 {
    nbits.div_ceil(u64::BITS)
}

/// `nwords` bitmap words that other CPUs may write while they are read.
///
/// # Safety
///
/// `bits` is NULL (the slice is then empty) or points to `nwords` aligned
/// `unsigned long`s that stay allocated for `'a`. Other CPUs may change
/// them only with atomic bit operations or word-sized stores, which is how
/// the kernel writes cpumasks and sparsemasks. The callers below pick `'a`
/// as the borrow of a view whose `'call` outlives it.
unsafe fn shared_words<'a>(bits: *const usize, nwords: u32) -> &'a [AtomicU64] {
    if bits.is_null() || nwords == 0 {
        return &[];
    }
    // SAFETY: see the function's contract; `AtomicU64` has the size and
    // alignment of `u64`, which is `unsigned long` here (checked above),
    // and atomic loads of memory other CPUs write are what it is for.
    unsafe { core::slice::from_raw_parts(bits.cast::<AtomicU64>(), nwords as usize) }
}

/// A CPU number for a callback into C. The policy only produces CPUs it
/// read from the kernel's masks; one that does not fit is passed as -1,
/// which the kernel refuses.
pub(super) fn c_cpu(cpu: u32) -> c_int {
    c_int::try_from(cpu).unwrap_or(-1)
}

/// The shim's callbacks of one scan.
type CpuIdleFn = unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> bool;
type SmtMaskFn = unsafe extern "C" fn(*const bindings::sched_lb_sis_args, c_int) -> *const usize;

/// One `select_idle_cpu()` scan: the shim's masks and idle test, as the
/// policy's [`LlcView`].
///
/// # Invariants
///
/// `args` points to the `sched_lb_sis_args` the shim built for the scan in
/// progress, valid for `'call`, a borrow of the callback's copy of it, so
/// the view cannot leave the `sis_select` call that made it.
/// Its `cpus` and `cores` point to cpumasks of `nbits` bits that live as
/// long (the shim's per-CPU scratch mask and the LLC's `sched_lb_llc`,
/// freed only after an RCU grace period), and its callbacks may be called
/// with `args` until then.
pub(super) struct KernelView<'call> {
    args: *const bindings::sched_lb_sis_args,
    cpu_idle: CpuIdleFn,
    smt_mask: Option<SmtMaskFn>,
    cpus: *const usize,
    cores: *const usize,
    nwords: u32,
    _call: PhantomData<&'call bindings::sched_lb_sis_args>,
}

impl<'call> KernelView<'call> {
    /// # Safety
    ///
    /// `args` points to the argument struct of the scan in progress, as the
    /// type's invariants say, and `a` is the callback's copy of it.
    pub(super) unsafe fn new(
        args: *const bindings::sched_lb_sis_args,
        a: &'call bindings::sched_lb_sis_args,
        cpu_idle: CpuIdleFn,
    ) -> Self {
        // INVARIANT: the caller's contract.
        KernelView {
            args,
            cpu_idle,
            smt_mask: a.smt_mask,
            cpus: a.cpus,
            cores: a.cores,
            nwords: cpumask_words(a.nbits),
            _call: PhantomData,
        }
    }
}

impl<'call> LlcView for KernelView<'call> {
    type Mask = [AtomicU64];
    type Smt<'v>
        = KernelSmt<'v>
    where
        Self: 'v;

    /// The LLC's span masked by the task's affinity.
    fn cpus(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants `cpus` is a cpumask of `nbits`
        // bits that lives for `'call`, which outlives `&self`.
        unsafe { shared_words(self.cpus, self.nwords) }
    }

    /// The first thread of each core of the LLC.
    fn cores(&self) -> &[AtomicU64] {
        // SAFETY: as for `cpus()`.
        unsafe { shared_words(self.cores, self.nwords) }
    }

    /// The shim's `smt_mask` callback, where it passed one.
    fn smt(&self) -> Option<KernelSmt<'_>> {
        // INVARIANT: `args` and the callback come from this view, whose
        // invariants hold for `'call`, which outlives the borrow.
        self.smt_mask.map(|smt_mask| KernelSmt {
            args: self.args,
            smt_mask,
            nwords: self.nwords,
            _view: PhantomData,
        })
    }
}

impl IdleView for KernelView<'_> {
    fn idle(&self, cpu: u32) -> bool {
        // SAFETY: by the type invariants `cpu_idle` may be called with
        // `args`; the shim refuses a CPU outside the LLC.
        unsafe { (self.cpu_idle)(self.args, c_cpu(cpu)) }
    }

    fn allowed(&self, cpu: u32) -> bool {
        bit_is_set(self.cpus(), cpu)
    }
}

/// The shim's `smt_mask` callback, as the policy's [`SmtView`].
///
/// # Invariants
///
/// `args` and `smt_mask` come from a [`KernelView`] that outlives `'v`, so
/// the callback may be called with `args` while this value lives.
pub(super) struct KernelSmt<'v> {
    args: *const bindings::sched_lb_sis_args,
    smt_mask: SmtMaskFn,
    nwords: u32,
    _view: PhantomData<&'v ()>,
}

impl SmtView for KernelSmt<'_> {
    type Mask = [AtomicU64];

    /// The SMT siblings of `core` in the LLC; empty for a CPU outside it.
    fn siblings(&mut self, core: u32) -> &[AtomicU64] {
        // SAFETY: by the type invariants the callback may be called with
        // `args`. It answers in this CPU's `sched_lb_smt_scratch` mask,
        // allocated at boot and never freed, which its next call rewrites:
        // the slice borrows `self` mutably, so it is gone before that
        // call can be made, and other CPUs never write this CPU's buffer.
        unsafe { shared_words((self.smt_mask)(self.args, c_cpu(core)), self.nwords) }
    }
}

/// The masks of one steal attempt.
///
/// # Invariants
///
/// `a` is the `steal` callback's copy of its `sched_lb_steal_args`, which
/// the shim passes under `rcu_read_lock()`: its `overloaded`
/// sparsemask (the LLC's, freed only after a grace period), `llc` span and
/// `siblings` mask stay allocated until that call returns.
pub(super) struct StealMasks<'call> {
    a: &'call bindings::sched_lb_steal_args,
}

impl<'call> StealMasks<'call> {
    /// # Safety
    ///
    /// `a` is the copy of the argument struct of the `steal` call in
    /// progress, as the type's invariants say.
    pub(super) unsafe fn new(a: &'call bindings::sched_lb_steal_args) -> Self {
        // INVARIANT: the caller's contract.
        StealMasks { a }
    }

    pub(super) fn overloaded(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants, a sparsemask of
        // `overloaded_words` words that lives for `'call`.
        unsafe { shared_words(self.a.overloaded, self.a.overloaded_words) }
    }

    pub(super) fn llc(&self) -> &[AtomicU64] {
        // SAFETY: by the type invariants, a cpumask of `nbits` bits.
        unsafe { shared_words(self.a.llc, cpumask_words(self.a.nbits)) }
    }

    pub(super) fn siblings(&self) -> &[AtomicU64] {
        // SAFETY: as for `llc()`.
        unsafe { shared_words(self.a.siblings, cpumask_words(self.a.nbits)) }
    }
}
