// SPDX-License-Identifier: GPL-2.0

//! `schedsim calibrate`: the simulator against the guest kernel it models.
//!
//! No kernel code is mirrored. It reads the guest's numbers as
//! `scripts/bench_report.py --json` writes them (`make bench`'s
//! `Documentation/results/bench.json`: per topology, experiment, state and
//! metric the runs after warm-up, their median and the bootstrap 95%
//! interval of that median), runs the same experiment in the model (the
//! topology preset of the guest's `-smp`, the same task mix and duration,
//! the flag off and on as the guest had it) and puts each simulated number
//! beside the guest's. A metric agrees only when the simulated value lies
//! inside the guest's interval; nothing is averaged away.
//!
//! Counters are compared per second: the guest's per run, divided by the
//! run's wall time (`*_per_s` in the JSON), the model's over its simulated
//! time. hackbench's `time_s` is, in the model, the messages hackbench
//! sends (`groups x 20 x 20 x loops`) over the model's message rate.

use crate::experiments::rst_table;
use crate::rng::Rng;
use crate::sim::Config;
use crate::stats::RunResult;
use crate::topology::Topology;
use crate::workload::Workload;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One metric of one state of the guest, as `bench_report.py --json`
/// writes it (`ci95` is null with fewer runs than its `MIN_RUNS_CI`).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct GuestMetric {
    /// The runs after warm-up.
    pub samples: Vec<f64>,
    /// Their median.
    pub median: f64,
    /// The bootstrap 95% interval of the median (None: too few runs).
    pub ci95: Option<(f64, f64)>,
}

impl GuestMetric {
    /// The interval a simulated value must fall in: the 95% interval, or
    /// with too few runs for one, the runs' range.
    pub fn interval(&self) -> (f64, f64) {
        self.ci95.unwrap_or_else(|| {
            let lo = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = self
                .samples
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max);
            if lo.is_finite() && hi.is_finite() {
                (lo, hi)
            } else {
                (self.median, self.median)
            }
        })
    }
}

/// One experiment of one guest topology.
#[derive(Clone, Debug, PartialEq)]
pub struct GuestExperiment {
    /// bench.sh's topology name.
    pub topology: String,
    /// Experiment id.
    pub id: String,
    /// `flag` or `module`.
    pub kind: String,
    /// The flag (`BASE+...+FLAG`: the bases on in both states).
    pub flag: String,
    /// The guest's command.
    pub command: String,
    /// Per state (`off`, `on`): metric name to its numbers.
    pub states: BTreeMap<String, BTreeMap<String, GuestMetric>>,
}

/// `bench_report.py --json`'s document, as far as calibration reads it;
/// every field named here is required (a missing one is an error with
/// its path, not a silent default), others are ignored.
#[derive(serde::Deserialize)]
struct GuestDoc {
    topologies: BTreeMap<String, GuestTopology>,
}

#[derive(serde::Deserialize)]
struct GuestTopology {
    experiments: BTreeMap<String, GuestExperimentJson>,
}

#[derive(serde::Deserialize)]
struct GuestExperimentJson {
    kind: String,
    flag: String,
    command: String,
    states: BTreeMap<String, GuestState>,
}

#[derive(serde::Deserialize)]
struct GuestState {
    metrics: BTreeMap<String, GuestMetric>,
}

/// Parses `bench_report.py --json`'s document.
pub fn parse_guest(text: &str) -> Result<Vec<GuestExperiment>, String> {
    // Parsed once; the format is read first, so that another document
    // says what it is rather than which field it lacks.
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("guest JSON does not parse: {e}"))?;
    let format = value
        .get("format")
        .and_then(|f| f.as_str())
        .unwrap_or("")
        .to_string();
    if !format.starts_with("sched-lb-rs bench ") {
        return Err(format!(
            "guest JSON: format '{format}', expected 'sched-lb-rs bench N' (scripts/bench_report.py --json)"
        ));
    }
    let doc: GuestDoc = serde_json::from_value(value)
        .map_err(|e| format!("guest JSON ({format}) is not bench_report.py's layout: {e}"))?;
    let mut out = Vec::new();
    for (topo, t) in doc.topologies {
        for (id, e) in t.experiments {
            let states = e
                .states
                .into_iter()
                .map(|(state, sv)| (state, sv.metrics))
                .collect();
            out.push(GuestExperiment {
                topology: topo.clone(),
                id,
                kind: e.kind,
                flag: e.flag,
                command: e.command,
                states,
            });
        }
    }
    Ok(out)
}

