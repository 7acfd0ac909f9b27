// SPDX-License-Identifier: GPL-2.0

//! What became of each idle CPU's tick, read off a record's `sched_tick()`
//! entries (`B` lines, [`trace::TICK`]): taken at once, taken after a
//! wakeup made the CPU busy, or lost. The guest's odds are what
//! [`crate::cost::IdleTickTurn`] models, and each trace's own are given
//! to its replay (`schedsim replay --wake-idle-us guest`), as its TCG
//! latencies are (`Documentation/schedsim.rst`, "An idle vCPU's tick
//! comes on its turn"). A busy CPU's tick is read too
//! ([`TickClass::Busy`]): taken or lost, which the model loses only
//! with TCG's round (`--tcg-rr`; `Documentation/schedsim.rst`, "A busy
//! vCPU's tick comes on its turn too").
//!
//! Why it is a question at all: the guest is `CONFIG_HZ_PERIODIC` at
//! 250 Hz, its CPUs' ticks aligned, so on hardware every CPU enters
//! `sched_tick()` once every 4 ms. Under single-threaded TCG a halted
//! vCPU takes its timer interrupt only on its turn of QEMU's one host
//! thread, and a vCPU running a task with another queued holds the thread
//! (it neither halts nor sends an IPI), so an idle vCPU's tick comes late
//! or is merged into the next one, the more often while a task waits
//! somewhere.
//!
//! How it is read: the tick instants are the record's own, the start of
//! the 4 ms phase where the `sched_tick()` entries bunch
//! ([`tick_phase_ns`]). At each instant every CPU is put in a
//! [`TickClass`] by the state the record shows then; its first
//! `sched_tick()` before the next instant says its [`TickFate`]. A
//! record that logged only the periodic balance
//! (`sched_balance_softirq()`) is read the same way with it in the
//! tick's place ([`TickTurns::by_balance`]), which also counts as lost
//! every tick whose CPU had no balance due (an idle MC level whose
//! interval doubled balances every other tick): its odds are not given to
//! a replay.
//!
//! The model logs its own ticks the same way (`Sim::rec_tick()`), so the
//! report sets the two records' fates side by side: the check that the
//! odds given are the odds the model's run shows.

use super::trace::{Call, TICK, TICK_BALANCE};
use crate::cost::IdleTickTurn;
use serde::Serialize;

/// The tick period of the guest's `CONFIG_HZ=250`, ns.
pub const TICK_NS: u64 = 4_000_000;

/// The histogram bin [`tick_phase_ns`] finds the bunch in, ns.
const BIN_NS: u64 = 20_000;

/// A class's own odds are given to a replay from this many of its ticks
/// on (`TickTurns::turn`); below, the pooled constant's: a share of 30
/// has a standard error of 8 points at most.
pub const MIN_TICKS: u64 = 30;

/// The state of a CPU with nothing running or queued at a tick instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickClass {
    /// No CPU has a task waiting behind a running one, and no wakeup is
    /// on its way to this one.
    Free = 0,
    /// Some CPU has a task waiting behind a running one: under TCG, a
    /// vCPU with work queued holds the host thread.
    Waiting = 1,
    /// A wakeup is on its way to it (the wake list's IPI): not idle to
    /// `idle_cpu()`.
    Pending = 2,
    /// It runs a task. Under TCG a busy vCPU takes its timer interrupt
    /// on its turn too, and a vCPU the host thread does not come back to
    /// within the period loses it; read only where the record has
    /// `sched_tick()` itself (a busy CPU's periodic balance is due only
    /// every `busy_factor` intervals).
    Busy = 3,
}

/// What became of a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickFate {
    /// Taken with the CPU still free.
    AtOnce = 0,
    /// Taken after a task came to the CPU, or with one running: a busy
    /// CPU's tick.
    AfterWakeup = 1,
    /// None before the next tick instant: merged into it.
    Lost = 2,
}

impl TickClass {
    /// Every class, in [`TickTurns::counts`]' order.
    pub const ALL: [TickClass; 4] = [
        TickClass::Free,
        TickClass::Waiting,
        TickClass::Pending,
        TickClass::Busy,
    ];

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            TickClass::Free => "none waiting",
            TickClass::Waiting => "task waiting",
            TickClass::Pending => "wakeup pending",
            TickClass::Busy => "task running",
        }
    }
}

