// SPDX-License-Identifier: GPL-2.0

//! The replay report: per trace, each measure in the guest and the
//! model, their ratio and whether it lies within 20% (issue 32's goal
//! for migrations per level and LLC placement), beside the control's
//! ratio (the model's own run replayed, against that run: what replay
//! does to a run it has exactly); per experiment with both states, each
//! measure's on/off ratio in the guest and in the model.

use super::compare::{EarlyWakes, Replayed};
use super::metrics::{Metrics, Puller};
use super::ticks::{TickClass, TickFate};
use crate::schedstat::IDLE_TYPE_NAMES;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The measure column's width: the longest measure's name.
const W: usize = 43;

/// How close "agrees" is: the model within 20% of the guest.
pub const TOLERANCE: f64 = 0.20;

/// One compared measure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// Measure.
    pub metric: String,
    /// The guest's value.
    pub guest: f64,
    /// The model's.
    pub model: f64,
    /// model / guest (None: the guest's is 0).
    pub ratio: Option<f64>,
    /// Within [`TOLERANCE`] (both 0 counts as within).
    pub within: bool,
    /// The control's ratio of the same measure: the model's own run
    /// replayed, over that run (None: not computed, or the run's is 0).
    pub control: Option<f64>,
    /// Not `within`, but `ratio` within [`TOLERANCE`] of `control`: a
    /// gap the size of what replay makes of a run it has exactly.
    pub as_control: bool,
    /// Neither, but the two differ by no more than two standard
    /// deviations of counting noise ([`counting_noise`]): too few events
    /// for a 20% rule to judge (a count of 1 against 0).
    pub noise: bool,
}

/// Whether two runs' counts `a` and `b` of an event (a count, or the
/// part `x` of a whole `n` for a share) differ by at most two standard
/// deviations of the noise of counting: Poisson for counts (the
/// difference of two has variance `a + b`), binomial for shares (the
/// pooled share's). It says "too few to tell", never "agrees": a run is
/// noisier than Poisson, so this errs towards calling a gap real.
pub fn counting_noise(a: (u64, u64), b: (u64, u64), share: bool) -> bool {
    let (xa, na) = (a.0 as f64, a.1 as f64);
    let (xb, nb) = (b.0 as f64, b.1 as f64);
    if !share {
        return (xa - xb).abs() <= 2.0 * (xa + xb).sqrt();
    }
    if na == 0.0 || nb == 0.0 {
        return true;
    }
    let p = (xa + xb) / (na + nb);
    let se = (p * (1.0 - p) * (1.0 / na + 1.0 / nb)).sqrt();
    (xa / na - xb / nb).abs() <= 2.0 * se
}

fn row(metric: String, guest: f64, model: f64) -> Row {
    let ratio = (guest != 0.0).then(|| model / guest);
    let within = match ratio {
        Some(r) => (r - 1.0).abs() <= TOLERANCE,
        None => model == 0.0,
    };
    Row {
        metric,
        guest,
        model,
        ratio,
        within,
        control: None,
        as_control: false,
        noise: false,
    }
}

/// One count of a run's measures.
type Field = fn(&Metrics) -> u64;

/// A row of two counts, with its counting noise.
fn count_row(metric: String, guest: u64, model: u64) -> Row {
    let noise = counting_noise((guest, 0), (model, 0), false);
    Row {
        noise,
        ..row(metric, guest as f64, model as f64)
    }
}

/// A row of two shares, `x` of `n` wakeups each, with its counting noise.
fn share_row(metric: &str, guest: (u64, u64), model: (u64, u64)) -> Row {
    let share = |(x, n): (u64, u64)| x as f64 / (n as f64).max(1.0);
    Row {
        noise: counting_noise(guest, model, true),
        ..row(metric.into(), share(guest), share(model))
    }
}

/// The rows of one replay: the model against the guest.
pub fn rows(r: &Replayed) -> Vec<Row> {
    let control = control_rows(r);
    let mut out = compare(Side::guest(r), Side::model(r));
    for row in &mut out {
        row.control = control
            .iter()
            .find(|c| c.metric == row.metric)
            .and_then(|c| c.ratio);
        row.as_control = !row.within
            && matches!((row.ratio, row.control), (Some(a), Some(c))
                if c > 0.0 && (a / c - 1.0).abs() <= TOLERANCE);
        row.noise &= !row.within && !row.as_control;
    }
    out
}

/// The control's rows: the model's own run replayed, against that run.
pub fn control_rows(r: &Replayed) -> Vec<Row> {
    compare(Side::model(r), Side::control(r))
}

/// Whether a row is one of issue 32's goal: migrations per level, LLC
/// placement.
pub fn graded(metric: &str) -> bool {
    metric.starts_with("migrations") || metric == "wakeups in waker's LLC"
}

/// The mean imbalance of the balances of idle type `ty` at `level` that
/// found one (`lb_imbalance` over `lb_count - lb_balanced`; load units for
/// a load balance), from balance counters keyed `lb_count_idle@MC` and
/// the like; None where none found one.
pub fn mean_imbalance(b: &BTreeMap<String, u64>, ty: &str, level: &str) -> Option<f64> {
    let at = |field: &str| {
        b.get(&format!("{field}_{ty}@{level}"))
            .copied()
            .unwrap_or(0)
    };
    let found = at("lb_count").saturating_sub(at("lb_balanced"));
    (found > 0).then(|| at("lb_imbalance") as f64 / found as f64)
}

