// SPDX-License-Identifier: GPL-2.0

//! One guest trace replayed into the model and measured both ways.
//!
//! The model runs the trace's topology (`calibrate::preset_of()`) with the
//! features the guest ran (those the model has; the rest are listed), the
//! experiment's domain knob where its state sets one (`busy_factor`), and
//! the workload tasks' scripts. It runs until four times the guest's span
//! (the model may be slower), and both runs are measured by
//! `metrics::measure()` over their events. Whether the experiment's rule
//! changed the model's decisions is asked the way the module's differs
//! counters ask it of the kernel's: the same replay with the rule flipped,
//! and whether any decision (the run's trace hash) came out different.
//!
//! The control: the model's own run, recorded, is replayed into the model
//! again the same way and measured against that run. Replay keeps the
//! guest's causal order but not its schedule: a wake that finds its wakee
//! not yet blocked is a token, its block is skipped, and a wakeup and two
//! switches are gone; a wake that comes late only makes the block longer.
//! Any schedule that drifts from the recorded one loses wakeups that way,
//! and the moves they would have made, one way only. The control measures
//! that loss where the model is the recorded system exactly, so that a
//! gap to the guest can be told from what replay itself does.

use super::metrics::{measure_with_calls, workload_pids, Metrics};
use super::script::{extract, percpu_kthread_pids, Start};
use super::trace::{Header, Trace};
use crate::calibrate::preset_of;
use crate::cost::{CostModel, LatencySpread, TcgCost};
use crate::flags::{Flags, Knobs};
use crate::sim::{Config, Sim};
use crate::topology::Topology;
use crate::workload::{Part, Workload};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

/// The model's wakeup latency onto an idle CPU in a replay
/// (`CostModel::wake_idle_ns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeIdle {
    /// None: the model as built and calibrated.
    Off,
    /// This many ns.
    Ns(u64),
    /// The medians the guest's trace shows: from the wakeup to the run
    /// (`Metrics::idle_wakeup_latency_ns`), before it the wake list's
    /// (`Metrics::wake_list_latency_ns`, `CostModel::wake_list_ns`), the
    /// wake list's onto a busy CPU across LLCs
    /// (`Metrics::wake_list_busy_latency_ns`,
    /// `CostModel::wake_list_busy_ns`), a fork's onto an idle CPU
    /// (`Metrics::fork_idle_latency_ns`, `CostModel::fork_idle_ns`), and a
    /// wakeup preemption's of another CPU that runs something
    /// (`Metrics::resched_busy_latency_ns`, `CostModel::resched_busy_ns`).
    Guest,
    /// Each of those latencies drawn from the trace's own spread of it
    /// (`cost::LatencySpread`, `Config::latency_spread`), the medians
    /// where the model asks for a constant.
    GuestSpread,
}

/// A replay's result.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Replayed {
    /// Bench topology.
    pub topology: String,
    /// The model's preset for it.
    pub preset: String,
    /// Experiment id.
    pub experiment: String,
    /// `off` or `on`.
    pub state: String,
    /// The experiment's flag or set.
    pub flag: String,
    /// Scripts replayed (the workload's tasks, and with `--kthreads` the
    /// per-CPU kernel threads beside them).
    pub tasks: usize,
    /// The guest's measures.
    pub guest: Metrics,
    /// The model's.
    pub model: Metrics,
    /// Features the guest ran that the model does not have, away from
    /// the default the model assumes.
    pub unknown_features: Vec<String>,
    /// The guest's differs counter of the experiment's flag, if any.
    pub guest_differs: Option<i64>,
    /// Whether flipping the rule changed the model's run (None: no single
    /// rule, an A/A or module experiment).
    pub model_acted: Option<bool>,
    /// Whether the trace is a run's start (the guest's buffers filled).
    pub cut: bool,
    /// The model's wakeup latency onto an idle CPU, ns.
    pub wake_idle_ns: u64,
    /// The model's wake list latency, ns (`CostModel::wake_list_ns`).
    pub wake_list_ns: u64,
    /// The model's wake list latency onto a busy CPU across LLCs, ns
    /// (`CostModel::wake_list_busy_ns`).
    pub wake_list_busy_ns: u64,
    /// The model's latency of a fork onto an idle CPU, ns
    /// (`CostModel::fork_idle_ns`).
    pub fork_idle_ns: u64,
    /// The model's latency of a wakeup preemption of another CPU that
    /// runs something, ns (`CostModel::resched_busy_ns`).
    pub resched_busy_ns: u64,
    /// The model drew each of those latencies from the trace's spread,
    /// the five above being their medians (`WakeIdle::GuestSpread`).
    pub latency_spread: bool,
    /// STEAL's tries and steals, (tried, stolen): the guest's module
    /// counters over the run (None where the trace's counters are not
    /// the run's alone, `Header::counters_run`), and the model's.
    pub steal_guest: Option<(u64, u64)>,
    /// See `steal_guest`.
    pub steal_model: (u64, u64),
    /// The newidle walk's steps and stops, (steps, stopped): the domains
    /// `sched_balance_newidle()` came to and asked whether to go on
    /// (`avg_idle` against the cost so far and the domain's
    /// `max_newidle_lb_cost`), and the walks that stopped there. The
    /// guest's module counters (`newidle_stop/calls`, `/stopped`), and
    /// the model's.
    pub newidle_guest: Option<(u64, u64)>,
    /// See `newidle_guest`.
    pub newidle_model: (u64, u64),
    /// The idle-CPU test's (calls, balanced) (Galbraith 2016's threshold,
    /// asked where an idle CPU's balance finds spare capacity at home and
    /// a busiest group that is not overloaded): the guest's module
    /// counters (`idle_cpus_balanced/calls`, `/balanced`), and the
    /// model's. How often the idle balancers get that far, and how often
    /// the idle CPUs' counts say there is nothing to move.
    pub idle_cpus_guest: Option<(u64, u64)>,
    /// See `idle_cpus_guest`.
    pub idle_cpus_model: (u64, u64),
    /// `detach_tasks()`'s load test's (calls, skipped): the guest's
    /// module counters (`detach_skip/calls`, `/skipped`), and the
    /// model's. How often a load-based balance weighed a task, and how
    /// often the task's load was too big to take.
    pub detach_skip_guest: Option<(u64, u64)>,
    /// See `detach_skip_guest`.
    pub detach_skip_model: (u64, u64),
    /// The balance counters (`/proc/schedstat`) per level and idle type,
    /// `lb_count_idle@NUMA` and the like: the guest's, where its trace
    /// has them (`Header::schedstat`), and the model's. How often each
    /// balancer tried at each level and how often it found an imbalance,
    /// apart from what it then moved.
    pub balance_guest: Option<BTreeMap<String, u64>>,
    /// See `balance_guest`.
    pub balance_model: BTreeMap<String, u64>,
    /// The model's wakes that found their wakee not yet blocked, where
    /// the guest's wakee had (`Stats::replay_wakes_*`).
    pub model_early_wakes: EarlyWakes,
    /// When the model's run got stuck, every script waiting for a wake
    /// none would give (`Stats::replay_stuck_ns`), ns.
    pub model_stuck_ns: Option<u64>,
    /// The control: the model's own run replayed into the model, measured
    /// as `model` is (its "guest" is `model`).
    pub control: Metrics,
    /// STEAL's (tried, stolen) in the control.
    pub steal_control: (u64, u64),
    /// The newidle walk's (steps, stopped) in the control.
    pub newidle_control: (u64, u64),
    /// The idle-CPU test's (calls, balanced) in the control.
    pub idle_cpus_control: (u64, u64),
    /// The load test's (calls, skipped) in the control.
    pub detach_skip_control: (u64, u64),
    /// The balance counters in the control.
    pub balance_control: BTreeMap<String, u64>,
    /// The control's wakes that found their wakee not yet blocked.
    pub control_early_wakes: EarlyWakes,
    /// When the control got stuck, as `model_stuck_ns`.
    pub control_stuck_ns: Option<u64>,
    /// The model's run as events (`schedsim replay --model-trace`).
    #[serde(skip)]
    pub model_events: Vec<super::trace::Event>,
    /// Its periodic balances, as the guest's function tracer logs them.
    #[serde(skip)]
    pub model_calls: Vec<super::trace::Call>,
}

