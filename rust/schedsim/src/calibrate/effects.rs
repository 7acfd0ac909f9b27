// SPDX-License-Identifier: GPL-2.0

//! Calibration on effects: the model's on/off ratio of each metric
//! against the guest's paired 95% interval of the same ratio (issue 32).
//!
//! No kernel code is mirrored. What a rule does is an on/off ratio; a
//! model whose levels are off (TCG's costs are not the model's) can still
//! move the way the guest moves, by as much. Per experiment and metric a
//! row is either compared, with a verdict, or set apart with the reason,
//! out of every denominator: a quantity fitted to the guest, a metric the
//! model has no mechanism for in that workload, a structural zero (0 in
//! the guest and the model, both states), or a guest with no ratio (its
//! off runs all 0: the flag turns that counter on). Whether the rule acted
//! is read as `scripts/bench_report.py` reads it ("inert here": the
//! module's `differs_<FLAG>` counter summed over both states' runs), and
//! in the model from the trace: the model keeps no such count, but with
//! common random numbers a run whose flag changed nothing has the same
//! trace as its off run.
//!
//! The two headline numbers are computed on experiments' main metrics
//! (`bench_report.py`'s MAIN_METRIC): direction, over the experiments
//! whose guest interval is clear of 1.0 and whose rule was not inert
//! there; size, over those whose rule acted in both. A/A experiments
//! (kind `same`) have no rule and the fitted main metrics were set by a
//! free parameter: both are reported and left out.

use super::paired::{paired, point_ratio, Paired};
use super::{Arms, GuestExperiment, SimSpec};
use std::collections::BTreeMap;

/// A compared row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The model's ratio lies in the guest's interval.
    Inside,
    /// Not inside, but the guest's interval is clear of 1.0 and the
    /// model's ratio is on the same side of 1.0.
    SameDirection,
    /// The guest's interval is clear of 1.0 and the model's ratio is on
    /// the other side.
    Opposite,
    /// Otherwise: the guest's interval holds 1.0 and the model's ratio is
    /// outside it, or the guest moved and the model's ratio is exactly 1.
    Outside,
    /// The model counted 0 in both states where the guest counted some:
    /// it has no ratio, and so no effect to compare; not an agreement.
    ModelZero,
}

impl Verdict {
    /// Every verdict, in the order the tallies print them.
    pub const ALL: [Verdict; 5] = [
        Verdict::Inside,
        Verdict::SameDirection,
        Verdict::Opposite,
        Verdict::Outside,
        Verdict::ModelZero,
    ];

    /// As the tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Inside => "inside",
            Verdict::SameDirection => "same direction",
            Verdict::Opposite => "opposite",
            Verdict::Outside => "outside",
            Verdict::ModelZero => "model 0",
        }
    }
}

/// The verdict of a model ratio (None: 0 in both states) against the
/// guest's interval.
pub fn verdict((lo, hi): (f64, f64), model: Option<f64>) -> Verdict {
    let Some(m) = model else {
        return Verdict::ModelZero;
    };
    // Which side of 1.0 the guest is on (None: its interval holds 1.0).
    let guest_up = if lo > 1.0 {
        Some(true)
    } else if hi < 1.0 {
        Some(false)
    } else {
        None
    };
    if (lo..=hi).contains(&m) {
        Verdict::Inside
    } else if let Some(up) = guest_up {
        if m == 1.0 {
            Verdict::Outside
        } else if (m > 1.0) == up {
            Verdict::SameDirection
        } else {
            Verdict::Opposite
        }
    } else {
        Verdict::Outside
    }
}

/// Why a row is out of every denominator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Apart {
    /// Set by a fitted parameter (the reason names it).
    Fitted(&'static str),
    /// The model has no mechanism for this metric in this workload (the
    /// reason says which), and it counted 0 in both states.
    NoMechanism(&'static str),
    /// 0 in every guest run and every model run, both states.
    StructuralZero,
    /// The guest has no ratio (the reason says why).
    NoGuestRatio(String),
}

impl Apart {
    /// The list the row is set apart in.
    pub fn label(&self) -> &'static str {
        match self {
            Apart::Fitted(_) => "fitted",
            Apart::NoMechanism(_) => "cannot produce",
            Apart::StructuralZero => "structural zero",
            Apart::NoGuestRatio(_) => "no guest ratio",
        }
    }

    /// The reason, for the lists.
    pub fn reason(&self) -> &str {
        match self {
            Apart::Fitted(r) | Apart::NoMechanism(r) => r,
            Apart::StructuralZero => "0 in the guest and in the model, both states",
            Apart::NoGuestRatio(r) => r,
        }
    }
}