/// One run as [`compare`] reads it: its measures and the module's
/// counters it has.
struct Side<'a> {
    m: &'a Metrics,
    /// STEAL's (tried, stolen), where the run has them.
    steal: Option<(u64, u64)>,
    /// The newidle walk's (steps, stopped), where the run has them.
    newidle: Option<(u64, u64)>,
    /// The idle-CPU test's (calls, balanced), where the run has them.
    idle_cpus: Option<(u64, u64)>,
    /// The detach load test's (calls, skipped), where the run has them.
    detach_skip: Option<(u64, u64)>,
    /// The balance counters per level and idle type, where the run has
    /// them (`Replayed::balance_guest`).
    balance: Option<&'a BTreeMap<String, u64>>,
}

impl<'a> Side<'a> {
    /// The guest's run of a replay.
    fn guest(r: &'a Replayed) -> Self {
        Self {
            m: &r.guest,
            steal: r.steal_guest,
            newidle: r.newidle_guest,
            idle_cpus: r.idle_cpus_guest,
            detach_skip: r.detach_skip_guest,
            balance: r.balance_guest.as_ref(),
        }
    }

    /// A run of which only the measures are read: another recording of
    /// the guest's.
    fn measures(m: &'a Metrics) -> Self {
        Self {
            m,
            steal: None,
            newidle: None,
            idle_cpus: None,
            detach_skip: None,
            balance: None,
        }
    }

    /// The model's run of the guest's record.
    fn model(r: &'a Replayed) -> Self {
        Self {
            m: &r.model,
            steal: Some(r.steal_model),
            newidle: Some(r.newidle_model),
            idle_cpus: Some(r.idle_cpus_model),
            detach_skip: Some(r.detach_skip_model),
            balance: Some(&r.balance_model),
        }
    }

    /// The control: the model's run of its own record.
    fn control(r: &'a Replayed) -> Self {
        Self {
            m: &r.control,
            steal: Some(r.steal_control),
            newidle: Some(r.newidle_control),
            idle_cpus: Some(r.idle_cpus_control),
            detach_skip: Some(r.detach_skip_control),
            balance: Some(&r.balance_control),
        }
    }
}

/// A pair of counters (a count, then a part of it) from both runs, where
/// both have them and either counted something.
type Counted = ((u64, u64), (u64, u64));
fn counted(g: Option<(u64, u64)>, m: Option<(u64, u64)>) -> Option<Counted> {
    let (g, m) = (g?, m?);
    (g.0 > 0 || m.0 > 0).then_some((g, m))
}

