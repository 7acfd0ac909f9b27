// SPDX-License-Identifier: GPL-2.0

//! The discrete-event CFS model: runqueues, tasks, the tick, wakeups.
//!
//! Mirrors, much reduced, `kernel/sched/core.c` (`sched_tick()`,
//! `try_to_wake_up()` with `ttwu_runnable()`, `ttwu_do_activate()`'s
//! `avg_idle` update, SIS_AGE's `rq->wake_avg`) and
//! `kernel/sched/fair.c` (`update_curr()`, `enqueue_entity()`,
//! `dequeue_entity()` with DELAY_DEQUEUE, `requeue_delayed_entity()`,
//! `set_next_entity()`, `pick_task_fair()`, `check_preempt_wakeup_fair()`,
//! `select_task_rq_fair()`,
//! `wake_affine()`, `wake_wide()`, `select_idle_sibling()`). The balancer
//! is in `lb.rs`.
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

/// `NICE_0_LOAD` (scaled down, as `scale_load_down()` gives it).
pub const NICE_0_LOAD: u64 = 1024;
/// `SCHED_CAPACITY_SCALE`.
pub const CAPACITY: u64 = 1024;
/// `sysctl_sched_migration_cost`: 500 us.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// Bits per cache line of STEAL's sparsemask (Sistare: 8).
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
    /// `se.exec_start`: when it last ran, for `task_hot()`.
    pub exec_start_ns: u64,
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
    /// RFC 01's `avg_scan_cost`, ns.
    pub avg_scan_cost_ns: u64,
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
    BurstEnd { cpu: u32, gen: u64 },
    TimerWake { task: usize },
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
}

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
                    avg_scan_cost_ns: 0,
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
            cost: CostModel::default(),
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
            cfg,
        };
        sim.spawn_tasks();
        sim
    }

    fn new_task(&mut self, kind: Kind) -> usize {
        let t = Task {
            kind,
            state: State::Blocked,
            cpu: 0,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            delayed: false,
            weight: NICE_0_LOAD,
            work_ns: 0,
            burst_left_ns: 0,
            refill_ns: 0,
            exec_start_ns: 0,
            load: Pelt::new(0, NICE_0_LOAD),
            util: Pelt::new(0, CAPACITY / 2),
            migrations: 0,
            wakeups: 0,
            last_wakee: None,
            wakee_flips: 0,
            wakee_flip_decay_jiffies: 0,
            recent_used_cpu: 0,
            inbox: 0,
            phase: Phase::Work,
            next_rx: 0,
            waiting_on: None,
            waiters: Vec::new(),
        };
        let id = self.tasks.len();
        self.tasks.push(t);
        self.task_rng
            .push(Rng::stream(self.cfg.seed, Purpose::Task, id as u64));
        self.task_draws.push(Vec::new());
        id
    }

    /// `base_ns` jittered by `pct` percent, from task `t`'s own stream:
    /// the k-th draw of a task is the same whatever the flags did to the
    /// schedule before it.
    fn task_jitter_ns(&mut self, t: usize, base_ns: u64, pct: u64) -> u64 {
        let v = self.task_rng[t].jitter_ns(base_ns, pct);
        if self.cfg.record_draws {
            self.task_draws[t].push(v);
        }
        v
    }

    /// Creates the workload's tasks and places the runnable ones as
    /// `sched_balance_find_dst_cpu()` would at fork: on the least loaded
    /// CPU, idle cores first, lowest number on ties.
    fn spawn_tasks(&mut self) {
        let parts = self.cfg.workload.parts.clone();
        let mut runnable = Vec::new();
        for p in parts {
            match p {
                Part::Fairness { n } => {
                    for _ in 0..n {
                        let t = self.new_task(Kind::Always);
                        self.tasks[t].burst_left_ns = u64::MAX;
                        runnable.push(t);
                    }
                }
                Part::Periodic {
                    n,
                    run_us,
                    sleep_us,
                } => {
                    for _ in 0..n {
                        let t = self.new_task(Kind::Periodic {
                            run_ns: run_us * 1000,
                            sleep_ns: sleep_us * 1000,
                        });
                        let b = self.task_jitter_ns(t, run_us * 1000, 10);
                        self.tasks[t].burst_left_ns = b;
                        runnable.push(t);
                    }
                }
                Part::Buddy {
                    pairs,
                    work_us,
                    overlap_us,
                } => {
                    for _ in 0..pairs {
                        let a = self.tasks.len();
                        let b = a + 1;
                        let pair = self.buddy_split.len();
                        for (me, other) in [(a, b), (b, a)] {
                            let t = self.new_task(Kind::Buddy {
                                pair,
                                partner: other,
                                work_ns: work_us * 1000,
                                overlap_ns: overlap_us * 1000,
                            });
                            debug_assert_eq!(t, me);
                        }
                        self.tasks[a].burst_left_ns = work_us * 1000;
                        runnable.push(a);
                        self.buddy_split.push(false);
                    }
                }
                Part::Hackbench {
                    groups,
                    fds,
                    send_us,
                    recv_us,
                    queue,
                } => {
                    for _ in 0..groups {
                        let first_rx = self.tasks.len();
                        for _ in 0..fds {
                            self.new_task(Kind::Receiver {
                                recv_ns: recv_us * 1000,
                            });
                        }
                        for i in 0..fds {
                            let t = self.new_task(Kind::Sender {
                                first_rx,
                                nr_rx: fds as usize,
                                send_ns: send_us * 1000,
                                queue,
                            });
                            self.tasks[t].next_rx = i as usize % fds as usize;
                            self.tasks[t].burst_left_ns =
                                self.task_jitter_ns(t, send_us * 1000, 20);
                            runnable.push(t);
                        }
                    }
                }
            }
        }
        for t in runnable {
            let cpu = self.fork_cpu();
            self.tasks[t].cpu = cpu;
            self.tasks[t].recent_used_cpu = cpu;
            // wake_up_new_task(): ENQUEUE_INITIAL, then WF_FORK preemption.
            self.update_curr(cpu);
            self.place_entity(cpu, t, true);
            self.enqueue(cpu, t);
            if self.rqs[cpu as usize].curr.is_none() {
                self.pick_next(cpu);
            } else {
                self.wakeup_preempt(cpu, t);
            }
        }
        // The machine has been running this mix for a while: signals
        // start at their inputs instead of ramping up from 0.
        for c in 0..self.cfg.topology.nr_cpus {
            let w = self.runnable_weight(c);
            let running = if self.rqs[c as usize].curr.is_some() {
                CAPACITY
            } else {
                0
            };
            self.rqs[c as usize].load = Pelt::new(0, w);
            self.rqs[c as usize].util = Pelt::new(0, running);
        }
        // Blocked tasks start spread over the CPUs, so the first wakeup
        // has a sensible `prev`.
        for t in 0..self.tasks.len() {
            if self.tasks[t].state == State::Blocked {
                self.tasks[t].cpu = (t as u32) % self.cfg.topology.nr_cpus;
                self.tasks[t].recent_used_cpu = self.tasks[t].cpu;
            }
        }
    }

    fn fork_cpu(&self) -> u32 {
        let topo = &self.cfg.topology;
        let mut best = 0u32;
        let mut best_key = (u32::MAX, u32::MAX);
        for c in 0..topo.nr_cpus {
            let core_busy = topo.smt_mask[c as usize]
                .iter()
                .map(|s| self.nr_running(s))
                .sum::<u32>();
            let key = (self.nr_running(c), core_busy);
            if key < best_key {
                best_key = key;
                best = c;
            }
        }
        best
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

    /// `idle_cpu()`.
    pub fn idle(&self, cpu: u32) -> bool {
        self.nr_running(cpu) == 0
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

    /// (Re)arms the burst-end event of the running task.
    pub(crate) fn arm_burst(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        let Some(t) = rq.curr else { return };
        let task = &self.tasks[t];
        if task.burst_left_ns == u64::MAX {
            return;
        }
        let at = self
            .now_ns
            .saturating_add(rq.overhead_ns)
            .saturating_add(task.refill_ns)
            .saturating_add(task.burst_left_ns);
        self.push(at, Ev::BurstEnd { cpu, gen });
    }

    /// Called whenever `nr_running` or `nr_runnable` of `cpu` may have
    /// changed from `old`.
    pub(crate) fn nr_changed(&mut self, cpu: u32, old: Nr) {
        let new = self.nr(cpu);
        if new == old {
            return;
        }
        if (old.running == 0) != (new.running == 0) {
            if new.running == 0 {
                self.nr_idle += 1;
            } else {
                self.nr_idle -= 1;
            }
        }
        if (old.running >= 2) != (new.running >= 2) {
            if new.running >= 2 {
                self.nr_overloaded += 1;
            } else {
                self.nr_overloaded -= 1;
            }
        }
        if (old.runnable >= 2) != (new.runnable >= 2) {
            if new.runnable >= 2 {
                self.nr_waiting += 1;
            } else {
                self.nr_waiting -= 1;
            }
        }
        // STEAL's mask: only 1 <-> 2 crossings of h_nr_runnable write it
        // (`sched_lb_overload_update()`: a delayed task is queued but not runnable).
        if let Some(set) = sched_lb_policy::steal::overload_transition(old.runnable, new.runnable) {
            let llc = &self.llc[self.cfg.topology.llc_of[cpu as usize] as usize];
            let elem = cpu - llc.overloaded_base;
            let (w, b) = sparsemask::locate(elem, SPARSE_BITS_PER_LINE);
            let word = &llc.overloaded[w as usize];
            if set {
                word.set(word.get() | 1u64 << b);
            } else {
                word.set(word.get() & !(1u64 << b));
            }
        }
        let now = self.now_ns;
        self.conserve.update(
            now,
            cpu,
            old.running,
            new.running,
            self.nr_idle,
            self.nr_waiting,
        );
    }

    /// Puts `t` on `cpu`'s queue, where `place_entity()` placed it; a
    /// delayed task (moved by the balancer) stays delayed.
    pub(crate) fn enqueue(&mut self, cpu: u32, t: usize) {
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        if self.tasks[t].delayed {
            let rq = &mut self.rqs[cpu as usize];
            rq.nr_delayed = rq.nr_delayed.saturating_add(1);
        } else {
            self.tasks[t].state = State::Runnable;
        }
        self.tasks[t].cpu = cpu;
        self.rqs[cpu as usize].queue.push(t);
        self.nr_changed(cpu, old);
    }

    /// Takes a queued `t` off `cpu`.
    pub(crate) fn dequeue_queued(&mut self, cpu: u32, t: usize) {
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        let rq = &mut self.rqs[cpu as usize];
        if let Some(i) = rq.queue.iter().position(|&x| x == t) {
            rq.queue.remove(i);
            if self.tasks[t].delayed {
                rq.nr_delayed = rq.nr_delayed.saturating_sub(1);
            }
        }
        self.nr_changed(cpu, old);
    }

    /// Task `t` as EEVDF sees it.
    fn se(&self, t: usize) -> Se {
        let task = &self.tasks[t];
        Se {
            vruntime: task.vruntime,
            deadline: task.deadline,
            weight: task.weight,
        }
    }

    /// The entities of `cpu`'s runqueue: the queued ones in tree order, and
    /// `curr` (the model's `curr` is always on the runqueue).
    fn entities(&self, cpu: u32) -> (Vec<Se>, Option<Se>) {
        let rq = &self.rqs[cpu as usize];
        let queued = rq.queue.iter().map(|&t| self.se(t)).collect();
        (queued, rq.curr.map(|c| self.se(c)))
    }

    /// `avg_vruntime()`, which moves `zero_vruntime` to the average.
    fn avg_vruntime(&mut self, cpu: u32) -> u64 {
        let (queued, curr) = self.entities(cpu);
        let rq = &mut self.rqs[cpu as usize];
        rq.zero_vruntime = eevdf::avg_vruntime(&queued, curr, rq.zero_vruntime);
        rq.zero_vruntime
    }

    /// `entity_eligible()` of task `t` on `cpu`'s runqueue.
    pub(crate) fn eligible(&self, cpu: u32, t: usize) -> bool {
        let (queued, curr) = self.entities(cpu);
        eevdf::vruntime_eligible(&queued, curr, self.tasks[t].vruntime)
    }

    /// `update_entity_lag()`: `t`'s lag on `cpu`'s runqueue, saved in
    /// `vlag` and returned.
    fn update_entity_lag(&mut self, cpu: u32, t: usize) -> i64 {
        let avg = self.avg_vruntime(cpu);
        let lag = eevdf::entity_lag(avg, self.se(t), self.base_slice_ns, self.tick_ns);
        self.tasks[t].vlag = lag;
        lag
    }

    /// `place_entity()`: `t`'s `vruntime` and `deadline` for joining
    /// `cpu`'s runqueue, from the lag it kept (`initial`: a new task).
    fn place_entity(&mut self, cpu: u32, t: usize, initial: bool) {
        let avg = self.avg_vruntime(cpu);
        let (queued, curr) = self.entities(cpu);
        let (vruntime, deadline) = eevdf::place_entity(
            &queued,
            curr,
            avg,
            self.tasks[t].vlag,
            self.tasks[t].weight,
            self.base_slice_ns,
            initial,
        );
        self.tasks[t].vruntime = vruntime;
        self.tasks[t].deadline = deadline;
    }

    /// RUN_TO_PARITY's `protect_slice()` for `cpu`'s `curr`.
    fn protected(&self, cpu: u32) -> bool {
        let rq = &self.rqs[cpu as usize];
        rq.curr
            .is_some_and(|c| rq.protect_deadline == Some(self.tasks[c].deadline))
    }

    /// `update_curr()`: runtime up to now, then `update_deadline()`; a
    /// renewed deadline, or PREEMPT_SHORT's unprotected and no longer
    /// eligible `curr`, sets `need_resched` when something else is queued.
    pub(crate) fn update_curr(&mut self, cpu: u32) {
        self.account(cpu);
        let Some(c) = self.rqs[cpu as usize].curr else {
            return;
        };
        let mut resched = false;
        if let Some(d) = eevdf::update_deadline(self.se(c), self.base_slice_ns) {
            self.tasks[c].deadline = d;
            self.avg_vruntime(cpu);
            resched = true;
        }
        if self.rqs[cpu as usize].queue.is_empty() {
            return;
        }
        // did_preempt_short(): only an unprotected slice is cut short.
        if resched || (!self.protected(cpu) && !self.eligible(cpu, c)) {
            self.rqs[cpu as usize].need_resched = true;
        }
    }

    /// `__schedule()` on `cpu`: `pick_task_fair()` (whose `pick_eevdf()`
    /// sees `curr` while it is still on the runqueue; a delayed task it
    /// picks is dequeued for good and it picks again), then
    /// `put_prev_entity()` and `set_next_entity()` if the task changes,
    /// which is when RUN_TO_PARITY protects the new `curr`'s slice. A
    /// `curr` picked again keeps its protection state. False if nothing is
    /// left to run.
    fn schedule(&mut self, cpu: u32) -> bool {
        self.update_curr(cpu);
        self.rqs[cpu as usize].need_resched = false;
        loop {
            let (queued, curr) = self.entities(cpu);
            match eevdf::pick_eevdf(&queued, curr, self.protected(cpu)) {
                None => return false,
                Some(Pick::Curr) => return true,
                Some(Pick::Queued(i)) => {
                    let t = self.rqs[cpu as usize].queue[i];
                    if self.tasks[t].delayed {
                        self.finish_delayed_dequeue(cpu, t);
                        continue;
                    }
                    if self.rqs[cpu as usize].curr.is_some() {
                        self.put_prev(cpu);
                    }
                    self.set_next(cpu, i);
                    return true;
                }
            }
        }
    }

    /// `dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED)`: a delayed task
    /// was picked, so it is eligible; it leaves the runqueue, its lag kept
    /// but clipped to 0 (DELAY_ZERO).
    fn finish_delayed_dequeue(&mut self, cpu: u32, t: usize) {
        let lag = self.update_entity_lag(cpu, t);
        self.tasks[t].vlag = lag.min(0);
        self.dequeue_queued(cpu, t);
        self.tasks[t].delayed = false;
        self.trace(&[5, u64::from(cpu), t as u64]);
    }

    /// `pick_next_task_fair()` on a CPU with no `curr`. False if nothing
    /// is left to run (every queued task was a delayed one).
    pub(crate) fn pick_next(&mut self, cpu: u32) -> bool {
        debug_assert!(self.rqs[cpu as usize].curr.is_none());
        self.schedule(cpu)
    }

    /// `set_next_entity()`: queued task `i` becomes `curr`, its slice
    /// protected until its deadline moves.
    fn set_next(&mut self, cpu: u32, i: usize) {
        self.account(cpu);
        self.pelt_sync_rq(cpu);
        let rq = &mut self.rqs[cpu as usize];
        let t = rq.queue.remove(i);
        rq.curr = Some(t);
        rq.protect_deadline = Some(self.tasks[t].deadline);
        rq.last_acct_ns = self.now_ns;
        let switched = rq.last_task != Some(t);
        rq.last_task = Some(t);
        if rq.idle_stamp_ns != 0 {
            rq.idle_stamp_ns = 0;
        }
        self.pelt_sync_task(t);
        self.tasks[t].state = State::Running;
        self.tasks[t].exec_start_ns = self.now_ns;
        if switched {
            self.stats.context_switches += 1;
            let c = self.cost.ctx_switch_ns;
            let rq = &mut self.rqs[cpu as usize];
            rq.overhead_ns = rq.overhead_ns.saturating_add(c);
        }
        self.trace(&[1, u64::from(cpu), t as u64]);
        self.arm_burst(cpu);
    }

    /// The running task gives the CPU back and goes to the queue
    /// (`put_prev_entity()`).
    pub(crate) fn put_prev(&mut self, cpu: u32) {
        self.account(cpu);
        self.pelt_sync_rq(cpu);
        let rq = &mut self.rqs[cpu as usize];
        rq.protect_deadline = None;
        if let Some(t) = rq.curr.take() {
            rq.queue.push(t);
            self.pelt_sync_task(t);
            self.tasks[t].state = State::Runnable;
        }
        self.rqs[cpu as usize].gen += 1;
    }

    /// `resched_curr()` acted on: pick again, `curr` included.
    pub(crate) fn resched(&mut self, cpu: u32) {
        self.schedule(cpu);
    }

    /// `check_preempt_wakeup_fair()` after `t` was enqueued on `cpu`,
    /// which runs something: a pending resched stands; otherwise `t`
    /// preempts when `pick_eevdf()` would now pick it (no wakeup
    /// granularity in 6.12).
    pub(crate) fn wakeup_preempt(&mut self, cpu: u32, t: usize) {
        if self.rqs[cpu as usize].curr.is_none() {
            return;
        }
        if !self.rqs[cpu as usize].need_resched {
            self.update_curr(cpu);
        }
        let preempt = self.rqs[cpu as usize].need_resched || {
            let (queued, curr) = self.entities(cpu);
            match eevdf::pick_eevdf(&queued, curr, self.protected(cpu)) {
                Some(Pick::Queued(i)) => self.rqs[cpu as usize].queue[i] == t,
                _ => false,
            }
        };
        if preempt {
            if self.syscall_cpu == Some(cpu) {
                self.rqs[cpu as usize].need_resched = true;
            } else {
                self.resched(cpu);
            }
        }
    }

    /// Migrates a queued task (`detach_task()` + `attach_task()`): its lag
    /// and its deadline relative to its vruntime (PLACE_REL_DEADLINE) go
    /// with it, and the destination checks for preemption. A delayed task
    /// moves delayed, as 6.12.117's `can_migrate_task()` lets it.
    pub(crate) fn migrate(&mut self, t: usize, src: u32, dst: u32) {
        self.update_curr(src);
        self.update_entity_lag(src, t);
        let rel_deadline = self.tasks[t].deadline.wrapping_sub(self.tasks[t].vruntime);
        self.dequeue_queued(src, t);
        self.move_signals(t, src, dst);
        let task = &mut self.tasks[t];
        task.migrations += 1;
        task.refill_ns =
            task.refill_ns
                .saturating_add(self.cost.refill_ns(&self.cfg.topology, src, dst));
        self.stats.migrations += 1;
        self.trace(&[2, t as u64, u64::from(src), u64::from(dst)]);
        self.update_curr(dst);
        self.place_entity(dst, t, false);
        let task = &mut self.tasks[t];
        task.deadline = task.vruntime.wrapping_add(rel_deadline);
        self.enqueue(dst, t);
        self.track_buddy(t);
        if self.rqs[dst as usize].curr.is_none() {
            self.pick_next(dst);
        } else {
            self.wakeup_preempt(dst, t);
        }
    }

    /// Moves a task's load and utilisation from one runqueue to another.
    fn move_signals(&mut self, t: usize, src: u32, dst: u32) {
        if src == dst {
            return;
        }
        self.pelt_sync_task(t);
        self.pelt_sync_rq(src);
        self.pelt_sync_rq(dst);
        let (l, u) = (self.tasks[t].load.value(), self.tasks[t].util.value());
        self.rqs[src as usize].load.sub(l);
        self.rqs[src as usize].util.sub(u);
        self.rqs[dst as usize].load.add(l);
        self.rqs[dst as usize].util.add(u);
    }

    /// Buddy bookkeeping: a pair split over two LLCs, or joined again.
    fn track_buddy(&mut self, t: usize) {
        if let Kind::Buddy { pair, partner, .. } = self.tasks[t].kind {
            let a = self.tasks[t].cpu;
            let b = self.tasks[partner].cpu;
            let split = !self.cfg.topology.share_cache(a, b);
            if let Some(slot) = self.buddy_split.get_mut(pair) {
                if split && !*slot {
                    self.stats.buddy_splits += 1;
                }
                *slot = split;
            }
        }
    }

    /// The running task stops running (blocks or sleeps):
    /// `dequeue_entity(DEQUEUE_SLEEP)`. DELAY_DEQUEUE: if it is not
    /// eligible it stays queued, delayed, and competes until it is picked
    /// or woken; otherwise it leaves with its lag.
    fn block_curr(&mut self, cpu: u32, state: State) {
        self.update_curr(cpu);
        self.pelt_sync_rq(cpu);
        let old = self.nr(cpu);
        let Some(t) = self.rqs[cpu as usize].curr else {
            return;
        };
        let delay = self.cfg.flags.delay_dequeue && !self.eligible(cpu, t);
        if !delay {
            self.update_entity_lag(cpu, t);
        }
        let rq = &mut self.rqs[cpu as usize];
        rq.curr = None;
        rq.protect_deadline = None;
        rq.gen += 1;
        self.pelt_sync_task(t);
        self.tasks[t].state = state;
        if delay {
            self.tasks[t].delayed = true;
            let rq = &mut self.rqs[cpu as usize];
            rq.queue.push(t);
            rq.nr_delayed = rq.nr_delayed.saturating_add(1);
        }
        self.trace(&[3, u64::from(cpu), t as u64]);
        self.nr_changed(cpu, old);
        if !self.pick_next(cpu) {
            self.go_idle(cpu);
        }
    }

    /// The CPU has nothing to run: STEAL, then newidle balance. A pull
    /// that brought only a delayed task leaves the CPU idle once the pick
    /// dequeues it, and `pick_next_task_fair()` balances again.
    fn go_idle(&mut self, cpu: u32) {
        let now = self.now_ns;
        self.rqs[cpu as usize].idle_stamp_ns = now.max(1);
        self.update_idle_core(cpu);
        for _ in 0..GO_IDLE_RETRIES {
            if self.try_steal(cpu) && !self.idle(cpu) {
                return;
            }
            if !self.newidle_balance(cpu) || !self.idle(cpu) {
                break;
            }
        }
        // sched_goidle counts only a CPU that ends up running its idle task.
        self.ss_goidle(cpu);
    }

    /// `__update_idle_core()`: a CPU going idle with all its SMT siblings
    /// idle sets `has_idle_cores`.
    fn update_idle_core(&mut self, cpu: u32) {
        let topo = &self.cfg.topology;
        if topo.smt_weight < 2 {
            return;
        }
        let all_idle = topo.smt_mask[cpu as usize].iter().all(|s| self.idle(s));
        if all_idle {
            let l = topo.llc_of[cpu as usize] as usize;
            self.llc[l].has_idle_cores = true;
        }
    }

    /// `ttwu_do_activate()` + `wakeup_preempt()`.
    fn activate(&mut self, t: usize, cpu: u32) {
        let now = self.now_ns;
        let rq = &mut self.rqs[cpu as usize];
        if rq.idle_stamp_ns != 0 {
            // update_rq_avg_idle(): avg += (sample - avg) / 8, capped.
            let delta = now.saturating_sub(rq.idle_stamp_ns);
            let max = rq.max_idle_balance_cost_ns.saturating_mul(2);
            let diff = delta as i128 - rq.avg_idle_ns as i128;
            let avg = (rq.avg_idle_ns as i128 + diff / 8).max(0) as u64;
            rq.avg_idle_ns = avg.min(max);
            rq.idle_stamp_ns = 0;
            // SIS_AGE's estimate restarts at avg_idle / 2.
            rq.wake_stamp = now / self.tick_ns;
            rq.wake_avg_ns = rq.avg_idle_ns / 2;
        }
        // enqueue_entity(): update_curr(), then place_entity() with the
        // lag kept since the task slept.
        self.update_curr(cpu);
        self.place_entity(cpu, t, false);
        self.tasks[t].wakeups += 1;
        self.enqueue(cpu, t);
        self.trace(&[4, t as u64, u64::from(cpu)]);
        self.track_buddy(t);
        if self.rqs[cpu as usize].curr.is_none() {
            self.pick_next(cpu);
        } else {
            self.wakeup_preempt(cpu, t);
        }
    }

    /// `ttwu_runnable()` for a delayed task: it is still queued where it
    /// blocked, so it wakes there, with no `select_task_rq()`:
    /// `requeue_delayed_entity()` (DELAY_ZERO: a positive lag is dropped
    /// and the task placed again at the average) and `wakeup_preempt()`.
    fn requeue_delayed(&mut self, t: usize) {
        let cpu = self.tasks[t].cpu;
        let old = self.nr(cpu);
        self.pelt_sync_rq(cpu);
        self.pelt_sync_task(t);
        if self.update_entity_lag(cpu, t) > 0 {
            let rq = &mut self.rqs[cpu as usize];
            if let Some(i) = rq.queue.iter().position(|&x| x == t) {
                rq.queue.remove(i);
            }
            self.tasks[t].vlag = 0;
            self.place_entity(cpu, t, false);
            self.rqs[cpu as usize].queue.push(t);
        }
        self.tasks[t].delayed = false;
        self.tasks[t].state = State::Runnable;
        let rq = &mut self.rqs[cpu as usize];
        rq.nr_delayed = rq.nr_delayed.saturating_sub(1);
        self.nr_changed(cpu, old);
        self.tasks[t].wakeups += 1;
        self.trace(&[4, t as u64, u64::from(cpu)]);
        self.wakeup_preempt(cpu, t);
    }

    /// `try_to_wake_up()`: picks a CPU and activates `t` there.
    /// `waker` is the waking CPU and task (None for a timer, which fires
    /// on the task's previous CPU). A delayed task is still queued and
    /// wakes where it is.
    pub(crate) fn wake(&mut self, t: usize, waker: Option<(u32, usize)>) {
        if self.tasks[t].delayed {
            // ttwu_runnable() succeeds and ttwu_stat() counts it, at the
            // CPU where the task still is.
            let cpu = self.tasks[t].cpu;
            self.ss_ttwu(waker.map_or(cpu, |w| w.0), cpu);
            self.requeue_delayed(t);
            return;
        }
        let prev = self.tasks[t].cpu;
        let cpu = match waker {
            Some((wcpu, wtask)) => self.select_task_rq(t, prev, wcpu, Some(wtask), true),
            None => self.select_task_rq(t, prev, prev, None, false),
        };
        if cpu != prev {
            self.move_signals(t, prev, cpu);
            let task = &mut self.tasks[t];
            task.migrations += 1;
            task.refill_ns =
                task.refill_ns
                    .saturating_add(self.cost.refill_ns(&self.cfg.topology, prev, cpu));
            self.stats.wakeup_migrations += 1;
        }
        self.tasks[t].cpu = cpu;
        self.ss_ttwu(waker.map_or(prev, |w| w.0), cpu);
        self.activate(t, cpu);
    }

    /// `record_wakee()`.
    fn record_wakee(&mut self, waker: usize, wakee: usize) {
        let j = self.jiffies();
        let hz = self.hz();
        let w = &mut self.tasks[waker];
        if j > w.wakee_flip_decay_jiffies.saturating_add(hz) {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_jiffies = j;
        }
        if w.last_wakee != Some(wakee) {
            w.last_wakee = Some(wakee);
            w.wakee_flips = w.wakee_flips.saturating_add(1);
        }
    }

    /// `wake_wide()`.
    fn wake_wide(&self, waker: usize, wakee: usize, cpu: u32) -> bool {
        let mut master = self.tasks[waker].wakee_flips;
        let mut slave = self.tasks[wakee].wakee_flips;
        let factor = self.cfg.topology.llc_size[cpu as usize];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.saturating_mul(factor))
    }

    /// `select_task_rq_fair()` for a wakeup.
    fn select_task_rq(
        &mut self,
        t: usize,
        prev: u32,
        this_cpu: u32,
        waker: Option<usize>,
        sync: bool,
    ) -> u32 {
        let mut new_cpu = prev;
        if let Some(w) = waker {
            self.record_wakee(w, t);
            let want_affine = !self.wake_wide(w, t, this_cpu);
            if want_affine && this_cpu != prev {
                // The lowest domain of this_cpu spanning prev (all levels
                // have SD_WAKE_AFFINE here).
                let level = self.cfg.topology.domains[this_cpu as usize]
                    .iter()
                    .position(|d| d.span.test(prev));
                if let Some(k) = level {
                    new_cpu = self.wake_affine(k, t, this_cpu, prev, sync, w);
                    self.ss_wake_affine(this_cpu, k, new_cpu);
                }
            }
        }
        let target = self.select_idle_sibling(t, prev, new_cpu, this_cpu);
        if self.idle(target) {
            self.stats.sis_placed_idle += 1;
        }
        self.tasks[t].recent_used_cpu = prev;
        target
    }

    /// `wake_affine()`: WA_IDLE, then WA_WEIGHT with WA_BIAS.
    fn wake_affine(
        &mut self,
        level: usize,
        t: usize,
        this_cpu: u32,
        prev: u32,
        sync: bool,
        waker: usize,
    ) -> u32 {
        // wake_affine_idle()
        let topo = &self.cfg.topology;
        if self.idle(this_cpu) && topo.share_cache(this_cpu, prev) {
            return if self.idle(prev) { prev } else { this_cpu };
        }
        // 6.12.117: `rq->nr_running - cfs_h_nr_delayed(rq) == 1`.
        if sync && self.nr_runnable(this_cpu) == 1 {
            return this_cpu;
        }
        if self.idle(prev) {
            return prev;
        }
        // wake_affine_weight()
        let pct = i128::from(self.cfg.topology.domains[this_cpu as usize][level].imbalance_pct);
        let mut this_eff = i128::from(self.cpu_load(this_cpu));
        if sync {
            let cur = i128::from(self.task_load(waker));
            if cur > this_eff {
                return this_cpu;
            }
            this_eff -= cur;
        }
        let tl = i128::from(self.task_load(t));
        this_eff += tl;
        this_eff *= 100 * i128::from(CAPACITY);
        let mut prev_eff = i128::from(self.cpu_load(prev)) - tl;
        prev_eff *= (100 + (pct - 100) / 2) * i128::from(CAPACITY);
        if sync {
            prev_eff += 1;
        }
        if this_eff < prev_eff {
            self.stats.wake_affine_pulls += 1;
            this_cpu
        } else {
            prev
        }
    }

    /// `select_idle_sibling()` of 6.12, with the series' policy scan in
    /// place of `select_idle_cpu()` when SIS_PROP or SIS_FOLD asks for it
    /// (the `sis_select` hook, `rust/hooks.rs`).
    fn select_idle_sibling(&mut self, t: usize, prev: u32, target: u32, this_cpu: u32) -> u32 {
        self.stats.sis_calls += 1;
        if self.idle(target) {
            self.stats.sis_target_idle += 1;
            return target;
        }
        let topo = &self.cfg.topology;
        if prev != target && topo.share_cache(prev, target) && self.idle(prev) {
            self.stats.sis_target_idle += 1;
            return prev;
        }
        let recent = self.tasks[t].recent_used_cpu;
        if recent != prev
            && recent != target
            && topo.share_cache(recent, target)
            && self.idle(recent)
        {
            self.stats.sis_target_idle += 1;
            return recent;
        }
        let llc = topo.llc_of[target as usize] as usize;
        let smt = topo.smt_weight > 1;
        let has_idle_core = smt && self.llc[llc].has_idle_cores;
        if smt && !has_idle_core && topo.share_cache(prev, target) {
            // select_idle_smt() on prev.
            self.stats.sis_scans += 1;
            let sibs: Vec<u32> = topo.smt_mask[prev as usize].iter().collect();
            let mut visited = 0u64;
            for s in sibs {
                if s == prev {
                    continue;
                }
                visited += 1;
                if self.idle(s) {
                    self.charge_scan(this_cpu, visited);
                    self.stats.sis_found += 1;
                    return s;
                }
            }
            self.charge_scan(this_cpu, visited);
        }
        let f = self.cfg.flags;
        let flags = sched_lb_policy::sis_chain::SisFlags {
            prop: f.sis_prop,
            fold: f.sis_fold,
            ..Default::default()
        };
        let found = if sched_lb_policy::sis_chain::policy_scans(flags, has_idle_core) {
            self.sis_policy_scan(t, target, this_cpu, has_idle_core)
        } else {
            self.sis_stock_scan(target, this_cpu, has_idle_core)
        };
        match found {
            Some(c) => {
                self.stats.sis_found += 1;
                c
            }
            None => target,
        }
    }

    fn charge_scan(&mut self, cpu: u32, visited: u64) -> u64 {
        let ns = self.cost.sis_scan_ns(visited);
        self.stats.sis_scan_cpus += visited;
        self.stats.sis_scan_ns += ns;
        self.charge(cpu, ns);
        ns
    }

    /// Stock 6.12 `select_idle_cpu()`: SIS_UTIL's budget on the CPU scan,
    /// the unbudgeted core scan while `has_idle_cores` is set.
    fn sis_stock_scan(&mut self, target: u32, this_cpu: u32, has_idle_core: bool) -> Option<u32> {
        let topo = &self.cfg.topology;
        let llc = topo.llc_of[target as usize] as usize;
        let util = self
            .cfg
            .flags
            .sis_util
            .then(|| self.llc[llc].nr_idle_scan + 1);
        if !has_idle_core {
            let budget = sis_budget::combine(None, util, topo.smt_weight)?;
            self.stats.sis_scans += 1;
            let view = View { sim: self, llc };
            let span = &topo.llc_span[llc];
            let scan = sis_select::scan_cpus(
                &view,
                span.words(),
                topo.nr_cpus,
                target.wrapping_add(1),
                budget.cpus,
            );
            self.charge_scan(this_cpu, u64::from(scan.loops));
            return scan.cpu;
        }
        // select_idle_core() over every core, unbudgeted (6.12's fold).
        self.stats.sis_scans += 1;
        let span: Vec<u32> = {
            let s = &topo.llc_span[llc];
            let cpus: Vec<u32> = s.iter().collect();
            let start = cpus.iter().position(|&c| c > target).unwrap_or(0);
            cpus[start..]
                .iter()
                .chain(cpus[..start].iter())
                .copied()
                .collect()
        };
        let mut covered = crate::cpumask::CpuMask::new(topo.nr_cpus);
        let mut visited = 0u64;
        let mut idle_cpu = None;
        let mut result = None;
        for c in span {
            if covered.test(c) {
                continue;
            }
            let mut all_idle = true;
            for s in topo.smt_mask[c as usize].iter() {
                covered.set(s);
                visited += 1;
                if self.idle(s) {
                    idle_cpu = idle_cpu.or(Some(s));
                } else {
                    all_idle = false;
                }
            }
            if all_idle {
                result = Some(c);
                break;
            }
        }
        if result.is_none() {
            self.llc[llc].has_idle_cores = false;
        }
        self.charge_scan(this_cpu, visited);
        result.or(idle_cpu)
    }

    /// The series' scan: the policy crate's chain, the one the kernel's
    /// `sis_select`/`sis_account` hooks run; the simulator only supplies
    /// the LLC view, charges the scan's time and stores what it returns.
    fn sis_policy_scan(
        &mut self,
        _t: usize,
        target: u32,
        this_cpu: u32,
        has_idle_core: bool,
    ) -> Option<u32> {
        let f = self.cfg.flags;
        let topo = &self.cfg.topology;
        let llc = topo.llc_of[target as usize] as usize;
        let rq = &self.rqs[this_cpu as usize];
        let input = SisInput {
            flags: SisFlags {
                prop: f.sis_prop,
                util: f.sis_util,
                age: f.sis_age,
                once: f.sis_once,
                fold: f.sis_fold,
            },
            wake: WakeAvg {
                avg_ns: rq.wake_avg_ns,
                stamp_jiffies: rq.wake_stamp,
            },
            now_jiffies: self.jiffies(),
            avg_idle_ns: rq.avg_idle_ns,
            avg_scan_cost_ns: self.llc[llc].avg_scan_cost_ns,
            span_weight: topo.llc_span[llc].weight(),
            util_nr: self.llc[llc].nr_idle_scan + 1,
            smt_weight: topo.smt_weight,
            has_idle_core,
            target,
            nbits: topo.nr_cpus,
        };
        let answer = sis_chain::select(&View { sim: self, llc }, &input);
        let m = &mut self.schedstat.module;
        m.sis_select_calls += 1;
        m.sis_select_found += u64::from(answer.scan.cpu.is_some());
        m.sis_account_calls += 1;
        if answer.scan.loops > 0 {
            m.sis_account_scans += 1;
            m.sis_account_loops += u64::from(answer.scan.loops);
        }
        let rq = &mut self.rqs[this_cpu as usize];
        (rq.wake_avg_ns, rq.wake_stamp) = (answer.wake.avg_ns, answer.wake.stamp_jiffies);
        let scan = answer.scan;
        if answer.clears_idle_cores() {
            self.llc[llc].has_idle_cores = false;
        }
        let visited = match answer.kind {
            ScanKind::Skipped => return None,
            ScanKind::Cpus => u64::from(scan.loops),
            ScanKind::Cores => u64::from(scan.loops) * u64::from(self.cfg.topology.smt_weight),
        };
        self.stats.sis_scans += 1;
        let ns = self.charge_scan(this_cpu, visited);
        self.schedstat.module.sis_account_scan_ns += ns;
        let rq = &mut self.rqs[this_cpu as usize];
        let done = sis_chain::account(
            self.llc[llc].avg_scan_cost_ns,
            rq.wake_avg_ns,
            ns,
            scan.loops,
            f.sis_once,
        );
        self.llc[llc].avg_scan_cost_ns = done.avg_scan_cost_ns;
        rq.wake_avg_ns = done.wake_avg_ns;
        scan.cpu
    }

    /// A burst finished: the running task enters the kernel to send,
    /// receive or sleep. A wakeup it causes on its own CPU that should
    /// preempt it only sets `need_resched`, acted on when it returns to
    /// user space, if it has not blocked by then.
    fn burst_end(&mut self, cpu: u32) {
        let outer = self.syscall_cpu.replace(cpu);
        self.burst_end_syscall(cpu);
        self.syscall_cpu = outer;
        if self.rqs[cpu as usize].need_resched && self.rqs[cpu as usize].curr.is_some() {
            self.resched(cpu);
        }
    }

    /// What the task does in the kernel at the end of its burst.
    fn burst_end_syscall(&mut self, cpu: u32) {
        self.account(cpu);
        let Some(t) = self.rqs[cpu as usize].curr else {
            return;
        };
        if self.tasks[t].burst_left_ns > 0 {
            self.arm_burst(cpu);
            return;
        }
        match self.tasks[t].kind {
            Kind::Always => {
                self.tasks[t].burst_left_ns = u64::MAX;
            }
            Kind::Periodic { run_ns, sleep_ns } => {
                let s = self.task_jitter_ns(t, sleep_ns, 10);
                self.tasks[t].burst_left_ns = self.task_jitter_ns(t, run_ns, 10);
                self.push(self.now_ns + s, Ev::TimerWake { task: t });
                self.block_curr(cpu, State::Sleeping);
            }
            Kind::Buddy {
                partner,
                work_ns,
                overlap_ns,
                ..
            } => match self.tasks[t].phase {
                Phase::Work => {
                    self.stats.messages += 1;
                    self.deliver(t, partner, cpu);
                    self.tasks[t].phase = Phase::Overlap;
                    self.tasks[t].burst_left_ns = overlap_ns.max(1);
                    self.arm_burst(cpu);
                }
                Phase::Overlap => {
                    self.tasks[t].phase = Phase::Work;
                    self.tasks[t].burst_left_ns = work_ns;
                    if self.tasks[t].inbox > 0 {
                        self.tasks[t].inbox -= 1;
                        self.arm_burst(cpu);
                    } else {
                        self.block_curr(cpu, State::Blocked);
                    }
                }
            },
            Kind::Sender {
                first_rx,
                nr_rx,
                send_ns,
                queue,
            } => {
                let rx = first_rx + self.tasks[t].next_rx;
                if self.tasks[rx].inbox >= queue {
                    self.tasks[t].waiting_on = Some(rx);
                    self.tasks[rx].waiters.push(t);
                    self.block_curr(cpu, State::Blocked);
                    return;
                }
                self.tasks[t].next_rx = (self.tasks[t].next_rx + 1) % nr_rx.max(1);
                self.tasks[t].burst_left_ns = self.task_jitter_ns(t, send_ns, 20);
                self.deliver(t, rx, cpu);
                self.arm_burst(cpu);
            }
            Kind::Receiver { recv_ns } => {
                self.stats.messages += 1;
                if let Some(s) =
                    (!self.tasks[t].waiters.is_empty()).then(|| self.tasks[t].waiters.remove(0))
                {
                    self.tasks[s].waiting_on = None;
                    self.tasks[s].burst_left_ns = 0;
                    self.wake(s, Some((cpu, t)));
                }
                if self.tasks[t].inbox > 0 {
                    self.tasks[t].inbox -= 1;
                    self.tasks[t].burst_left_ns = self.task_jitter_ns(t, recv_ns, 20);
                    self.arm_burst(cpu);
                } else {
                    self.block_curr(cpu, State::Blocked);
                }
            }
        }
    }

    /// A message from `from` (running on `cpu`) to `to`.
    fn deliver(&mut self, from: usize, to: usize, cpu: u32) {
        let xcost = {
            let topo = &self.cfg.topology;
            self.cost.message_ns(topo, cpu, self.tasks[to].cpu)
        };
        self.tasks[to].refill_ns = self.tasks[to].refill_ns.saturating_add(xcost);
        if self.tasks[to].state == State::Blocked {
            match self.tasks[to].kind {
                Kind::Buddy { work_ns, .. } => {
                    self.tasks[to].burst_left_ns = work_ns;
                    self.tasks[to].phase = Phase::Work;
                }
                Kind::Receiver { recv_ns } => {
                    self.tasks[to].burst_left_ns = self.task_jitter_ns(to, recv_ns, 20);
                }
                _ => {}
            }
            self.wake(to, Some((cpu, from)));
        } else {
            self.tasks[to].inbox = self.tasks[to].inbox.saturating_add(1);
        }
    }

    /// `sched_tick()` on every CPU, in a seeded order.
    fn tick(&mut self) {
        let mut order = std::mem::take(&mut self.order);
        self.tick_rng.shuffle(&mut order);
        for &cpu in &order {
            // entity_tick(): update_curr(), which renews the deadline of a
            // task that reached it and asks for the resched.
            self.update_curr(cpu);
            if self.rqs[cpu as usize].need_resched {
                self.resched(cpu);
            }
            if self.jiffies() >= self.rqs[cpu as usize].next_balance {
                self.rebalance_domains(cpu);
            }
        }
        self.order = order;
        self.push(self.now_ns.saturating_add(self.tick_ns), Ev::Tick);
    }

    /// Runs to the configured duration and returns the results.
    pub fn run(mut self) -> RunResult {
        let end = self.cfg.duration_ns;
        self.push(0, Ev::Tick);
        if self.cfg.samples > 0 {
            self.push(0, Ev::Sample);
        }
        let progress = self.cfg.progress;
        let mut shown = u64::MAX;
        while let Some(Reverse((at, _, ev))) = self.events.pop() {
            if at > end {
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
                Ev::TimerWake { task } => {
                    if self.tasks[task].state == State::Sleeping {
                        self.wake(task, None);
                    }
                }
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
        self.now_ns = end;
        for c in 0..self.cfg.topology.nr_cpus {
            self.account(c);
        }
        if self.cfg.samples > 0 {
            self.sample();
        }
        self.finish()
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
            duration_ns: cfg.duration_ns,
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

/// One LLC as the policy scans see it, as `__select_idle_cpu()` does.
struct View<'a> {
    sim: &'a Sim,
    llc: usize,
}

impl<'a> LlcView for View<'a> {
    type Mask = [u64];
    type Smt<'v>
        = &'v View<'a>
    where
        Self: 'v;

    fn cpus(&self) -> &[u64] {
        // No affinity masks in these workloads: the LLC's span.
        self.sim.cfg.topology.llc_span[self.llc].words()
    }

    fn cores(&self) -> &[u64] {
        self.sim.cfg.topology.llc_cores[self.llc].words()
    }

    fn smt(&self) -> Option<&View<'a>> {
        Some(self)
    }
}

impl SmtView for &View<'_> {
    type Mask = [u64];

    fn siblings(&mut self, core: u32) -> &[u64] {
        self.sim.cfg.topology.smt_mask[core as usize].words()
    }
}

impl sis_select::IdleView for View<'_> {
    fn idle(&self, cpu: u32) -> bool {
        self.sim.idle(cpu)
    }

    fn allowed(&self, _cpu: u32) -> bool {
        // No affinity masks in these workloads.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// 6.12.117: `sysctl_sched_base_slice = 700000ULL`, scaled by
    /// `1 + ilog2(min(ncpus, 8))`: 2.8 ms on 8 CPUs and more.
    #[test]
    fn base_slice_is_0_70_ms_scaled() {
        assert_eq!(sim("2x4", DEFAULT_HZ).base_slice_ns, 2_800_000);
        assert_eq!(sim("thx2", DEFAULT_HZ).base_slice_ns, 2_800_000);
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
        s.wake(a, None);
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