/// Whether a rule acted in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acted {
    /// It did (with the evidence).
    Yes(String),
    /// It did not.
    No(String),
    /// Nothing says (why).
    Unknown(String),
    /// An A/A experiment: no rule.
    NotApplicable,
}

impl Acted {
    /// As the tables print it.
    pub fn describe(&self) -> String {
        match self {
            Acted::Yes(s) => format!("yes ({s})"),
            Acted::No(s) => format!("no ({s})"),
            Acted::Unknown(s) => format!("unknown ({s})"),
            Acted::NotApplicable => "-".into(),
        }
    }

    fn is_yes(&self) -> bool {
        matches!(self, Acted::Yes(_))
    }
}

/// The model's numbers for one experiment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelRuns {
    /// Per metric, per state (off, on), per seed (the i-th value of both
    /// states ran the same seed, except in an A/A): the model's value,
    /// None where it has none for that run.
    pub values: BTreeMap<String, [Vec<Option<f64>>; 2]>,
    /// Seeds whose trace differed between the states, of the seeds run
    /// (None: an A/A, whose arms ran different seeds on purpose).
    pub trace_changed: Option<(usize, usize)>,
}

/// One metric of one experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectRow {
    /// Metric name.
    pub metric: String,
    /// Whether it is the experiment's main metric.
    pub main: bool,
    /// The guest's paired comparison (None: fewer than 5 pairs).
    pub guest: Option<Paired>,
    /// The model's on/off ratio over its seeds (None: 0 in both states or
    /// no value; infinite: 0 off, some on).
    pub model: Option<f64>,
    /// The model's median of each state, for the tables.
    pub model_levels: [f64; 2],
    /// The verdict, where the guest has an interval.
    pub verdict: Option<Verdict>,
    /// Why the row is out of the score (None: it is scored).
    pub apart: Option<Apart>,
}

impl EffectRow {
    /// Whether the row is in the row tallies' denominator.
    pub fn scored(&self) -> bool {
        self.apart.is_none() && self.verdict.is_some()
    }
}

/// One experiment, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentResult {
    /// Guest topology.
    pub topology: String,
    /// Experiment id.
    pub id: String,
    /// What it varies, as the guest's plan says it.
    pub rule: String,
    /// Its arms.
    pub arms: Arms,
    /// Its main metric.
    pub main_metric: &'static str,
    /// Whether the rule acted in the guest.
    pub guest_acted: Acted,
    /// Whether the rule acted in the model.
    pub model_acted: Acted,
    /// One row per metric the guest has in both states.
    pub rows: Vec<EffectRow>,
}

impl ExperimentResult {
    /// The main metric's row.
    pub fn main_row(&self) -> Option<&EffectRow> {
        self.rows.iter().find(|r| r.main)
    }

    /// Why the experiment is out of the direction count (None: it is in).
    pub fn direction_exclusion(&self) -> Option<String> {
        if let Some(why) = self.early_exclusion() {
            return Some(why);
        }
        let Some(g) = self.main_row().and_then(|r| r.guest) else {
            return Some("no guest interval for the main metric".into());
        };
        if !g.excludes_one() {
            return Some("guest interval holds 1.0: no effect to point".into());
        }
        if let Acted::No(why) = &self.guest_acted {
            return Some(format!(
                "guest interval clear of 1.0, but the rule never acted there ({why})"
            ));
        }
        None
    }

    /// Why the experiment is out of the size count (None: it is in).
    pub fn size_exclusion(&self) -> Option<String> {
        if let Some(why) = self.early_exclusion() {
            return Some(why);
        }
        if !self.guest_acted.is_yes() {
            return Some(format!(
                "acted in the guest: {}",
                self.guest_acted.describe()
            ));
        }
        if !self.model_acted.is_yes() {
            return Some(format!(
                "acted in the model: {}",
                self.model_acted.describe()
            ));
        }
        None
    }

