// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `sched_lb_rs_steal`: Steve Sistare's STEAL, from his reply
//! to "[RFC 00/11] select_idle_sibling rework" (2018).
//!
//! Victim order and the decision run through the `steal` callback this
//! module registers, on topologies described as data, with a `steal_from`
//! that records which CPUs it was asked about instead of moving tasks. The
//! mask transitions run through the kernel's own `sched_lb_overload_write()`
//! (the function `enqueue_task_fair()` and `dequeue_entities()` call) on a
//! sparsemask of the test's, and are compared with the policy's rule.

use core::ffi::{c_int, c_uint};

use kernel::bindings;

use super::check;
use crate::policy::sparsemask::locate;
use crate::policy::steal::overload_transition;

/// Bits per line and line size of the kernel's mask, as the header says.
const PER: u32 = bindings::SCHED_LB_STEAL_BITS_PER_LINE;

/// Room for 64 CPUs in the kernel's layout.
const WORDS: usize = (64 / PER as usize) * 8;

/// An LLC's sparsemask with `cpus` set, laid out as the shim lays it out:
/// element `cpu - base`, `base` being the LLC's first CPU.
fn sparse(cpus: &[u32], base: u32) -> [u64; WORDS] {
    let mut w = [0u64; WORDS];
    for &c in cpus {
        let Some(elem) = c.checked_sub(base) else {
            continue;
        };
        let (word, bit) = locate(elem, PER);
        if let Some(x) = w.get_mut(word as usize) {
            *x |= 1 << bit;
        }
    }
    w
}

/// What the fake `steal_from` does and saw.
struct Recorder {
    asked: [u32; 16],
    n: usize,
    /// Give a task when asked about this CPU.
    stolen_at: Option<u32>,
    /// Report work of its own when asked about this CPU.
    stop_at: Option<u32>,
}

impl Recorder {
    const fn new(stolen_at: Option<u32>, stop_at: Option<u32>) -> Self {
        Recorder {
            asked: [0; 16],
            n: 0,
            stolen_at,
            stop_at,
        }
    }

    fn asked(&self) -> &[u32] {
        &self.asked[..self.n.min(self.asked.len())]
    }
}

/// The `steal_from` callback of the STEAL cases: records the victim asked
/// and answers as the case's `Recorder` says.
///
/// # Safety
///
/// `args` is a case's argument struct whose `ctx` points to its `Recorder`,
/// which nothing else references during the call.
unsafe extern "C" fn record_steal(args: *mut bindings::sched_lb_steal_args, cpu: c_int) -> c_int {
    // SAFETY: `args` is the struct a case built, whose `ctx` points to that
    // case's `Recorder`; the hook holds no reference into the recorder.
    let rec = unsafe { &mut *(*args).ctx.cast::<Recorder>() };
    let cpu = cpu as u32;
    if let Some(slot) = rec.asked.get_mut(rec.n) {
        *slot = cpu;
    }
    rec.n = rec.n.saturating_add(1);
    if rec.stop_at == Some(cpu) {
        -1
    } else if rec.stolen_at == Some(cpu) {
        1
    } else {
        0
    }
}

/// One call of this module's `steal` callback. An idle CPU, one node,
/// avg_idle far above the steal cost unless a row says otherwise.
struct Call<'a> {
    overloaded: &'a [u64; WORDS],
    base: u32,
    llc: u64,
    siblings: u64,
    this_cpu: u32,
    numa_nodes: u32,
    nr_runnable: u32,
    avg_idle_ns: u64,
    avg_steal_cost_ns: u64,
}

impl<'a> Call<'a> {
    fn new(overloaded: &'a [u64; WORDS], llc: u64, siblings: u64, this_cpu: u32) -> Self {
        Call {
            overloaded,
            base: 0,
            llc,
            siblings,
            this_cpu,
            numa_nodes: 1,
            nr_runnable: 0,
            avg_idle_ns: 500_000,
            avg_steal_cost_ns: 2_000,
        }
    }