/// The rows of a run `m` against the run `g` it replayed.
fn compare(gs: Side, ms: Side) -> Vec<Row> {
    let (g, m) = (gs.m, ms.m);
    let mut out = Vec::new();
    let levels = &g.migrations.levels;
    for (k, name) in levels.iter().enumerate() {
        for (cause, gv, mv) in [
            ("wakeup", &g.migrations.wakeup, &m.migrations.wakeup),
            ("balance", &g.migrations.balance, &m.migrations.balance),
            ("fork", &g.migrations.fork, &m.migrations.fork),
        ] {
            let (a, b) = (
                gv.get(k).copied().unwrap_or(0),
                mv.get(k).copied().unwrap_or(0),
            );
            if a > 0 || b > 0 {
                out.push(count_row(format!("migrations {cause} {name}"), a, b));
            }
        }
    }
    if g.task_wakeups > 0 || m.task_wakeups > 0 {
        let placed: [(&str, Field); 3] = [
            ("wakeups in waker's LLC", |x| x.in_waker_llc),
            ("wakeups on waker's CPU", |x| x.on_waker_cpu),
            ("wakeups on prev CPU", |x| x.on_prev_cpu),
        ];
        for (name, f) in placed {
            out.push(share_row(
                name,
                (f(g), g.task_wakeups),
                (f(m), m.task_wakeups),
            ));
        }
        // The state those wakeups were decided on, then the decision
        // given it: a gap in the first with none in the second is where
        // the tasks sat, not the rule. `seat(x, i)`, the waker sat `i`
        // (`Metrics::seat_wakes`): the wakes, those pulled, those with the
        // previous CPU busy, and those of them pulled.
        let seat = |x: &Metrics, i: usize| {
            let at = |v: &[u64]| v.get(i).copied().unwrap_or(0);
            (
                at(&x.seat_wakes),
                at(&x.seat_pulled),
                at(&x.seat_prev_busy),
                at(&x.seat_busy_pulled),
            )
        };
        out.push(share_row(
            "waker on wakee's prev CPU",
            (seat(g, 0).0, g.task_wakeups),
            (seat(m, 0).0, m.task_wakeups),
        ));
        for (k, name) in levels.iter().enumerate() {
            let ((gn, gp, gb, gbp), (mn, mp, mb, mbp)) = (seat(g, k + 1), seat(m, k + 1));
            if gn > 0 || mn > 0 {
                out.push(share_row(
                    &format!("waker across {name}, pulled to it"),
                    (gp, gn),
                    (mp, mn),
                ));
                // The same parted once more: how often the previous CPU
                // ran another task (WA_IDLE cannot answer), and the pulls
                // given that (WA_WEIGHT's loads decide).
                out.push(share_row(
                    &format!("waker across {name}, prev busy"),
                    (gb, gn),
                    (mb, mn),
                ));
                if gb > 0 || mb > 0 {
                    out.push(share_row(
                        &format!("waker across {name}, prev busy, pulled"),
                        (gbp, gb),
                        (mbp, mb),
                    ));
                }
            }
        }
    }
    // Who balanced, level by level: the balancer that the gap is in.
    for (k, name) in levels.iter().enumerate() {
        for by in Puller::ALL {
            let n = |x: &Metrics| x.balance_by.get(k).map_or(0, |b| b[by as usize]);
            if n(g) > 0 || n(m) > 0 {
                out.push(count_row(
                    format!("balance {name}, {}", by.name()),
                    n(g),
                    n(m),
                ));
            }
        }
        // The balancers' own counts (schedstat): how often each tried at
        // this level, how often it found an imbalance, how often it then
        // moved nothing (`lb_failed`: every task running, pinned or cache
        // hot), and the tasks it moved (`lb_gained`, the kernel's count
        // of the moves above, which the record's reading of who moved
        // can be checked against): the rate, the state and the detach
        // its moves came of.
        if let (Some(gb), Some(mb)) = (gs.balance, ms.balance) {
            for ty in IDLE_TYPE_NAMES {
                let at = |b: &BTreeMap<String, u64>, field: &str| {
                    b.get(&format!("{field}_{ty}@{name}")).copied().unwrap_or(0)
                };
                let (gn, mn) = (at(gb, "lb_count"), at(mb, "lb_count"));
                if gn == 0 && mn == 0 {
                    continue;
                }
                out.push(count_row(format!("balance {name}, {ty}, tries"), gn, mn));
                // Of the tries, those that found no group with a task to
                // pull (`lb_nobusyg`): the other groups empty.
                out.push(share_row(
                    &format!("balance {name}, {ty}, no busiest group"),
                    (at(gb, "lb_nobusyg"), gn),
                    (at(mb, "lb_nobusyg"), mn),
                ));
                let found = |b| at(b, "lb_count").saturating_sub(at(b, "lb_balanced"));
                out.push(share_row(
                    &format!("balance {name}, {ty}, found imbalance"),
                    (found(gb), gn),
                    (found(mb), mn),
                ));
                if found(gb) > 0 || found(mb) > 0 {
                    // How much there was to move (0 where none found).
                    let mean = |b| mean_imbalance(b, ty, name).unwrap_or(0.0);
                    out.push(row(
                        format!("balance {name}, {ty}, imbalance found"),
                        mean(gb),
                        mean(mb),
                    ));
                    out.push(share_row(
                        &format!("balance {name}, {ty}, failed"),
                        (at(gb, "lb_failed"), found(gb)),
                        (at(mb, "lb_failed"), found(mb)),
                    ));
                    out.push(count_row(
                        format!("balance {name}, {ty}, gained"),
                        at(gb, "lb_gained"),
                        at(mb, "lb_gained"),
                    ));
                }
            }
        }
    }
    if g.switches > 0 || m.switches > 0 {
        out.push(row(
            "events a CPU logs in a row".into(),
            g.stretch_events as f64,
            m.stretch_events as f64,
        ));
    }
    out.push(row(
        "idle while work waited".into(),
        g.wasted_frac(),
        m.wasted_frac(),
    ));
    // Where the guest's record has its periodic balances (`B` lines):
    // how often an idle CPU's balance met a task waiting in its LLC,
    // beside how much of its idle time did. Ticks that come whatever
    // the state meet it as often as the time does; the TCG guest's
    // vCPU takes its tick on its turn, and whether that comes depends
    // on what the others run.
    if g.tick_balances > 0 {
        out.push(share_row(
            "idle tick balances, work waiting in the LLC",
            (g.idle_tick_balances_llc_waiting, g.idle_tick_balances),
            (m.idle_tick_balances_llc_waiting, m.idle_tick_balances),
        ));
        out.push(row(
            "free idle time, work waiting in the LLC".into(),
            g.free_idle_llc_waiting_frac(),
            m.free_idle_llc_waiting_frac(),
        ));
    }
    // Where the guest's record has its ticks: what became of an idle
    // CPU's, by the state at the tick's instant, beside the model's (the
    // check that the odds `--wake-idle-us guest` gives are the odds its
    // run shows; ticks that come whatever the state are all taken at
    // once).
    let (gt, mt) = (&g.tick_turns, &m.tick_turns);
    if !gt.is_empty() {
        // The idle classes, whose odds `IdleTickTurn` models.
        for class in TickClass::ALL.into_iter().filter(|&c| c != TickClass::Busy) {
            if gt.total(class) == 0 && mt.total(class) == 0 {
                continue;
            }
            for fate in [TickFate::AtOnce, TickFate::Lost] {
                out.push(share_row(
                    &format!("idle ticks, {}, {}", class.name(), fate.name()),
                    (gt.count(class, fate), gt.total(class)),
                    (mt.count(class, fate), mt.total(class)),
                ));
            }
        }
        // A busy vCPU's tick under TCG: the model takes every one unless
        // run with `--tcg-rr`, so this row says how far that is from the
        // guest's turns.
        let busy = TickClass::Busy;
        if gt.total(busy) > 0 || mt.total(busy) > 0 {
            out.push(share_row(
                "busy ticks, lost",
                (gt.count(busy, TickFate::Lost), gt.total(busy)),
                (mt.count(busy, TickFate::Lost), mt.total(busy)),
            ));
        }
    }
    // A row of one field of both sides, in `unit` ns (1e3: us, 1e6: ms).
    let field =
        |name: &str, f: Field, unit: f64| row(name.into(), f(g) as f64 / unit, f(m) as f64 / unit);
    if g.idle_wakeups > 0 || m.idle_wakeups > 0 {
        out.push(field(
            "wakeup to idle CPU, us",
            |x| x.idle_wakeup_latency_ns,
            1e3,
        ));
    }
    if g.wake_list_wakeups > 0 || m.wake_list_wakeups > 0 {
        out.push(field(
            "wake list, waking to wakeup, us",
            |x| x.wake_list_latency_ns,
            1e3,
        ));
    }
    if g.wake_list_busy_wakeups > 0 || m.wake_list_busy_wakeups > 0 {
        out.push(field(
            "wake list, busy CPU across LLCs, us",
            |x| x.wake_list_busy_latency_ns,
            1e3,
        ));
    }
    if g.resched_busy_wakeups > 0 || m.resched_busy_wakeups > 0 {
        out.push(field(
            "wakeup preempts a busy CPU elsewhere, us",
            |x| x.resched_busy_latency_ns,
            1e3,
        ));
    }
    if g.fork_idle > 0 || m.fork_idle > 0 {
        out.push(field(
            "fork to run, idle CPU, us",
            |x| x.fork_idle_latency_ns,
            1e3,
        ));
    }
    if g.busy_wakeups > 0 || m.busy_wakeups > 0 {
        out.push(field(
            "wakeup to run, busy CPU, us",
            |x| x.busy_wakeup_latency_ns,
            1e3,
        ));
        out.push(field(
            "wakeup to run, busy, p90 us",
            |x| x.busy_wakeup_latency_p90_ns,
            1e3,
        ));
    }
    // The guest's module counters, where its trace has the run's own.
    if let Some(((gt, gstolen), (mt, mstolen))) = counted(gs.steal, ms.steal) {
        let frac = |s: u64, t: u64| s as f64 / (t as f64).max(1.0);
        out.push(row(
            "STEAL success".into(),
            frac(gstolen, gt),
            frac(mstolen, mt),
        ));
        out.push(row("STEAL tries".into(), gt as f64, mt as f64));
    }
    // Where newidle balancing stops climbing: the walk's steps that its
    // cost test ended (the guest's clock reads a balance at hundreds of
    // times its cost under TCG, `Config::lb_clock_factor`).
    if let Some(((gn, gstop), (mn, mstop))) = counted(gs.newidle, ms.newidle) {
        out.push(share_row(
            "newidle walk steps stopped",
            (gstop, gn),
            (mstop, mn),
        ));
    }
    // How often an idle CPU's balance gets as far as the idle-CPU test
    // (spare capacity at home, a busiest group not overloaded), and how
    // often the idle CPUs' counts then say there is nothing to move:
    // the idle balancers' state, apart from what they moved.
    if let Some(((gc, gbal), (mc, mbal))) = counted(gs.idle_cpus, ms.idle_cpus) {
        out.push(row("idle-CPU test, calls".into(), gc as f64, mc as f64));
        out.push(share_row("idle-CPU test, balanced", (gbal, gc), (mbal, mc)));
    }
    // How often a load-based balance weighed a task for detach, and how
    // often its load was too big for the imbalance left (Guittot's 1/4,
    // `detach_tasks()`): the detach, apart from the tasks it met running
    // or hot.
    if let Some(((gc, gskip), (mc, mskip))) = counted(gs.detach_skip, ms.detach_skip) {
        out.push(row("detach load test, calls".into(), gc as f64, mc as f64));
        out.push(share_row(
            "detach load test, skipped",
            (gskip, gc),
            (mskip, mc),
        ));
    }
    out.push(row("idle".into(), g.idle_frac(), m.idle_frac()));
    out.push(field("wakeups", |x| x.wakeups, 1.0));
    out.push(field("context switches", |x| x.switches, 1.0));
    out.push(field("task CPU ms", |x| x.task_cpu_ns, 1e6));
    out.push(field("span ms", |x| x.span_ns, 1e6));
    out
}

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}"))
}