    /// Why the experiment is in neither count, whatever its numbers.
    fn early_exclusion(&self) -> Option<String> {
        if self.arms == Arms::Same {
            return Some("A/A: no rule".into());
        }
        let Some(r) = self.main_row() else {
            return Some(format!("no {} in the guest's runs", self.main_metric));
        };
        if let Some(Apart::Fitted(why)) = &r.apart {
            return Some(format!("main metric fitted ({why})"));
        }
        if r.guest.and_then(|g| g.ci95).is_none() {
            return Some("no guest interval for the main metric".into());
        }
        None
    }

    /// Whether the model's main-metric ratio points the guest's way, where
    /// the experiment counts for direction.
    pub fn direction_hit(&self) -> Option<bool> {
        if self.direction_exclusion().is_some() {
            return None;
        }
        let v = self.main_row()?.verdict?;
        Some(matches!(v, Verdict::Inside | Verdict::SameDirection))
    }

    /// Whether the model's main-metric ratio is inside the guest's
    /// interval, where the experiment counts for size.
    pub fn size_hit(&self) -> Option<bool> {
        if self.size_exclusion().is_some() {
            return None;
        }
        Some(self.main_row()?.verdict? == Verdict::Inside)
    }
}

/// A count of hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Hits.
    pub hits: usize,
    /// Of this many.
    pub of: usize,
}

impl Tally {
    /// Percent, None of nothing.
    pub fn pct(&self) -> Option<f64> {
        (self.of > 0).then(|| 100.0 * self.hits as f64 / self.of as f64)
    }
}

/// The size goal of issue 32: the model's main-metric ratio inside the
/// guest's interval in at least this share of the experiments where the
/// rule acted in both, percent.
pub const SIZE_GOAL_PCT: f64 = 80.0;

/// Issue 32's two numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Headline {
    /// Experiments where the guest's main metric moved (interval clear of
    /// 1.0, the rule not inert), and those where the model's moved the
    /// same way.
    pub direction: Tally,
    /// Experiments where the rule acted in both, and those where the
    /// model's main-metric ratio is inside the guest's interval.
    pub size: Tally,
}

impl Headline {
    /// Whether the size goal is met.
    pub fn size_met(&self) -> bool {
        self.size.pct().is_some_and(|p| p >= SIZE_GOAL_PCT)
    }
}

/// The headline over a calibration's experiments.
pub fn headline(exps: &[ExperimentResult]) -> Headline {
    let mut h = Headline::default();
    for e in exps {
        if let Some(hit) = e.direction_hit() {
            h.direction.of += 1;
            h.direction.hits += usize::from(hit);
        }
        if let Some(hit) = e.size_hit() {
            h.size.of += 1;
            h.size.hits += usize::from(hit);
        }
    }
    h
}

/// The metric rows of some experiments, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowTally {
    /// Per verdict, in [`Verdict::ALL`]'s order, the scored rows that got it.
    pub verdicts: Vec<(Verdict, usize)>,
    /// Of the scored rows inside, those of experiments where the model's
    /// rule changed nothing: its ratio is 1.0 by construction there, and
    /// "inside" says only that the guest's interval holds 1.0.
    pub inside_unchanged: usize,
    /// Per list ([`Apart::label`]), the rows set apart in it.
    pub apart: Vec<(&'static str, usize)>,
}

impl RowTally {
    /// The scored rows: the denominator of the row verdicts.
    pub fn scored(&self) -> usize {
        self.verdicts.iter().map(|(_, n)| n).sum()
    }

    /// The scored rows with verdict `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.verdicts
            .iter()
            .find(|(w, _)| *w == v)
            .map_or(0, |(_, n)| *n)
    }

    /// The rows set apart in list `label`.
    pub fn apart(&self, label: &str) -> usize {
        self.apart
            .iter()
            .find(|(l, _)| *l == label)
            .map_or(0, |(_, n)| *n)
    }
}