/// Where a replay's wakes found a wakee that the recorded run had already
/// blocked: each was kept as a token and its block skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EarlyWakes {
    /// Runnable, waiting for its CPU.
    pub queued: u64,
    /// Running, mid-burst.
    pub running: u64,
    /// Neither: asleep on a timer, or already woken and on its way
    /// through a wake list (`CostModel::wake_list_ns`).
    pub other: u64,
}

impl EarlyWakes {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.queued
            .saturating_add(self.running)
            .saturating_add(self.other)
    }

    /// The sum of two counts.
    pub fn plus(&self, o: &Self) -> Self {
        Self {
            queued: self.queued.saturating_add(o.queued),
            running: self.running.saturating_add(o.running),
            other: self.other.saturating_add(o.other),
        }
    }
}

/// The rule an experiment flips: a flag experiment's last `+` part, a
/// set's flags.
fn rule_flags(kind: &str, flag: &str) -> Vec<String> {
    match kind {
        "flag" => flag
            .rsplit('+')
            .next()
            .map(str::to_string)
            .into_iter()
            .collect(),
        "set" => flag
            .split(',')
            .filter(|i| !i.contains('='))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The `busy_factor=OFF:ON` of a set, for `state`.
fn set_busy_factor(flag: &str, state: &str) -> Option<u32> {
    flag.split(',').find_map(|i| {
        let v = i.strip_prefix("busy_factor=")?;
        let (off, on) = v.split_once(':')?;
        (if state == "on" { on } else { off }).parse().ok()
    })
}

/// The model's configuration for a replay of `scripts`: `opts`' seed
/// and TCG settings, with `cost` (the options' own, as the replay sets it).
fn model_config(
    topo: &Topology,
    scripts: &Rc<Vec<super::script::Script>>,
    flags: Flags,
    knobs: Knobs,
    opts: &Opts,
    duration_ns: u64,
    cost: &Costs,
) -> Config {
    let workload = Workload {
        parts: vec![Part::Replay {
            scripts: Rc::clone(scripts),
        }],
        text: "replay".into(),
    };
    let mut cfg = Config::new(topo.clone(), workload, opts.seed, duration_ns);
    cfg.flags = flags;
    cfg.knobs = knobs;
    cfg.cost = cost.model;
    cfg.tcg_rr = opts.tcg_rr;
    cfg.wake_list_at_tick = opts.wake_list_at_tick;
    cfg.lb_clock_factor = opts.lb_clock_factor;
    cfg.latency_spread = cost.spread.clone();
    cfg.idle_tick_turn = cost.idle_tick_turn;
    cfg.timer_turn = cost.timer_turn;
    cfg
}

/// The model's costs in a replay: its constants, and the spread its
/// TCG latencies are drawn from, if any (`WakeIdle::GuestSpread`).
struct Costs {
    model: CostModel,
    spread: Option<Rc<LatencySpread>>,
    /// `Config::idle_tick_turn`: TCG's, with the guest's latencies: the
    /// trace's own odds (`ticks::TickTurns::turn`).
    idle_tick_turn: Option<crate::cost::IdleTickTurn>,
    /// `Config::timer_turn`: TCG's, with the guest's latencies, whose
    /// wake list makes a vCPU wait for its turn.
    timer_turn: bool,
}

/// How long the model may run a replay of a run that spanned `span_ns`:
/// four times it (the model may be slower), at least 50 ms.
fn run_length_ns(span_ns: u64) -> u64 {
    span_ns.saturating_mul(4).max(50_000_000)
}

/// The replay, recorded and measured ([`ModelRun`]).
fn run_model(mut cfg: Config, topo: &Topology, scripts: &[super::script::Script]) -> ModelRun {
    cfg.record_events = true;
    let (result, events, calls) = Sim::new(cfg).run_recorded();
    // The workload's scripts only: replayed kthreads are not measured.
    let measured: HashSet<u32> = scripts
        .iter()
        .zip(1u32..)
        .filter(|(s, _)| !s.kthread)
        .map(|(_, pid)| pid)
        .collect();
    let metrics = measure_with_calls(&events, &calls, topo, &measured);
    let st = &result.schedstat.module;
    let s = &result.stats;
    ModelRun {
        hash: result.trace_hash,
        metrics,
        events,
        calls,
        steal: (st.steal_tried, st.steal_stolen),
        idle_cpus: (st.idle_cpus_calls, st.idle_cpus_balanced),
        detach_skip: (st.detach_skip_calls, st.detach_skip_skipped),
        balance: result.schedstat.balance_by_level(),
        // Each step is stopped, skipped by NI_RANDOM's die or balanced.
        newidle: (
            s.newidle_stopped
                .saturating_add(s.newidle_dice_skipped)
                .saturating_add(s.newidle_domains),
            s.newidle_stopped,
        ),
        early_wakes: EarlyWakes {
            queued: s.replay_wakes_queued,
            running: s.replay_wakes_running,
            other: s.replay_wakes_other,
        },
        stuck_ns: s.replay_stuck_ns,
    }
}

/// What [`run_model`] measured of one replay.
struct ModelRun {
    /// The run's trace hash (a flipped rule's run is compared with it).
    hash: u64,
    /// Its measures, as the guest's are taken.
    metrics: Metrics,
    /// Its events, for `--model-trace`.
    events: Vec<super::trace::Event>,
    /// Its periodic balances, for `--model-trace`.
    calls: Vec<super::trace::Call>,
    /// STEAL's (tried, stolen).
    steal: (u64, u64),
    /// The newidle walk's (steps, stopped).
    newidle: (u64, u64),
    /// The idle-CPU test's (calls, balanced).
    idle_cpus: (u64, u64),
    /// The load test's (calls, skipped).
    detach_skip: (u64, u64),
    /// The balance counters per level and idle type.
    balance: BTreeMap<String, u64>,
    /// `Replayed::model_early_wakes`.
    early_wakes: EarlyWakes,
    /// `Replayed::model_stuck_ns`.
    stuck_ns: Option<u64>,
}

/// How to run a replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opts {
    /// The model's seed.
    pub seed: u64,
    /// Its wakeup latency onto an idle CPU.
    pub wake_idle: WakeIdle,
    /// Its cost model (`schedsim replay --cost NAME=FACTOR` scales it).
    pub cost: CostModel,
    /// Replay the guest's per-CPU kernel threads too, bound to their CPU
    /// (`schedsim replay --kthreads`): what they take from the workload's
    /// CPUs, and the queued tasks STEAL and the balancers may not move.
    pub kthreads: bool,
    /// Tick as the TCG guest does (`Config::tcg_rr`; `schedsim replay
    /// --tcg-rr`).
    pub tcg_rr: bool,
    /// The wake list's IPI at the next tick (`Config::wake_list_at_tick`;
    /// `schedsim replay --wake-list-at-tick`).
    pub wake_list_at_tick: bool,
    /// STEAL's attempt at native speed (`schedsim replay
    /// --native-steal`), not slowed as in the TCG guest the traces come
    /// from ([`CostModel::tcg_steal`]).
    pub native_steal: bool,
    /// `Config::lb_clock_factor` (`schedsim replay --lb-clock N`).
    pub lb_clock_factor: u32,
    /// Every timer fires at its recorded end (`schedsim replay
    /// --timer-on-time`), not at its idle vCPU's turn
    /// (`Config::timer_turn`, which the guest's latencies bring).
    pub timer_on_time: bool,
    /// A wakeup preemption of another busy CPU acts at once (`schedsim
    /// replay --resched-at-once`), not after the guest's latency
    /// (`CostModel::resched_busy_ns`, which the guest's latencies bring).
    pub resched_at_once: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            seed: 1,
            wake_idle: WakeIdle::Off,
            cost: CostModel::default(),
            kthreads: false,
            tcg_rr: false,
            wake_list_at_tick: false,
            native_steal: false,
            lb_clock_factor: crate::cost::TCG_LB_CLOCK_FACTOR,
            timer_on_time: false,
            resched_at_once: false,
        }
    }
}

