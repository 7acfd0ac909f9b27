// SPDX-License-Identifier: GPL-2.0

//! What a run did, measured the same way from the guest's trace and from
//! the model's recorded events (issue 32's replay report):
//!
//! - migrations of the workload's tasks, by the lowest sched-domain level
//!   whose span holds both CPUs (`sched_migrate_task`'s orig and dest) and
//!   by cause: a move between a task's `W` and its `U` is wakeup placement
//!   (`select_task_rq_fair()`), one before its `N` fork placement, any
//!   other a balancer's (periodic, newidle, STEAL, active);
//! - wakeups placed in the waker's LLC: among the wakeups of a workload
//!   task by a workload task (a `W` in task or softirq context, with a
//!   workload task running on that CPU), the share whose target CPU shares
//!   the waker CPU's LLC, and the shares on the waker's CPU and on the
//!   task's previous CPU;
//! - where the waker sat for those wakeups: on the wakee's previous CPU or
//!   across which level from it, and at each level the share that
//!   `wake_affine()` pulled onto the waker's CPU. It parts the policy's
//!   decision (pulled, given where the waker sat) from the state it
//!   decided on (where the tasks sat), which the shares above mix;
//! - balancer moves by what the record shows of the CPU that made them
//!   ([`Puller`]): a newidle pull, a busy CPU's, an idle CPU's, an active
//!   balance's push;
//! - how many events in a row one CPU logs before another logs one: the
//!   TCG guest runs its vCPUs one at a time on one host thread, so its
//!   record comes in stretches, where CPUs that run at once interleave;
//! - idle time while another CPU had waiting tasks: CPU-ns of idle CPUs
//!   while some other CPU had a task runnable and not running (queued by
//!   a wakeup or a preemption, until switched in; a migration moves it),
//!   the work-conservation loss "The Linux Scheduler: a Decade of Wasted
//!   Cores" measures; and plain idle time;
//! - what became of the idle CPUs' ticks, where the record has them
//!   (`ticks.rs`): taken at once, after a wakeup, or lost;
//! - wakeups, context switches and the workload's CPU time.

use super::ticks::{CpuState, TickTurns, TickWatch};
use super::trace::{preempted, Call, Ctx, Ev, Event, TICK_BALANCE};
use crate::cost::{LatencySpread, SPREAD_POINTS};
use crate::topology::Topology;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Migrations of one cause at each level, lowest level first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ByLevel {
    /// Level names (`SMT`, `MC`, `PKG`, `NUMA`), lowest first.
    pub levels: Vec<&'static str>,
    /// Wakeup placement moves per level.
    pub wakeup: Vec<u64>,
    /// Fork placement moves per level.
    pub fork: Vec<u64>,
    /// Balancer moves per level.
    pub balance: Vec<u64>,
}

/// What made a balancer's move, as the record shows it: `sched_migrate_task`
/// is logged by the CPU that runs the move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Puller {
    /// Logged by the destination, whose next event is the switch away
    /// from the task that was running there, blocked: the pull of
    /// `sched_balance_newidle()` (or STEAL) in the `__schedule()` that
    /// found the queue empty.
    Newidle,
    /// Logged by the destination while it runs a task that runs on: a
    /// busy CPU's periodic balance.
    Busy,
    /// Logged by the destination while it is idle: an idle CPU's
    /// periodic balance, or the newidle balance of its idle task's
    /// `schedule_idle()`.
    Idle,
    /// Logged by the origin: the stopper of an active balance pushes the
    /// task that ran there.
    Active,
    /// Logged by neither: a NOHZ idle balancer on another CPU's behalf.
    Other,
}

impl Puller {
    /// Every kind, in [`Metrics::balance_by`]'s order.
    pub const ALL: [Puller; 5] = [
        Puller::Newidle,
        Puller::Busy,
        Puller::Idle,
        Puller::Active,
        Puller::Other,
    ];

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Puller::Newidle => "newidle",
            Puller::Busy => "busy",
            Puller::Idle => "idle",
            Puller::Active => "active",
            Puller::Other => "other",
        }
    }
}