    /// Runs the hook; returns its answer and the args it wrote.
    fn run(&self, rec: &mut Recorder) -> (c_int, bindings::sched_lb_steal_args) {
        let llc = [self.llc];
        let siblings = [self.siblings];
        let mut args = bindings::sched_lb_steal_args {
            overloaded: self.overloaded.as_ptr().cast(),
            llc: llc.as_ptr().cast(),
            siblings: siblings.as_ptr().cast(),
            steal_from: Some(record_steal),
            ctx: core::ptr::from_mut(rec).cast(),
            avg_idle_ns: self.avg_idle_ns,
            avg_steal_cost_ns: self.avg_steal_cost_ns,
            overloaded_words: WORDS as u32,
            overloaded_base: self.base,
            nbits: 64,
            this_cpu: self.this_cpu,
            numa_nodes: self.numa_nodes,
            nr_runnable: self.nr_runnable,
            attempts: 0,
            tried: false,
        };
        let steal = crate::hooks::kunit_ops().steal;
        // SAFETY: the callback this module registers, on a struct whose
        // pointers outlive the call; `record_steal` reads `ctx` as set.
        let ret = steal.map_or(-2, |f| unsafe { f(&mut args) });
        (ret, args)
    }
}

/// Victim order on a topology: the overloaded CPUs, the stealer's LLC and
/// SMT siblings, the stealer, and the order the policy must try them in.
struct OrderRow {
    what: &'static str,
    overloaded: &'static [u32],
    /// The first CPU of the LLC, element 0 of its mask.
    base: u32,
    llc: u64,
    siblings: u64,
    this_cpu: u32,
    order: &'static [u32],
}

#[rustfmt::skip]
static ORDER_ROWS: [OrderRow; 7] = [
    // SMT2 x 4, one LLC: cores {0,1} {2,3} {4,5} {6,7}.
    OrderRow { what: "SMT2x4: own core, then the LLC from the next CPU", overloaded: &[1, 3, 5, 7], base: 0, llc: 0xff, siblings: 0x30, this_cpu: 4, order: &[5, 7, 1, 3] },
    OrderRow { what: "SMT2x4: no overloaded sibling", overloaded: &[2, 6], base: 0, llc: 0xff, siblings: 0x03, this_cpu: 1, order: &[2, 6] },
    // x86 numbering, 2 LLCs of SMT2 x 2: LLC0 = {0,1,4,5}, siblings n, n+4.
    OrderRow { what: "2 LLCs: stays in the stealer's LLC", overloaded: &[0, 2, 3, 5, 6], base: 0, llc: 0x33, siblings: 0x22, this_cpu: 1, order: &[5, 0] },
    // SMT4 x 2, one LLC: cores {0..3} {4..7}.
    OrderRow { what: "SMT4x2: siblings wrap inside the core first", overloaded: &[0, 3, 4, 6], base: 0, llc: 0xff, siblings: 0x0f, this_cpu: 2, order: &[3, 0, 4, 6] },
    // No SMT, 2 LLCs of 8 on 16 CPUs; 8..15 sit in the second cache line.
    OrderRow { what: "no SMT, second LLC, second mask line", overloaded: &[1, 8, 12, 15], base: 0, llc: 0xff00, siblings: 0x0200, this_cpu: 9, order: &[12, 15, 8] },
    // The same LLC with a mask of its own, as the kernel keeps it: element 0 is CPU 8.
    OrderRow { what: "no SMT, second LLC's own mask (base 8)", overloaded: &[8, 12, 15], base: 8, llc: 0xff00, siblings: 0x0200, this_cpu: 9, order: &[12, 15, 8] },
    OrderRow { what: "only the stealer is overloaded", overloaded: &[4], base: 0, llc: 0xff, siblings: 0x30, this_cpu: 4, order: &[] },
];

/// The order of victims on each topology row, every one tried when none
/// gives a task.
pub(crate) extern "C" fn victim_order(_test: *mut bindings::kunit) {
    for row in ORDER_ROWS.iter() {
        let mask = sparse(row.overloaded, row.base);
        let mut rec = Recorder::new(None, None);
        let mut call = Call::new(&mask, row.llc, row.siblings, row.this_cpu);
        call.base = row.base;
        let (ret, args) = call.run(&mut rec);
        // Only a row with some other CPU overloaded is worth a try.
        let want_tried = !row.order.is_empty();
        check!(
            "steal_victim_order",
            rec.asked() == row.order,
            "{}: tried {:?}, want {:?}",
            row.what,
            rec.asked(),
            row.order
        );
        check!(
            "steal_victim_order",
            ret == -1 && args.attempts as usize == row.order.len(),
            "{}: returned {} after {} attempts",
            row.what,
            ret,
            args.attempts
        );
        check!(
            "steal_victim_order",
            args.tried == want_tried,
            "{}: tried {} with {} victims",
            row.what,
            args.tried,
            row.order.len()
        );
    }
}