/// "yes", or "no" and why it may still not be the model's gap: as the
/// control, or counting noise.
fn verdict(row: &Row) -> &'static str {
    if row.within {
        "yes"
    } else if row.as_control {
        "no, as control"
    } else if row.noise {
        "no, counting noise"
    } else {
        "no"
    }
}

fn num(v: f64) -> String {
    if v != 0.0 && v.abs() < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.0}")
    }
}

/// The goal's rows (per-level migrations and LLC placement) of a set of
/// replays, by verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Rows graded.
    pub scored: usize,
    /// Within 20% of the guest.
    pub within: usize,
    /// Not, but within 20% of the control's ratio.
    pub as_control: usize,
    /// Neither, but within counting noise.
    pub noise: usize,
}

impl Census {
    /// The model's own gaps: the rows none of the above explains.
    pub fn own(&self) -> usize {
        self.scored
            .saturating_sub(self.within)
            .saturating_sub(self.as_control)
            .saturating_sub(self.noise)
    }
}

/// [`Census`] of `all`.
pub fn census(all: &[Replayed]) -> Census {
    let mut c = Census::default();
    for row in all.iter().flat_map(rows).filter(|row| graded(&row.metric)) {
        c.scored += 1;
        c.within += usize::from(row.within);
        c.as_control += usize::from(row.as_control);
        c.noise += usize::from(row.noise);
    }
    c
}

/// The goal's rows of one guest recording against another of the same
/// experiment in the same state (`schedsim replay --rerun DIR`): how far
/// the guest is from itself run again, which bounds what a model can be
/// asked to reach row by row. `earlier` stands where the guest stands in
/// [`rows`], `guest` where the model does.
pub fn rerun_rows(earlier: &Metrics, guest: &Metrics) -> Vec<Row> {
    let mut out: Vec<Row> = compare(Side::measures(earlier), Side::measures(guest))
        .into_iter()
        .filter(|r| graded(&r.metric))
        .collect();
    for r in &mut out {
        r.noise &= !r.within;
    }
    out
}