/// The model's preset for a bench.sh topology (`smp_of`/`domains_of`).
pub fn preset_of(topology: &str) -> Option<&'static str> {
    Some(match topology {
        "guittot" => "2x4",
        "x5472" => "x5472",
        "smt2" => "qemu8",
        "smt4" => "smt4",
        "numa2" => "numa2",
        "llc16" => "llc16",
        _ => return None,
    })
}

/// The hackbench model's free parameters: work per message on each side
/// and how many messages a receiver holds before its senders block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HackbenchModel {
    /// Sender work per message, us.
    pub send_us: u64,
    /// Receiver work per message, us.
    pub recv_us: u64,
    /// Receiver queue depth, messages.
    pub queue: u32,
}

impl Default for HackbenchModel {
    /// The fit of `Documentation/schedsim.rst` ("Calibration against the
    /// guest") to the llc16 guest's hackbench.
    fn default() -> Self {
        Self {
            send_us: FIT_SEND_US,
            recv_us: FIT_RECV_US,
            queue: FIT_QUEUE,
        }
    }
}

/// Fitted sender work per message, us (see [`HackbenchModel`]).
pub const FIT_SEND_US: u64 = 3_900;
/// Fitted receiver work per message, us.
pub const FIT_RECV_US: u64 = 1_950;
/// Fitted receiver queue depth.
pub const FIT_QUEUE: u32 = 8;

/// The buddy pair's work per message, us, fitted to the x5472 guest's round
/// trips (`bench/pingpong.c`) in the checked-in reference run: 1380-1498
/// round trips a second (medians) is about 680 us of guest time a round
/// trip, two messages, under TCG; the fit follows the host's speed and is
/// redone with each reference run (220 us for the first). Only two of
/// the guest's vCPUs are ever busy, so the fit does not depend on how many
/// it has. The model's default (20 us) is a native machine's.
pub const FIT_BUDDY_WORK_US: u64 = 330;

/// hackbench's default file descriptors per group (`-f`): 20 senders and
/// 20 receivers.
const HACKBENCH_FDS: u64 = 20;

/// What the model runs for one guest experiment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimSpec {
    /// Preset.
    pub preset: &'static str,
    /// Workload text.
    pub workload: String,
    /// Flags of the off state and of the on state.
    pub flags: [String; 2],
    /// Simulated time, ms.
    pub duration_ms: u64,
    /// hackbench: the messages one run sends.
    pub messages_total: Option<u64>,
    /// pingpong: the messages of one round.
    pub per_round: Option<u64>,
}

/// Value of `-x N` in a command's words.
fn opt_after(words: &[&str], opt: &str) -> Option<u64> {
    let i = words.iter().position(|w| *w == opt)?;
    words.get(i.checked_add(1)?)?.parse().ok()
}