/// The model's topology for a trace's: its preset's name and the preset,
/// which has the trace's number of CPUs.
fn topology_of(h: &Header) -> Result<(&'static str, Topology), String> {
    let preset = preset_of(&h.topology)
        .ok_or_else(|| format!("topology '{}': no model preset for it", h.topology))?;
    let topo = Topology::preset(preset)?;
    if topo.nr_cpus != h.cpus {
        return Err(format!(
            "topology '{}' has {} CPUs in the trace, the model's '{preset}' {}",
            h.topology, h.cpus, topo.nr_cpus
        ));
    }
    Ok((preset, topo))
}

/// The guest's measures of a trace, as [`replay`] takes them, without a
/// replay.
pub fn guest_metrics(trace: &Trace) -> Result<Metrics, String> {
    let (_, topo) = topology_of(&trace.header)?;
    let workload = workload_pids(&trace.events, &trace.header.comm);
    Ok(measure_with_calls(
        &trace.events,
        &trace.calls,
        &topo,
        &workload,
    ))
}

/// Replays `trace` into the model.
pub fn replay(trace: &Trace, opts: &Opts) -> Result<Replayed, String> {
    let h = &trace.header;
    let (preset, topo) = topology_of(h)?;
    let mut flags = Flags::default();
    let mut unknown = Vec::new();
    for f in &h.features {
        let name = f.strip_prefix("NO_").unwrap_or(f);
        if flags.get(name).is_some() {
            flags.apply(f)?;
        } else if at_stock_default(f) != Some(true) {
            unknown.push(f.clone());
        }
    }
    let mut knobs = Knobs::default();
    if h.kind == "set" {
        if let Some(bf) = set_busy_factor(&h.flag, &h.state) {
            knobs.busy_factor = bf;
        }
    }
    let workload = workload_pids(&trace.events, &h.comm);
    let guest = measure_with_calls(&trace.events, &trace.calls, &topo, &workload);
    let mut scripted = workload.clone();
    if opts.kthreads {
        scripted.extend(percpu_kthread_pids(&trace.events));
    }
    let mut scripts = extract(&trace.events, &scripted);
    for s in &mut scripts {
        s.kthread = !workload.contains(&s.pid);
        if !s.kthread && matches!(s.start, Start::At { .. }) {
            s.wakee_flips = h.wakee_flips.unwrap_or(0);
        }
    }
    let scripts = Rc::new(scripts);
    let duration_ns = run_length_ns(guest.span_ns);
    // The guest's own TCG latencies, and the turns that come with them.
    let tcg_turns = matches!(opts.wake_idle, WakeIdle::Guest | WakeIdle::GuestSpread);
    let (wake_idle_ns, wake_list_ns, wake_list_busy_ns, fork_idle_ns, resched_busy_ns) =
        match opts.wake_idle {
            WakeIdle::Off => (0, 0, 0, 0, 0),
            WakeIdle::Ns(ns) => (ns, 0, 0, 0, 0),
            WakeIdle::Guest | WakeIdle::GuestSpread => (
                guest.idle_wakeup_latency_ns,
                guest.wake_list_latency_ns,
                guest.wake_list_busy_latency_ns,
                guest.fork_idle_latency_ns,
                if opts.resched_at_once {
                    0
                } else {
                    guest.resched_busy_latency_ns
                },
            ),
        };
    // The guest is TCG with every vCPU on one host thread: STEAL's window
    // between the mask read and the victim's lock is that slow there.
    let steal = if opts.native_steal {
        opts.cost
    } else {
        opts.cost.tcg_steal(TcgCost::default(), topo.nr_cpus)
    };
    let cost = Costs {
        model: CostModel {
            wake_idle_ns,
            wake_list_ns,
            wake_list_busy_ns,
            fork_idle_ns,
            resched_busy_ns,
            ..steal
        },
        // `--resched-at-once` needs nothing here: the model draws a
        // remote preemption's latency only when its constant is above 0.
        spread: (opts.wake_idle == WakeIdle::GuestSpread).then(|| Rc::new(guest.spread.clone())),
        // The trace's own odds where its record has its ticks, as its
        // latencies are its own; the pooled ones where it has too few.
        idle_tick_turn: tcg_turns.then(|| {
            let pooled = crate::cost::TCG_IDLE_TICK_TURN;
            guest.tick_turns.turn(pooled).unwrap_or(pooled)
        }),
        timer_turn: tcg_turns && !opts.timer_on_time,
    };
    let cfg = model_config(&topo, &scripts, flags, knobs, opts, duration_ns, &cost);
    let ModelRun {
        hash,
        metrics: model,
        events: model_events,
        calls: model_calls,
        steal: steal_model,
        newidle: newidle_model,
        idle_cpus: idle_cpus_model,
        detach_skip: detach_skip_model,
        balance: balance_model,
        early_wakes: model_early_wakes,
        stuck_ns: model_stuck_ns,
    } = run_model(cfg, &topo, &scripts);
    // The control: the same model on its own record, as the guest's was
    // read (the pids are the scripts' indices + 1).
    let recorded: HashSet<u32> = (1u32..).take(scripts.len()).collect();
    let mut own = extract(&model_events, &recorded);
    for s in &mut own {
        let orig = s.pid.checked_sub(1).and_then(|i| scripts.get(i as usize));
        s.kthread = orig.is_some_and(|o| o.kthread);
        if matches!(s.start, Start::At { .. }) {
            s.wakee_flips = orig.map_or(0, |o| o.wakee_flips);
        }
    }
    let own = Rc::new(own);
    let cfg = model_config(
        &topo,
        &own,
        flags,
        knobs,
        opts,
        run_length_ns(model.span_ns),
        &cost,
    );
    let control = run_model(cfg, &topo, &own);
    let rules = rule_flags(&h.kind, &h.flag);
    let model_acted = if rules.is_empty() || rules.iter().any(|r| flags.get(r).is_none()) {
        None
    } else {
        let mut flipped = flags;
        for r in &rules {
            let on = flags.get(r) == Some(true);
            flipped.apply(&format!("{}{r}", if on { "-" } else { "+" }))?;
        }
        let mut fk = knobs;
        if let Some(bf) = set_busy_factor(&h.flag, if h.state == "on" { "off" } else { "on" }) {
            fk.busy_factor = bf;
        }
        // Only its decisions are compared: no record, no measures.
        let cfg = model_config(&topo, &scripts, flipped, fk, opts, duration_ns, &cost);
        Some(Sim::new(cfg).run().trace_hash != hash)
    };
    // The run's counters, where the trace has them, as much of them as
    // its window covers (a trace cut at a full buffer is the run's start,
    // its counters the whole run's).
    let share = h.counter_share();
    let window = |v: u64| (v as f64 * share).round() as u64;
    let ctrs = |a: &str, b: &str| {
        let v = |n: &str| h.ctr(n).and_then(|v| u64::try_from(v).ok()).map(window);
        Some((v(a)?, v(b)?))
    };
    let guest_differs = rules.last().and_then(|r| h.ctr(&format!("differs_{r}")));
    Ok(Replayed {
        topology: h.topology.clone(),
        preset: preset.to_string(),
        experiment: h.experiment.clone(),
        state: h.state.clone(),
        flag: h.flag.clone(),
        tasks: scripts.len(),
        guest,
        model,
        unknown_features: unknown,
        guest_differs,
        model_acted,
        cut: h.dropped > 0,
        wake_idle_ns,
        wake_list_ns,
        wake_list_busy_ns,
        fork_idle_ns,
        resched_busy_ns,
        latency_spread: cost.spread.is_some(),
        steal_guest: ctrs("steal_tried", "steal_stolen"),
        steal_model,
        newidle_guest: ctrs("newidle_stop_calls", "newidle_stop_stopped"),
        newidle_model,
        idle_cpus_guest: ctrs("idle_cpus_balanced_calls", "idle_cpus_balanced_balanced"),
        idle_cpus_model,
        detach_skip_guest: ctrs("detach_skip_calls", "detach_skip_skipped"),
        detach_skip_model,
        balance_guest: h
            .run_schedstat()
            .map(|ss| ss.iter().map(|(k, v)| (k.clone(), window(*v))).collect()),
        balance_model,
        model_early_wakes,
        model_stuck_ns,
        control: control.metrics,
        steal_control: control.steal,
        newidle_control: control.newidle,
        idle_cpus_control: control.idle_cpus,
        detach_skip_control: control.detach_skip,
        balance_control: control.balance,
        control_early_wakes: control.early_wakes,
        control_stuck_ns: control.stuck_ns,
        model_events,
        model_calls,
    })
}