/// The model's goal rows parted by whether the guest reproduced them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RerunCensus {
    /// Traces with a rerun.
    pub traces: usize,
    /// The model's goal rows of those traces.
    pub scored: usize,
    /// Of them, the rows whose guest value the rerun has within 20%
    /// (both 0 counts as within).
    pub reproduced: usize,
    /// Of the others, those within counting noise.
    pub reproduced_noise: usize,
    /// The model within 20% of the guest, on the rows reproduced and on
    /// the others.
    pub within: [usize; 2],
    /// The model's own gaps (neither within, as the control, nor
    /// counting noise), on the rows reproduced and on the others.
    pub own: [usize; 2],
    /// Of those own gaps, the ones no farther from this recording (by
    /// the log of the ratio) than the guest's rerun is: a gap the size of
    /// the guest's own from run to run.
    pub own_as_rerun: usize,
}

/// [`RerunCensus`] of `all`, each with its rerun's rows
/// ([`rerun_rows`]) where it has one.
pub fn rerun_census(all: &[Replayed], reruns: &[Option<Vec<Row>>]) -> RerunCensus {
    let mut c = RerunCensus::default();
    for (r, rerun) in all.iter().zip(reruns) {
        let Some(rerun) = rerun else {
            continue;
        };
        c.traces += 1;
        for row in rows(r).into_iter().filter(|row| graded(&row.metric)) {
            let again = rerun.iter().find(|x| x.metric == row.metric);
            // A row the rerun lacks counted none in either recording.
            let reproduced = again.is_none_or(|x| x.within);
            c.scored += 1;
            c.reproduced += usize::from(reproduced);
            c.reproduced_noise += usize::from(again.is_some_and(|x| x.noise));
            let k = usize::from(!reproduced);
            c.within[k] += usize::from(row.within);
            let own = !row.within && !row.as_control && !row.noise;
            c.own[k] += usize::from(own);
            // |ln(model / guest)| <= |ln(rerun / guest)|; a 0 is
            // infinitely far, and the guest's 0 has no ratio.
            let far = |x: f64| (x / row.guest).ln().abs();
            c.own_as_rerun += usize::from(
                own && row.guest > 0.0 && again.is_some_and(|x| far(row.model) <= far(x.guest)),
            );
        }
    }
    c
}

/// [`RerunCensus`] as a line of the table.
pub fn rerun_line(c: &RerunCensus) -> String {
    let other = c.scored.saturating_sub(c.reproduced);
    format!(
        "the guest's own rerun ({} traces): within 20% of this recording in {} of {} rows, \
         counting noise {} more; where it reproduced itself the model is within 20% in {} \
         of {} (its own gap {}), elsewhere in {} of {} (its own gap {}); {} of the model's \
         own gaps are no farther from this recording than the rerun is\n",
        c.traces,
        c.reproduced,
        c.scored,
        c.reproduced_noise,
        c.within[0],
        c.reproduced,
        c.own[0],
        c.within[1],
        other,
        c.own[1],
        c.own_as_rerun
    )
}

/// What a census over several seeds spans (`schedsim replay --seeds
/// N`): the row counts move with the model's seed by more than most
/// single changes to the model do, so a count from one seed is no
/// finding. The first seed's census comes first.
pub fn seeds_line(first_seed: u64, censuses: &[Census]) -> String {
    let span = |f: fn(&Census) -> usize| {
        let mut v: Vec<usize> = censuses.iter().map(f).collect();
        v.sort_unstable();
        let mid = v.get(v.len() / 2).copied().unwrap_or(0);
        match (v.first(), v.last()) {
            (Some(lo), Some(hi)) if lo != hi => format!("{lo}-{hi} (median {mid})"),
            (Some(lo), _) => lo.to_string(),
            _ => "-".into(),
        }
    };
    let last = first_seed.saturating_add(censuses.len().saturating_sub(1) as u64);
    format!(
        "over the model's seeds {first_seed}-{last}: within 20% {} of {} rows; the model's own gap {}\n",
        span(|c| c.within),
        span(|c| c.scored),
        span(Census::own)
    )
}

