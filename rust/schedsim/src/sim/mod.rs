// SPDX-License-Identifier: GPL-2.0

//! The discrete-event CFS model: the machine's state, the event loop and
//! the tick, with each mechanism in a file of its own:
//!
//! - `runqueue.rs`: one CPU's CFS runqueue under EEVDF, DELAY_DEQUEUE,
//!   the pick and wakeup preemption (`kernel/sched/fair.c`'s
//!   `enqueue_entity()` ... `check_preempt_wakeup_fair()`);
//! - `wakeup.rs`: `try_to_wake_up()` and wakeup placement,
//!   `select_task_rq_fair()` down to `select_idle_sibling()` and the
//!   series' SIS policy scan;
//! - `balance.rs`: `sched_balance_rq()` and the periodic walk;
//! - `newidle.rs`: `sched_balance_newidle()` and Sistare's STEAL;
//! - `tasks.rs`: the workloads' tasks, their bursts, syscalls and messages.
//!
//! This file mirrors, much reduced, `kernel/sched/core.c`'s
//! `sched_tick()` and the PELT and runtime accounting around it.
//!
//! Time is in ns. The tick comes every `TICK_NSEC` of the configured HZ
//! (default 250: the guest kernel runs `CONFIG_HZ=250` with
//! `CONFIG_HZ_PERIODIC`, so idle CPUs take it too), and everything counted
//! in jiffies follows it: balance intervals (`msecs_to_jiffies()`),
//! `max_load_balance_interval`, the once-a-second decays, SIS_AGE's and
//! NEWIDLE_BACKOFF's per-jiffy aging. Every CPU takes the tick at the same
//! instant (`sched_skew_tick=0`, the default), in an order drawn from the
//! seed each tick: which CPU wins a race for a runqueue lock is what
//! Guittot's 1/4 is about, and a fixed order would make CPU 0 always win.
//!
//! Fair sharing is 6.12.117's EEVDF (`eevdf.rs`): per-task `vruntime`,
//! `deadline` and saved lag, a slice of 2.8 ms (`sysctl_sched_base_slice`,
//! 0.70 ms, times `1 + ilog2(min(ncpus, 8))` as `update_sysctl()` scales
//! it), `pick_eevdf()` with RUN_TO_PARITY, deadlines renewed by
//! `update_curr()` (at the tick, as without HRTICK, and at enqueues),
//! `place_entity()` with PLACE_LAG and PLACE_DEADLINE_INITIAL, and
//! `check_preempt_wakeup_fair()`. DELAY_DEQUEUE is on, as in 6.12.117: a
//! task that blocks while not eligible stays queued ("delayed") until it
//! is picked, and is then dequeued, or until it is woken, where it
//! stays. It counts in `nr_running` (what the balancer reads, as 6.12.117's
//! `h_nr_queued` and `rq->nr_running` do) but not in `nr_runnable`
//! (`h_nr_runnable`, what STEAL's mask and victim test read).
//!
//! Randomness comes in separate streams (`rng.rs`): the tick order, each
//! CPU's NI_RANDOM dice, each task's jitter, so that flags do not reshuffle
//! the workload.

use crate::conserve::Conservation;
use crate::cost::CostModel;
use crate::eevdf::{self, Pick, Se};
use crate::flags::{Flags, Knobs, PreferSibling};
use crate::pelt::Pelt;
use crate::rng::{Purpose, Rng};
use crate::schedstat::SchedStat;
use crate::stats::{RunResult, Stats, TaskStat, Timeline};
use crate::topology::{Topology, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY};
use crate::workload::{Part, Workload};
use sched_lb_policy::newidle_streak::Streak;
use sched_lb_policy::sis_chain::{self, LlcView, ScanKind, SisFlags, SisInput, SmtView, WakeAvg};
use sched_lb_policy::{sis_budget, sis_select, sparsemask};
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;

mod balance;
mod newidle;
mod nohz;
mod replay;
mod runqueue;
mod tasks;
mod wakeup;

pub use balance::{Balanced, IdleType};

/// HZ of the guest kernel the project boots (Debian's 6.12.117:
/// `CONFIG_HZ=250`, `CONFIG_HZ_PERIODIC`).
pub const DEFAULT_HZ: u32 = 250;
/// `sysctl_sched_base_slice` before scaling, 6.12.117: 0.70 ms.
pub const BASE_SLICE_NS: u64 = 700_000;
/// `NSEC_PER_SEC`.
const NS_PER_SEC: u64 = 1_000_000_000;

/// `TICK_NSEC`: nanoseconds per jiffy at `hz`, rounded as the kernel's
/// `(NSEC_PER_SEC + HZ/2) / HZ` (HZ 0 is taken as 1).
pub fn tick_ns(hz: u32) -> u64 {
    let hz = u64::from(hz.max(1));
    NS_PER_SEC.saturating_add(hz / 2) / hz
}

/// `update_avg()` of `kernel/sched/sched.h`: the average moves 1/8 of the
/// way to `sample`, the signed difference truncated towards zero as C's
/// `s64` division truncates it.
pub(crate) fn update_avg(avg: u64, sample: u64) -> u64 {
    let diff = sample as i128 - avg as i128;
    (avg as i128 + diff / 8).max(0) as u64
}

/// One of `points` (a latency's quantiles), each as likely; None if there
/// are none.
fn draw(points: &[u64], rng: &mut Rng) -> Option<u64> {
    if points.is_empty() {
        return None;
    }
    points.get(rng.below(points.len() as u64) as usize).copied()
}

/// `NICE_0_LOAD` (scaled down, as `scale_load_down()` gives it).
pub const NICE_0_LOAD: u64 = 1024;
/// `SCHED_CAPACITY_SCALE`.
pub const CAPACITY: u64 = 1024;
/// `sysctl_sched_migration_cost`: 500 us.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// Bits per cache line of STEAL's sparsemask (Sistare: 8): patch 0015's
/// `SCHED_LB_STEAL_BITS_PER_LINE`, which `tests/patch_defaults.rs` reads.
pub const SPARSE_BITS_PER_LINE: u32 = 8;
/// Idle balancing passes one `go_idle()` makes when each pulled only a
/// delayed task, which the pick then dequeues. The kernel loops until a
/// pass pulls nothing; each pass here moves at least one delayed task
/// out of the machine's queues, so a bound only matters in theory.
const GO_IDLE_RETRIES: u32 = 8;

/// `rq->nr_running` and `rq->cfs.h_nr_runnable` of one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nr {
    /// Tasks on the runqueue, delayed ones included.
    pub running: u32,
    /// Runnable tasks: the delayed ones left out.
    pub runnable: u32,
}

/// Run configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Machine.
    pub topology: Topology,
    /// What runs.
    pub workload: Workload,
    /// `sched_feat` flags.
    pub flags: Flags,
    /// Per-domain knobs.
    pub knobs: Knobs,
    /// Simulator-only: let STEAL ignore its 2-node limit (an ablation the
    /// kernel does not have; see `Documentation/schedsim.rst`).
    pub steal_ignore_node_limit: bool,
    /// Seed.
    pub seed: u64,
    /// `CONFIG_HZ`: the tick, and every interval kept in jiffies.
    pub hz: u32,
    /// Simulated time, ns.
    pub duration_ns: u64,
    /// Timeline samples for plots (0: none).
    pub samples: u32,
    /// Progress bar on stderr.
    pub progress: bool,
    /// Keep every task's random draws in its result (`TaskStat::draws`),
    /// to check that a flag leaves the workload alone (tests).
    pub record_draws: bool,
    /// The cost model (`cost.rs`'s defaults but in the sensitivity runs).
    pub cost: CostModel,
    /// `CONFIG_NO_HZ_IDLE` (`nohz.rs`): idle CPUs stop their tick, and a
    /// busy CPU's tick kicks one of them to balance for all. Off by
    /// default: the guest kernel is `CONFIG_HZ_PERIODIC`, where every
    /// idle CPU balances at its own tick.
    pub nohz: bool,
    /// The guest `make bench` boots: QEMU's TCG with one host thread for
    /// every vCPU (`-accel tcg,thread=single`). Its vCPUs take turns, and
    /// a turn ends at the next timer event; the guest's periodic ticks are
    /// aligned across CPUs, so each busy vCPU runs one tick period in
    /// turn and handles its own tick only then (the ones it missed while
    /// it waited are one pending interrupt), once a round in an order
    /// that varies (`Sim::tcg_next_turn()`). A halted (idle) vCPU's tick
    /// waits in the round too, its turn short: the round reaches each once
    /// (the guest's idle vCPUs beside four spinners took 38% of their
    /// ticks, as many as the busy ones; `Sim::tcg_served()`). Off by
    /// default: hardware ticks every CPU. The
    /// guest shows it: its spinners on a shared CPU switch every 24-36 ms
    /// (8 busy vCPUs x 4 ms), not every tick (`Documentation/schedsim.rst`,
    /// "Replay against the guest"). A turn also ends when its vCPU halts,
    /// sends an IPI or takes a timer's interrupt, so a run that wakes
    /// across CPUs takes many turns a tick period and its busy vCPUs all
    /// tick about on time (`Sim::tcg_turn_end()`). The IPI is the model's
    /// choice, not QEMU's code: `tcg_handle_interrupt()` kicks the running
    /// vCPU only for an interrupt raised from another thread, and the
    /// round-robin thread is every vCPU's; the guest's record ends a
    /// stretch of one vCPU's events after 12% of the wakes it sends to
    /// another CPU (1% of those onto its own), and calibration keeps the
    /// rule (without it: direction 6 of 7, A/A 59 of 65).
    pub tcg_rr: bool,
    /// The wake list's IPI to an idle vCPU is taken at the next tick, not
    /// after `CostModel::wake_list_ns` (`schedsim replay
    /// --wake-list-at-tick`): under single-threaded TCG an interrupt
    /// raised for a halted vCPU waits until the running vCPU's turn ends,
    /// and a vCPU that never halts (the stream pairs' producer on x5472)
    /// ends its turn only at the next timer event, the tick. The guest's
    /// consumer then runs in step with the tick, its run starts a whole
    /// number of tick periods apart in 96% of its cycles
    /// (`Documentation/schedsim.rst`, "Replay against the guest"). Off by
    /// default: where vCPUs halt often the IPI is taken sooner.
    pub wake_list_at_tick: bool,
    /// How many times its cost a newidle balance reads on the kernel's
    /// clock (`sched_clock_cpu()` around `sched_balance_rq()`), which sets
    /// `max_newidle_lb_cost` and so when newidle balancing is skipped:
    /// 1 on hardware. In the TCG guest the clock runs on while the host
    /// thread serves other vCPUs, and the guest's debugfs reads 0.4-1.1 ms
    /// for a 4-CPU MC balance the model costs 1.2 us
    /// ([`crate::cost::TCG_LB_CLOCK_FACTOR`]). The CPU pays the cost alone.
    pub lb_clock_factor: u32,
    /// Record the run as slb-trace events (`Sim::run_recorded()`), as the
    /// guest's trace records its runs: replay measures both alike.
    pub record_events: bool,
    /// Draw each TCG latency from a replayed trace's spread instead of
    /// taking the cost model's constant (`schedsim replay --wake-idle-us
    /// guest-spread`); None: the constants.
    pub latency_spread: Option<Rc<crate::cost::LatencySpread>>,
    /// Under single-threaded TCG an idle vCPU takes its tick on its turn
    /// of the one host thread, and whether the turn comes depends on
    /// what the others run ([`crate::cost::IdleTickTurn`]): a free CPU's
    /// tick is taken at once or lost, less often taken while another CPU
    /// has a task waiting (a vCPU with work queued holds the thread),
    /// then perhaps with the CPU's next wakeup, as a busy CPU's; a CPU
    /// with a wakeup on its way takes it with that wakeup's IPI or loses
    /// it. The guest's record shows it (`Documentation/schedsim.rst`, "An
    /// idle vCPU's tick comes on its turn"): its idle CPUs' periodic
    /// balances met a task waiting in their LLC a third as often as their
    /// idle time did. None (the default): every idle CPU ticks on time, as on
    /// hardware, whatever the state.
    pub idle_tick_turn: Option<crate::cost::IdleTickTurn>,
    /// Under single-threaded TCG an idle vCPU handles every interrupt
    /// raised for it at its one turn of the host thread: a replayed
    /// task's timer that has fired (past `Script::timer_due_ns`) while
    /// the wake list's IPI waits for that turn is handled with the IPI,
    /// after the IPI's wakees are enqueued, so the CPU is no longer idle
    /// to its wakeup; and a timer whose recorded end finds the IPI still
    /// waiting waits with it. The guest's record shows it
    /// (`Documentation/schedsim.rst`, "A timer comes on its vCPU's
    /// turn"): `reqresp`'s timer wakeups on an idle CPU came within 40 us
    /// of a remote wakee's enqueue there in 41% of them, and 98% of those
    /// went to another CPU. False (the default): a timer fires at its
    /// recorded end, as on hardware.
    pub timer_turn: bool,
}