/// Stock 6.12.117 features the model has no switch for, with their
/// defaults (`kernel/sched/features.h`): the model behaves as with the
/// default, so only a run with one away from it is not replayed as the
/// guest ran.
const STOCK_ONLY: &[(&str, bool)] = &[
    ("PLACE_LAG", true),
    ("PLACE_DEADLINE_INITIAL", true),
    ("PLACE_REL_DEADLINE", true),
    ("RUN_TO_PARITY", true),
    ("PREEMPT_SHORT", true),
    ("NEXT_BUDDY", false),
    ("PICK_BUDDY", true),
    ("CACHE_HOT_BUDDY", true),
    ("DELAY_ZERO", true),
    ("WAKEUP_PREEMPTION", true),
    ("HRTICK", false),
    ("HRTICK_DL", false),
    ("DOUBLE_TICK", false),
    ("NONTASK_CAPACITY", true),
    ("TTWU_QUEUE", true),
    ("WARN_DOUBLE_CLOCK", false),
    // Off in Debian's 6.12 (no HAVE_RT_PUSH_IPI there): the guest's.
    ("RT_PUSH_IPI", false),
    ("RT_RUNTIME_SHARE", false),
    ("ATTACH_AGE_LOAD", true),
    ("UTIL_EST", true),
    ("LATENCY_WARN", false),
];