/// The first victim that gives a task ends the attempt, and work arriving
/// at the stealer stops it.
pub(crate) extern "C" fn first_success_and_stop(_test: *mut bindings::kunit) {
    let mask = sparse(&[1, 3, 5, 7], 0);
    let call = Call::new(&mask, 0xff, 0x30, 4);

    let mut rec = Recorder::new(Some(1), None);
    let (ret, args) = call.run(&mut rec);
    check!(
        "steal_first_success_and_stop",
        ret == 1 && rec.asked() == [5, 7, 1] && args.attempts == 3,
        "stolen from {} after {:?}",
        ret,
        rec.asked()
    );

    let mut rec = Recorder::new(Some(1), Some(7));
    let (ret, args) = call.run(&mut rec);
    check!(
        "steal_first_success_and_stop",
        ret == -1 && rec.asked() == [5, 7] && args.attempts == 2,
        "work arrived at 7: returned {} after {:?}",
        ret,
        rec.asked()
    );
}

/// The decision: a row of inputs and whether the policy steals.
struct DecisionRow {
    what: &'static str,
    numa_nodes: u32,
    nr_runnable: u32,
    avg_idle_ns: u64,
    avg_steal_cost_ns: u64,
    steal: bool,
}

#[rustfmt::skip]
static DECISION_ROWS: [DecisionRow; 6] = [
    DecisionRow { what: "idle, one node, idle covers cost", numa_nodes: 1, nr_runnable: 0, avg_idle_ns: 500_000, avg_steal_cost_ns: 2_000, steal: true },
    DecisionRow { what: "2 nodes: still allowed", numa_nodes: 2, nr_runnable: 0, avg_idle_ns: 500_000, avg_steal_cost_ns: 2_000, steal: true },
    DecisionRow { what: "8 nodes: Sistare's regression case", numa_nodes: 8, nr_runnable: 0, avg_idle_ns: 500_000, avg_steal_cost_ns: 2_000, steal: false },
    DecisionRow { what: "a runnable task here", numa_nodes: 1, nr_runnable: 1, avg_idle_ns: 500_000, avg_steal_cost_ns: 2_000, steal: false },
    DecisionRow { what: "idle shorter than a steal", numa_nodes: 1, nr_runnable: 0, avg_idle_ns: 1_999, avg_steal_cost_ns: 2_000, steal: false },
    DecisionRow { what: "idle equal to a steal", numa_nodes: 1, nr_runnable: 0, avg_idle_ns: 2_000, avg_steal_cost_ns: 2_000, steal: true },
];

/// Each decision row through the callback; a CPU that does not steal asks
/// no victim.
pub(crate) extern "C" fn decision(_test: *mut bindings::kunit) {
    let mask = sparse(&[5], 0);
    for row in DECISION_ROWS.iter() {
        let mut call = Call::new(&mask, 0xff, 0x03, 0);
        call.numa_nodes = row.numa_nodes;
        call.nr_runnable = row.nr_runnable;
        call.avg_idle_ns = row.avg_idle_ns;
        call.avg_steal_cost_ns = row.avg_steal_cost_ns;
        let mut rec = Recorder::new(Some(5), None);
        let (ret, args) = call.run(&mut rec);
        let want_ret = if row.steal { 5 } else { -1 };
        check!(
            "steal_decision",
            args.tried == row.steal && ret == want_ret && rec.n == usize::from(row.steal),
            "{}: tried {}, returned {}, asked {}",
            row.what,
            args.tried,
            ret,
            rec.n
        );
    }
}