impl TickFate {
    /// Every fate, in [`TickTurns::counts`]' order.
    pub const ALL: [TickFate; 3] = [TickFate::AtOnce, TickFate::AfterWakeup, TickFate::Lost];

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            TickFate::AtOnce => "at once",
            TickFate::AfterWakeup => "after wakeup",
            TickFate::Lost => "lost",
        }
    }
}

/// The CPUs' ticks of one record, by class and fate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TickTurns {
    /// `counts[class][fate]`, in [`TickClass::ALL`] and [`TickFate::ALL`]
    /// order.
    pub counts: [[u64; 3]; 4],
    /// Read off `sched_balance_softirq()`: the record has no
    /// `sched_tick()` entries.
    pub by_balance: bool,
}

impl TickTurns {
    /// The ticks of a class.
    pub fn total(&self, class: TickClass) -> u64 {
        self.counts[class as usize].iter().sum()
    }

    /// The ticks of a class that met a fate.
    pub fn count(&self, class: TickClass, fate: TickFate) -> u64 {
        self.counts[class as usize][fate as usize]
    }

    /// No tick read: the record has neither function.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().flatten().all(|&n| n == 0)
    }

    /// The odds [`crate::cost::IdleTickTurn`] models, as this record
    /// shows them: each class with at least [`MIN_TICKS`] ticks its own,
    /// the other takes `pooled`'s. None where the record's ticks are its
    /// periodic balances, which count a tick with no balance due as lost.
    pub fn turn(&self, pooled: IdleTickTurn) -> Option<IdleTickTurn> {
        if self.by_balance {
            return None;
        }
        let pct = |class, fate| {
            let n = self.total(class);
            let x = self.count(class, fate);
            // Rounded to the nearest whole percent; n > 0 where called.
            u32::try_from((x.saturating_mul(200) + n) / n.saturating_mul(2).max(1)).unwrap_or(100)
        };
        let mut turn = pooled;
        if self.total(TickClass::Free) >= MIN_TICKS {
            turn.take_free_pct = pct(TickClass::Free, TickFate::AtOnce);
        }
        if self.total(TickClass::Waiting) >= MIN_TICKS {
            turn.take_waiting_pct = pct(TickClass::Waiting, TickFate::AtOnce);
        }
        Some(turn)
    }

    /// Adds another record's counts (a summary over traces).
    pub fn add(&mut self, other: &TickTurns) {
        for (a, b) in self
            .counts
            .iter_mut()
            .flatten()
            .zip(other.counts.iter().flatten())
        {
            *a = a.saturating_add(*b);
        }
        self.by_balance |= other.by_balance;
    }
}

/// The tick instants' phase within the 4 ms period, ns: the start of the
/// densest bunch of `func`'s entries (its densest bin, and the bins
/// before it while each holds more than 30% of the next one's count: the
/// timer interrupt's own spread over the CPUs). None where the record has no entry of `func`.
pub fn tick_phase_ns(calls: &[Call], func: &str) -> Option<u64> {
    const BINS: usize = (TICK_NS / BIN_NS) as usize;
    let mut h = [0u64; BINS];
    let mut any = false;
    for c in calls.iter().filter(|c| c.func == func) {
        // (ts mod TICK_NS) / BIN_NS < BINS.
        h[((c.ts_ns % TICK_NS) / BIN_NS) as usize] += 1;
        any = true;
    }
    if !any {
        return None;
    }
    let mut k = (0..BINS).max_by_key(|&i| (h[i], std::cmp::Reverse(i)))?;
    for _ in 0..BINS {
        let before = (k + BINS - 1) % BINS;
        // h[before] <= 0.3 * h[k], in integers.
        if h[before].saturating_mul(10) <= h[k].saturating_mul(3) {
            break;
        }
        k = before;
    }
    Some(k as u64 * BIN_NS)
}

/// The state a CPU is in, as the record shows it at an instant.
pub trait CpuState {
    /// CPUs.
    fn nr_cpus(&self) -> usize;
    /// Nothing running or queued on `cpu` (a wakeup may be on its way).
    fn empty(&self, cpu: usize) -> bool;
    /// A wakeup is on its way to `cpu`.
    fn pending(&self, cpu: usize) -> bool;
    /// Some CPU has a task waiting behind a running one.
    fn any_waiting(&self) -> bool;
}