/// The model's version of a guest experiment, or why there is none.
/// `guest_ms` is the guest's run time (median), used where the workload
/// has no duration of its own (hackbench runs until its messages are
/// sent); `max_ms` caps the simulated time.
pub fn sim_spec(
    e: &GuestExperiment,
    model: &HackbenchModel,
    guest_ms: u64,
    max_ms: u64,
) -> Result<SimSpec, String> {
    let preset = preset_of(&e.topology)
        .ok_or_else(|| format!("no preset for guest topology '{}'", e.topology))?;
    if e.kind != "flag" {
        return Err(format!(
            "kind '{}' (module loaded or not) is not modelled",
            e.kind
        ));
    }
    let mut parts: Vec<&str> = e.flag.split('+').filter(|s| !s.is_empty()).collect();
    let flag = parts
        .pop()
        .ok_or_else(|| format!("{}: no flag", e.id))?
        .to_string();
    let bases: String = parts.iter().map(|b| format!("+{b},")).collect();
    let flags = [format!("{bases}-{flag}"), format!("{bases}+{flag}")];
    // Refuse a flag the model does not have before running anything.
    crate::flags::Flags::default().apply(&flags[1])?;
    let words: Vec<&str> = e.command.split_whitespace().collect();
    let prog = words
        .first()
        .map_or("", |w| w.rsplit('/').next().unwrap_or(w));
    let cap = |ms: u64| ms.clamp(1, max_ms.max(1));
    let (workload, duration_ms, messages_total, per_round) = match prog {
        "spin" => {
            let n = words.get(1).and_then(|w| w.parse::<u32>().ok());
            let ms = words.get(2).and_then(|w| w.parse::<u64>().ok());
            let (Some(n), Some(ms)) = (n, ms) else {
                return Err(format!("cannot read '{}' as spin N MS", e.command));
            };
            (format!("fairness:{n}"), cap(ms), None, None)
        }
        "pingpong" => {
            let ms = words.get(1).and_then(|w| w.parse::<u64>().ok());
            let Some(ms) = ms else {
                return Err(format!("cannot read '{}' as pingpong MS", e.command));
            };
            (
                format!("buddy:1:{FIT_BUDDY_WORK_US}"),
                cap(ms),
                None,
                // One round: a message each way.
                Some(2),
            )
        }
        "hackbench" => {
            let groups = opt_after(&words, "-g").unwrap_or(10);
            let loops = opt_after(&words, "-l").unwrap_or(100);
            (
                format!(
                    "hackbench:{groups}:{HACKBENCH_FDS}:{}:{}:{}",
                    model.send_us, model.recv_us, model.queue
                ),
                cap(guest_ms),
                Some(
                    groups
                        .saturating_mul(HACKBENCH_FDS)
                        .saturating_mul(HACKBENCH_FDS)
                        .saturating_mul(loops),
                ),
                None,
            )
        }
        other => return Err(format!("workload '{other}' is not modelled")),
    };
    Ok(SimSpec {
        preset,
        workload,
        flags,
        duration_ms,
        messages_total,
        per_round,
    })
}

/// The metrics compared, in table order, with the model's value of each
/// (None: the model has no such number for this workload).
pub const METRICS: &[&str] = &[
    "time_s",
    "work_ratio",
    "min_cpu_ms",
    "max_cpu_ms",
    "rounds_per_s",
    "pair_migrations",
    "lb_count_per_s",
    "lb_count_busy_per_s",
    "lb_count_idle_per_s",
    "lb_count_newidle_per_s",
    "lb_gained_per_s",
    "lb_gained_newidle_per_s",
    "lb_failed_per_s",
    "alb_pushed_per_s",
    "sched_goidle_per_s",
    "ttwu_count_per_s",
    "ttwu_local_per_s",
    "ttwu_move_affine_per_s",
    "steal_calls_per_s",
    "steal_tried_per_s",
    "steal_attempts_per_s",
    "steal_stolen_per_s",
    "steal_success",
    "sis_select_calls_per_s",
    "sis_select_found_per_s",
    "sis_account_scans_per_s",
];