/// The report as text.
pub fn table(all: &[Replayed]) -> String {
    let mut s = String::new();
    for r in all {
        let _ = writeln!(
            s,
            "== {} {} {} ({} {}, model {}): {} tasks{}{}",
            r.topology,
            r.experiment,
            r.state,
            r.flag,
            r.guest_differs
                .map_or("differs -".to_string(), |d| format!("guest differs {d}")),
            r.model_acted
                .map_or("-", |a| if a { "rule acted" } else { "rule inert" }),
            r.tasks,
            if r.wake_idle_ns > 0 || r.wake_list_ns > 0 || r.fork_idle_ns > 0 {
                format!(
                    ", model wakeup to idle {} us, wake list {} us ({} us to a busy CPU across LLCs), fork to idle {} us, preempting a busy CPU elsewhere {} us",
                    r.wake_idle_ns / 1000,
                    r.wake_list_ns / 1000,
                    r.wake_list_busy_ns / 1000,
                    r.fork_idle_ns / 1000,
                    r.resched_busy_ns / 1000
                )
            } else {
                String::new()
            },
            if r.cut {
                ", the run's start (buffers filled)"
            } else {
                ""
            },
        );
        if !r.unknown_features.is_empty() {
            let _ = writeln!(
                s,
                "   features the model lacks: {}",
                r.unknown_features.join(" ")
            );
        }
        for (who, e) in [
            ("model", &r.model_early_wakes),
            ("control", &r.control_early_wakes),
        ] {
            if e.total() > 0 {
                let _ = writeln!(
                    s,
                    "   {who}: {} wakes found the wakee not yet blocked (queued {}, running {}, other {})",
                    e.total(),
                    e.queued,
                    e.running,
                    e.other
                );
            }
        }
        for (who, stuck) in [("model", r.model_stuck_ns), ("control", r.control_stuck_ns)] {
            if let Some(ns) = stuck {
                let _ = writeln!(
                    s,
                    "   {who}: stuck at {} ms, every script left blocked and one with work after its block (a wake went to another block); the run ends there",
                    ns / 1_000_000
                );
            }
        }
        let _ = writeln!(
            s,
            "   {:<W$} {:>10} {:>10} {:>7} {:>7}  within 20%",
            "measure", "guest", "model", "ratio", "control"
        );
        for row in rows(r) {
            // An own gap says where it sits (`gaps::Signature`).
            let said = match super::gaps::signature(r, &row) {
                Some(sig) => format!("no: {}", sig.name()),
                None => verdict(&row).to_string(),
            };
            let _ = writeln!(
                s,
                "   {:<W$} {:>10} {:>10} {:>7} {:>7}  {said}",
                row.metric,
                num(row.guest),
                num(row.model),
                ratio(row.ratio),
                ratio(row.control),
            );
        }
    }
    let _ = writeln!(s);
    let c = census(all);
    let _ = writeln!(
        s,
        "per-level migrations and LLC placement within 20% of the guest: {} of {} rows;\n\
         not, but within 20% of the control's ratio (what replay makes of the model's own run): {};\n\
         neither, but within counting noise (two standard deviations): {};\n\
         the model's own gap: {}",
        c.within,
        c.scored,
        c.as_control,
        c.noise,
        c.own()
    );
    let zero = EarlyWakes::default();
    let model = all.iter().fold(zero, |a, r| a.plus(&r.model_early_wakes));
    let control = all.iter().fold(zero, |a, r| a.plus(&r.control_early_wakes));
    for (who, e) in [
        ("model (the guest's had blocked)", model),
        ("control (the model's had blocked)", control),
    ] {
        let _ = writeln!(
            s,
            "wakes that found the wakee not yet blocked, {who}: {} (queued {}, running {}, other {})",
            e.total(),
            e.queued,
            e.running,
            e.other
        );
    }
    s.push_str(&summary(all));
    for (off, on) in pairs(all) {
        let _ = writeln!(
            s,
            "-- {} {}: on/off, guest against model",
            on.topology, on.experiment
        );
        let (ro, rn) = (rows(off), rows(on));
        for (a, b) in ro
            .iter()
            .filter_map(|a| rn.iter().find(|b| b.metric == a.metric).map(|b| (a, b)))
        {
            let q = |x: f64, y: f64| {
                if x != 0.0 {
                    format!("{:.2}", y / x)
                } else {
                    "-".into()
                }
            };
            let _ = writeln!(
                s,
                "   {:<W$} guest {:>6}  model {:>6}",
                a.metric,
                q(a.guest, b.guest),
                q(a.model, b.model)
            );
        }
    }
    s
}

/// Per measure, over every trace: rows, rows within 20%, rows as the
/// control (not within, but within 20% of the control's ratio), rows
/// within counting noise (neither, but [`counting_noise`]), the
/// median and range of model/guest (where the model is off, and which
/// way), and the median of the control's ratio (where replay itself is).
pub fn summary(all: &[Replayed]) -> String {
    let mut by: Vec<(String, Vec<Row>)> = Vec::new();
    for r in all {
        for row in rows(r) {
            match by.iter_mut().find(|(m, _)| *m == row.metric) {
                Some((_, v)) => v.push(row),
                None => by.push((row.metric.clone(), vec![row])),
            }
        }
    }
    let mut s = format!(
        "\n{:<W$} {:>5} {:>7} {:>7} {:>6} {:>8} {:>15} {:>8}\n",
        "measure, every trace", "rows", "within", "as ctl", "noise", "median", "range", "control"
    );
    let sorted = |xs: &mut Vec<f64>| {
        xs.retain(|x| x.is_finite());
        xs.sort_by(f64::total_cmp);
    };
    for (metric, v) in by {
        let mut ratios: Vec<f64> = v.iter().filter_map(|r| r.ratio).collect();
        sorted(&mut ratios);
        let mut control: Vec<f64> = v.iter().filter_map(|r| r.control).collect();
        sorted(&mut control);
        let within = v.iter().filter(|r| r.within).count();
        let as_control = v.iter().filter(|r| r.as_control).count();
        let noise = v.iter().filter(|r| r.noise).count();
        // No ratio where the guest counted none in every trace: "-".
        let spread = match (ratios.first(), ratios.last()) {
            (Some(&lo), Some(&hi)) => {
                format!("{:>8.2} {:>7.2}-{:<7.2}", ratios[ratios.len() / 2], lo, hi)
            }
            _ => format!("{:>8} {:>15}", "-", "-"),
        };
        let ctl = control
            .get(control.len() / 2)
            .map_or("-".to_string(), |c| format!("{c:.2}"));
        let _ = writeln!(
            s,
            "{:<W$} {:>5} {:>7} {:>7} {:>6} {spread} {ctl:>8}",
            metric,
            v.len(),
            within,
            as_control,
            noise
        );
    }
    s
}