/// Enqueue (+1) and dequeue (-1) events of one CPU replayed through the
/// kernel's mask update: it writes exactly at the policy's transitions, the
/// bit always says "2 or more runnable", and only the CPU's own word of the
/// sparse layout ever changes.
pub(crate) extern "C" fn mask_transitions(_test: *mut bindings::kunit) {
    const EVENTS: [i32; 14] = [1, 1, 1, -1, -1, 1, -1, -1, 1, 1, 1, 1, -1, -1];
    for cpu in [0u32, 9, 63] {
        let mut mask = [0u64; WORDS];
        let (word, bit) = locate(cpu, PER);
        let (mut nr, mut state, mut writes) = (0u32, false, 0u32);
        for e in EVENTS {
            let new = nr.saturating_add_signed(e);
            // SAFETY: `mask` has room for CPU `cpu` in the kernel's layout
            // (64 CPUs); `state` is the caller-owned copy of the rq field.
            let wrote = unsafe {
                bindings::sched_lb_test_overload_write(
                    mask.as_mut_ptr().cast(),
                    cpu as c_int,
                    &mut state,
                    new as c_uint,
                )
            };
            let want = overload_transition(nr, new);
            writes = writes.saturating_add(u32::from(wrote));
            nr = new;
            let set = mask[word as usize] & (1 << bit) != 0;
            check!(
                "steal_mask_transitions",
                wrote == want.is_some() && set == (nr >= 2) && state == set,
                "cpu {}: at {} runnable wrote {} (policy {:?}), bit {}",
                cpu,
                nr,
                wrote,
                want,
                set
            );
            let others = mask
                .iter()
                .enumerate()
                .all(|(i, &w)| i == word as usize || w == 0);
            check!(
                "steal_mask_transitions",
                others && mask[word as usize] & !(1 << bit) == 0,
                "cpu {}: a bit outside its own changed",
                cpu
            );
        }
        // 0,1,2,3,2,1,2,1,0,1,2,3,4,3,2: set, clear, set, clear, set.
        check!(
            "steal_mask_transitions",
            writes == 5,
            "cpu {}: {} writes for 5 crossings",
            cpu,
            writes
        );
    }
}

/// The steal cost the gate is given, kept by the kernel's shim
/// (`sched_lb_steal_cost()` and `sched_lb_steal_cost_update()`). The gate
/// learns only from the attempts it lets through, so a cost that one long
/// attempt lifted above every `avg_idle` must still be forgotten: after a
/// second without a measurement the gate is given 0, and the next attempt
/// starts a new average instead of moving 1/8 of the way from the old one.
/// Within the second, attempts average as `update_avg()` does. Jiffies
/// that wrap are compared as `time_after()` compares them.
pub(crate) extern "C" fn cost_forgotten(_test: *mut bindings::kunit) {
    // The kernel's HZ (bindings::HZ is the user-visible USER_HZ, 100).
    let second = u64::from(bindings::CONFIG_HZ);
    const MS: u64 = 1_000_000;
    for t0 in [1000u64, u64::MAX - 10] {
        let at = |jiffies: u64| t0.wrapping_add(jiffies);
        // `unsigned long` is `usize` in the bindings; 64 bits either way.
        let mut stamp = t0.wrapping_sub(second.saturating_mul(2)) as usize;
        let mut avg_ns = 0u64;
        let mut step = |now: u64, sample_ns: Option<u64>| -> u64 {
            // SAFETY: both pointers are to locals of this case, valid for
            // the call, which only reads and writes them.
            unsafe {
                bindings::sched_lb_test_steal_cost(
                    &mut avg_ns,
                    &mut stamp,
                    now as usize,
                    sample_ns.is_some(),
                    sample_ns.unwrap_or(0),
                )
            }
        };
        // A first attempt, long after any other: its cost is the average.
        let first = step(at(0), Some(100 * MS));
        // Within the second the gate is given that 100 ms, above any
        // avg_idle (at most twice max_idle_balance_cost); at exactly one
        // second still, as time_after() is strict.
        let held = [step(at(1), None), step(at(second), None)];
        // One jiffy later it is forgotten.
        let forgotten = step(at(second.wrapping_add(1)), None);
        // The attempt that the open gate lets through starts a new average.
        let fresh = step(at(second.wrapping_add(1)), Some(40_000));
        // Within its second, the next one averages: 40 us + (80 - 40) / 8.
        let averaged = step(at(second.wrapping_add(2)), Some(80_000));
        check!(
            "steal_cost_forgotten",
            first == 100 * MS
                && held == [100 * MS, 100 * MS]
                && forgotten == 0
                && fresh == 40_000
                && averaged == 45_000,
            "from jiffy {}: first {}, held {:?}, then {}, new {}, averaged {}",
            t0,
            first,
            held,
            forgotten,
            fresh,
            averaged
        );
    }
}