/// The rows of `exps`, counted per verdict and per list set apart.
pub fn row_tally<'a>(exps: impl Iterator<Item = &'a ExperimentResult> + Clone) -> RowTally {
    let rows = || exps.clone().flat_map(|e| e.rows.iter());
    let verdicts = Verdict::ALL
        .iter()
        .map(|&v| {
            let n = rows()
                .filter(|r| r.scored() && r.verdict == Some(v))
                .count();
            (v, n)
        })
        .collect();
    let inside_unchanged = exps
        .clone()
        .filter(|e| matches!(e.model_acted, Acted::No(_)))
        .flat_map(|e| e.rows.iter())
        .filter(|r| r.scored() && r.verdict == Some(Verdict::Inside))
        .count();
    let mut apart: Vec<(&'static str, usize)> = Vec::new();
    for r in rows() {
        if let Some(a) = &r.apart {
            match apart.iter_mut().find(|(l, _)| *l == a.label()) {
                Some((_, n)) => *n += 1,
                None => apart.push((a.label(), 1)),
            }
        }
    }
    RowTally {
        verdicts,
        inside_unchanged,
        apart,
    }
}

/// The guest's values of `metric` in one state, run by run, keyed by
/// repetition (`reps`; a document without them kept its runs in order).
/// A derived metric (`steal_success`) is computed run by run, None where
/// its denominator is 0.
fn guest_series(e: &GuestExperiment, state: &str, metric: &str) -> Option<Vec<(u64, Option<f64>)>> {
    let mets = e.states.get(state)?;
    let vals: Vec<Option<f64>> = match mets.get(metric) {
        Some(m) => m.samples.iter().map(|&x| Some(x)).collect(),
        None => {
            let (num, den) = super::derived_parts(metric)?;
            let (a, b) = (&mets.get(num)?.samples, &mets.get(den)?.samples);
            if a.len() != b.len() {
                return None;
            }
            a.iter()
                .zip(b)
                .map(|(&n, &d)| (d > 0.0).then(|| n / d))
                .collect()
        }
    };
    let reps = e.reps.get(state).filter(|r| r.len() == vals.len());
    Some(
        vals.into_iter()
            .enumerate()
            .map(|(i, v)| (reps.and_then(|r| r.get(i).copied()).unwrap_or(i as u64), v))
            .collect(),
    )
}

/// The guest's (off, on) pairs of `metric`, by repetition; None when a
/// state lacks it.
pub fn guest_pairs(e: &GuestExperiment, metric: &str) -> Option<Vec<(f64, f64)>> {
    let off = guest_series(e, "off", metric)?;
    let on: BTreeMap<u64, Option<f64>> = guest_series(e, "on", metric)?.into_iter().collect();
    Some(
        off.into_iter()
            .filter_map(|(rep, x)| Some((x?, (*on.get(&rep)?)?)))
            .collect(),
    )
}

/// Whether every guest run of both states has `metric` at 0 (a derived
/// metric with no defined value counts as 0).
fn guest_all_zero(e: &GuestExperiment, metric: &str) -> bool {
    ["off", "on"].iter().all(|s| {
        guest_series(e, s, metric).is_none_or(|v| v.iter().all(|(_, x)| x.unwrap_or(0.0) == 0.0))
    })
}

/// Whether the guest ran the rule at all, as `bench_report.py`'s
/// `rows_for()` decides "inert here": the `differs_<FLAG>` counters the
/// module keeps (the answers that flag changed against stock 6.12),
/// summed over both states' runs (a default-on flag's other rule runs in
/// "off"); a zero with calls the judge could not settle
/// (`*_undecided` in the on runs) is not shown to be inert.
pub fn guest_acted(e: &GuestExperiment, arms: Arms) -> Acted {
    let flags: Vec<&str> = match arms {
        Arms::Same => return Acted::NotApplicable,
        Arms::Flag => e.flag.rsplit('+').next().into_iter().collect(),
        Arms::Set => e.flag.split(',').filter(|i| !i.contains('=')).collect(),
    };
    let has_knob = arms == Arms::Set && e.flag.split(',').any(|i| i.contains('='));
    let sum = |state: &str, pred: &dyn Fn(&str) -> bool| -> Option<f64> {
        let mets = e.states.get(state)?;
        let found: Vec<f64> = mets
            .iter()
            .filter(|(k, _)| pred(k))
            .map(|(_, m)| m.samples.iter().sum::<f64>())
            .collect();
        (!found.is_empty()).then(|| found.iter().sum())
    };
    let keys: Vec<String> = flags.iter().map(|f| format!("differs_{f}")).collect();
    let is_key = |k: &str| keys.iter().any(|d| d == k);
    let counted: Vec<f64> = ["off", "on"]
        .iter()
        .filter_map(|s| sum(s, &is_key))
        .collect();
    if counted.is_empty() {
        return Acted::Unknown(if flags.is_empty() {
            "a knob: no differs counter".into()
        } else {
            format!(
                "no {} in the runs (6.12's own flag, or an older module)",
                keys.join(", ")
            )
        });
    }
    let total: f64 = counted.iter().sum();
    let names = keys.join("+");
    if total > 0.0 {
        return Acted::Yes(format!("{names} {total}"));
    }
    let undecided = sum("on", &|k: &str| {
        k.ends_with("_undecided") && !k.ends_with("_per_s")
    })
    .unwrap_or(0.0);
    if undecided > 0.0 {
        return Acted::Unknown(format!("{names} 0, {undecided} calls undecided"));
    }
    if has_knob {
        return Acted::Unknown(format!("{names} 0; the knob has no counter"));
    }
    Acted::No(format!("{names} 0"))
}

/// Whether the rule changed the model's run: the model keeps no count of
/// the answers a flag changed, but with common random numbers an on run
/// whose flag changed nothing has its off run's trace.
pub fn model_acted(runs: &ModelRuns, arms: Arms) -> Acted {
    match (arms, runs.trace_changed) {
        (Arms::Same, _) | (_, None) => Acted::NotApplicable,
        (_, Some((k, n))) if k > 0 => Acted::Yes(format!("trace changed in {k} of {n} seeds")),
        (_, Some((_, n))) => Acted::No(format!("trace unchanged in {n} seeds")),
    }
}

/// Judges one experiment: a row per metric of `metrics` the guest has in
/// both states.
pub fn assess(
    e: &GuestExperiment,
    spec: &SimSpec,
    model: &ModelRuns,
    metrics: &[&str],
) -> ExperimentResult {
    let mut rows = Vec::new();
    for &metric in metrics {
        let Some(pairs) = guest_pairs(e, metric) else {
            continue;
        };
        let empty = [Vec::new(), Vec::new()];
        let mv = model.values.get(metric).unwrap_or(&empty);
        let model_pairs: Vec<(f64, f64)> = mv[0]
            .iter()
            .zip(&mv[1])
            .filter_map(|(a, b)| Some(((*a)?, (*b)?)))
            .collect();
        let model_zero = mv.iter().flatten().all(|v| v.unwrap_or(0.0) == 0.0);
        let level = |s: usize| {
            let v: Vec<f64> = mv.get(s).into_iter().flatten().flatten().copied().collect();
            super::median(&v)
        };
        let guest = paired(&pairs);
        let model_ratio = point_ratio(&model_pairs);
        let verdict = guest
            .and_then(|g| g.ci95)
            .map(|ci| verdict(ci, model_ratio));
        let apart = if let Some(why) = super::fitted(spec, metric) {
            Some(Apart::Fitted(why))
        } else if guest_all_zero(e, metric) {
            Some(if model_zero {
                Apart::StructuralZero
            } else {
                Apart::NoGuestRatio("guest 0 in both states; the model counts some".into())
            })
        } else if let Some(why) = super::no_mechanism(spec, metric).filter(|_| model_zero) {
            Some(Apart::NoMechanism(why))
        } else {
            match guest {
                None => Some(Apart::NoGuestRatio(match super::derived_parts(metric) {
                    Some((num, den)) => format!(
                        "fewer than {} guest pairs: {num} over {den}, defined where {den} is not 0",
                        super::paired::MIN_RUNS_CI
                    ),
                    None => format!("fewer than {} guest pairs", super::paired::MIN_RUNS_CI),
                })),
                Some(Paired { ratio: None, .. }) => Some(Apart::NoGuestRatio(format!(
                    "guest off 0: the on state starts the counter{}",
                    match model_ratio {
                        Some(m) if m.is_infinite() => "; so does the model's",
                        None => "; the model counts 0 in both",
                        Some(_) => "; the model counts some off",
                    }
                ))),
                Some(_) => None,
            }
        };
        rows.push(EffectRow {
            metric: metric.to_string(),
            main: metric == spec.main_metric,
            guest,
            model: model_ratio,
            model_levels: [level(0), level(1)],
            verdict,
            apart,
        });
    }
    ExperimentResult {
        topology: e.topology.clone(),
        id: e.id.clone(),
        rule: match spec.arms {
            Arms::Same => "A/A (same state)".into(),
            _ => e.flag.clone(),
        },
        arms: spec.arms,
        main_metric: spec.main_metric,
        guest_acted: guest_acted(e, spec.arms),
        model_acted: model_acted(model, spec.arms),
        rows,
    }
}