/// The measures of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Migrations by level and cause.
    pub migrations: ByLevel,
    /// Wakeups of workload tasks by workload tasks.
    pub task_wakeups: u64,
    /// ... placed in the waker CPU's LLC.
    pub in_waker_llc: u64,
    /// ... placed on the waker's CPU.
    pub on_waker_cpu: u64,
    /// ... placed on the task's previous CPU.
    pub on_prev_cpu: u64,
    /// Those wakeups by where the waker's CPU sat: `[0]` the wakee's
    /// previous CPU, `[1 + k]` across level `k` from it (the lowest level
    /// spanning both).
    pub seat_wakes: Vec<u64>,
    /// Of each of `seat_wakes`, those placed on the waker's CPU (at `[0]`
    /// every one: the previous CPU is the waker's).
    pub seat_pulled: Vec<u64>,
    /// Of each of `seat_wakes`, those whose previous CPU ran another task
    /// at the `W`: `wake_affine_idle()` cannot answer it, so
    /// `wake_affine_weight()`'s loads decide. Where the waker sat across
    /// a level, a gap here is the state the rule met.
    pub seat_prev_busy: Vec<u64>,
    /// Of each of `seat_prev_busy`, those placed on the waker's CPU: the
    /// loads' answer, given that state.
    pub seat_busy_pulled: Vec<u64>,
    /// Of each of `seat_wakes`, those placed in the waker's LLC: above
    /// the LLC the decision is `wake_affine()`'s (the waker's LLC or the
    /// previous one), and `select_idle_sibling()` then picks a CPU in it
    /// that need not be the waker's.
    pub seat_in_llc: Vec<u64>,
    /// Of each of `seat_wakes`, the wakeup moves by level (`[seat][k]`,
    /// as `migrations.wakeup`): a move within the LLC is as often the
    /// work of `select_idle_sibling()` around a waker on the wakee's own
    /// CPU as a pull to a waker beside it.
    pub seat_moves: Vec<Vec<u64>>,
    /// How many of the lowest levels of `migrations.levels` span CPUs of
    /// one LLC (`SD_SHARE_LLC`): a wakeup move at such a level stayed in
    /// its LLC.
    pub llc_levels: usize,
    /// Balancer moves per level (as `migrations.balance`), by
    /// [`Puller`] in [`Puller::ALL`]'s order.
    pub balance_by: Vec<[u64; 5]>,
    /// Events in a row one CPU logs (`W`, `U`, `S`, `M`, in time order)
    /// before another CPU logs one: the median over events, so that it
    /// is the stretch a typical event is in.
    pub stretch_events: u64,
    /// Every wakeup of a workload task (`U`).
    pub wakeups: u64,
    /// Context switches on the machine (`S`).
    pub switches: u64,
    /// CPU time of the workload's tasks, ns.
    pub task_cpu_ns: u64,
    /// Idle CPU time, ns.
    pub idle_ns: u64,
    /// Idle CPU time while another CPU had a waiting task, ns.
    pub idle_while_waiting_ns: u64,
    /// Periodic balances in the record (`B` lines of
    /// [`trace::TICK_BALANCE`]): 0 where the recording traced no
    /// function, and then the three below are 0 too.
    pub tick_balances: u64,
    /// Of those, the ones a *free* CPU ran: nothing running or queued
    /// there and no wakeup on its way to it, an idle CPU to
    /// `idle_cpu()`, whose balance is an idle one.
    pub idle_tick_balances: u64,
    /// Of those, the ones taken while a task waited behind a running one
    /// on another CPU of its LLC: the state an idle balance can act on.
    pub idle_tick_balances_llc_waiting: u64,
    /// CPU time of free CPUs, ns.
    pub free_idle_ns: u64,
    /// Of it, the time a task waited behind a running one on another CPU
    /// of its LLC, ns. Beside the share above, it says whether the idle
    /// balances met that state as often as the idle time did: they do
    /// where ticks come whatever the state (the model); under one-thread
    /// TCG a vCPU's tick waits for its turn, and whether its turn comes
    /// depends on what the others run.
    pub free_idle_llc_waiting_ns: u64,
    /// What became of the idle CPUs' ticks (`sched_tick()`'s `B` lines;
    /// empty where the record has none).
    pub tick_turns: TickTurns,
    /// Wakeups of workload tasks onto an idle CPU, and the median time
    /// from their `U` to the switch to them there, ns: what a wakeup costs
    /// before the wakee runs (an IPI and the idle exit on hardware; under
    /// TCG, the wait for the one host thread to run that vCPU).
    pub idle_wakeups: u64,
    /// See `idle_wakeups`.
    pub idle_wakeup_latency_ns: u64,
    /// Of those, the wakeups from another CPU (through the wake list,
    /// `ttwu_queue_cond()`), and the median time from their `W` to their
    /// `U`, ns: the wake list's IPI on its way, while the target is not
    /// idle to other wakeups (`rq->ttwu_pending`) and the wakee is on no
    /// runqueue.
    pub wake_list_wakeups: u64,
    /// See `wake_list_wakeups`.
    pub wake_list_latency_ns: u64,
    /// Wakeups of workload tasks from a CPU of another LLC onto a CPU
    /// that runs something, and the median time from their `W` to their
    /// `U`, ns: those go through the wake list too (`ttwu_queue_cond()`),
    /// where a busy CPU's own LLC enqueues at once
    /// (`CostModel::wake_list_busy_ns`).
    pub wake_list_busy_wakeups: u64,
    /// See `wake_list_busy_wakeups`.
    pub wake_list_busy_latency_ns: u64,
    /// Wakeups of workload tasks enqueued by one CPU on another that runs
    /// something (their `U` logged on the waking CPU, not through the
    /// wake list), where the wakee preempts that CPU's task at its next
    /// switch, and the median time from their `U` to that switch, ns:
    /// `resched_curr()`'s IPI on its way, which under one-thread TCG
    /// waits for the target vCPU's turn (`CostModel::resched_busy_ns`).
    pub resched_busy_wakeups: u64,
    /// See `resched_busy_wakeups`.
    pub resched_busy_latency_ns: u64,
    /// Forks of workload tasks onto an idle CPU (`N`), and the median time
    /// from it to the switch to the child there, ns: `resched_curr()`'s
    /// IPI to that CPU (`CostModel::fork_idle_ns`).
    pub fork_idle: u64,
    /// See `fork_idle`.
    pub fork_idle_latency_ns: u64,
    /// The spread of those three latencies (not in the JSON).
    #[serde(skip)]
    pub spread: LatencySpread,
    /// Wakeups of workload tasks onto a CPU that runs something, and the
    /// median time from their `U` to the switch to them (wherever a
    /// balancer has taken them meanwhile), ns: how long a woken task
    /// queues before it runs.
    pub busy_wakeups: u64,
    /// See `busy_wakeups`.
    pub busy_wakeup_latency_ns: u64,
    /// Their 90th percentile, ns: the tail a median hides (a wakee that
    /// does not preempt waits out the running task's slice).
    pub busy_wakeup_latency_p90_ns: u64,
    /// The span measured, ns (first to last event).
    pub span_ns: u64,
    /// CPUs.
    pub cpus: u32,
}

impl Metrics {
    /// Idle share of the span's CPU time.
    pub fn idle_frac(&self) -> f64 {
        self.idle_ns as f64 / (self.span_ns as f64 * f64::from(self.cpus.max(1))).max(1.0)
    }
    /// Share of the span's CPU time idle while work waited elsewhere.
    pub fn wasted_frac(&self) -> f64 {
        self.idle_while_waiting_ns as f64
            / (self.span_ns as f64 * f64::from(self.cpus.max(1))).max(1.0)
    }
    /// Share of free CPU time with a task waiting in the LLC.
    pub fn free_idle_llc_waiting_frac(&self) -> f64 {
        self.free_idle_llc_waiting_ns as f64 / (self.free_idle_ns as f64).max(1.0)
    }
}

/// Where each woken task is headed between its `W` and its `U`: its
/// previous CPU, or where a `M` moved it. A CPU a wakeup is on its way to
/// is not idle to `idle_cpu()` (`rq->ttwu_pending`).
#[derive(Default)]
struct Headed {
    to: HashMap<u32, u32>,
    nr: Vec<u32>,
}

impl Headed {
    fn set(&mut self, pid: u32, cpu: u32) {
        self.clear(pid);
        if let Some(n) = self.nr.get_mut(cpu as usize) {
            *n += 1;
            self.to.insert(pid, cpu);
        }
    }

    fn clear(&mut self, pid: u32) {
        if let Some(c) = self.to.remove(&pid) {
            self.nr[c as usize] = self.nr[c as usize].saturating_sub(1);
        }
    }
}

/// The workload's pids: every pid one of whose names (`T`) is in `comm`.
pub fn workload_pids(events: &[Event], comm: &[String]) -> HashSet<u32> {
    events
        .iter()
        .filter_map(|e| match &e.ev {
            Ev::Name { pid, comm: c } if comm.iter().any(|w| w == c) => Some(*pid),
            _ => None,
        })
        .collect()
}

/// The latency at `num / den` of `sorted` (0 for none): `(1, 2)` the
/// median, `(9, 10)` the 90th percentile.
pub(crate) fn quantile(sorted: &[u64], num: usize, den: usize) -> u64 {
    let at = sorted.len().saturating_mul(num) / den.max(1);
    sorted.get(at).copied().unwrap_or(0)
}