/// Follows a record's tick periods and the ticks of the CPUs it watches.
///
/// # Invariants
///
/// `watch` has one entry per CPU; `phase_ns < TICK_NS`.
pub struct TickWatch<'a> {
    func: &'a str,
    phase_ns: u64,
    /// The period the last line fell in.
    period: Option<u64>,
    /// The class each CPU was put in at its period's instant, until its
    /// tick is seen.
    watch: Vec<Option<TickClass>>,
    /// The counts so far.
    pub turns: TickTurns,
}

impl<'a> TickWatch<'a> {
    /// A watch on a record's `calls` over `ncpu` CPUs: None where it has
    /// no tick and no periodic balance to read.
    pub fn new(calls: &'a [Call], ncpu: usize) -> Option<Self> {
        let (func, phase_ns) = [TICK, TICK_BALANCE]
            .into_iter()
            .find_map(|f| Some((f, tick_phase_ns(calls, f)?)))?;
        Some(Self {
            func,
            phase_ns,
            period: None,
            watch: vec![None; ncpu],
            turns: TickTurns {
                by_balance: func == TICK_BALANCE,
                ..TickTurns::default()
            },
        })
    }

    /// The record reached `ts_ns` with `st` the state until then: every
    /// tick instant passed closes its period (a watched CPU that did not
    /// tick lost it) and puts the CPUs with nothing to run in a class.
    pub fn advance(&mut self, ts_ns: u64, st: &impl CpuState) {
        // The period of ts, counted from the first instant at or before
        // the record's start (ts + TICK_NS - phase >= 0).
        let p = (ts_ns.saturating_add(TICK_NS) - self.phase_ns) / TICK_NS;
        let Some(mut period) = self.period else {
            self.period = Some(p);
            return;
        };
        if period >= p {
            return;
        }
        // A gap of several periods in the record: the state held through
        // it, so each instant finds it so.
        let waiting = st.any_waiting();
        while period < p {
            period += 1;
            for class in self.watch.iter_mut().filter_map(Option::take) {
                self.turns.counts[class as usize][TickFate::Lost as usize] += 1;
            }
            let busy = (!self.turns.by_balance).then_some(TickClass::Busy);
            for (c, w) in self.watch.iter_mut().enumerate().take(st.nr_cpus()) {
                *w = if !st.empty(c) {
                    busy
                } else if st.pending(c) {
                    Some(TickClass::Pending)
                } else if waiting {
                    Some(TickClass::Waiting)
                } else {
                    Some(TickClass::Free)
                };
            }
        }
        self.period = Some(p);
    }