impl Config {
    /// A configuration with default flags and knobs.
    pub fn new(topology: Topology, workload: Workload, seed: u64, duration_ns: u64) -> Self {
        Self {
            topology,
            workload,
            flags: Flags::default(),
            knobs: Knobs::default(),
            steal_ignore_node_limit: false,
            seed,
            hz: DEFAULT_HZ,
            duration_ns,
            samples: 0,
            progress: false,
            record_draws: false,
            cost: CostModel::default(),
            nohz: false,
            tcg_rr: false,
            wake_list_at_tick: false,
            lb_clock_factor: 1,
            record_events: false,
            latency_spread: None,
            idle_tick_turn: None,
            timer_turn: false,
        }
    }
}

/// What a task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Always running.
    Always,
    /// Runs `run_ns`, sleeps `sleep_ns`.
    Periodic {
        /// Run per period.
        run_ns: u64,
        /// Sleep per period.
        sleep_ns: u64,
    },
    /// One half of a pair.
    Buddy {
        /// Index of the pair, for the split counter.
        pair: usize,
        /// The other half.
        partner: usize,
        /// Work per message.
        work_ns: u64,
        /// Work after sending.
        overlap_ns: u64,
    },
    /// A hackbench sender.
    Sender {
        /// First receiver of the group.
        first_rx: usize,
        /// Receivers in the group.
        nr_rx: usize,
        /// Work per message.
        send_ns: u64,
        /// Messages a receiver holds before this sender blocks on it.
        queue: u32,
    },
    /// A hackbench receiver.
    Receiver {
        /// Work per message.
        recv_ns: u64,
    },
    /// A replayed task: runs script `id` of the workload's `Part::Replay`.
    Scripted {
        /// Index of its script.
        id: usize,
    },
}

impl Kind {
    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Always => "always",
            Kind::Periodic { .. } => "periodic",
            Kind::Buddy { .. } => "buddy",
            Kind::Sender { .. } => "sender",
            Kind::Receiver { .. } => "receiver",
            Kind::Scripted { .. } => "scripted",
        }
    }
}

/// Task state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// On a CPU.
    Running,
    /// Queued.
    Runnable,
    /// Waiting for a timer.
    Sleeping,
    /// Waiting for a message or for room in a queue.
    Blocked,
}

/// Buddy phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Producing the next message.
    Work,
    /// Going on after sending.
    Overlap,
}

/// A task.
#[derive(Clone, Debug)]
pub struct Task {
    /// Behaviour.
    pub kind: Kind,
    /// State.
    pub state: State,
    /// CPU it is on or last ran on.
    pub cpu: u32,
    /// `se.vruntime`.
    pub vruntime: u64,
    /// `se.deadline`: when, in virtual time, its request of one slice is
    /// due.
    pub deadline: u64,
    /// `se.vlag`: the lag kept from its last dequeue for its next
    /// placement.
    pub vlag: i64,
    /// `se.sched_delayed`: blocked but still queued (DELAY_DEQUEUE).
    pub delayed: bool,
    /// Load weight (nice 0).
    pub weight: u64,
    /// Useful work done, ns.
    pub work_ns: u64,
    /// Work left in the current burst, ns (`u64::MAX`: forever).
    pub burst_left_ns: u64,
    /// Cache refill still to pay after a migration, ns.
    pub refill_ns: u64,
    /// `se.exec_start`: when it last ran, for `task_hot()`; also the
    /// model's stand-in for its place in `rq->cfs_tasks`, least recently
    /// run first.
    pub exec_start_ns: u64,
    /// Moved to another CPU since it last ran: the kernel's
    /// `enqueue_entity()` with `ENQUEUE_MIGRATED` sets `se.exec_start` to
    /// 0, "no longer consider this task hot", until it runs. Kept apart
    /// from `exec_start_ns` so that the order the balancers take tasks in
    /// stays as it was.
    pub migrated: bool,
    /// Moved by a wakeup that went through the target's wake list: its
    /// signals left the old CPU's at the wakeup and join the new CPU's
    /// when the wake list's IPI enqueues it, not before
    /// (`migrate_task_rq_fair()` removes them; `enqueue_entity()`'s
    /// `update_load_avg(DO_ATTACH)` attaches them, `last_update_time`
    /// being 0).
    pub attach_at_enqueue: bool,
    /// Runnable load signal.
    pub load: Pelt,
    /// Running utilisation signal.
    pub util: Pelt,
    /// Migrations.
    pub migrations: u64,
    /// Wakeups.
    pub wakeups: u64,
    /// `last_wakee`.
    pub last_wakee: Option<usize>,
    /// `wakee_flips`.
    pub wakee_flips: u32,
    /// `wakee_flip_decay_ts`, jiffies.
    pub wakee_flip_decay_jiffies: u64,
    /// `recent_used_cpu`.
    pub recent_used_cpu: u32,
    /// Messages waiting (buddy, receiver).
    pub inbox: u32,
    /// Buddy phase.
    pub phase: Phase,
    /// Hackbench sender: next receiver, and the one it is blocked on.
    pub next_rx: usize,
    /// Receiver a sender waits on.
    pub waiting_on: Option<usize>,
    /// Senders waiting on this receiver.
    pub waiters: Vec<usize>,
    /// The one CPU it may run on (a replayed per-CPU kthread), None for
    /// any: `set_cpus_allowed_ptr()` to one CPU.
    pub pinned: Option<u32>,
    /// A hackbench run with `loops`: messages this sender has still to
    /// write, or this receiver to read, before it exits; `u64::MAX` for a
    /// task that runs to the end of the run.
    pub msgs_left: u64,
}

/// Per-CPU state of one domain (the kernel's per-CPU `struct sched_domain`).
#[derive(Clone, Debug)]
pub struct DomState {
    /// `sd->last_balance`, jiffies.
    pub last_balance: u64,
    /// `sd->balance_interval`, ms.
    pub balance_interval_ms: u32,
    /// `sd->nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `sd->max_newidle_lb_cost`, ns.
    pub max_newidle_lb_cost_ns: u64,
    /// `sd->last_decay_max_lb_cost`, jiffies.
    pub last_decay_jiffies: u64,
    /// `sd->newidle_call`: newidle visits counted, halved at 1024.
    pub newidle_call: u32,
    /// `sd->newidle_success`: their pulls, each weighted by the inverse of
    /// the chance NI_RANDOM gave the visit, halved with the calls.
    pub newidle_success: u32,
    /// `sd->newidle_ratio`: pulls per 1024 visits, NI_RANDOM's odds.
    pub newidle_ratio: u32,
}

/// A STEAL attempt between reading the overloaded mask and taking its
/// victim's runqueue lock (`sched_lb_steal_from()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StealPending {
    /// The CPU whose bit was set and which had 2 runnable at the read.
    pub victim: u32,
    /// What the attempt has cost so far (mask lines, victims), ns.
    pub cost_ns: u64,
}