/// The model's value of `metric` in run `r` of `spec`.
pub fn sim_metric(r: &RunResult, spec: &SimSpec, metric: &str) -> Option<f64> {
    let secs = r.duration_ns as f64 / 1e9;
    if secs <= 0.0 {
        return None;
    }
    let totals = r.schedstat.totals();
    let work_ms: Vec<f64> = r.tasks.iter().map(|t| t.work_ns as f64 / 1e6).collect();
    let min = work_ms.iter().copied().fold(f64::INFINITY, f64::min);
    let max = work_ms.iter().copied().fold(0.0, f64::max);
    let is = |w: &str| spec.workload.starts_with(w);
    match metric {
        "time_s" => {
            let total = spec.messages_total? as f64;
            let rate = r.messages_per_s();
            (rate > 0.0).then(|| total / rate)
        }
        "work_ratio" if is("fairness") => (max > 0.0).then(|| min / max),
        "min_cpu_ms" if is("fairness") => Some(min),
        "max_cpu_ms" if is("fairness") => Some(max),
        "rounds_per_s" => Some(r.messages_per_s() / spec.per_round? as f64),
        "pair_migrations" if is("buddy") => {
            Some(r.tasks.iter().map(|t| t.migrations).sum::<u64>() as f64)
        }
        "steal_success" => {
            let tried = *totals.get("steal_tried")?;
            (tried > 0).then(|| *totals.get("steal_stolen").unwrap_or(&0) as f64 / tried as f64)
        }
        m => {
            let base = m.strip_suffix("_per_s")?;
            Some(*totals.get(base)? as f64 / secs)
        }
    }
}

/// A guest metric derived from two others run by run: `steal_success`,
/// stolen over tried, with its own bootstrap interval (as
/// `bench_report.py`'s, 4000 resamples, 95%).
fn derived_guest(mets: &BTreeMap<String, GuestMetric>, metric: &str) -> Option<GuestMetric> {
    let (num_m, den_m) = match metric {
        "steal_success" => ("steal_stolen", "steal_tried"),
        _ => return None,
    };
    let a = &mets.get(num_m)?.samples;
    let b = &mets.get(den_m)?.samples;
    let samples: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(_, &d)| d > 0.0)
        .map(|(&n, &d)| n / d)
        .collect();
    if samples.is_empty() {
        return None;
    }
    let ci95 = (samples.len() >= MIN_RUNS_CI).then(|| median_ci(&samples, 0x5eed));
    Some(GuestMetric {
        median: median(&samples),
        samples,
        ci95,
    })
}

/// `bench_report.py`'s MIN_RUNS_CI.
const MIN_RUNS_CI: usize = 5;
/// `bench_report.py`'s BOOTSTRAP_ITERS.
const BOOTSTRAP_ITERS: usize = 4000;

/// The median (mean of the middle two for an even count); 0 for none.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => s[n / 2],
        _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Percentile bootstrap 95% interval of the median, seeded.
fn median_ci(v: &[f64], seed: u64) -> (f64, f64) {
    let mut rng = Rng::new(seed);
    let n = v.len() as u64;
    let mut meds: Vec<f64> = (0..BOOTSTRAP_ITERS)
        .map(|_| {
            let re: Vec<f64> = (0..n).map(|_| v[rng.below(n) as usize]).collect();
            median(&re)
        })
        .collect();
    meds.sort_by(f64::total_cmp);
    let lo = meds[BOOTSTRAP_ITERS * 25 / 1000];
    let hi = meds[(BOOTSTRAP_ITERS * 975 / 1000).min(BOOTSTRAP_ITERS - 1)];
    (lo, hi)
}

/// One compared metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Guest topology.
    pub topology: String,
    /// Experiment id.
    pub experiment: String,
    /// `off` or `on`.
    pub state: String,
    /// Metric name.
    pub metric: String,
    /// The guest's numbers.
    pub guest: GuestMetric,
    /// The model's value (median over seeds).
    pub sim: f64,
    /// Whether `sim` lies in the guest's interval.
    pub agrees: bool,
}

impl Row {
    /// The model over the guest's median (None when that is 0).
    pub fn ratio(&self) -> Option<f64> {
        (self.guest.median != 0.0).then(|| self.sim / self.guest.median)
    }
}

/// Options of a calibration.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Only this guest topology.
    pub topology: Option<String>,
    /// Only this experiment.
    pub experiment: Option<String>,
    /// Seeds per state (1..=seeds); the model's value is their median.
    pub seeds: u64,
    /// Cap on the simulated time of one run, ms.
    pub max_ms: u64,
    /// The hackbench model.
    pub hackbench: HackbenchModel,
    /// Extra flags applied to both states (ablations, the negative test).
    pub extra_flags: String,
    /// Knobs of every run.
    pub knobs: crate::flags::Knobs,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            topology: None,
            experiment: None,
            seeds: 3,
            max_ms: 20_000,
            hackbench: HackbenchModel::default(),
            extra_flags: String::new(),
            knobs: crate::flags::Knobs::default(),
        }
    }
}