/// The experiments given in both states: (off, on).
pub fn pairs(all: &[Replayed]) -> Vec<(&Replayed, &Replayed)> {
    all.iter()
        .filter(|r| r.state == "off")
        .filter_map(|off| {
            all.iter()
                .find(|on| {
                    on.state == "on"
                        && on.topology == off.topology
                        && on.experiment == off.experiment
                })
                .map(|on| (off, on))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The own gaps are what no verdict explains, and the seeds' line
    /// gives each count's span with its median, or the one value.
    #[test]
    fn census_and_its_span_over_seeds() {
        let c = |scored, within, as_control, noise| Census {
            scored,
            within,
            as_control,
            noise,
        };
        assert_eq!(c(10, 4, 2, 1).own(), 3);
        assert_eq!(c(3, 4, 0, 0).own(), 0, "saturates");
        assert_eq!(
            seeds_line(1, &[c(10, 4, 2, 1), c(10, 6, 1, 1), c(10, 5, 2, 1)]),
            "over the model's seeds 1-3: within 20% 4-6 (median 5) of 10 rows; \
             the model's own gap 2-3 (median 2)\n"
        );
        assert!(seeds_line(7, &[c(1, 1, 0, 0)]).starts_with("over the model's seeds 7-7:"));
    }

    #[test]
    fn within_twenty_percent() {
        assert!(row("x".into(), 100.0, 119.0).within);
        assert!(!row("x".into(), 100.0, 121.0).within);
        assert!(!row("x".into(), 100.0, 79.0).within);
        assert!(row("x".into(), 0.0, 0.0).within);
        assert!(!row("x".into(), 0.0, 1.0).within);
        assert_eq!(row("x".into(), 0.0, 1.0).ratio, None);
    }

    #[test]
    fn too_few_events_to_judge() {
        // Counts: a move against none, 2 against 6 are noise; 25 against
        // 111 and 1476 against 987 are not (2 sd: 9.8 and 99).
        assert!(counting_noise((0, 0), (1, 0), false));
        assert!(counting_noise((2, 0), (6, 0), false));
        assert!(!counting_noise((25, 0), (111, 0), false));
        assert!(!counting_noise((1476, 0), (987, 0), false));
        // Shares: 0 of 1 against 1 of 1 is noise, 787 of 1000 against
        // 993 of 1000 is not; no wakeups on a side judges nothing.
        assert!(counting_noise((0, 1), (1, 1), true));
        assert!(!counting_noise((787, 1000), (993, 1000), true));
        assert!(counting_noise((5, 10), (0, 0), true));
        // A row says noise only where it is neither within nor as the
        // control: 1 against 0 is noise, 1000 against 0 is the model's.
        let mut r = wakeups(1000, 1000);
        r.guest.migrations = crate::replay::metrics::ByLevel {
            levels: vec!["MC"],
            wakeup: vec![0],
            balance: vec![1000],
            fork: vec![0],
        };
        r.model.migrations = crate::replay::metrics::ByLevel {
            wakeup: vec![1],
            balance: vec![0],
            ..r.guest.migrations.clone()
        };
        let rs = rows(&r);
        let get = |m: &str| rs.iter().find(|x| x.metric == m).unwrap().clone();
        let (w, b) = (get("migrations wakeup MC"), get("migrations balance MC"));
        assert!(w.noise && verdict(&w) == "no, counting noise", "{w:?}");
        assert!(!b.noise && verdict(&b) == "no", "{b:?}");
        assert!(!get("wakeups").noise);
    }

    /// A replay whose model made `model` wakeups of the guest's 1000, and
    /// whose control made `control` of the model's.
    fn wakeups(model: u64, control: u64) -> Replayed {
        let mut r = Replayed {
            topology: "smt2".into(),
            preset: "smt2".into(),
            experiment: "t".into(),
            state: "on".into(),
            flag: "-".into(),
            tasks: 2,
            ..Replayed::default()
        };
        r.guest.wakeups = 1000;
        r.model.wakeups = model;
        r.control.wakeups = control;
        r
    }

    fn wakeup_row(r: &Replayed) -> Row {
        rows(r).into_iter().find(|x| x.metric == "wakeups").unwrap()
    }

    /// The idle tick rows need the guest's periodic balances: a trace
    /// recorded without its `B` lines has none to compare.
    #[test]
    fn idle_tick_rows_come_with_the_guests_calls() {
        const ROW: &str = "idle tick balances, work waiting in the LLC";
        let mut r = wakeups(1000, 1000);
        r.model.tick_balances = 50;
        assert!(rows(&r).iter().all(|x| x.metric != ROW));
        (r.guest.tick_balances, r.guest.idle_tick_balances) = (100, 40);
        r.guest.idle_tick_balances_llc_waiting = 4;
        (
            r.model.idle_tick_balances,
            r.model.idle_tick_balances_llc_waiting,
        ) = (40, 12);
        (r.guest.free_idle_ns, r.guest.free_idle_llc_waiting_ns) = (1000, 300);
        (r.model.free_idle_ns, r.model.free_idle_llc_waiting_ns) = (1000, 300);
        let all = rows(&r);
        let get = |m: &str| all.iter().find(|x| x.metric == m).unwrap();
        let b = get(ROW);
        assert_eq!((b.guest, b.model), (0.1, 0.3));
        assert!(!b.within && !b.noise, "{b:?}");
        assert!(get("free idle time, work waiting in the LLC").within);
        assert!(all.iter().all(|x| !x.metric.starts_with("idle ticks,")));
        // The ticks' fates, where the guest's record has its ticks: a
        // share of each class's, for the classes either side has.
        r.guest.tick_turns.counts[0] = [80, 10, 10];
        r.model.tick_turns.counts[0] = [60, 0, 40];
        r.model.tick_turns.counts[2] = [0, 5, 5];
        let all = rows(&r);
        let get = |m: &str| all.iter().find(|x| x.metric == m).unwrap();
        let once = get("idle ticks, none waiting, at once");
        assert_eq!((once.guest, once.model), (0.8, 0.6));
        assert_eq!(get("idle ticks, none waiting, lost").model, 0.4);
        assert_eq!(get("idle ticks, wakeup pending, lost").guest, 0.0);
        assert!(all
            .iter()
            .all(|x| !x.metric.starts_with("idle ticks, task waiting")));
        assert!(all.iter().all(|x| x.metric != "busy ticks, lost"));
        // A busy CPU's ticks: one row, the share lost.
        r.guest.tick_turns.counts[3] = [0, 30, 10];
        r.model.tick_turns.counts[3] = [0, 40, 0];
        let all = rows(&r);
        let busy = all.iter().find(|x| x.metric == "busy ticks, lost").unwrap();
        assert_eq!((busy.guest, busy.model), (0.25, 0.0));
        assert!(!busy.within);
    }

    /// The guest's rerun parts the model's goal rows: those the guest
    /// reproduced within 20%, and the others; a trace without a rerun
    /// counts in neither.
    #[test]
    fn the_guests_rerun_parts_the_goal_rows() {
        let lv = |v: Vec<u64>| super::super::metrics::ByLevel {
            levels: vec!["SMT", "MC"],
            wakeup: v.clone(),
            fork: vec![0, 0],
            balance: v,
        };
        let mut r = wakeups(1000, 1000);
        r.guest.migrations = lv(vec![100, 50]);
        // The model: SMT within, MC its own gap (0.4, the control 1.0).
        r.model.migrations = lv(vec![100, 20]);
        r.control.migrations = lv(vec![100, 20]);
        // The guest run again: SMT out (60 of 100), MC as this one.
        let mut earlier = r.guest.clone();
        earlier.migrations = lv(vec![60, 50]);
        let rr = rerun_rows(&earlier, &r.guest);
        assert_eq!(rr.len(), 4, "{rr:?}");
        let smt = rr
            .iter()
            .find(|x| x.metric == "migrations wakeup SMT")
            .unwrap();
        assert_eq!(
            (smt.guest, smt.model, smt.within, smt.noise),
            (60.0, 100.0, false, false)
        );
        let c = rerun_census(std::slice::from_ref(&r), &[Some(rr)]);
        assert_eq!(
            c,
            RerunCensus {
                traces: 1,
                scored: 4,
                reproduced: 2,
                reproduced_noise: 0,
                within: [0, 2],
                own: [2, 0],
                own_as_rerun: 0,
            }
        );
        // A rerun as far off as the model (MC 20 again): those gaps are
        // the guest's own size.
        let mut far = r.guest.clone();
        far.migrations = lv(vec![60, 20]);
        let c2 = rerun_census(
            std::slice::from_ref(&r),
            &[Some(rerun_rows(&far, &r.guest))],
        );
        assert_eq!(
            (c2.reproduced, c2.own, c2.own_as_rerun),
            (0, [0, 2], 2),
            "{c2:?}"
        );
        assert!(
            rerun_line(&c).contains("in 2 of 4 rows"),
            "{}",
            rerun_line(&c)
        );
        assert_eq!(rerun_census(&[r], &[None]), RerunCensus::default());
    }

    #[test]
    fn a_gap_the_size_of_the_controls_is_told_apart() {
        // 0.70 of the guest's, where replay loses a quarter of an exact
        // run's: out by the 20% rule, but as the control.
        let x = wakeup_row(&wakeups(700, 525));
        assert_eq!(x.control, Some(0.75));
        assert!(!x.within && x.as_control, "{x:?}");
        assert_eq!(verdict(&x), "no, as control");
        // The same gap where replay loses nothing: the model's own.
        let x = wakeup_row(&wakeups(700, 700));
        assert!(!x.within && !x.as_control, "{x:?}");
        assert_eq!(verdict(&x), "no");
        // Within 20% stays "yes", whatever the control.
        let x = wakeup_row(&wakeups(900, 450));
        assert!(x.within && !x.as_control, "{x:?}");
        // Ratios, not differences: 2.5 against a control of 2.2 is as
        // the control; 0.30 against 0.45 is not.
        let x = wakeup_row(&wakeups(2500, 5500));
        assert!(x.as_control, "{x:?}");
        let x = wakeup_row(&wakeups(300, 135));
        assert!(!x.as_control, "{x:?}");
        // A control of 0 judges nothing.
        let x = wakeup_row(&wakeups(700, 0));
        assert!(!x.as_control, "{x:?}");
        let t = table(&[wakeups(700, 525)]);
        assert!(
            t.contains("not, but within 20% of the control's ratio"),
            "{t}"
        );
    }

    #[test]
    fn a_busy_balances_imbalance_is_its_mean_over_those_that_found_one() {
        let b: BTreeMap<String, u64> = [
            ("lb_count_busy@MC", 10),
            ("lb_balanced_busy@MC", 6),
            ("lb_imbalance_busy@MC", 2000),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(mean_imbalance(&b, "busy", "MC"), Some(500.0));
        assert_eq!(mean_imbalance(&b, "busy", "PKG"), None);
    }
}