    /// A call of the record, after [`Self::advance`] to its time: a
    /// watched CPU's tick has its fate.
    pub fn call(&mut self, c: &Call, st: &impl CpuState) {
        if c.func != self.func {
            return;
        }
        let cpu = c.cpu as usize;
        if let Some(class) = self.watch.get_mut(cpu).and_then(Option::take) {
            let fate = if st.empty(cpu) && !st.pending(cpu) {
                TickFate::AtOnce
            } else {
                TickFate::AfterWakeup
            };
            self.turns.counts[class as usize][fate as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ts_ns: u64, cpu: u32, func: &str) -> Call {
        Call {
            ts_ns,
            cpu,
            func: func.into(),
            caller: String::new(),
            after: 0,
        }
    }

    /// Two CPUs, each empty or not, wakeups on their way, a task waiting.
    struct St {
        empty: [bool; 2],
        pending: [bool; 2],
        waiting: bool,
    }

    impl CpuState for St {
        fn nr_cpus(&self) -> usize {
            2
        }
        fn empty(&self, c: usize) -> bool {
            self.empty[c]
        }
        fn pending(&self, c: usize) -> bool {
            self.pending[c]
        }
        fn any_waiting(&self) -> bool {
            self.waiting
        }
    }

    /// The phase is where the ticks bunch, its start: the timer
    /// interrupt reaches the CPUs one after another.
    #[test]
    fn the_tick_phase_is_the_start_of_the_bunch() {
        let mut calls = Vec::new();
        for k in 0..50u64 {
            let at = k * TICK_NS + 1_230_000;
            calls.push(call(at, 0, TICK));
            calls.push(call(at + 20_000, 1, TICK));
            calls.push(call(at + 21_000, 2, TICK));
            // A late one, alone in its bin.
            if k % 10 == 0 {
                calls.push(call(at + 2_000_000, 3, TICK));
            }
        }
        calls.push(call(5, 0, TICK_BALANCE));
        assert_eq!(tick_phase_ns(&calls, TICK), Some(1_220_000));
        assert_eq!(tick_phase_ns(&calls, TICK_BALANCE), Some(0));
        assert_eq!(tick_phase_ns(&calls, "sched_balance_rq"), None);
        // A bunch across the period's end.
        let wrap = [
            call(TICK_NS - 10_000, 0, TICK),
            call(TICK_NS + 5_000, 1, TICK),
        ];
        assert_eq!(tick_phase_ns(&wrap, TICK), Some(TICK_NS - 20_000));
    }

    /// Each watched tick gets one fate, by the state at its instant and
    /// at its entry; a CPU that runs something is watched as busy.
    #[test]
    fn a_ticks_fate_follows_its_instant_and_its_entry() {
        let calls = [call(0, 0, TICK), call(0, 1, TICK)];
        let mut w = TickWatch::new(&calls, 2).unwrap();
        assert!(!w.turns.by_balance);
        let mut st = St {
            empty: [true, false],
            pending: [false, false],
            waiting: false,
        };
        w.advance(100, &st);
        // Period 1: CPU 0 free, CPU 1 busy.
        w.advance(TICK_NS, &st);
        w.call(&call(TICK_NS, 1, TICK), &st);
        w.call(&call(TICK_NS + 10, 0, TICK), &st);
        // Period 2: a task waits on CPU 1; CPU 0 ticks after a wakeup.
        st.waiting = true;
        w.advance(2 * TICK_NS, &st);
        st.empty[0] = false;
        w.call(&call(2 * TICK_NS + 50_000, 0, TICK), &st);
        // A second entry in a period is not a second tick.
        w.call(&call(2 * TICK_NS + 60_000, 0, TICK), &st);
        // Period 3: a wakeup on its way to CPU 0, which does not tick;
        // periods 4 and 5 pass with it waiting, lost too.
        st.empty[0] = true;
        st.pending[0] = true;
        w.advance(3 * TICK_NS, &st);
        w.advance(5 * TICK_NS + 1, &st);
        st.pending[0] = false;
        w.advance(6 * TICK_NS, &st);
        let t = w.turns;
        assert_eq!(t.count(TickClass::Free, TickFate::AtOnce), 1);
        assert_eq!(t.count(TickClass::Waiting, TickFate::AfterWakeup), 1);
        assert_eq!(t.count(TickClass::Pending, TickFate::Lost), 3);
        // CPU 1 runs a task throughout: its first tick taken, the four
        // periods after it without one lost.
        assert_eq!(t.count(TickClass::Busy, TickFate::AfterWakeup), 1);
        assert_eq!(t.count(TickClass::Busy, TickFate::Lost), 4);
        assert_eq!(t.counts.iter().flatten().sum::<u64>(), 10);
        // The fifth period's CPU 0 is watched still: no fate yet.
        assert_eq!(w.watch[0], Some(TickClass::Waiting));
    }

    /// The odds a replay is given: a class's own from MIN_TICKS ticks on,
    /// rounded to whole percents; none off the periodic balance.
    #[test]
    fn a_records_odds_need_its_ticks() {
        let pooled = crate::cost::TCG_IDLE_TICK_TURN;
        let mut t = TickTurns::default();
        assert!(t.is_empty());
        assert_eq!(t.turn(pooled), Some(pooled));
        t.counts[TickClass::Free as usize] = [60, 7, 13];
        t.counts[TickClass::Waiting as usize] = [5, 5, 19];
        let turn = t.turn(pooled).unwrap();
        assert_eq!(turn.take_free_pct, 75);
        assert_eq!(
            turn.take_waiting_pct, pooled.take_waiting_pct,
            "29 ticks: the pooled odds"
        );
        t.counts[TickClass::Waiting as usize][2] += 1;
        assert_eq!(t.turn(pooled).unwrap().take_waiting_pct, 17);
        t.by_balance = true;
        assert_eq!(t.turn(pooled), None);
        let mut sum = TickTurns::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!(sum.total(TickClass::Free), 160);
        assert!(sum.by_balance);
    }

    /// A record without a tick or a balance has nothing to watch; with
    /// only the balance it is read off it, and says so.
    #[test]
    fn the_balance_stands_in_for_a_missing_tick() {
        assert!(TickWatch::new(&[call(0, 0, "sched_balance_rq")], 2).is_none());
        let calls = [call(0, 0, TICK_BALANCE)];
        let w = TickWatch::new(&calls, 2).unwrap();
        assert!(w.turns.by_balance);
    }
}