/// The result of a calibration.
#[derive(Clone, Debug, Default)]
pub struct Calibration {
    /// Every compared metric.
    pub rows: Vec<Row>,
    /// Experiments not run, with the reason.
    pub skipped: Vec<(String, String, String)>,
}

impl Calibration {
    /// (agreeing, compared).
    pub fn summary(&self) -> (usize, usize) {
        (
            self.rows.iter().filter(|r| r.agrees).count(),
            self.rows.len(),
        )
    }
}

/// Runs one state of a spec for every seed.
fn run_state(spec: &SimSpec, state: usize, opts: &Opts) -> Result<Vec<RunResult>, String> {
    (1..=opts.seeds.max(1))
        .map(|seed| {
            let topo = Topology::preset(spec.preset)?;
            let wl = Workload::parse(&spec.workload)?;
            let mut cfg = Config::new(topo, wl, seed, spec.duration_ms.saturating_mul(1_000_000));
            cfg.flags.apply(&spec.flags[state])?;
            cfg.flags.apply(&opts.extra_flags)?;
            cfg.knobs = opts.knobs;
            Ok(crate::run(cfg))
        })
        .collect()
}

/// Compares every experiment of `guest` that `opts` selects.
pub fn calibrate(guest: &[GuestExperiment], opts: &Opts) -> Result<Calibration, String> {
    let mut cal = Calibration::default();
    for e in guest {
        if opts.topology.as_ref().is_some_and(|t| *t != e.topology)
            || opts.experiment.as_ref().is_some_and(|x| *x != e.id)
        {
            continue;
        }
        // hackbench runs as long as its messages take: the guest's time.
        let guest_s = e
            .states
            .get("off")
            .and_then(|m| m.get("time_s").or_else(|| m.get("wall_s")))
            .map_or(4.0, |m| m.median);
        let guest_ms = (guest_s * 1000.0).round().max(1.0) as u64;
        let spec = match sim_spec(e, &opts.hackbench, guest_ms, opts.max_ms) {
            Ok(s) => s,
            Err(why) => {
                cal.skipped.push((e.topology.clone(), e.id.clone(), why));
                continue;
            }
        };
        for (si, state) in ["off", "on"].iter().enumerate() {
            let Some(mets) = e.states.get(*state) else {
                continue;
            };
            let runs = run_state(&spec, si, opts)?;
            for &metric in METRICS {
                let g = match mets.get(metric) {
                    Some(g) => g.clone(),
                    None => match derived_guest(mets, metric) {
                        Some(g) => g,
                        None => continue,
                    },
                };
                let vals: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| sim_metric(r, &spec, metric))
                    .collect();
                if vals.is_empty() {
                    continue;
                }
                let sim = median(&vals);
                // Zero in both: nothing to compare, and counting it would
                // inflate the agreement.
                if sim == 0.0 && g.samples.iter().all(|&x| x == 0.0) {
                    continue;
                }
                let (lo, hi) = g.interval();
                cal.rows.push(Row {
                    topology: e.topology.clone(),
                    experiment: e.id.clone(),
                    state: (*state).to_string(),
                    metric: metric.to_string(),
                    agrees: sim >= lo && sim <= hi,
                    guest: g,
                    sim,
                });
            }
        }
    }
    Ok(cal)
}

/// A number as the tables print it: 3 significant digits, no exponent.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn cells(r: &Row) -> Vec<String> {
    let (lo, hi) = r.guest.interval();
    vec![
        r.topology.clone(),
        r.experiment.clone(),
        r.state.clone(),
        r.metric.clone(),
        fmt_num(r.guest.median),
        format!(
            "{}-{}{}",
            fmt_num(lo),
            fmt_num(hi),
            if r.guest.ci95.is_none() {
                " (range)"
            } else {
                ""
            }
        ),
        fmt_num(r.sim),
        r.ratio().map_or_else(|| "-".into(), |x| format!("{x:.2}")),
        if r.agrees { "agree" } else { "disagree" }.into(),
    ]
}