/// [`SPREAD_POINTS`] quantiles of `sorted`, the middle of each n-th
/// (`(2i + 1) / 2n`); empty if it is.
fn spread_of(sorted: &[u64]) -> Vec<u64> {
    if sorted.is_empty() {
        return Vec::new();
    }
    (0..SPREAD_POINTS)
        .map(|i| quantile(sorted, 2 * i + 1, 2 * SPREAD_POINTS))
        .collect()
}

/// The time from a task's placement on an idle CPU (`placed`: CPU and
/// when) to the switch to it at `ts` on `cpu`, if it ran where it was
/// placed; the wait is over either way.
fn ran_where_placed(
    placed: &mut HashMap<u32, (u32, u64)>,
    pid: u32,
    cpu: u32,
    ts: u64,
) -> Option<u64> {
    let (c, at) = placed.remove(&pid)?;
    (c == cpu).then(|| ts.saturating_sub(at))
}

/// [`Metrics::stretch_events`] of a run's events.
fn stretch_median(events: &[Event]) -> u64 {
    let logged = events
        .iter()
        .filter(|e| {
            matches!(
                e.ev,
                Ev::Waking { .. } | Ev::Wakeup { .. } | Ev::Switch { .. } | Ev::Migrate { .. }
            )
        })
        .map(|e| e.cpu);
    let mut stretches: Vec<u64> = Vec::new();
    let mut last = None;
    for cpu in logged {
        match stretches.last_mut() {
            Some(n) if last == Some(cpu) => *n += 1,
            _ => stretches.push(1),
        }
        last = Some(cpu);
    }
    stretches.sort_unstable();
    // The stretch holding the middle event.
    let half = stretches.iter().sum::<u64>().div_ceil(2);
    let mut seen = 0u64;
    for n in stretches {
        seen += n;
        if seen >= half {
            return n;
        }
    }
    0
}

/// How many latencies there are, sorted in place, and their median.
fn count_and_median(xs: &mut [u64]) -> (u64, u64) {
    xs.sort_unstable();
    (xs.len() as u64, quantile(xs, 1, 2))
}

/// Tasks runnable and not running, by CPU.
struct Queued {
    /// The CPU each queued pid waits on.
    on: HashMap<u32, u32>,
    /// Queued tasks per CPU.
    nr: Vec<u32>,
    /// Queued tasks on the machine.
    total: u32,
}

impl Queued {
    fn enqueue(&mut self, pid: u32, cpu: u32) {
        if pid == 0 || (cpu as usize) >= self.nr.len() || self.on.contains_key(&pid) {
            return;
        }
        self.on.insert(pid, cpu);
        self.nr[cpu as usize] += 1;
        self.total += 1;
    }

    fn dequeue(&mut self, pid: u32) {
        if let Some(c) = self.on.remove(&pid) {
            self.nr[c as usize] = self.nr[c as usize].saturating_sub(1);
            self.total = self.total.saturating_sub(1);
        }
    }
}

/// A workload task between its `W` and its `U`.
struct Waking {
    /// The waking CPU.
    cpu: u32,
    /// A workload task woke it (task context, or its softirq).
    by_task: bool,
    /// The CPU a wakeup move took it from.
    moved_from: Option<u32>,
    /// When the `W` was.
    at_ns: u64,
    /// Its previous CPU ran another task at the `W`.
    prev_busy: bool,
}

/// What the record says of each CPU at an instant, for the idle tick
/// measures: what it runs (`cur`, pid 0 idle), what it queues, the
/// wakeups on their way to it, and per LLC its CPUs that run a task with
/// another waiting behind it ([`llc_waiting`]).
struct TickState<'a> {
    cur: &'a [u32],
    queued: &'a [u32],
    headed: &'a [u32],
    waiting: &'a [u32],
    llc_of: &'a [u32],
}

impl<'a> TickState<'a> {
    /// The state the measure's running record is in; `waiting` as
    /// [`llc_waiting`] last filled it.
    fn of(
        cur: &'a [u32],
        q: &'a Queued,
        headed: &'a Headed,
        waiting: &'a [u32],
        topo: &'a Topology,
    ) -> Self {
        Self {
            cur,
            queued: &q.nr,
            headed: &headed.nr,
            waiting,
            llc_of: &topo.llc_of,
        }
    }

    /// Nothing running or queued there, and no wakeup on its way: an idle
    /// CPU to `idle_cpu()`.
    fn free(&self, c: usize) -> bool {
        self.cur[c] == 0 && self.queued[c] == 0 && self.headed[c] == 0
    }

    /// Another CPU of its LLC has a task waiting behind a running one (a
    /// free CPU is not one of them).
    fn beside_waiting(&self, c: usize) -> bool {
        self.waiting[self.llc_of[c] as usize] > 0
    }

    /// A call of the record met this state: a tick's fate, a periodic
    /// balance's count.
    fn take(&self, c: &Call, m: &mut Metrics, ticks: &mut Option<TickWatch>) {
        if let Some(w) = ticks {
            w.advance(c.ts_ns, self);
            w.call(c, self);
        }
        self.count(m, c);
    }

    /// Counts a periodic balance by the state its CPU and LLC were in.
    fn count(&self, m: &mut Metrics, c: &Call) {
        let cpu = c.cpu as usize;
        if c.func != TICK_BALANCE || cpu >= self.cur.len() {
            return;
        }
        m.tick_balances += 1;
        if self.free(cpu) {
            m.idle_tick_balances += 1;
            m.idle_tick_balances_llc_waiting += u64::from(self.beside_waiting(cpu));
        }
    }
}

impl CpuState for TickState<'_> {
    fn nr_cpus(&self) -> usize {
        self.cur.len()
    }
    fn empty(&self, c: usize) -> bool {
        self.cur[c] == 0 && self.queued[c] == 0
    }
    fn pending(&self, c: usize) -> bool {
        self.headed[c] > 0
    }
    fn any_waiting(&self) -> bool {
        self.cur
            .iter()
            .zip(self.queued)
            .any(|(&running, &q)| u32::from(running != 0).saturating_add(q) >= 2)
    }
}

/// Per LLC, into `n`, its CPUs that run a task with another waiting
/// behind it.
fn llc_waiting(n: &mut [u32], cur: &[u32], queued: &[u32], llc_of: &[u32]) {
    n.fill(0);
    for ((&running, &q), &l) in cur.iter().zip(queued).zip(llc_of) {
        if running != 0 && q > 0 {
            n[l as usize] += 1;
        }
    }
}