/// A runqueue.
#[derive(Clone, Debug)]
pub struct Rq {
    /// Running task.
    pub curr: Option<usize>,
    /// Queued tasks, in enqueue order (`cfs_tasks`, head last).
    pub queue: Vec<usize>,
    /// `cfs_rq->zero_vruntime`: where the last `avg_vruntime()` put the
    /// average, the reference an empty runqueue places a task at.
    pub zero_vruntime: u64,
    /// RUN_TO_PARITY's `protect_slice()`: `curr`'s deadline when it was
    /// picked (the kernel stashes it in `se->vlag`); `curr`'s slice is
    /// protected while its deadline is still this one.
    pub protect_deadline: Option<u64>,
    /// `TIF_NEED_RESCHED` of `curr`, set by `update_curr()`.
    pub need_resched: bool,
    /// Delayed tasks in `queue` (`h_nr_queued - h_nr_runnable`).
    pub nr_delayed: u32,
    /// Runtime accounted up to here.
    pub last_acct_ns: u64,
    /// Generation of the pending burst-end event.
    pub gen: u64,
    /// Kernel work pending on this CPU (scans, balancing), ns.
    pub overhead_ns: u64,
    /// `rq->idle_stamp` (0: not idle).
    pub idle_stamp_ns: u64,
    /// `rq->avg_idle`.
    pub avg_idle_ns: u64,
    /// `rq->max_idle_balance_cost`.
    pub max_idle_balance_cost_ns: u64,
    /// SIS_PROP `rq->sis_avg_scan_cost` (patch 0012, RFC 01): what one
    /// loop of this CPU's own scans has cost on average. Per CPU, as the
    /// series keeps it: read and written only by the waking CPU's scans,
    /// so CPUs of one LLC never share it (`sd_llc_shared` would have every
    /// wakeup of the LLC write the line every wakeup reads).
    pub sis_avg_scan_cost_ns: u64,
    /// SIS_AGE `rq->wake_avg`.
    pub wake_avg_ns: u64,
    /// SIS_AGE `rq->wake_stamp`, jiffies.
    pub wake_stamp: u64,
    /// `rq->next_balance`, jiffies.
    pub next_balance: u64,
    /// Per-domain state, bottom up.
    pub dom: Vec<DomState>,
    /// NEWIDLE_BACKOFF's failure count (`newidle_streak::account`).
    pub newidle_streak: Streak,
    /// STEAL: average cost of a steal attempt, ns.
    pub avg_steal_cost_ns: u64,
    /// STEAL: the jiffy the average was last measured at
    /// (`rq->steal_cost_stamp`); `None` before the first attempt, which
    /// the kernel's boot jiffies (`INITIAL_JIFFIES`) make a second old.
    pub steal_cost_stamp: Option<u64>,
    /// STEAL: an attempt under way, its victim's lock not yet taken.
    pub steal: Option<StealPending>,
    /// `rq->wake_list` (`CostModel::wake_list_ns`): tasks woken onto this
    /// CPU through the wake list and not yet enqueued, the IPI that will
    /// enqueue them still on its way. While it holds any, `idle_cpu()`
    /// says no (`rq->ttwu_pending`), but no balancer sees them.
    pub wake_list: Vec<usize>,
    /// Its tick waits for the vCPU's turn, which its next wakeup's IPI
    /// brings (`Config::idle_tick_turn`); cleared at the next tick.
    pub tick_deferred: bool,
    /// `cfs_rq->avg.load_avg` input: runnable weight.
    pub load: Pelt,
    /// `cfs_rq->avg.util_avg` input: 1024 while running.
    pub util: Pelt,
    /// Last task that ran, for context-switch cost.
    pub last_task: Option<usize>,
    /// Busy time, ns (stats).
    pub busy_ns: u64,
    /// Kernel overhead charged, ns (stats).
    pub overhead_total_ns: u64,
}

/// Per-LLC shared state (`struct sched_domain_shared`).
///
/// Not `Clone`: the overloaded mask is shared (`Rc`) with the steal walk
/// in flight, and a clone would share it too.
#[derive(Debug)]
pub struct LlcShared {
    /// SIS_UTIL `nr_idle_scan`.
    pub nr_idle_scan: u32,
    /// `has_idle_cores`.
    pub has_idle_cores: bool,
    /// STEAL's overloaded CPUs of this LLC, sparsemask layout, element
    /// `cpu - overloaded_base`: the LLC's own lines, as `struct sched_lb_llc`
    /// lays them out. Cells behind an `Rc` because `steal::victims` walks the
    /// mask lazily while the steal it drives moves a task, which writes
    /// the mask (`nr_changed()`), as the kernel's walk over atomics does.
    pub overloaded: Rc<[Cell<u64>]>,
    /// The LLC's lowest CPU: element 0 of `overloaded`.
    pub overloaded_base: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Tick,
    BurstEnd {
        cpu: u32,
        gen: u64,
    },
    StealLand {
        cpu: u32,
    },
    TimerWake {
        task: usize,
    },
    /// A wakee reaches the idle CPU it was placed on (`wake_idle_ns`).
    IdlePick {
        cpu: u32,
    },
    /// The wake list's IPI reaches `cpu` (`wake_list_ns`):
    /// `sched_ttwu_pending()` enqueues what the list holds.
    WakeList {
        cpu: u32,
    },
    /// `resched_curr()`'s IPI reaches busy `cpu` (`resched_busy_ns`),
    /// which acts on its `need_resched` if still set.
    ReschedIpi {
        cpu: u32,
    },
    Sample,
}

/// The simulator.
pub struct Sim {
    /// Configuration.
    pub cfg: Config,
    /// Cost model.
    pub cost: CostModel,
    /// The tick order's stream.
    tick_rng: Rng,
    /// Each CPU's NI_RANDOM stream (`sched_rng()`'s per-CPU state).
    pub(crate) ni_rng: Vec<Rng>,
    /// Each task's stream, for its bursts and sleeps.
    task_rng: Vec<Rng>,
    /// Each task's draws, when `cfg.record_draws` asks for them.
    task_draws: Vec<Vec<u64>>,
    /// Now, ns.
    pub now_ns: u64,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// Runqueues.
    pub rqs: Vec<Rq>,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Per-LLC state.
    pub llc: Vec<LlcShared>,
    /// Counters.
    pub stats: Stats,
    /// `/proc/schedstat`'s counters and the module's (`schedstat.rs`).
    pub schedstat: SchedStat,
    /// Work-conservation checker.
    pub conserve: Conservation,
    /// CPUs with more than one task (`rd->overloaded`).
    pub nr_overloaded: u32,
    /// CPUs with more than one runnable task (delayed ones left out): the
    /// work-conservation checker's "task waiting".
    nr_waiting: u32,
    nr_idle: u32,
    trace: u64,
    timeline: Timeline,
    base_slice_ns: u64,
    tick_ns: u64,
    max_lb_interval_jiffies: u64,
    order: Vec<u32>,
    buddy_split: Vec<bool>,
    /// The CPU whose task is inside a send or receive (`burst_end()`): a
    /// wakeup preemption there waits for its return to user space.
    syscall_cpu: Option<u32>,
    /// Replayed tasks (`tasks.rs`): the scripts and where each stands.
    replay: replay::Replay,
    /// The run as slb-trace events, when `cfg.record_events`.
    recorder: replay::Recorder,
    /// NOHZ idle balancing's state (`cfg.nohz`).
    pub nohz: nohz::Nohz,
    /// `cfg.tcg_rr`: the busy vCPUs yet to have their turn this round,
    /// the next last.
    tcg_round: Vec<u32>,
    /// `cfg.tcg_rr`: the order of each round.
    tcg_rng: Rng,
    /// `cfg.tcg_rr`: which idle vCPUs the round reaches in a period.
    tcg_idle_rng: Rng,
    /// Draws of the TCG latencies from `Config::latency_spread`.
    latency_rng: Rng,
    /// Draws of `Config::idle_tick_turn`.
    idle_tick_rng: Rng,
    /// `cfg.tcg_rr`: turns that ended early since the last tick (a vCPU
    /// halted, sent an IPI or took a timer's interrupt), each one more
    /// busy vCPU served.
    tcg_turn_ends: u32,
    /// `cfg.tcg_rr`: when QEMU's kick timer next ends a turn
    /// ([`TCG_KICK_PERIOD_NS`]).
    tcg_next_kick_ns: u64,
    /// The CPU in `go_idle()`, whose pick after a STEAL or newidle pull
    /// is still the `__schedule()` that found its queue empty (one
    /// `sched_count`, as `pick_next_task_fair()`'s retry in the kernel).
    going_idle: Option<u32>,
    /// Tasks of a hackbench with `loops` that have not exited yet.
    hb_live: u32,
    /// When the last of them exited: the run ends there, as hackbench's
    /// timer stops when it has reaped its last child.
    ended_ns: Option<u64>,
    /// When a replay fell quiet: every script that has not exited waits
    /// in a `Block` that no script is left to end (`Sim::replay_quiet()`).
    /// The run stops there too, though it did not end.
    quiet_ns: Option<u64>,
}

/// QEMU's `TCG_KICK_PERIOD` (`accel/tcg/tcg-accel-ops-rr.h`): single-threaded
/// TCG kicks the running vCPU this often so that a vCPU that never exits
/// cannot starve the others; each kick is one more turn (`Config::tcg_rr`).
pub const TCG_KICK_PERIOD_NS: u64 = 100_000_000;