const HEADERS: [&str; 9] = [
    "topology",
    "experiment",
    "state",
    "metric",
    "guest median",
    "guest 95% interval",
    "schedsim",
    "sim/guest",
    "verdict",
];

/// The summary line.
pub fn summary_line(cal: &Calibration) -> String {
    let (ok, n) = cal.summary();
    format!("{ok} of {n} metrics agree (the model's value inside the guest's 95% interval of the median)")
}

/// The table as reST (a simple table, then the summary and what was not
/// run) or Markdown.
pub fn table(cal: &Calibration, md: bool) -> String {
    let rows: Vec<Vec<String>> = cal.rows.iter().map(cells).collect();
    let mut o = String::new();
    if md {
        let _ = writeln!(o, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(o, "|{}", "---|".repeat(HEADERS.len()));
        for r in &rows {
            let _ = writeln!(o, "| {} |", r.join(" | "));
        }
    } else {
        o.push_str(&rst_table(&HEADERS, &rows));
    }
    let _ = writeln!(o, "\n{}.", summary_line(cal));
    for (t, e, why) in &cal.skipped {
        let _ = writeln!(o, "\nNot run: {t} {e}: {why}.");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"format": "sched-lb-rs bench 1", "topologies": {"llc16": {"domains": ["MC:16"],
      "experiments": {"hb1_steal_llc16": {"kind": "flag", "flag": "STEAL", "command": "/bin/hackbench -g 1 -l 80",
        "states": {"off": {"n": 5, "metrics": {"time_s": {"samples": [5, 6, 7, 6, 6], "median": 6, "ci95": [5, 7]}}}}},
       "hook_overhead": {"kind": "module", "flag": "-", "command": "/bin/hackbench -g 2 -l 80", "states": {}}}}}}"#;

    #[test]
    fn reads_the_guest_json_and_maps_its_experiments() {
        let g = parse_guest(DOC).unwrap();
        assert_eq!(g.len(), 2);
        let hb = g.iter().find(|e| e.id == "hb1_steal_llc16").unwrap();
        assert_eq!(hb.states["off"]["time_s"].ci95, Some((5.0, 7.0)));
        let m = HackbenchModel {
            send_us: 30,
            recv_us: 40,
            queue: 4,
        };
        let s = sim_spec(hb, &m, 6_000, 2_000).unwrap();
        assert_eq!(s.preset, "llc16");
        assert_eq!(s.workload, "hackbench:1:20:30:40:4");
        assert_eq!(s.flags, ["-STEAL".to_string(), "+STEAL".to_string()]);
        assert_eq!((s.duration_ms, s.messages_total), (2_000, Some(32_000)));
        let module = g.iter().find(|e| e.id == "hook_overhead").unwrap();
        assert!(sim_spec(module, &m, 1, 1)
            .unwrap_err()
            .contains("not modelled"));
        assert!(parse_guest("{}").is_err());
    }

    #[test]
    fn bases_stay_on_in_both_states() {
        let e = GuestExperiment {
            topology: "guittot".into(),
            id: "x".into(),
            kind: "flag".into(),
            flag: "SIS_PROP+SIS_AGE".into(),
            command: "/slb/bench/spin 9 4000".into(),
            states: BTreeMap::new(),
        };
        let s = sim_spec(&e, &HackbenchModel::default(), 1, 60_000).unwrap();
        assert_eq!(
            s.flags,
            [
                "+SIS_PROP,-SIS_AGE".to_string(),
                "+SIS_PROP,+SIS_AGE".to_string()
            ]
        );
        assert_eq!(
            (s.preset, s.workload.as_str(), s.duration_ms),
            ("2x4", "fairness:9", 4_000)
        );
    }

    #[test]
    fn median_and_its_interval() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let (lo, hi) = median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 1);
        assert!(lo <= 2.0 && hi >= 4.0 && lo >= 1.0 && hi <= 5.0);
    }
}