/// Whether `feature` (`NAME` or `NO_NAME`), which the model has no switch
/// for, is at the default the model assumes (None: not a stock feature
/// this table knows).
fn at_stock_default(feature: &str) -> Option<bool> {
    let (on, name) = match feature.strip_prefix("NO_") {
        Some(n) => (false, n),
        None => (true, feature),
    };
    STOCK_ONLY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, d)| d == on)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ticks::{TickClass, TickFate};
    use crate::replay::trace::{body_lines, parse, Call, Ev, Event, TICK, TICK_BALANCE};

    /// Two tasks that wake each other 200 times, 50 us of work each.
    fn pingpong_trace() -> String {
        pingpong_trace_on(0, 1)
    }

    /// [`pingpong_trace`] with its tasks on CPUs `c1` and `c2`.
    fn pingpong_trace_on(c1: u32, c2: u32) -> String {
        let mut s = format!(
            "# slb-trace 1\n# topology smt2 cpus 8\n\
             # experiment t state on kind flag flag SIS_PROP\n# features SIS_UTIL NO_SIS_PROP\n\
             # comm pp\n# ctr differs_SIS_PROP 4\n# counters run\n# lost 0\n\
             0 {c1} T 1 pp\n0 {c2} T 2 pp\n0 {c1} S 0 R 1\n0 {c2} S 0 R 2\n10 {c2} S 2 S 0\n",
        );
        let mut t = 10u64;
        for i in 0..200 {
            let (a, b, ca, cb) = if i % 2 == 0 {
                (1, 2, c1, c2)
            } else {
                (2, 1, c2, c1)
            };
            t += 50_000;
            s += &format!("{t} {ca} W {b} {cb} t\n{} {cb} U {b} {cb}\n", t + 1);
            s += &format!("{} {cb} S 0 R {b}\n{} {ca} S {a} S 0\n", t + 2, t + 3);
        }
        s
    }

    #[test]
    fn a_ping_pong_replays_its_wakeups_and_cpu_time() {
        let tr = parse(&pingpong_trace()).unwrap();
        let r = replay(&tr, &Opts::default()).unwrap();
        assert_eq!(r.tasks, 2);
        assert_eq!(r.guest.wakeups, 200);
        assert_eq!(r.guest_differs, Some(4));
        // Every wake ended a block and is replayed as one; the model also
        // wakes each script that starts at a time (both here) to start it.
        assert_eq!(r.model.wakeups, 200 + 2);
        // The model's CPU time is the guest's bursts (the model's own
        // costs for switches and wakeups come on top): within 10%.
        let ratio = r.model.task_cpu_ns as f64 / r.guest.task_cpu_ns as f64;
        assert!((0.99..1.10).contains(&ratio), "{ratio}");
        assert!(r.unknown_features.is_empty(), "{:?}", r.unknown_features);
        // The control replays the model's own run: a strict ping-pong
        // cannot drift (each wake is the only thing that can run the
        // wakee), so nothing is lost and the control is the run again.
        assert_eq!(r.model_early_wakes, EarlyWakes::default());
        assert_eq!(r.control_early_wakes, EarlyWakes::default());
        assert_eq!((r.model_stuck_ns, r.control_stuck_ns), (None, None));
        assert_eq!(r.control.wakeups, r.model.wakeups);
        assert_eq!(r.control.migrations, r.model.migrations);
        let ratio = r.control.task_cpu_ns as f64 / r.model.task_cpu_ns as f64;
        assert!((0.99..1.10).contains(&ratio), "{ratio}");
    }

    /// A parent on CPU 0 forks six children onto CPUs 2 to 7, as the
    /// guest's `sched_balance_fork()` spread hackbench's; each runs there
    /// 500 ns after its `sched_wakeup_new` (the IPI to an idle CPU), for
    /// 20 ns, and exits.
    fn fork_trace() -> String {
        let mut s = String::from(
            "# slb-trace 1\n# topology smt2 cpus 8\n# comm hb\n\
             0 0 T 1 hb\n0 0 S 0 R 1\n",
        );
        for c in 2..8u32 {
            let (pid, t) = (c, u64::from(c) * 1000);
            s += &format!("{t} 0 T {pid} hb\n{t} 0 F 1 {pid}\n{t} {c} N {pid} {c}\n");
            s += &format!("{} {c} S 0 R {pid}\n", t + 500);
            s += &format!("{} {c} X {pid}\n{} {c} S {pid} X 0\n", t + 520, t + 520);
        }
        s + "9000 0 X 1\n9000 0 S 1 X 0\n"
    }

    /// `replay()` of `tr` with default options but `wake_idle`.
    fn replay_with(tr: &Trace, wake_idle: WakeIdle) -> Replayed {
        replay(
            tr,
            &Opts {
                wake_idle,
                ..Opts::default()
            },
        )
        .unwrap()
    }

    /// The trace's workload scripts run on qemu8 for up to `duration_ns`,
    /// recorded.
    fn run_scripts(
        tr: &Trace,
        duration_ns: u64,
    ) -> (crate::stats::RunResult, Vec<Event>, Vec<Call>) {
        let topo = Topology::preset("qemu8").unwrap();
        let w = workload_pids(&tr.events, &tr.header.comm);
        let scripts = Rc::new(extract(&tr.events, &w));
        let workload = Workload {
            parts: vec![Part::Replay { scripts }],
            text: "replay".into(),
        };
        let mut cfg = Config::new(topo, workload, 1, duration_ns);
        cfg.record_events = true;
        Sim::new(cfg).run_recorded()
    }

    #[test]
    fn a_forked_child_starts_where_the_trace_forked_it() {
        let tr = parse(&fork_trace()).unwrap();
        let (result, events, _) = run_scripts(&tr, 1_000_000_000);
        let placed = |evs: &[Event]| -> Vec<(u32, u32)> {
            evs.iter()
                .filter_map(|e| match e.ev {
                    Ev::WakeupNew { pid, target } => Some((pid, target)),
                    _ => None,
                })
                .collect()
        };
        // The model's own choice (fewest running, then the emptiest core)
        // puts them on CPUs 2 and 4 only.
        assert_eq!(placed(&events), placed(&tr.events));
        // Every script exited, so the run ended there, not a second of
        // idle ticks later.
        assert!(result.ended);
        assert!(result.duration_ns < 1_000_000, "{}", result.duration_ns);
    }

    #[test]
    fn a_fork_onto_an_idle_cpu_waits_fork_idle_ns() {
        let tr = parse(&fork_trace()).unwrap();
        let off = replay(&tr, &Opts::default()).unwrap();
        assert_eq!(
            (off.guest.fork_idle, off.guest.fork_idle_latency_ns),
            (6, 500)
        );
        // The model's child runs at once on the idle CPU...
        assert_eq!(
            (off.model.fork_idle, off.model.fork_idle_latency_ns),
            (6, 0)
        );
        assert_eq!(off.fork_idle_ns, 0);
        // ... or as late as the guest's, given its latencies.
        let g = replay_with(&tr, WakeIdle::Guest);
        assert_eq!(g.fork_idle_ns, 500);
        assert_eq!((g.model.fork_idle, g.model.fork_idle_latency_ns), (6, 500));
        assert!(!g.latency_spread);
        // Drawn from the trace's spread: every fork took 500 ns there.
        let d = replay_with(&tr, WakeIdle::GuestSpread);
        assert!(d.latency_spread);
        assert_eq!(
            d.guest.spread.fork_idle_ns,
            vec![500; crate::cost::SPREAD_POINTS]
        );
        assert_eq!((d.model.fork_idle, d.model.fork_idle_latency_ns), (6, 500));
    }

    /// One task runs 200 ms on CPU 0 while seven CPUs idle; CPU 0 logs
    /// its tick every period, an idle CPU where `took(cpu, period)` says
    /// it took its.
    fn idle_ticks_trace(took: impl Fn(u32, u64) -> bool) -> String {
        let mut s = String::from(
            "# slb-trace 1\n# topology smt2 cpus 8\n# comm spin\n\
             0 0 T 1 spin\n0 0 S 0 R 1\n",
        );
        for k in 1..50u64 {
            for cpu in 0..8u32 {
                if cpu == 0 || took(cpu, k) {
                    let ts = k * 4_000_000 + 100_000 + u64::from(cpu) * 1000;
                    s += &format!("{ts} {cpu} B sched_tick update_process_times\n");
                }
            }
        }
        s + "200000000 0 X 1\n"
    }

    /// Given the guest's latencies, a replay takes the trace's own tick
    /// odds, and the model's record shows them back: none of the idle
    /// ticks the guest lost, every one it took; on time without.
    #[test]
    fn a_replay_takes_the_traces_own_tick_odds() {
        use crate::replay::ticks::{TickClass::Free, TickFate::*};
        let lost = parse(&idle_ticks_trace(|_, _| false)).unwrap();
        let g = replay_with(&lost, WakeIdle::Guest);
        let gt = g.guest.tick_turns;
        assert_eq!(gt.count(Free, Lost), gt.total(Free));
        assert!(gt.total(Free) >= 7 * 47, "{gt:?}");
        let mt = g.model.tick_turns;
        assert_eq!(mt.count(Free, AtOnce), 0, "{mt:?}");
        assert!(mt.count(Free, Lost) >= 7 * 40, "{mt:?}");
        let off = replay(&lost, &Opts::default()).unwrap();
        let ot = off.model.tick_turns;
        assert_eq!(ot.count(Free, Lost), 0, "{ot:?}");
        assert!(ot.count(Free, AtOnce) >= 7 * 40, "{ot:?}");
        // Every other CPU's taken: about half of the model's.
        let half = parse(&idle_ticks_trace(|cpu, _| cpu % 2 == 0)).unwrap();
        let h = replay_with(&half, WakeIdle::Guest);
        let (ht, hm) = (h.guest.tick_turns, h.model.tick_turns);
        let share = |t: crate::replay::ticks::TickTurns| {
            t.count(Free, AtOnce) as f64 / t.total(Free) as f64
        };
        assert!((share(ht) - 3.0 / 7.0).abs() < 0.01, "{ht:?}");
        assert!((0.33..0.53).contains(&share(hm)), "{hm:?}");
    }

    /// The model's record, its ticks and periodic balances too, reads
    /// back as it was written and measures the same.
    #[test]
    fn the_models_record_round_trips() {
        let tr = parse(&pingpong_trace()).unwrap();
        let topo = Topology::preset("qemu8").unwrap();
        let (_, events, calls) = run_scripts(&tr, 100_000_000);
        let text = format!(
            "# slb-trace 1\n# topology smt2 cpus 8\n# comm pp\n{}\n",
            body_lines(&events, &calls).join("\n")
        );
        let back = parse(&text).unwrap();
        assert_eq!((&back.events, &back.calls), (&events, &calls));
        let w = HashSet::from([1, 2]);
        let m = measure_with_calls(&back.events, &back.calls, &topo, &w);
        assert_eq!(m.wakeups, 200 + 2);
        // Every CPU ticks, on time here, and balances at its ticks, and
        // the ping-pong leaves most of them free: the idle ones are most
        // of the balances.
        assert!(calls
            .iter()
            .all(|c| [TICK, TICK_BALANCE].contains(&c.func.as_str()) && c.ts_ns % 4_000_000 == 0));
        let ticks = calls.iter().filter(|c| c.func == TICK).count();
        assert_eq!(ticks % 8, 0, "{ticks}");
        assert!(m.idle_tick_balances > m.tick_balances / 2, "{m:?}");
        let t = m.tick_turns;
        assert!(!t.by_balance && t.total(TickClass::Free) > 0, "{t:?}");
        for class in TickClass::ALL {
            assert_eq!(t.count(class, TickFate::Lost), 0, "{t:?}");
        }
        assert_eq!(m, measure_with_calls(&events, &calls, &topo, &w));
    }

    /// The model logs a wakeup's `sched_migrate_task` and `sched_wakeup`
    /// on the waking CPU, where the guest's kernel logs them (the CPU that
    /// runs `try_to_wake_up()`), not on the CPUs it names: with no wake
    /// list, every one of them.
    #[test]
    fn the_models_record_logs_a_wakeup_where_it_ran() {
        // The ping-pong's second task starts in the other LLC: the first
        // wakeup pulls it over, from CPU 0.
        let tr = parse(&pingpong_trace_on(0, 5)).unwrap();
        let (_, events, _) = run_scripts(&tr, 100_000_000);
        let mut waking: std::collections::HashMap<u32, u32> = Default::default();
        let (mut moves, mut wakeups, mut remote) = (0, 0, 0);
        for e in &events {
            match e.ev {
                Ev::Waking { pid, .. } => {
                    waking.insert(pid, e.cpu);
                }
                Ev::Migrate { pid, dest, .. } => {
                    if let Some(&c) = waking.get(&pid) {
                        assert_eq!(e.cpu, c, "{e:?}");
                        moves += 1;
                        remote += u32::from(dest != c);
                    }
                }
                Ev::Wakeup { pid, .. } => {
                    if let Some(c) = waking.remove(&pid) {
                        assert_eq!(e.cpu, c, "{e:?}");
                        wakeups += 1;
                    }
                }
                _ => {}
            }
        }
        assert!(wakeups > 100, "{wakeups}");
        assert!(moves > 0 && remote > 0, "{moves} {remote}");
    }

    /// The newidle walk's steps and stops: the guest's from its module
    /// counters, the model's from its own walk, each step stopped,
    /// skipped by NI_RANDOM's die or balanced; the report's row is their
    /// share.
    #[test]
    fn newidle_walk_steps_and_stops_both_ways() {
        let text = pingpong_trace().replace(
            "# lost 0\n",
            "# lost 0\n# ctr newidle_stop_calls 40\n# ctr newidle_stop_stopped 10\n",
        );
        let r = replay(&parse(&text).unwrap(), &Opts::default()).unwrap();
        assert_eq!(r.newidle_guest, Some((40, 10)));
        // The ping-pong's CPUs go idle often, but with nothing queued
        // anywhere: `rd->overloaded` is never set, every walk is skipped
        // before its first step, and a skipped walk is no step.
        assert_eq!(r.newidle_model, (0, 0));
        let rows = super::super::report::rows(&r);
        let row = rows
            .iter()
            .find(|x| x.metric == "newidle walk steps stopped")
            .unwrap();
        assert_eq!((row.guest, row.model), (0.25, 0.0));
    }

    /// Counters a trace read after its dump (recorded before the third
    /// recording of 2026-12-06) took in the dump's seconds: none of them
    /// is the guest's, so no row compares them and the rule's differs
    /// are unknown; the model's own are still counted.
    #[test]
    fn counters_read_after_the_dump_are_not_the_guests() {
        let text = pingpong_trace().replace(
            "# counters run\n# lost 0\n",
            "# counters run+dump\n# lost 0\n# ctr newidle_stop_calls 40\n\
             # ctr newidle_stop_stopped 10\n# ctr idle_cpus_balanced_calls 9\n\
             # ctr idle_cpus_balanced_balanced 3\n# ctr detach_skip_calls 20\n\
             # ctr detach_skip_skipped 5\n",
        );
        let r = replay(&parse(&text).unwrap(), &Opts::default()).unwrap();
        assert_eq!(r.guest_differs, None);
        assert_eq!(
            (r.newidle_guest, r.idle_cpus_guest, r.steal_guest),
            (None, None, None)
        );
        assert_eq!(r.detach_skip_guest, None);
        let rows = super::super::report::rows(&r);
        assert!(
            !rows
                .iter()
                .any(|x| x.metric.starts_with("newidle walk")
                    || x.metric.starts_with("idle-CPU test"))
        );
        // Read before the dump, the same counters are compared.
        let run = text.replace("# counters run+dump\n", "# counters run\n");
        let r = replay(&parse(&run).unwrap(), &Opts::default()).unwrap();
        assert_eq!(r.guest_differs, Some(4));
        assert_eq!(r.idle_cpus_guest, Some((9, 3)));
        let rows = super::super::report::rows(&r);
        let calls = rows
            .iter()
            .find(|x| x.metric == "idle-CPU test, calls")
            .unwrap();
        assert_eq!(calls.guest, 9.0);
        let share = rows
            .iter()
            .find(|x| x.metric == "idle-CPU test, balanced")
            .unwrap();
        assert_eq!(share.guest, 3.0 / 9.0);
        assert_eq!(r.detach_skip_guest, Some((20, 5)));
        let skipped = rows
            .iter()
            .find(|x| x.metric == "detach load test, skipped")
            .unwrap();
        assert_eq!(skipped.guest, 0.25);
    }

    /// The guest's balance counters (schedstat, per level and idle type)
    /// beside the model's: how often each balancer tried and how often it
    /// found an imbalance. Only from a trace whose header has them (the
    /// extractor writes them only where they were read before its dump).
    #[test]
    fn balance_tries_and_imbalances_per_level_both_ways() {
        let text = pingpong_trace().replace(
            "# counters run\n",
            "# counters run\n# schedstat lb_count_idle@MC 10\n\
             # schedstat lb_balanced_idle@MC 7\n# schedstat lb_failed_idle@MC 2\n\
             # schedstat lb_gained_idle@MC 1\n",
        );
        let r = replay(&parse(&text).unwrap(), &Opts::default()).unwrap();
        let g = r.balance_guest.as_ref().unwrap();
        assert_eq!((g["lb_count_idle@MC"], g["lb_balanced_idle@MC"]), (10, 7));
        // The model's, from its own counters: every level and type.
        assert_eq!(r.balance_model.len(), 3 * 3 * 8);
        let rows = super::super::report::rows(&r);
        let row = |m: &str| rows.iter().find(|x| x.metric == m).map(|x| x.guest);
        assert_eq!(row("balance MC, idle, tries"), Some(10.0));
        assert_eq!(row("balance MC, idle, found imbalance"), Some(0.3));
        // Of the 3 that found one, 2 moved nothing.
        assert_eq!(row("balance MC, idle, failed"), Some(2.0 / 3.0));
        assert_eq!(row("balance MC, idle, gained"), Some(1.0));
        // A run without the module has no module counters to say the
        // schedstat is the run's: the extractor's writing it says so.
        let no_module = text.replace("# counters run\n", "");
        let r = replay(&parse(&no_module).unwrap(), &Opts::default()).unwrap();
        assert_eq!(
            r.balance_guest.as_ref().map(|g| g["lb_count_idle@MC"]),
            Some(10)
        );
        // A trace recorded before the schedstat: no balancer rows.
        let old = pingpong_trace().replace("# counters run\n", "");
        let r = replay(&parse(&old).unwrap(), &Opts::default()).unwrap();
        assert_eq!(r.balance_guest, None);
        let rows = super::super::report::rows(&r);
        assert!(!rows.iter().any(|x| x.metric.ends_with(", tries")));
    }

    #[test]
    fn a_wakeup_onto_an_idle_cpu_waits_wake_idle_ns() {
        let tr = parse(&pingpong_trace()).unwrap();
        let off = replay(&tr, &Opts::default()).unwrap();
        assert!(off.model.idle_wakeups > 100);
        assert_eq!(off.model.idle_wakeup_latency_ns, 0);
        let on = replay_with(&tr, WakeIdle::Ns(30_000));
        assert_eq!(on.wake_idle_ns, 30_000);
        assert_eq!(on.model.idle_wakeup_latency_ns, 30_000);
        // The guest's own trace switches in 1 ns after each wakeup.
        assert_eq!(on.guest.idle_wakeup_latency_ns, 1);
        let g = replay_with(&tr, WakeIdle::Guest);
        assert_eq!(g.wake_idle_ns, 1);
        // The guest's wakeups cross CPUs onto idle ones, W to U in 1 ns:
        // its wake list's latency, given to the model with the guest's.
        assert_eq!(g.guest.wake_list_latency_ns, 1);
        assert!(
            g.guest.wake_list_wakeups >= 200,
            "{}",
            g.guest.wake_list_wakeups
        );
        assert_eq!(
            (g.wake_list_ns, on.wake_list_ns, off.wake_list_ns),
            (1, 0, 0)
        );
        assert_eq!(g.model.wake_list_latency_ns, 1);
        assert!(
            g.model.wake_list_wakeups >= 200,
            "{}",
            g.model.wake_list_wakeups
        );
        assert_eq!(on.model.wake_list_latency_ns, 0);
        // Waiting 30 us per message stretches 200 messages by about 6 ms.
        let more = on.model.span_ns.saturating_sub(off.model.span_ns);
        assert!((5_000_000..7_000_000).contains(&more), "{more}");
    }

    #[test]
    fn features_the_model_lacks() {
        assert_eq!(at_stock_default("PICK_BUDDY"), Some(true));
        assert_eq!(at_stock_default("NO_PICK_BUDDY"), Some(false));
        // The model has the switch now, so it is not in the table.
        assert_eq!(at_stock_default("WA_IDLE"), None);
        assert_eq!(at_stock_default("NO_NEXT_BUDDY"), Some(true));
        assert_eq!(at_stock_default("FOO"), None);
    }

    #[test]
    fn rules_and_knobs_of_an_experiment() {
        assert_eq!(
            rule_flags("flag", "NO_WA_IDLE+NO_WA_WEIGHT+BALANCE_IDLE_LLC2"),
            vec!["BALANCE_IDLE_LLC2"]
        );
        assert_eq!(
            rule_flags(
                "set",
                "LB_RELAX_FAILED,LB_BUSY_INTERVAL_DEC,busy_factor=32:16"
            ),
            vec!["LB_RELAX_FAILED", "LB_BUSY_INTERVAL_DEC"]
        );
        assert!(rule_flags("same", "-").is_empty());
        assert_eq!(set_busy_factor("A,busy_factor=32:16", "off"), Some(32));
        assert_eq!(set_busy_factor("A,busy_factor=32:16", "on"), Some(16));
        assert_eq!(set_busy_factor("A", "on"), None);
    }
}