/// The workload task a `sched_waking` on a CPU running `running` came
/// from, if one did: a task context, or a softirq on a task's way out of
/// its syscall (loopback networking), with a workload task other than
/// the wakee running there. A hard interrupt has no waker task. The
/// replay's scripts and the measures take a waker the same way.
pub fn task_waker(ctx: Ctx, running: u32, wakee: u32, workload: &HashSet<u32>) -> Option<u32> {
    (ctx != Ctx::Hardirq && running != 0 && running != wakee && workload.contains(&running))
        .then_some(running)
}

/// The lowest level whose span holds both CPUs (None for the same CPU,
/// which no migration has).
pub fn level_of(topo: &Topology, cpu_a: u32, cpu_b: u32) -> Option<usize> {
    if cpu_a == cpu_b {
        return None;
    }
    topo.lowest_level_spanning(cpu_a, cpu_b)
}

/// Measures a run's events on `topo`; `workload` says which pids count.
pub fn measure(events: &[Event], topo: &Topology, workload: &HashSet<u32>) -> Metrics {
    measure_with_calls(events, &[], topo, workload)
}

/// [`measure`], and what the record's periodic balances met (`calls`,
/// the trace's `B` lines).
pub fn measure_with_calls(
    events: &[Event],
    calls: &[Call],
    topo: &Topology,
    workload: &HashSet<u32>,
) -> Metrics {
    let ncpu = topo.nr_cpus as usize;
    let levels: Vec<&'static str> = topo
        .domains
        .first()
        .map(|d| d.iter().map(|x| x.kind.name()).collect())
        .unwrap_or_default();
    let mut m = Metrics {
        migrations: ByLevel {
            wakeup: vec![0; levels.len()],
            fork: vec![0; levels.len()],
            balance: vec![0; levels.len()],
            levels,
        },
        cpus: topo.nr_cpus,
        ..Metrics::default()
    };
    m.balance_by = vec![[0; 5]; m.migrations.levels.len()];
    m.seat_wakes = vec![0; m.migrations.levels.len() + 1];
    m.seat_pulled = vec![0; m.migrations.levels.len() + 1];
    m.seat_prev_busy = vec![0; m.migrations.levels.len() + 1];
    m.seat_busy_pulled = vec![0; m.migrations.levels.len() + 1];
    m.seat_in_llc = vec![0; m.migrations.levels.len() + 1];
    m.seat_moves = vec![vec![0; m.migrations.levels.len()]; m.migrations.levels.len() + 1];
    m.llc_levels = topo.domains.first().map_or(0, |d| {
        d.iter()
            .take_while(|x| x.flags & crate::topology::SD_SHARE_LLC != 0)
            .count()
    });
    m.stretch_events = stretch_median(events);
    // What each CPU runs: before its first switch, that switch's prev; a
    // CPU that never switched ran nothing the record knows of (the model's
    // CPUs that nothing was placed on), so idle.
    let mut first_prev: Vec<Option<u32>> = vec![None; ncpu];
    for e in events {
        if let Ev::Switch { prev, .. } = e.ev {
            if let Some(c) = first_prev.get_mut(e.cpu as usize) {
                c.get_or_insert(prev);
            }
        }
    }
    let mut cur: Vec<u32> = first_prev.into_iter().map(|c| c.unwrap_or(0)).collect();
    let mut q = Queued {
        on: HashMap::new(),
        nr: vec![0; ncpu],
        total: 0,
    };
    let mut run_start: HashMap<u32, u64> = HashMap::new();
    // The pids between their W and their U.
    let mut waking: HashMap<u32, Waking> = HashMap::new();
    let mut list_latencies: Vec<u64> = Vec::new();
    let mut list_busy_latencies: Vec<u64> = Vec::new();
    let mut forked: HashSet<u32> = HashSet::new();
    // Pids seen switched in (or already counted from the trace's start).
    let mut ran_before: HashSet<u32> = HashSet::new();
    // Wakees placed on an idle CPU: when, to measure until they run.
    let mut woke_idle: HashMap<u32, (u32, u64)> = HashMap::new();
    let mut latencies: Vec<u64> = Vec::new();
    // Children forked onto an idle CPU, not yet run: (CPU, when).
    let mut forked_idle: HashMap<u32, (u32, u64)> = HashMap::new();
    let mut fork_latencies: Vec<u64> = Vec::new();
    // Wakees placed on a busy CPU: when, to measure until they run.
    let mut woke_busy: HashMap<u32, u64> = HashMap::new();
    let mut busy_latencies: Vec<u64> = Vec::new();
    // Wakees placed by another CPU on a busy one, by that CPU: (pid, the
    // task it ran, when), until its next switch says whether they
    // preempted it.
    let mut remote_busy: Vec<Vec<(u32, u32, u64)>> = vec![Vec::new(); ncpu];
    let mut resched_latencies: Vec<u64> = Vec::new();
    // Pulls logged by a busy destination, by CPU: their levels, until
    // that CPU's next event says newidle or busy.
    let mut pulls: Vec<Vec<usize>> = vec![Vec::new(); ncpu];
    let mut headed = Headed {
        nr: vec![0; ncpu],
        ..Headed::default()
    };
    let mut ticks = TickWatch::new(calls, ncpu);
    let mut calls = calls.iter().peekable();
    let mut waiting = vec![0u32; topo.llc_of.iter().max().map_or(0, |&l| l as usize + 1)];
    let first = events.first().map_or(0, |e| e.ts_ns);
    let last = events.iter().map(|e| e.ts_ns).max().unwrap_or(first);
    let mut now = first;
    for (i, e) in events.iter().enumerate() {
        // Integrate the CPUs' state up to this event.
        let ts = e.ts_ns.max(now);
        let dt = ts - now;
        let calls_due = calls.peek().is_some_and(|c| c.after <= i);
        if dt > 0 || calls_due {
            llc_waiting(&mut waiting, &cur, &q.nr, &topo.llc_of);
        }
        let st = TickState::of(&cur, &q, &headed, &waiting, topo);
        if dt > 0 {
            for (c, (&running, &queued_here)) in cur.iter().zip(&q.nr).enumerate() {
                if running == 0 {
                    m.idle_ns += dt;
                    if q.total > queued_here {
                        m.idle_while_waiting_ns += dt;
                    }
                }
                if st.free(c) {
                    m.free_idle_ns += dt;
                    if st.beside_waiting(c) {
                        m.free_idle_llc_waiting_ns += dt;
                    }
                }
            }
        }
        // The periodic balances logged before this event met the state
        // it was left in.
        while let Some(c) = calls.next_if(|c| c.after <= i) {
            st.take(c, &mut m, &mut ticks);
        }
        if let Some(w) = &mut ticks {
            w.advance(e.ts_ns, &st);
        }
        now = ts;
        let cpu = e.cpu as usize;
        if cpu >= ncpu {
            continue;
        }
        if !matches!(e.ev, Ev::Migrate { .. } | Ev::Name { .. }) && !pulls[cpu].is_empty() {
            let newidle = matches!(e.ev, Ev::Switch { prev, prev_state, .. }
                if prev != 0 && prev == cur[cpu] && !preempted(prev_state));
            let by = if newidle {
                Puller::Newidle
            } else {
                Puller::Busy
            };
            for k in std::mem::take(&mut pulls[cpu]) {
                m.balance_by[k][by as usize] += 1;
            }
        }
        match e.ev {
            Ev::Name { .. } => {}
            Ev::Exit { pid } => headed.clear(pid),
            Ev::Switch {
                prev,
                prev_state,
                next,
            } => {
                m.switches += 1;
                for (pid, ran, at) in std::mem::take(&mut remote_busy[cpu]) {
                    if next == pid && prev == ran && preempted(prev_state) {
                        resched_latencies.push(ts.saturating_sub(at));
                    }
                }
                if workload.contains(&prev) {
                    if let Some(s) = run_start.remove(&prev) {
                        m.task_cpu_ns += ts.saturating_sub(s);
                    } else if ran_before.insert(prev) {
                        // Running since before the trace began (counted
                        // once: a record that has it leave twice does not
                        // make it run twice).
                        m.task_cpu_ns += ts.saturating_sub(first);
                    }
                }
                if preempted(prev_state) {
                    q.enqueue(prev, e.cpu);
                }
                q.dequeue(next);
                headed.clear(next);
                if workload.contains(&next) {
                    run_start.insert(next, ts);
                    ran_before.insert(next);
                    latencies.extend(ran_where_placed(&mut woke_idle, next, e.cpu, ts));
                    if let Some(at) = woke_busy.remove(&next) {
                        busy_latencies.push(ts.saturating_sub(at));
                    }
                    fork_latencies.extend(ran_where_placed(&mut forked_idle, next, e.cpu, ts));
                }
                cur[cpu] = next;
            }
            Ev::Waking { pid, prev_cpu, ctx } => {
                headed.set(pid, prev_cpu);
                if workload.contains(&pid) {
                    let by_task = task_waker(ctx, cur[cpu], pid, workload).is_some();
                    let prev_runs = cur.get(prev_cpu as usize).copied().unwrap_or(0);
                    waking.insert(
                        pid,
                        Waking {
                            cpu: e.cpu,
                            by_task,
                            moved_from: None,
                            at_ns: ts,
                            prev_busy: prev_runs != 0 && prev_runs != pid,
                        },
                    );
                }
            }
            Ev::Migrate { pid, orig, dest } => {
                if q.on.contains_key(&pid) {
                    q.dequeue(pid);
                    q.enqueue(pid, dest);
                }
                if headed.to.contains_key(&pid) {
                    headed.set(pid, dest);
                }
                if !workload.contains(&pid) {
                    continue;
                }
                let Some(k) = level_of(topo, orig, dest) else {
                    continue;
                };
                if let Some(w) = waking.get_mut(&pid) {
                    w.moved_from = Some(orig);
                    m.migrations.wakeup[k] += 1;
                } else if forked.remove(&pid) {
                    m.migrations.fork[k] += 1;
                } else {
                    m.migrations.balance[k] += 1;
                    let by = if e.cpu == dest {
                        if cur[cpu] == 0 {
                            Some(Puller::Idle)
                        } else {
                            pulls[cpu].push(k);
                            None
                        }
                    } else if e.cpu == orig {
                        Some(Puller::Active)
                    } else {
                        Some(Puller::Other)
                    };
                    if let Some(by) = by {
                        m.balance_by[k][by as usize] += 1;
                    }
                }
            }
            Ev::Fork { child, .. } => {
                if workload.contains(&child) {
                    forked.insert(child);
                }
            }
            Ev::WakeupNew { pid, target } => {
                headed.clear(pid);
                forked.remove(&pid);
                q.enqueue(pid, target);
                if workload.contains(&pid) && cur.get(target as usize) == Some(&0) {
                    forked_idle.insert(pid, (target, ts));
                }
            }
            Ev::Wakeup { pid, target } => {
                headed.clear(pid);
                q.enqueue(pid, target);
                if !workload.contains(&pid) {
                    continue;
                }
                m.wakeups += 1;
                let woken = waking.remove(&pid);
                if cur.get(target as usize) == Some(&0) {
                    woke_idle.insert(pid, (target, ts));
                    if let Some(w) = &woken {
                        if w.cpu != target {
                            list_latencies.push(ts.saturating_sub(w.at_ns));
                        }
                    }
                } else {
                    woke_busy.insert(pid, ts);
                    // Enqueued by another CPU, not by the target taking its
                    // wake list: the target learns of it by IPI.
                    if e.cpu != target && woken.is_some() {
                        if let (Some(list), Some(&ran)) = (
                            remote_busy.get_mut(target as usize),
                            cur.get(target as usize),
                        ) {
                            list.push((pid, ran, ts));
                        }
                    }
                    if let Some(w) = &woken {
                        if !topo.share_cache(w.cpu, target) {
                            list_busy_latencies.push(ts.saturating_sub(w.at_ns));
                        }
                    }
                }
                if let Some(Waking {
                    cpu: wcpu,
                    by_task,
                    moved_from,
                    prev_busy,
                    ..
                }) = woken
                {
                    if by_task {
                        m.task_wakeups += 1;
                        m.in_waker_llc += u64::from(topo.share_cache(wcpu, target));
                        m.on_waker_cpu += u64::from(wcpu == target);
                        m.on_prev_cpu += u64::from(moved_from.is_none());
                        let prev = moved_from.unwrap_or(target);
                        let seat = level_of(topo, wcpu, prev).map_or(0, |k| k + 1);
                        m.seat_wakes[seat] += 1;
                        m.seat_pulled[seat] += u64::from(wcpu == target);
                        m.seat_in_llc[seat] += u64::from(topo.share_cache(wcpu, target));
                        if let Some(k) = moved_from.and_then(|from| level_of(topo, from, target)) {
                            m.seat_moves[seat][k] += 1;
                        }
                        if prev_busy {
                            m.seat_prev_busy[seat] += 1;
                            m.seat_busy_pulled[seat] += u64::from(wcpu == target);
                        }
                    }
                }
            }
        }
    }
    // Periodic balances after the last event met the state it left.
    llc_waiting(&mut waiting, &cur, &q.nr, &topo.llc_of);
    let st = TickState::of(&cur, &q, &headed, &waiting, topo);
    for c in calls {
        st.take(c, &mut m, &mut ticks);
    }
    if let Some(w) = ticks {
        m.tick_turns = w.turns;
    }
    // Pulls no event of their CPU followed: a busy CPU's.
    for levels in pulls {
        for k in levels {
            m.balance_by[k][Puller::Busy as usize] += 1;
        }
    }
    // Tasks still running at the end ran to it.
    for (pid, s) in run_start {
        if workload.contains(&pid) {
            m.task_cpu_ns += last.saturating_sub(s);
        }
    }
    m.span_ns = last.saturating_sub(first);
    (m.idle_wakeups, m.idle_wakeup_latency_ns) = count_and_median(&mut latencies);
    (m.wake_list_wakeups, m.wake_list_latency_ns) = count_and_median(&mut list_latencies);
    (m.wake_list_busy_wakeups, m.wake_list_busy_latency_ns) =
        count_and_median(&mut list_busy_latencies);
    (m.fork_idle, m.fork_idle_latency_ns) = count_and_median(&mut fork_latencies);
    (m.resched_busy_wakeups, m.resched_busy_latency_ns) = count_and_median(&mut resched_latencies);
    // count_and_median() sorted them.
    m.spread = LatencySpread {
        wake_idle_ns: spread_of(&latencies),
        wake_list_ns: spread_of(&list_latencies),
        wake_list_busy_ns: spread_of(&list_busy_latencies),
        resched_busy_ns: spread_of(&resched_latencies),
        fork_idle_ns: spread_of(&fork_latencies),
    };
    (m.busy_wakeups, m.busy_wakeup_latency_ns) = count_and_median(&mut busy_latencies);
    m.busy_wakeup_latency_p90_ns = quantile(&busy_latencies, 9, 10);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::trace::parse;

    #[test]
    fn who_woke_a_task() {
        let w = HashSet::from([5, 6]);
        assert_eq!(task_waker(Ctx::Task, 5, 6, &w), Some(5));
        assert_eq!(task_waker(Ctx::Softirq, 5, 6, &w), Some(5));
        // A hard interrupt has no waker, whatever runs there.
        assert_eq!(task_waker(Ctx::Hardirq, 5, 6, &w), None);
        assert_eq!(task_waker(Ctx::Task, 0, 6, &w), None, "idle");
        assert_eq!(task_waker(Ctx::Task, 6, 6, &w), None, "itself");
        assert_eq!(task_waker(Ctx::Task, 7, 6, &w), None, "not the workload's");
    }

    /// Guittot's 2x4: MC spans 0-3 and 4-7, PKG all eight.
    fn two_llcs() -> Topology {
        Topology::preset("2x4").unwrap()
    }

    #[test]
    fn counts_by_level_and_cause() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 S 0 R 10\n0 1 T 11 w\n0 1 S 0 R 0\n0 4 S 0 R 0\n\
             100 0 W 11 1 t\n100 0 M 11 1 4\n110 4 U 11 4\n120 4 S 0 R 11\n\
             200 0 W 12 2 h\n210 2 U 12 2\n\
             300 0 T 13 w\n300 0 F 10 13\n300 0 M 13 0 1\n300 0 N 13 1\n\
             400 5 M 10 0 5\n\
             500 0 S 10 R 0\n600 0 S 0 R 10\n1000 4 S 11 S 0\n",
        )
        .unwrap();
        let topo = two_llcs();
        let w = workload_pids(&t.events, &["w".to_string()]);
        assert_eq!(w, HashSet::from([10, 11, 13]));
        let m = measure(&t.events, &topo, &w);
        assert_eq!(m.migrations.levels, vec!["MC", "PKG"]);
        assert_eq!(m.migrations.wakeup, vec![0, 1], "1 -> 4 crosses the LLCs");
        assert_eq!(m.migrations.fork, vec![1, 0]);
        assert_eq!(m.migrations.balance, vec![0, 1]);
        assert_eq!(m.task_wakeups, 1);
        assert_eq!(m.in_waker_llc, 0, "woken from CPU 0 onto CPU 4");
        assert_eq!(m.on_prev_cpu, 0);
        // 12 is not the workload's: its wakeup is not counted.
        assert_eq!(m.wakeups, 1);
        assert_eq!(m.switches, 7);
        // 10 ran 0-500 and 600-1000, 11 ran 120-1000.
        assert_eq!(m.task_cpu_ns, 500 + 400 + 880);
        assert_eq!(m.span_ns, 1000);
    }

    /// Where the waker sat, and whether the wakee came to it: 11 (last
    /// on CPU 1) is woken from CPU 0, beside it in the LLC, and stays; 12
    /// (last on CPU 5) is woken from CPU 0, across the packages, and is
    /// pulled there; 13 is woken on its own CPU 2 by what runs there.
    #[test]
    fn wakes_by_where_the_waker_sat() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n0 0 T 13 w\n0 0 T 14 w\n\
             0 0 S 0 R 10\n0 2 S 0 R 14\n0 5 S 0 R 15\n\
             100 0 W 11 1 t\n110 1 U 11 1\n\
             200 0 W 12 5 t\n200 0 M 12 5 0\n210 0 U 12 0\n\
             300 2 W 13 2 t\n310 2 U 13 2\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!(m.task_wakeups, 3);
        // [on prev CPU, across MC, across PKG]
        assert_eq!(m.seat_wakes, vec![1, 1, 1]);
        assert_eq!(m.seat_pulled, vec![1, 0, 1]);
        // CPU 1 was idle at 11's W, CPU 5 ran 15 at 12's: the pull was
        // made against a busy previous CPU. On its own CPU, 13's waker
        // is what runs there.
        assert_eq!(m.seat_prev_busy, vec![1, 0, 1]);
        assert_eq!(m.seat_busy_pulled, vec![1, 0, 1]);
        assert_eq!(m.seat_in_llc, vec![1, 1, 1]);
        assert_eq!(m.seat_moves, vec![vec![0, 0], vec![0, 0], vec![0, 1]]);
    }

    /// Who made each balancer move: CPU 0's newidle pull (it logs the
    /// move, then switches away from its blocked task), CPU 4's while
    /// idle, CPU 5's while its task runs on (preempted after), CPU 1's
    /// stopper pushing its own task, CPU 3's on others' behalf, and CPU
    /// 0's last, which no event of CPU 0 follows (a busy pull).
    #[test]
    fn balancer_moves_by_who_made_them() {
        let mut text = String::from("# slb-trace 1\n# topology guittot cpus 8\n# comm w\n");
        for p in 10..18 {
            text += &format!("0 0 T {p} w\n");
        }
        text += "0 0 S 0 R 10\n0 5 S 0 R 13\n\
                 100 0 M 11 1 0\n101 0 S 10 S 11\n\
                 200 4 M 12 1 4\n\
                 300 5 M 14 2 5\n350 5 S 13 R 14\n\
                 500 1 M 15 1 2\n\
                 600 3 M 16 6 7\n\
                 700 0 M 17 4 0\n";
        let t = parse(&text).unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!(m.migrations.balance, vec![3, 3]);
        // [newidle, busy, idle, active, other] at MC, then PKG.
        assert_eq!(m.balance_by, vec![[1, 0, 0, 1, 1], [0, 2, 1, 0, 0]]);
    }

    /// Above the LLC the decision is the LLC, not the CPU: 11 (last on
    /// CPU 5) is woken from CPU 0 and stays in its own LLC, 12 (last on
    /// CPU 6) goes to CPU 1, beside the waker but not onto it.
    #[test]
    fn a_wake_across_llcs_counts_where_it_went_by_llc() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n\
             0 0 S 0 R 10\n\
             100 0 W 11 5 t\n110 5 U 11 5\n\
             200 0 W 12 6 t\n200 0 M 12 6 1\n210 1 U 12 1\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!(m.llc_levels, 1, "MC is the LLC, PKG is not");
        assert_eq!(m.seat_wakes, vec![0, 0, 2]);
        assert_eq!(m.seat_pulled, vec![0, 0, 0]);
        assert_eq!(m.seat_in_llc, vec![0, 0, 1]);
        // 12 moved from CPU 6 to CPU 1, across the LLCs: at PKG.
        assert_eq!(m.seat_moves, vec![vec![0, 0], vec![0, 0], vec![0, 1]]);
    }

    /// The stretch a typical event is in: CPU 0 logs four events in a
    /// row, then CPUs 1 and 0 one each, so the middle (third) of the six
    /// is in the stretch of four.
    #[test]
    fn events_one_cpu_logs_in_a_row() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 S 0 R 10\n1 0 W 11 1 t\n2 0 U 11 0\n3 0 S 10 S 11\n\
             4 5 T 12 w\n4 1 S 0 R 12\n5 0 S 11 S 0\n",
        )
        .unwrap();
        assert_eq!(stretch_median(&t.events), 4);
        // Interleaved CPUs: stretches of one.
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 S 0 R 10\n1 1 S 0 R 11\n2 0 S 10 S 0\n3 1 S 11 S 0\n",
        )
        .unwrap();
        assert_eq!(stretch_median(&t.events), 1);
        assert_eq!(stretch_median(&[]), 0);
    }

    /// A task woken onto a busy CPU waits until it is switched in,
    /// wherever a balancer took it meanwhile; one woken onto an idle CPU
    /// counts as the idle wakeup latency instead.
    #[test]
    fn wakeup_to_run_on_a_busy_cpu() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n0 0 T 13 w\n\
             0 0 S 0 R 10\n0 1 S 0 R 0\n0 2 S 0 R 0\n\
             100 0 W 11 0 t\n100 0 U 11 0\n130 0 S 10 R 11\n\
             200 0 W 12 0 t\n200 0 U 12 0\n210 0 M 12 0 1\n260 1 S 0 R 12\n\
             300 0 W 13 2 t\n300 2 U 13 2\n305 2 S 0 R 13\n400 0 S 11 S 10\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        // 11: 100 -> 130 on CPU 0; 12: 200 -> 260, moved to CPU 1.
        assert_eq!((m.busy_wakeups, m.busy_wakeup_latency_ns), (2, 60));
        assert_eq!(m.busy_wakeup_latency_p90_ns, 60);
        assert_eq!((m.idle_wakeups, m.idle_wakeup_latency_ns), (1, 5));
    }

    /// A wakeup onto a busy CPU of another LLC goes through the wake list
    /// too: its W to U is that latency; one onto a busy CPU of the
    /// waker's LLC is enqueued at once and is not counted.
    #[test]
    fn wake_list_onto_a_busy_cpu_across_llcs() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n0 0 T 13 w\n0 0 T 14 w\n\
             0 0 S 0 R 10\n0 1 S 0 R 13\n0 4 S 0 R 14\n\
             100 0 W 11 4 t\n2100 4 U 11 4\n\
             200 0 W 12 1 t\n208 0 U 12 1\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!(
            (m.wake_list_busy_wakeups, m.wake_list_busy_latency_ns),
            (1, 2000)
        );
        assert_eq!(m.wake_list_wakeups, 0, "no idle target");
    }

    /// A wakee enqueued by another CPU on a busy one (its U logged on the
    /// waking CPU) that preempts the task there at that CPU's next
    /// switch: from its U to that switch is `resched_curr()`'s IPI. One
    /// taken through the wake list (its U on the target) and one whose
    /// target switched to something else first are not counted.
    #[test]
    fn a_remote_wakeup_preemption_from_wakeup_to_switch() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n0 0 T 13 w\n0 0 T 14 w\n0 0 T 15 w\n\
             0 0 S 0 R 10\n0 1 S 0 R 13\n0 2 S 0 R 14\n0 4 S 0 R 15\n\
             100 0 W 11 1 t\n105 0 U 11 1\n1605 1 S 13 R 11\n\
             200 0 W 12 2 t\n205 0 U 12 2\n300 2 S 14 S 0\n\
             400 0 W 13 4 t\n2400 4 U 13 4\n2410 4 S 15 R 13\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!(
            (m.resched_busy_wakeups, m.resched_busy_latency_ns),
            (1, 1500)
        );
    }

    /// A wakeup from another CPU onto an idle one waits for the wake
    /// list's IPI between its W and its U; a CPU's own wakeup (a timer's
    /// here) does not go through the list.
    #[test]
    fn wake_list_from_waking_to_wakeup() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 T 12 w\n\
             0 0 S 0 R 10\n0 1 S 0 R 0\n0 2 S 0 R 0\n\
             100 0 W 11 1 t\n350 1 U 11 1\n355 1 S 0 R 11\n\
             400 2 W 12 2 h\n406 2 U 12 2\n410 2 S 0 R 12\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!((m.wake_list_wakeups, m.wake_list_latency_ns), (1, 250));
        // From U to the switch: 5 and 4 ns.
        assert_eq!((m.idle_wakeups, m.idle_wakeup_latency_ns), (2, 5));
        assert_eq!(m.fork_idle, 0);
    }

    #[test]
    fn a_spread_is_evenly_spaced_quantiles() {
        let sorted: Vec<u64> = (0..100).collect();
        let q = spread_of(&sorted);
        assert_eq!(q.len(), SPREAD_POINTS);
        // The middles of each 40th: 1.25 -> 1, ..., 98.75 -> 98.
        assert_eq!((q[0], q[19], q[20], q[39]), (1, 48, 51, 98));
        assert!(q.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(spread_of(&[7]), vec![7; SPREAD_POINTS]);
        assert!(spread_of(&[]).is_empty());
    }

    #[test]
    fn fork_onto_an_idle_cpu_to_its_run() {
        // 11 forked onto idle CPU 1 runs 700 ns later; 12 onto CPU 0,
        // which runs its parent, is not counted.
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 S 0 R 10\n0 1 S 0 R 0\n\
             100 0 T 11 w\n100 0 F 10 11\n100 1 N 11 1\n800 1 S 0 R 11\n\
             900 0 T 12 w\n900 0 F 10 12\n900 0 N 12 0\n950 0 S 10 S 12\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &two_llcs(), &w);
        assert_eq!((m.fork_idle, m.fork_idle_latency_ns), (1, 700));
    }

    /// A periodic balance meets the state its CPU and LLC were in: a free
    /// CPU beside a queue in its LLC, a free CPU of the other LLC, a busy
    /// CPU, a CPU a wakeup is on its way to, and one after the last
    /// event; the free time and its share beside a queue are the time's.
    #[test]
    fn tick_balances_meet_the_state_they_ran_in() {
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 S 0 R 11\n0 1 S 0 R 0\n0 4 S 0 R 0\n\
             100 0 S 11 R 10\n\
             150 1 B sched_balance_softirq handle_softirqs\n\
             150 4 B sched_balance_softirq handle_softirqs\n\
             160 0 B sched_balance_softirq handle_softirqs\n\
             160 0 B sched_balance_rq sched_balance_domains\n\
             200 0 W 12 1 t\n\
             250 1 B sched_balance_softirq handle_softirqs\n\
             300 1 U 12 1\n310 1 S 0 R 12\n400 0 S 10 S 11\n\
             500 5 B sched_balance_softirq handle_softirqs\n",
        )
        .unwrap();
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure_with_calls(&t.events, &t.calls, &two_llcs(), &w);
        // CPU 0's softirq counts, not as idle; CPU 1's at 250 had 12 on
        // its way; the sched_balance_rq is not a periodic balance.
        assert_eq!(
            (
                m.tick_balances,
                m.idle_tick_balances,
                m.idle_tick_balances_llc_waiting
            ),
            (5, 3, 1)
        );
        // Free: CPU 1 0-200, CPUs 2, 3 and 4-7 0-400; beside the queue
        // on CPU 0 (100-400): CPU 1 100-200, CPUs 2 and 3 100-400.
        assert_eq!((m.free_idle_ns, m.free_idle_llc_waiting_ns), (2600, 700));
        // Without its calls the record says nothing of them.
        let plain = measure(&t.events, &two_llcs(), &w);
        assert_eq!((plain.tick_balances, plain.free_idle_ns), (0, 2600));
        assert_eq!(plain.migrations, m.migrations);
    }

    /// An idle CPU's tick has its fate by the state the record shows:
    /// CPU 1, free at 4 ms with nothing waiting, ticks at once; free at 8
    /// ms while CPU 0 has a task waiting, it ticks once a wakee came
    /// (after a wakeup); free at 12 ms with the task still waiting, it
    /// does not tick before 16 ms (lost). CPUs 2-7 run a task throughout,
    /// their ticks read as a busy CPU's.
    #[test]
    fn an_idle_cpus_tick_has_its_fate() {
        let mut text = String::from(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 S 0 R 10\n0 1 S 0 R 0\n",
        );
        for c in 2..8 {
            text += &format!("0 {c} S 0 R {}\n", 20 + c);
        }
        text += "4000050 1 B sched_tick update_process_times\n\
                 7000000 0 U 11 0\n9000000 0 W 12 1 t\n9100000 1 U 12 1\n\
                 9200000 1 S 0 R 12\n\
                 9250000 1 B sched_tick update_process_times\n\
                 11000000 1 S 12 S 0\n\
                 12000050 0 B sched_tick update_process_times\n\
                 16500000 0 S 10 R 11\n";
        let t = parse(&text).unwrap();
        let m = measure_with_calls(&t.events, &t.calls, &two_llcs(), &HashSet::new());
        use super::super::ticks::{TickClass::*, TickFate::*};
        let tt = m.tick_turns;
        assert!(!tt.by_balance);
        assert_eq!((tt.total(Free), tt.count(Free, AtOnce)), (1, 1), "{tt:?}");
        assert_eq!(tt.total(Waiting), 2, "{tt:?}");
        assert_eq!(tt.count(Waiting, AfterWakeup), 1, "{tt:?}");
        assert_eq!(tt.count(Waiting, Lost), 1, "{tt:?}");
        assert_eq!(tt.total(Pending), 0, "{tt:?}");
        // The busy CPUs at the instants of 4, 8 and 12 ms (CPU 0 and
        // 2-7; CPU 1 idle at each): CPU 0's tick at 12 ms taken, the
        // other 20 lost.
        assert_eq!((tt.total(Busy), tt.count(Busy, Lost)), (21, 20), "{tt:?}");
        // The same ticks as periodic balances: read off them, and said
        // so; a busy CPU's balance is not due every tick, so its ticks
        // are not read.
        let balances = text.replace(
            "B sched_tick update_process_times",
            "B sched_balance_softirq handle_softirqs",
        );
        let t = parse(&balances).unwrap();
        let b = measure_with_calls(&t.events, &t.calls, &two_llcs(), &HashSet::new()).tick_turns;
        assert!(b.by_balance);
        assert_eq!(b.counts[..3], tt.counts[..3]);
        assert_eq!(b.total(Busy), 0);
        // No calls: nothing read.
        assert!(measure(&t.events, &two_llcs(), &HashSet::new())
            .tick_turns
            .is_empty());
    }

    #[test]
    fn idle_while_work_waits() {
        // CPU 1 idle throughout; CPU 0 runs 10 with 11 queued behind it
        // from 100 (preempted) to 300: 200 ns of CPU 1 wasted.
        let t = parse(
            "# slb-trace 1\n# topology guittot cpus 8\n# comm w\n\
             0 0 T 10 w\n0 0 T 11 w\n0 0 S 0 R 11\n0 1 S 0 R 0\n\
             100 0 S 11 R 10\n300 0 S 10 S 11\n400 0 S 11 S 0\n",
        )
        .unwrap();
        let mut topo = two_llcs();
        topo.nr_cpus = 2;
        let w = workload_pids(&t.events, &["w".to_string()]);
        let m = measure(&t.events, &topo, &w);
        assert_eq!(m.idle_while_waiting_ns, 200);
        // CPU 1 idle 0-400 (its first switch says it ran idle), CPU 0 none.
        assert_eq!(m.idle_ns, 400);
        assert_eq!(m.cpus, 2);
        assert!((m.wasted_frac() - 0.25).abs() < 1e-9);
    }
}