/// FNV-1a, 64 bit, over the words of each traced event.
fn fnv(mut h: u64, words: &[u64]) -> u64 {
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl Sim {
    /// Builds the machine and the tasks.
    pub fn new(mut cfg: Config) -> Self {
        // Knobs are per-domain values; set them as debugfs writes would.
        for doms in cfg.topology.domains.iter_mut() {
            for d in doms.iter_mut() {
                d.busy_factor = cfg.knobs.busy_factor;
                if d.flags & (SD_SHARE_CPUCAPACITY | crate::topology::SD_SHARE_LLC) == 0 {
                    d.imbalance_pct = cfg.knobs.imbalance_pct_above_llc;
                }
                if cfg.knobs.prefer_sibling == PreferSibling::SmtOnly {
                    // v4.8: SD_PREFER_SIBLING only on SMT domains.
                    if d.flags & SD_SHARE_CPUCAPACITY == 0 {
                        d.flags &= !SD_PREFER_SIBLING;
                    }
                }
            }
        }
        let topo = &cfg.topology;
        let nr = topo.nr_cpus;
        let rqs = (0..nr)
            .map(|c| Rq {
                curr: None,
                queue: Vec::new(),
                zero_vruntime: 0,
                protect_deadline: None,
                need_resched: false,
                nr_delayed: 0,
                last_acct_ns: 0,
                gen: 0,
                overhead_ns: 0,
                idle_stamp_ns: 0,
                avg_idle_ns: 2 * MIGRATION_COST_NS,
                max_idle_balance_cost_ns: MIGRATION_COST_NS,
                // struct rq is zeroed at boot: no scan has cost anything.
                sis_avg_scan_cost_ns: 0,
                wake_avg_ns: 2 * MIGRATION_COST_NS,
                wake_stamp: 0,
                next_balance: 0,
                dom: topo.domains[c as usize]
                    .iter()
                    .map(|d| DomState {
                        last_balance: 0,
                        balance_interval_ms: d.min_interval_ms,
                        nr_balance_failed: 0,
                        max_newidle_lb_cost_ns: 0,
                        last_decay_jiffies: 0,
                        // sd_init(): "50% success rate".
                        newidle_call: 512,
                        newidle_success: 256,
                        newidle_ratio: 512,
                    })
                    .collect(),
                newidle_streak: Streak {
                    failures: 0,
                    stamp_jiffies: 0,
                },
                avg_steal_cost_ns: 0,
                steal_cost_stamp: None,
                steal: None,
                wake_list: Vec::new(),
                tick_deferred: false,
                load: Pelt::new(0, 0),
                util: Pelt::new(0, 0),
                last_task: None,
                busy_ns: 0,
                overhead_total_ns: 0,
            })
            .collect();
        let llc = topo
            .llc_span
            .iter()
            .map(|s| {
                // Elements from the LLC's first CPU to its last: with x86
                // numbering (SMT siblings nr/2 apart) the span has a hole,
                // whose elements stay clear.
                let base = s.first().unwrap_or(0);
                let last = s.iter().last().unwrap_or(base);
                let nelems = last.saturating_sub(base).saturating_add(1);
                let words = sparsemask::words_for(nelems, SPARSE_BITS_PER_LINE) as usize;
                LlcShared {
                    nr_idle_scan: s.weight(),
                    has_idle_cores: true,
                    overloaded: (0..words).map(|_| Cell::new(0)).collect(),
                    overloaded_base: base,
                }
            })
            .collect();
        // get_update_sysctl_factor(), SCHED_TUNABLESCALING_LOG.
        let ncpu_factor = 1 + u64::from(31 - nr.clamp(1, 8).leading_zeros());
        // update_max_interval(): HZ * num_online_cpus() / 10.
        let max_lb_interval_jiffies = (u64::from(cfg.hz).saturating_mul(u64::from(nr)) / 10).max(1);
        let mut sim = Self {
            cost: cfg.cost,
            tick_rng: Rng::stream(cfg.seed, Purpose::TickOrder, 0),
            ni_rng: (0..nr)
                .map(|c| Rng::stream(cfg.seed, Purpose::NiRandom, u64::from(c)))
                .collect(),
            task_rng: Vec::new(),
            task_draws: Vec::new(),
            now_ns: 0,
            events: BinaryHeap::new(),
            seq: 0,
            rqs,
            tasks: Vec::new(),
            llc,
            stats: Stats::default(),
            schedstat: SchedStat::new(topo),
            conserve: Conservation::new(nr),
            nr_overloaded: 0,
            nr_waiting: 0,
            nr_idle: nr,
            trace: 0xcbf2_9ce4_8422_2325,
            timeline: Timeline::default(),
            base_slice_ns: BASE_SLICE_NS.saturating_mul(ncpu_factor),
            tick_ns: tick_ns(cfg.hz),
            max_lb_interval_jiffies,
            order: (0..nr).collect(),
            buddy_split: Vec::new(),
            syscall_cpu: None,
            replay: replay::Replay::default(),
            recorder: replay::Recorder::new(nr),
            nohz: nohz::Nohz::default(),
            tcg_round: Vec::new(),
            tcg_rng: Rng::stream(cfg.seed, Purpose::TickOrder, 1),
            tcg_idle_rng: Rng::stream(cfg.seed, Purpose::TickOrder, 2),
            latency_rng: Rng::stream(cfg.seed, Purpose::Latency, 0),
            idle_tick_rng: Rng::stream(cfg.seed, Purpose::Latency, 1),
            tcg_turn_ends: 0,
            tcg_next_kick_ns: TCG_KICK_PERIOD_NS,
            going_idle: None,
            hb_live: 0,
            ended_ns: None,
            quiet_ns: None,
            cfg,
        };
        sim.spawn_tasks();
        sim
    }

    fn push(&mut self, at_ns: u64, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((at_ns, self.seq, ev)));
    }

    pub(crate) fn trace(&mut self, words: &[u64]) {
        self.trace = fnv(self.trace, words);
        self.trace = fnv(self.trace, &[self.now_ns]);
    }

    /// Jiffies now.
    pub fn jiffies(&self) -> u64 {
        self.now_ns / self.tick_ns
    }

    /// One TCG latency: a draw from the replayed trace's spread of it
    /// (`pick`) when the run has one, else the cost model's `fixed_ns`.
    pub(crate) fn latency_ns(
        &mut self,
        pick: fn(&crate::cost::LatencySpread) -> &[u64],
        fixed_ns: u64,
    ) -> u64 {
        let Some(spread) = self.cfg.latency_spread.as_ref() else {
            return fixed_ns;
        };
        draw(pick(spread), &mut self.latency_rng).unwrap_or(fixed_ns)
    }

    /// `HZ`: jiffies per second.
    pub fn hz(&self) -> u64 {
        u64::from(self.cfg.hz.max(1))
    }

    /// `rq->nr_running` (CFS only here): delayed tasks are still on the
    /// runqueue and count, as they do for 6.12.117's balancer.
    pub fn nr_running(&self, cpu: u32) -> u32 {
        let rq = &self.rqs[cpu as usize];
        u32::from(rq.curr.is_some()) + rq.queue.len() as u32
    }

    /// `rq->cfs.h_nr_runnable`: `nr_running` without the delayed tasks.
    pub fn nr_runnable(&self, cpu: u32) -> u32 {
        self.nr_running(cpu)
            .saturating_sub(self.rqs[cpu as usize].nr_delayed)
    }

    fn nr(&self, cpu: u32) -> Nr {
        Nr {
            running: self.nr_running(cpu),
            runnable: self.nr_runnable(cpu),
        }
    }

    /// `idle_cpu()`: nothing runs or is queued, and no wakeup is on its
    /// way through the wake list (`rq->ttwu_pending`).
    pub fn idle(&self, cpu: u32) -> bool {
        self.nr_running(cpu) == 0 && self.rqs[cpu as usize].wake_list.is_empty()
    }

    /// `available_idle_cpu()` as a wakeup sees it: idle, and not in the
    /// middle of a STEAL attempt, whose `__schedule()` still has the task
    /// that blocked as `rq->curr`.
    pub fn available_idle(&self, cpu: u32) -> bool {
        self.idle(cpu) && self.rqs[cpu as usize].steal.is_none()
    }

    /// `max_load_balance_interval`.
    pub fn max_lb_interval_jiffies(&self) -> u64 {
        self.max_lb_interval_jiffies
    }

    /// Runnable weight on `cpu` (the PELT input of its load).
    fn runnable_weight(&self, cpu: u32) -> u64 {
        let rq = &self.rqs[cpu as usize];
        rq.curr
            .iter()
            .chain(rq.queue.iter())
            .map(|&t| self.tasks[t].weight)
            .sum()
    }

    /// Brings the runqueue's signals up to now, before its inputs change.
    pub(crate) fn pelt_sync_rq(&mut self, cpu: u32) {
        let rq = &self.rqs[cpu as usize];
        // Balancing reads many runqueues at one instant: once is enough.
        if rq.load.last_ns() >= self.now_ns && rq.util.last_ns() >= self.now_ns {
            return;
        }
        let w = self.runnable_weight(cpu);
        let now = self.now_ns;
        let rq = &mut self.rqs[cpu as usize];
        let running = if rq.curr.is_some() { CAPACITY } else { 0 };
        rq.load.update(now, w);
        rq.util.update(now, running);
    }

    pub(crate) fn pelt_sync_task(&mut self, t: usize) {
        let now = self.now_ns;
        let task = &mut self.tasks[t];
        // A delayed task is still enqueued: its load stays runnable.
        let runnable = matches!(task.state, State::Running | State::Runnable) || task.delayed;
        let running = task.state == State::Running;
        task.load
            .update(now, if runnable { task.weight } else { 0 });
        task.util.update(now, if running { CAPACITY } else { 0 });
    }

    /// `cpu_load()`.
    pub fn cpu_load(&mut self, cpu: u32) -> u64 {
        self.pelt_sync_rq(cpu);
        self.rqs[cpu as usize].load.value()
    }

    /// `cpu_util_cfs()`, capped at the capacity.
    pub fn cpu_util(&mut self, cpu: u32) -> u64 {
        self.pelt_sync_rq(cpu);
        self.rqs[cpu as usize].util.value().min(CAPACITY)
    }

    /// `cpu_runnable()`: `cfs_rq->avg.runnable_avg`, PELT of the number of
    /// runnable tasks times 1024. Every task here has nice 0's weight, so
    /// it is the same signal as the load (runnable weight) and is read
    /// from it; tasks of other weights would need a signal of their own.
    pub fn cpu_runnable(&mut self, cpu: u32) -> u64 {
        debug_assert!(self.tasks.iter().all(|t| t.weight == NICE_0_LOAD));
        self.cpu_load(cpu)
    }

    /// `task_h_load()` (no cgroups: the task's own load).
    pub fn task_load(&mut self, t: usize) -> u64 {
        self.pelt_sync_task(t);
        self.tasks[t].load.value()
    }

    /// `task_h_load()` of a wakee, as `wake_affine_weight()` reads it:
    /// its load as its block left it, not decayed over its sleep. Nothing
    /// brings a sleeper's signal up to date before its enqueue or its
    /// migration (`sync_entity_load_avg()` runs in EAS's placement only),
    /// so a wakee that slept counts heavier in both effective loads than
    /// its share of its previous CPU's load, which has decayed. Scaled as
    /// the root's `h_load` scales it (no cgroups): by `L / (L + 1)`, `L`
    /// its previous CPU's load.
    pub fn wakee_h_load(&mut self, t: usize) -> u64 {
        let l = u128::from(self.cpu_load(self.tasks[t].cpu));
        let load = u128::from(self.tasks[t].load.value());
        (load * l / (l + 1)) as u64
    }

    /// `task_util()`.
    pub fn task_util(&mut self, t: usize) -> u64 {
        self.pelt_sync_task(t);
        self.tasks[t].util.value()
    }

    /// Accounts the running task's time up to now: the runtime half of
    /// `update_curr()` (the EEVDF half is `Sim::update_curr()`).
    pub(crate) fn account(&mut self, cpu: u32) {
        let now = self.now_ns;
        let rq = &mut self.rqs[cpu as usize];
        let dt = now.saturating_sub(rq.last_acct_ns);
        rq.last_acct_ns = now;
        if dt == 0 {
            return;
        }
        let Some(t) = rq.curr else {
            // Kernel work on an idle CPU eats idle time.
            rq.overhead_ns = rq.overhead_ns.saturating_sub(dt);
            return;
        };
        rq.busy_ns = rq.busy_ns.saturating_add(dt);
        let from_overhead = dt.min(rq.overhead_ns);
        rq.overhead_ns -= from_overhead;
        let mut left = dt - from_overhead;
        let task = &mut self.tasks[t];
        let from_refill = left.min(task.refill_ns);
        task.refill_ns -= from_refill;
        left -= from_refill;
        task.work_ns = task.work_ns.saturating_add(left);
        if task.burst_left_ns != u64::MAX {
            task.burst_left_ns = task.burst_left_ns.saturating_sub(left);
        }
        task.vruntime = task
            .vruntime
            .wrapping_add(eevdf::calc_delta_fair(dt, task.weight));
        task.exec_start_ns = now;
    }

    /// Adds kernel work to a CPU: it delays whatever runs there next.
    pub(crate) fn charge(&mut self, cpu: u32, ns: u64) {
        if ns == 0 {
            return;
        }
        self.account(cpu);
        let rq = &mut self.rqs[cpu as usize];
        rq.overhead_ns = rq.overhead_ns.saturating_add(ns);
        rq.overhead_total_ns = rq.overhead_total_ns.saturating_add(ns);
        self.stats.overhead_ns = self.stats.overhead_ns.saturating_add(ns);
        if rq.curr.is_some() {
            self.arm_burst(cpu);
        }
    }

    /// `cfg.tcg_rr`: the busy vCPU whose turn this tick period is: each
    /// busy vCPU once a round, in a seeded order drawn anew each round.
    /// QEMU goes round in CPU order, but a turn also ends at any other
    /// timer event or IPI, so the guest's rounds are not lockstep (its
    /// spinners switch every 24-36 ms on 8 busy vCPUs, some every 56-64);
    /// a fixed order phase-locks the balancers, which run on turns too,
    /// with the switches they read, and the same task is always the one
    /// queued when a balancer looks. None if no vCPU is busy.
    fn tcg_next_turn(&mut self) -> Option<u32> {
        loop {
            while let Some(c) = self.tcg_round.pop() {
                if self.rqs[c as usize].curr.is_some() {
                    return Some(c);
                }
            }
            let mut busy: Vec<u32> = (0..self.cfg.topology.nr_cpus)
                .filter(|&c| self.rqs[c as usize].curr.is_some())
                .collect();
            if busy.is_empty() {
                return None;
            }
            self.tcg_rng.shuffle(&mut busy);
            self.tcg_round = busy;
        }
    }

    /// `cfg.tcg_rr`: the running vCPU's turn ends before the next tick:
    /// it halted (went idle), raised an interrupt on another vCPU (a
    /// wakeup's IPI: see `Config::tcg_rr` for why an IPI counts) or took
    /// a timer's. QEMU's round-robin loop (`rr_cpu_thread_fn()`) then
    /// runs the next vCPU, which handles its pending tick.
    pub(crate) fn tcg_turn_end(&mut self) {
        if self.cfg.tcg_rr {
            self.tcg_turn_ends = self.tcg_turn_ends.saturating_add(1);
        }
    }

    /// `cfg.tcg_rr`: the busy vCPUs that have a turn in this tick period,
    /// and so handle their tick: one, plus one for each turn that ended
    /// early in the last period ([`Self::tcg_turn_end`]); every busy one
    /// when there were as many turns as busy vCPUs.
    fn tcg_served(&mut self) -> Vec<bool> {
        let nr = self.cfg.topology.nr_cpus as usize;
        let mut served = vec![false; nr];
        let mut turns = std::mem::take(&mut self.tcg_turn_ends).saturating_add(1);
        // The kick timer ends the running turn whatever else happens.
        while self.now_ns >= self.tcg_next_kick_ns {
            turns = turns.saturating_add(1);
            self.tcg_next_kick_ns = self.tcg_next_kick_ns.saturating_add(TCG_KICK_PERIOD_NS);
        }
        let busy = (0..nr).filter(|&c| self.rqs[c].curr.is_some()).count();
        if turns as usize >= busy {
            served.fill(true);
            return served;
        }
        // A halted vCPU's tick waits in the round as a busy one's does,
        // but its turn is short: the round, which takes busy / turns
        // periods, reaches each idle vCPU once (the guest's idle vCPUs
        // beside four spinners took 38% of their ticks, as many as the
        // busy ones).
        for (s, rq) in served.iter_mut().zip(&self.rqs) {
            if rq.curr.is_none() {
                *s = self.tcg_idle_rng.below(busy as u64) < u64::from(turns);
            }
        }
        // Distinct vCPUs: a round that ends within the period starts the
        // next, whose order may put a vCPU just served first again.
        let mut n = 0;
        while n < turns {
            match self.tcg_next_turn() {
                Some(c) if !served[c as usize] => {
                    served[c as usize] = true;
                    n += 1;
                }
                Some(_) => {}
                None => break,
            }
        }
        served
    }

    /// `sched_tick()` on every CPU, in a seeded order.
    fn tick(&mut self) {
        let served = if self.cfg.tcg_rr {
            self.tcg_served()
        } else {
            Vec::new()
        };
        let mut order = std::mem::take(&mut self.order);
        self.tick_rng.shuffle(&mut order);
        // A tick deferred past this one is merged into it, as the LAPIC's
        // pending timer interrupt is: lost.
        for rq in &mut self.rqs {
            rq.tick_deferred = false;
        }
        // A task waiting behind a running one, as the record shows it:
        // runnable, not a delayed dequeue's sleeper.
        let waiting = self.cfg.idle_tick_turn.is_some()
            && (0..self.cfg.topology.nr_cpus).any(|c| self.nr_runnable(c) >= 2);
        for &cpu in &order {
            // NO_HZ_IDLE: an idle CPU's tick is stopped; the kicked idle
            // load balancer balances for it (`nohz.rs`).
            // A CPU whose wake list's IPI has not come yet is idle too,
            // its tick stopped, though `idle_cpu()` says no.
            if self.cfg.nohz && self.rqs[cpu as usize].curr.is_none() && self.nr_running(cpu) == 0 {
                continue;
            }
            // TCG: a vCPU, busy or halted, waiting for its turn has its
            // tick pending (`tcg_served()` decides both).
            if self.cfg.tcg_rr && !served.get(cpu as usize).copied().unwrap_or(false) {
                continue;
            }
            // TCG: a halted vCPU's tick waits for its turn, or is lost
            // (its odds measured in the guest, without TCG's rounds).
            if !self.cfg.tcg_rr && !self.idle_tick_now(cpu, waiting) {
                continue;
            }
            self.tick_cpu(cpu);
        }
        self.order = order;
        self.push(self.now_ns.saturating_add(self.tick_ns), Ev::Tick);
    }

    /// Whether an idle CPU's tick is taken now (`Config::idle_tick_turn`;
    /// always without it, and for a CPU that runs or queues something);
    /// if not, it is deferred (`Rq::tick_deferred`) or lost. `waiting`:
    /// some CPU has a task waiting behind a running one.
    fn idle_tick_now(&mut self, cpu: u32, waiting: bool) -> bool {
        let Some(turn) = self.cfg.idle_tick_turn else {
            return true;
        };
        if self.nr_running(cpu) > 0 {
            return true;
        }
        let take = if waiting {
            turn.take_waiting_pct
        } else {
            turn.take_free_pct
        };
        // A CPU with a wakeup on its way waits for it, without a draw.
        let now = self.rqs[cpu as usize].wake_list.is_empty()
            && self.idle_tick_rng.below(100) < u64::from(take);
        // Not taken at once, a tick waits for the vCPU's next turn, which
        // a wakeup's IPI brings (`deferred_tick()`), or is merged into
        // the next tick.
        self.rqs[cpu as usize].tick_deferred = !now;
        now
    }

    /// The tick a CPU's turn deferred (`Config::idle_tick_turn`), taken
    /// now that a wakeup's IPI gave it one.
    pub(super) fn deferred_tick(&mut self, cpu: u32) {
        if std::mem::take(&mut self.rqs[cpu as usize].tick_deferred) {
            self.tick_cpu(cpu);
        }
    }

    /// `sched_tick()`'s work on `cpu`.
    fn tick_cpu(&mut self, cpu: u32) {
        self.rec_tick(cpu);
        // entity_tick(): update_curr(), which renews the deadline of a
        // task that reached it and asks for the resched.
        self.update_curr(cpu);
        if self.rqs[cpu as usize].need_resched {
            self.resched(cpu);
        }
        if self.jiffies() >= self.rqs[cpu as usize].next_balance {
            self.rec_tick_balance(cpu);
            self.rebalance_domains(cpu);
        }
        if self.cfg.nohz {
            self.nohz_balancer_kick(cpu);
        }
    }

    /// Runs to the configured duration and returns the results.
    pub fn run(self) -> RunResult {
        self.run_recorded().0
    }

    /// Runs, and returns the run's events and function entries too (empty
    /// unless `cfg.record_events`).
    pub fn run_recorded(
        mut self,
    ) -> (
        RunResult,
        Vec<crate::replay::trace::Event>,
        Vec<crate::replay::trace::Call>,
    ) {
        let end = self.cfg.duration_ns;
        self.push(0, Ev::Tick);
        if self.cfg.samples > 0 {
            self.push(0, Ev::Sample);
        }
        let progress = self.cfg.progress;
        let mut shown = u64::MAX;
        while let Some(Reverse((at, _, ev))) = self.events.pop() {
            if at > end || self.ended_ns.is_some() || self.quiet_ns.is_some() {
                break;
            }
            self.now_ns = at;
            match ev {
                Ev::Tick => self.tick(),
                Ev::BurstEnd { cpu, gen } => {
                    if self.rqs[cpu as usize].gen == gen {
                        self.burst_end(cpu);
                    }
                }
                Ev::StealLand { cpu } => self.steal_land(cpu),
                Ev::TimerWake { task } => {
                    if self.tasks[task].state == State::Sleeping && self.timer_fires(task, at) {
                        self.wake(task, None, false);
                    }
                }
                Ev::IdlePick { cpu } => {
                    // Something may have run here meanwhile (a pull, a
                    // later wakeup's own pick).
                    if self.rqs[cpu as usize].curr.is_none() && !self.pick_next(cpu) {
                        self.go_idle(cpu);
                    }
                }
                Ev::WakeList { cpu } => self.ttwu_pending(cpu),
                Ev::ReschedIpi { cpu } => self.resched_ipi(cpu),
                Ev::Sample => {
                    self.sample();
                    let step = (end / u64::from(self.cfg.samples.max(1))).max(1);
                    self.push(at + step, Ev::Sample);
                }
            }
            if progress {
                let pct = at.saturating_mul(100) / end.max(1);
                if pct != shown {
                    shown = pct;
                    crate::report::progress(pct);
                }
            }
        }
        if progress {
            crate::report::progress_done();
        }
        if self.ended_ns.is_none() {
            self.stats.replay_stuck_ns = self.replay_stuck_ns();
        }
        self.now_ns = self.ended_ns.or(self.quiet_ns).unwrap_or(end);
        for c in 0..self.cfg.topology.nr_cpus {
            self.account(c);
        }
        if self.cfg.samples > 0 {
            self.sample();
        }
        let events = std::mem::take(&mut self.recorder.events);
        let calls = std::mem::take(&mut self.recorder.calls);
        (self.finish(), events, calls)
    }

    fn sample(&mut self) {
        let busy: Vec<u64> = self.rqs.iter().map(|r| r.busy_ns).collect();
        let work: Vec<u64> = self.tasks.iter().map(|t| t.work_ns).collect();
        let nr: Vec<u32> = (0..self.cfg.topology.nr_cpus)
            .map(|c| self.nr_running(c))
            .collect();
        self.timeline.push(self.now_ns, busy, work, nr);
    }

    fn finish(mut self) -> RunResult {
        let now = self.now_ns;
        self.conserve.finish(now);
        let draws = std::mem::take(&mut self.task_draws);
        let tasks: Vec<TaskStat> = self
            .tasks
            .iter()
            .zip(draws)
            .map(|(t, draws)| TaskStat {
                kind: t.kind.name(),
                work_ns: t.work_ns,
                migrations: t.migrations,
                wakeups: t.wakeups,
                draws,
            })
            .collect();
        let busy: u64 = self.rqs.iter().map(|r| r.busy_ns).sum();
        let cfg = &self.cfg;
        RunResult {
            topology: cfg.topology.spec.name.to_string(),
            nr_cpus: cfg.topology.nr_cpus,
            workload: cfg.workload.text.clone(),
            flags: cfg.flags.diff_from_default(),
            knobs: cfg.knobs,
            seed: cfg.seed,
            hz: cfg.hz,
            duration_ns: now,
            ended: self.ended_ns.is_some(),
            tasks,
            busy_ns: busy,
            stats: self.stats.clone(),
            schedstat: self.schedstat.clone(),
            conservation: self.conserve.report(),
            trace_hash: self.trace,
            timeline: self.timeline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tasks` always-running tasks on the preset `topology`, 1 ms long,
    /// seed 1, the configuration set by `set` first (the sim's tests, its
    /// submodules' too).
    pub(super) fn fair(topology: &str, tasks: u32, set: impl FnOnce(&mut Config)) -> Sim {
        let mut cfg = Config::new(
            Topology::preset(topology).unwrap(),
            Workload::parse(&format!("fairness:{tasks}")).unwrap(),
            1,
            1_000_000,
        );
        set(&mut cfg);
        Sim::new(cfg)
    }

    /// A replay's latency: the constant, or with a spread a draw from its
    /// points, each about as often; a kind the spread lacks keeps its
    /// constant.
    #[test]
    fn a_latency_is_drawn_from_the_spread() {
        let mut s = sim("qemu8", 250);
        assert_eq!(s.latency_ns(|l| &l.wake_list_ns, 77), 77);
        s.cfg.latency_spread = Some(Rc::new(crate::cost::LatencySpread {
            wake_list_ns: vec![10, 20, 30],
            ..Default::default()
        }));
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..3000 {
            *seen
                .entry(s.latency_ns(|l| &l.wake_list_ns, 77))
                .or_insert(0) += 1;
        }
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), [10, 20, 30]);
        assert!(seen.values().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        assert_eq!(s.latency_ns(|l| &l.fork_idle_ns, 77), 77);
    }

    fn sim(topo: &str, hz: u32) -> Sim {
        let mut cfg = Config::new(
            Topology::preset(topo).unwrap(),
            Workload::parse("fairness:1").unwrap(),
            1,
            1_000_000,
        );
        cfg.hz = hz;
        Sim::new(cfg)
    }

    /// hackbench with `loops` ends as the program does: each receiver
    /// reads every message of its group's senders, every task exits, and
    /// the run stops at the last exit, well before its configured end.
    /// Without `loops` the same groups run to the end.
    #[test]
    fn finite_hackbench_ends_with_its_last_task() {
        let run = |wl: &str, duration_ns: u64| {
            let w = Workload::parse(wl).unwrap();
            Sim::new(Config::new(
                Topology::preset("2x4").unwrap(),
                w,
                1,
                duration_ns,
            ))
            .run()
        };
        // 2 groups of 4 senders and 4 receivers, 5 loops: each receiver
        // reads 4 x 5 messages, and the last read ends the run.
        let r = run("hackbench:2:4:10:10:4:5", 2_000_000_000);
        assert!(r.ended, "the run ended");
        assert!(
            r.duration_ns > 0 && r.duration_ns < 100_000_000,
            "{}",
            r.duration_ns
        );
        assert_eq!(r.stats.messages, 2 * 4 * 4 * 5);
        let forever = run("hackbench:2:4:10:10:4", 100_000_000);
        assert!(!forever.ended && forever.duration_ns == 100_000_000);
        assert!(forever.stats.messages > 2 * 4 * 4 * 5);
    }

    /// 6.12.117: `sysctl_sched_base_slice = 700000ULL`, scaled by
    /// `1 + ilog2(min(ncpus, 8))`: 2.8 ms on 8 CPUs and more.
    #[test]
    fn base_slice_is_0_70_ms_scaled() {
        assert_eq!(sim("2x4", DEFAULT_HZ).base_slice_ns, 2_800_000);
        assert_eq!(sim("thx2", DEFAULT_HZ).base_slice_ns, 2_800_000);
    }

    /// `Config::tcg_rr`: the busy vCPUs take the tick periods in turn, in
    /// CPU order, skipping idle ones; none busy, no turn.
    #[test]
    fn tcg_turns_go_round_the_busy_vcpus() {
        let (mut s, _, _) = two_on_cpu0();
        s.rqs[3].curr = None;
        s.rqs[6].curr = None;
        let busy = [0, 1, 2, 4, 5, 7];
        let mut orders = Vec::new();
        for _ in 0..8 {
            let mut round: Vec<u32> = (0..6).filter_map(|_| s.tcg_next_turn()).collect();
            orders.push(round.clone());
            round.sort_unstable();
            assert_eq!(round, busy, "each busy vCPU once a round, no idle one");
        }
        // Not lockstep: the rounds' orders differ.
        assert!(orders.iter().any(|o| *o != orders[0]), "{orders:?}");
        for rq in &mut s.rqs {
            rq.curr = None;
        }
        s.tcg_round.clear();
        assert_eq!(s.tcg_next_turn(), None);
    }

    /// `wl` on guittot's 2x4 for `ms`, seed 1, with TCG's turns or not.
    fn run_2x4(wl: &str, ms: u64, tcg_rr: bool) -> RunResult {
        let mut cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse(wl).unwrap(),
            1,
            ms * 1_000_000,
        );
        cfg.tcg_rr = tcg_rr;
        Sim::new(cfg).run()
    }

    /// Under TCG's turns 9 spinners on 2x4 switch once a round of the 8
    /// busy vCPUs (32 ms at HZ 250), not at each tick past the slice: the
    /// guest's spinners switch every 24-36 ms (`make replay`, guittot).
    #[test]
    fn tcg_turns_make_spinners_switch_once_a_round() {
        let switches = |tcg_rr: bool| {
            let r = run_2x4("fairness:9", 2_000, tcg_rr);
            (r.stats.context_switches, r.busy_ns)
        };
        let (hw, hw_busy) = switches(false);
        let (tcg, tcg_busy) = switches(true);
        // One doubled CPU: a switch a tick past the 2.8 ms slice (every
        // 4 ms) on hardware, one a 32 ms round under TCG.
        assert!(hw > 400 && tcg > 30, "hw {hw} tcg {tcg}");
        assert!(tcg * 5 < hw, "hw {hw} tcg {tcg}");
        // The CPUs stay as busy: only when the picks happen moves.
        assert!(tcg_busy * 100 >= hw_busy * 99, "{hw_busy} {tcg_busy}");
    }

    /// Under TCG's turns an idle vCPU's tick waits in the round too: with
    /// four spinners on qemu8's eight vCPUs and one turn a period, each
    /// vCPU, busy or idle, ticks about once in four periods (the guest's
    /// took 38% of their ticks beside four spinners, idle as busy); with
    /// a turn for every busy vCPU all of them tick.
    #[test]
    fn tcg_turns_reach_the_idle_vcpus_once_a_round() {
        let mut s = fair("qemu8", 4, |c| c.tcg_rr = true);
        let busy: Vec<usize> = (0..8).filter(|&c| s.rqs[c].curr.is_some()).collect();
        assert_eq!(busy.len(), 4);
        let periods = 400;
        let mut ticks = [0u32; 8];
        for _ in 0..periods {
            for (c, served) in s.tcg_served().into_iter().enumerate() {
                ticks[c] += u32::from(served);
            }
        }
        for (c, &n) in ticks.iter().enumerate() {
            assert!((70..=130).contains(&n), "CPU {c}: {n} ticks of {periods}");
        }
        let busy_ticks: u32 = busy.iter().map(|&c| ticks[c]).sum();
        assert_eq!(busy_ticks, periods, "one busy turn a period");
        for _ in 0..3 {
            s.tcg_turn_end();
        }
        assert!(s.tcg_served().iter().all(|&x| x), "four turns: everyone");
    }

    /// A tick period serves one busy vCPU, one more for each turn that
    /// ended early (a halt, an IPI) and one more at each kick of QEMU's
    /// timer; as many turns as busy vCPUs serve them all.
    #[test]
    fn tcg_turns_that_end_early_serve_more_vcpus() {
        let (mut s, _, _) = two_on_cpu0();
        s.cfg.tcg_rr = true;
        let served = |s: &mut Sim| s.tcg_served().iter().filter(|&&x| x).count();
        s.now_ns = 10_000_000;
        assert_eq!(served(&mut s), 1);
        for ends in [1, 3, 6] {
            for _ in 0..ends {
                s.tcg_turn_end();
            }
            assert_eq!(served(&mut s), ends + 1, "{ends} turns ended early");
        }
        for _ in 0..20 {
            s.tcg_turn_end();
        }
        assert_eq!(served(&mut s), 8, "every busy vCPU, no more");
        // The ends are used up at the tick that read them.
        assert_eq!(served(&mut s), 1);
        // The kick timer: one more turn once each 100 ms.
        s.now_ns = TCG_KICK_PERIOD_NS;
        assert_eq!(served(&mut s), 2);
        assert_eq!(served(&mut s), 1);
        // Hardware (no turns) counts nothing.
        s.cfg.tcg_rr = false;
        s.tcg_turn_end();
        assert_eq!(s.tcg_turn_ends, 0);
    }

    /// An idle vCPU's tick under TCG's turns (`Config::idle_tick_turn`):
    /// three spinners leave five CPUs free with nothing waiting, whose
    /// ticks are taken at the odds given, the rest waiting for a wakeup
    /// that never comes; all taken is hardware's run exactly. Tasks that
    /// sleep and wake take the deferred ones with their wakeups, as busy
    /// CPUs' ticks, and lose those no wakeup comes for.
    #[test]
    fn an_idle_vcpus_tick_comes_on_its_turn() {
        use crate::cost::IdleTickTurn;
        use crate::replay::ticks::{TickClass::Free, TickFate::*};
        let turn = |take| IdleTickTurn {
            take_free_pct: take,
            take_waiting_pct: take,
        };
        let run = |t: Option<IdleTickTurn>| {
            let r = fair("qemu8", 3, |c| {
                c.duration_ns = 200_000_000;
                c.idle_tick_turn = t;
            })
            .run();
            let idle = r
                .schedstat
                .totals()
                .get("lb_count_idle")
                .copied()
                .unwrap_or(0);
            (r.trace_hash, idle)
        };
        let (hash, idle) = run(None);
        assert!(idle > 300, "five idle CPUs balance at their ticks: {idle}");
        assert_eq!(run(Some(turn(100))), (hash, idle));
        assert_eq!(run(Some(turn(0))).1, 0, "no wakeup brings them");
        let (_, half) = run(Some(turn(50)));
        assert!(
            half * 10 > idle * 3 && half * 10 < idle * 7,
            "{half} of {idle}"
        );
        let fates = |t: Option<IdleTickTurn>| {
            let mut cfg = Config::new(
                Topology::preset("qemu8").unwrap(),
                Workload::parse("periodic:4:1000:5000").unwrap(),
                1,
                300_000_000,
            );
            cfg.idle_tick_turn = t;
            cfg.record_events = true;
            let topo = cfg.topology.clone();
            let (_, events, calls) = Sim::new(cfg).run_recorded();
            let none = std::collections::HashSet::new();
            crate::replay::metrics::measure_with_calls(&events, &calls, &topo, &none).tick_turns
        };
        let on_time = fates(None);
        assert!(on_time.count(Free, AtOnce) > 500, "{on_time:?}");
        assert_eq!(on_time.count(Free, Lost), 0, "{on_time:?}");
        let turns = fates(Some(turn(0)));
        assert_eq!(turns.count(Free, AtOnce), 0, "{turns:?}");
        assert!(turns.count(Free, AfterWakeup) > 50, "{turns:?}");
        assert!(turns.count(Free, Lost) > 50, "{turns:?}");
    }

    /// Whether a tick is taken depends on the state: a CPU that runs
    /// something takes it; one with a wakeup on its way waits for that
    /// wakeup's IPI; a free one draws by whether a task waits anywhere;
    /// a deferred tick comes with its CPU's next wakeup, or is merged
    /// into the next tick.
    #[test]
    fn an_idle_vcpus_turn_follows_the_state() {
        let mut s = fair("qemu8", 3, |c| {
            c.idle_tick_turn = Some(crate::cost::IdleTickTurn {
                take_free_pct: 100,
                take_waiting_pct: 0,
            });
        });
        s.now_ns = 100_000_000;
        for rq in &mut s.rqs {
            rq.last_acct_ns = s.now_ns;
        }
        let busy = (0..8).find(|&c| s.rqs[c as usize].curr.is_some()).unwrap();
        let free = (0..8).find(|&c| s.nr_running(c) == 0).unwrap();
        assert!(s.idle_tick_now(busy, true));
        assert!(!s.rqs[busy as usize].tick_deferred);
        assert!(s.idle_tick_now(free, false), "nothing waits: taken");
        assert!(!s.rqs[free as usize].tick_deferred);
        assert!(!s.idle_tick_now(free, true) && s.rqs[free as usize].tick_deferred);
        // The next tick merges a deferred one.
        s.tick();
        assert!(!s.rqs[free as usize].tick_deferred);
        // A wakeup on its way: deferred whatever the odds, then taken with
        // the wakeup's enqueue, as a busy CPU's.
        let t = s.rqs[busy as usize].curr.unwrap();
        s.rqs[free as usize].wake_list.push(t);
        assert!(!s.idle_tick_now(free, false) && s.rqs[free as usize].tick_deferred);
        s.rqs[free as usize].wake_list.clear();
        let lb = |s: &Sim, k: &str| s.schedstat.totals()[k];
        let busy_before = lb(&s, "lb_count_busy");
        s.rqs[free as usize].next_balance = 0;
        s.deferred_tick(free);
        assert!(!s.rqs[free as usize].tick_deferred);
        assert_eq!(
            lb(&s, "lb_count_busy"),
            busy_before,
            "still free: an idle balance, not a busy one"
        );
        assert!(lb(&s, "lb_count_idle") > 0);
    }

    /// Under hackbench a vCPU's turn ends at every halt and wakeup IPI, so
    /// the busy vCPUs all tick about on time under TCG's turns: the
    /// busy balancing the ticks drive stays within a fifth of hardware's.
    #[test]
    fn tcg_turns_end_at_halts_and_ipis() {
        let balances = |wl: &str, tcg_rr: bool| {
            run_2x4(wl, 1_000, tcg_rr)
                .schedstat
                .totals()
                .get("lb_count_busy")
                .copied()
                .unwrap_or(0)
        };
        let (hw, tcg) = (
            balances("hackbench:1", false),
            balances("hackbench:1", true),
        );
        assert!(
            hw > 100 && tcg * 5 >= hw * 4,
            "hackbench: hw {hw} tcg {tcg}"
        );
    }

    /// `TICK_NSEC`, and the tick events follow it.
    #[test]
    fn the_tick_follows_hz() {
        assert_eq!(tick_ns(250), 4_000_000);
        assert_eq!(tick_ns(1000), 1_000_000);
        assert_eq!(tick_ns(300), 3_333_333);
        assert_eq!(DEFAULT_HZ, 250);
        for hz in [250, 1000] {
            let s = sim("qemu8", hz);
            assert_eq!(s.tick_ns, tick_ns(hz));
            // 1 s simulated: one tick per jiffy, each balancing every CPU
            // whose next_balance is due; the first tick is at time 0.
            let mut cfg = s.cfg.clone();
            cfg.duration_ns = 1_000_000_000;
            let mut s = Sim::new(cfg);
            s.push(0, Ev::Tick);
            let mut ticks = 0u64;
            while let Some(Reverse((at, _, ev))) = s.events.pop() {
                if at > 1_000_000_000 {
                    break;
                }
                s.now_ns = at;
                if ev == Ev::Tick {
                    ticks += 1;
                    s.tick();
                }
            }
            assert_eq!(ticks, u64::from(hz) + 1, "HZ {hz}");
        }
    }

    /// 2x4, fairness:9, 10 ms in: CPU 0 runs `a` and queues `b` (both at
    /// vruntime 0 from fork, `b`'s deadline half a slice), every other CPU
    /// runs one task.
    fn two_on_cpu0() -> (Sim, usize, usize) {
        let cfg = Config::new(
            Topology::preset("2x4").unwrap(),
            Workload::parse("fairness:9").unwrap(),
            1,
            1_000_000_000,
        );
        let mut s = Sim::new(cfg);
        assert_eq!((s.nr_running(0), s.rqs[0].queue.len()), (2, 1));
        let (a, b) = (s.rqs[0].curr.unwrap(), s.rqs[0].queue[0]);
        s.now_ns = 10_000_000;
        for c in 0..8 {
            s.rqs[c].last_acct_ns = s.now_ns;
        }
        (s, a, b)
    }

    /// Sets `t`'s vruntime and deadline (ms).
    fn at(s: &mut Sim, t: usize, v_ms: u64, d_ms: u64) {
        s.tasks[t].vruntime = v_ms * 1_000_000;
        s.tasks[t].deadline = d_ms * 1_000_000;
    }

    /// DELAY_DEQUEUE: `a` blocks ahead of the average (not eligible), so it
    /// stays queued: `nr_running` still 2, `nr_runnable` 1, no STEAL bit;
    /// woken, it is runnable again where it was, with no migration.
    #[test]
    fn an_ineligible_sleeper_is_delayed_and_wakes_in_place() {
        let (mut s, a, b) = two_on_cpu0();
        at(&mut s, a, 20, 22);
        at(&mut s, b, 10, 12);
        s.block_curr(0, State::Blocked);
        assert_eq!(s.rqs[0].curr, Some(b));
        assert!(s.tasks[a].delayed);
        assert_eq!(s.tasks[a].state, State::Blocked);
        assert_eq!((s.nr_running(0), s.nr_runnable(0)), (2, 1));
        assert_eq!((s.nr_overloaded, s.nr_waiting), (1, 0));
        assert!(s.llc[0].overloaded.iter().all(|w| w.get() == 0));
        let (wakeups, migrations) = (s.tasks[a].wakeups, s.tasks[a].migrations);
        s.wake(a, None, false);
        assert!(!s.tasks[a].delayed);
        assert_eq!(s.tasks[a].state, State::Runnable);
        assert_eq!(s.tasks[a].cpu, 0);
        assert_eq!(s.tasks[a].wakeups, wakeups + 1);
        assert_eq!(s.tasks[a].migrations, migrations);
        // Its negative lag is kept: still behind b, which runs on.
        assert_eq!(s.tasks[a].vruntime, 20_000_000);
        assert_eq!(s.rqs[0].curr, Some(b));
        assert_eq!((s.nr_runnable(0), s.nr_waiting), (2, 1));
        let mask: Vec<u32> = sparsemask::elements(&s.llc[0].overloaded[..], 8).collect();
        assert_eq!(mask, [0], "runnable again: STEAL's bit");
    }

    /// NO_DELAY_DEQUEUE: the same sleeper leaves at once, with its lag
    /// (V = 15 ms: -5 ms).
    #[test]
    fn no_delay_dequeue_dequeues_at_once() {
        let (mut s, a, b) = two_on_cpu0();
        s.cfg.flags.delay_dequeue = false;
        at(&mut s, a, 20, 22);
        at(&mut s, b, 10, 12);
        s.block_curr(0, State::Blocked);
        assert!(!s.tasks[a].delayed);
        assert_eq!(s.tasks[a].vlag, -5_000_000);
        assert_eq!((s.nr_running(0), s.nr_runnable(0)), (1, 1));
    }

    /// A delayed task that gets picked is dequeued for good, its lag
    /// clipped to 0 at most (DELAY_ZERO); an eligible sleeper is dequeued
    /// at once and keeps its positive lag.
    #[test]
    fn a_picked_delayed_task_leaves() {
        let (mut s, a, b) = two_on_cpu0();
        at(&mut s, a, 20, 22);
        at(&mut s, b, 10, 12);
        s.block_curr(0, State::Blocked);
        assert!(s.tasks[a].delayed);
        // b blocks behind the average (15 ms): eligible, dequeued, lag 5 ms.
        s.block_curr(0, State::Blocked);
        assert!(!s.tasks[b].delayed);
        assert_eq!(s.tasks[b].vlag, 5_000_000);
        // The pick found only a, delayed: dequeued, and CPU 0 is idle.
        assert!(!s.tasks[a].delayed);
        assert_eq!(s.tasks[a].vlag, 0);
        assert_eq!(s.nr_running(0), 0);
    }

    /// Wakeup preemption is `pick_eevdf()`: a wakee with positive lag is
    /// placed before the average, `curr` is then not eligible and loses;
    /// one with negative lag is placed after it and waits.
    #[test]
    fn wakeup_preemption_follows_the_pick() {
        let (mut s, a, b) = two_on_cpu0();
        at(&mut s, a, 10, 12);
        at(&mut s, b, 10, 13);
        s.block_curr(0, State::Blocked); // a is eligible (V = 10 ms): lag 0
        assert_eq!(s.rqs[0].curr, Some(b));
        s.tasks[a].vlag = -1_000_000;
        s.activate(a, 0);
        // Placed at V + 2 ms (the lag doubled by (W + w) / W).
        assert_eq!(s.tasks[a].vruntime, 12_000_000);
        assert_eq!(s.rqs[0].curr, Some(b), "negative lag: no preemption");
        s.put_prev(0);
        s.dequeue_queued(0, a);
        s.tasks[a].state = State::Blocked;
        s.pick_next(0);
        assert_eq!(s.rqs[0].curr, Some(b));
        s.tasks[a].vlag = 1_000_000;
        s.activate(a, 0);
        assert_eq!(s.tasks[a].vruntime, 8_000_000);
        assert_eq!(s.rqs[0].curr, Some(a), "positive lag: a preempts");
    }

    /// `CostModel::resched_busy_ns`: a wakee that should preempt a CPU
    /// other than the waker's sets its `need_resched` at once and
    /// preempts when the IPI arrives (or when that CPU's task enters the
    /// kernel first); on the waker's own CPU it waits for the syscall's
    /// return; with no latency given, another CPU is preempted at once.
    #[test]
    fn a_remote_wakeup_preemption_waits_for_its_ipi() {
        let preempt = |waker_cpu: u32, latency_ns: u64| {
            let (mut s, a, b) = two_on_cpu0();
            at(&mut s, a, 10, 12);
            at(&mut s, b, 10, 13);
            s.block_curr(0, State::Blocked);
            assert_eq!(s.rqs[0].curr, Some(b));
            s.tasks[a].vlag = 1_000_000;
            s.cost.resched_busy_ns = latency_ns;
            s.syscall_cpu = Some(waker_cpu);
            let pending = s.events.len();
            s.activate(a, 0);
            s.syscall_cpu = None;
            let pushed = s.events.len() - pending;
            (s, a, b, pushed)
        };
        // From CPU 1, 500 us: flagged, b runs on until the IPI.
        let (mut s, a, b, pushed) = preempt(1, 500_000);
        assert_eq!(s.rqs[0].curr, Some(b), "the IPI is on its way");
        assert!(s.rqs[0].need_resched);
        assert_eq!(pushed, 1, "one ReschedIpi");
        s.now_ns += 500_000;
        s.resched_ipi(0);
        assert_eq!(s.rqs[0].curr, Some(a), "the IPI preempts");
        // An IPI that finds the flag acted on does nothing.
        s.resched_ipi(0);
        assert_eq!(s.rqs[0].curr, Some(a));
        // From CPU 1 with no latency: at once.
        let (s, a, _, pushed) = preempt(1, 0);
        assert_eq!((s.rqs[0].curr, pushed), (Some(a), 0));
        // From CPU 0 itself: at the syscall's return, whatever the latency.
        let (s, _, b, pushed) = preempt(0, 500_000);
        assert_eq!((s.rqs[0].curr, pushed), (Some(b), 0));
        assert!(s.rqs[0].need_resched);
    }

    /// RUN_TO_PARITY: an eligible `curr` keeps the CPU against a wakee
    /// with an earlier deadline while its slice is protected; once it ran
    /// past its deadline, `update_curr()` renews it and asks for a
    /// resched, and EEVDF picks the wakee.
    #[test]
    fn run_to_parity_then_the_deadline() {
        let (mut s, a, b) = two_on_cpu0();
        at(&mut s, a, 10, 12);
        at(&mut s, b, 10, 15);
        s.block_curr(0, State::Blocked);
        assert_eq!(s.rqs[0].curr, Some(b));
        assert_eq!(s.rqs[0].protect_deadline, Some(15_000_000));
        s.tasks[a].vlag = 0;
        s.activate(a, 0);
        // a: vruntime 10 ms, deadline 12.8 ms, before b's 15 ms.
        assert_eq!(s.tasks[a].deadline, 12_800_000);
        assert_eq!(s.rqs[0].curr, Some(b), "protected slice");
        // b runs 5 ms: vruntime 15 ms reaches its deadline.
        s.now_ns += 5_000_000;
        s.update_curr(0);
        assert_eq!(s.tasks[b].deadline, 15_000_000 + s.base_slice_ns);
        assert!(s.rqs[0].need_resched);
        s.resched(0);
        assert_eq!(s.rqs[0].curr, Some(a));
        assert_eq!(s.rqs[0].protect_deadline, Some(12_800_000));
    }
}
