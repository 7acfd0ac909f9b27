// SPDX-License-Identifier: GPL-2.0

//! The calibration as text: the headline, the tables, the lists of rows
//! set apart (`Documentation/schedsim/calibration.rst`, or Markdown).
//!
//! No kernel code is mirrored. The headline comes first and says which
//! experiments it counts; the level comparison comes last, as the
//! secondary check it is.

use super::effects::{
    row_tally, Acted, Apart, EffectRow, ExperimentResult, Verdict, SIZE_GOAL_PCT,
};
use super::{Arms, Calibration, Row};
use crate::experiments::rst_table;
use std::fmt::Write as _;

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

/// An on/off ratio: 3 decimals; "from 0" for a count the on state started.
fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        None => "0 in both".into(),
        Some(x) if x.is_infinite() => "from 0".into(),
        Some(x) => format!("{x:.3}"),
    }
}

fn fmt_ci(ci: Option<(f64, f64)>) -> String {
    ci.map_or_else(|| "-".into(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"))
}

fn pct(t: super::effects::Tally) -> String {
    t.pct().map_or_else(|| "-".into(), |p| format!("{p:.0}%"))
}

/// Issue 32's numbers and the row tallies, one line each: what
/// `make calibrate` prints and the head of the generated page.
pub fn summary_lines(cal: &Calibration) -> Vec<String> {
    let h = cal.headline();
    let mut out = vec![
        format!(
            "Direction: in {} of {} experiments where the guest's main metric moved (its paired 95% \
             interval of the on/off ratio clear of 1.0, the rule not inert there), the model's moved \
             the same way ({}).",
            h.direction.hits,
            h.direction.of,
            pct(h.direction)
        ),
        format!(
            "Size: in {} of {} experiments where the rule acted in both the guest and the model, the \
             model's main-metric on/off ratio lies inside the guest's interval ({}; goal {SIZE_GOAL_PCT:.0}%: {}).",
            h.size.hits,
            h.size.of,
            pct(h.size),
            if h.size_met() { "met" } else { "not met" }
        ),
    ];
    let rules = cal.experiments.iter().filter(|e| e.arms != Arms::Same);
    let tally = row_tally(rules);
    let v: Vec<String> = tally
        .verdicts
        .iter()
        .map(|(v, n)| match v {
            Verdict::Inside => format!(
                "{n} inside ({} of them where the model's rule changed nothing, its ratio 1.0 by construction)",
                tally.inside_unchanged
            ),
            _ => format!("{n} {}", v.name()),
        })
        .collect();
    let a: Vec<String> = tally
        .apart
        .iter()
        .map(|(l, n)| format!("{n} {l}"))
        .collect();
    out.push(format!(
        "Metric effects of the rules: of {} compared, {}; set apart, in no denominator: {}.",
        tally.scored(),
        v.join(", "),
        if a.is_empty() {
            "none".into()
        } else {
            a.join(", ")
        }
    ));
    let aa = row_tally(cal.experiments.iter().filter(|e| e.arms == Arms::Same));
    if aa.scored() > 0 {
        out.push(format!(
            "A/A (no rule; the model's arms on different seeds): {} of {} compared rows inside the guest's interval.",
            aa.count(Verdict::Inside),
            aa.scored()
        ));
    }
    let (ok, n) = cal.level_summary();
    out.push(format!(
        "Levels (secondary): {ok} of {n} state values inside the guest's 95% interval of the median \
         (fitted rows and rows set apart not counted)."
    ));
    out
}

/// Output in one of the two formats.
struct Doc {
    md: bool,
    text: String,
}

impl Doc {
    fn heading(&mut self, title: &str) {
        if self.md {
            let _ = writeln!(self.text, "\n#### {title}\n");
        } else {
            let _ = writeln!(self.text, "\n.. rubric:: {title}\n");
        }
    }

    fn para(&mut self, text: &str) {
        let _ = writeln!(self.text, "{text}\n");
    }

    fn item(&mut self, text: &str) {
        let _ = writeln!(self.text, "- {text}");
    }

    fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        if self.md {
            let _ = writeln!(self.text, "| {} |", headers.join(" | "));
            let _ = writeln!(self.text, "|{}", "---|".repeat(headers.len()));
            for r in rows {
                let _ = writeln!(self.text, "| {} |", r.join(" | "));
            }
        } else {
            self.text.push_str(&rst_table(headers, rows));
        }
        self.text.push('\n');
    }
}

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
    .into()
}

fn acted_cell(a: &Acted) -> String {
    a.describe()
}

fn experiment_cells(e: &ExperimentResult) -> Vec<String> {
    let main = e.main_row();
    vec![
        e.topology.clone(),
        e.id.clone(),
        e.rule.clone(),
        e.main_metric.to_string(),
        main.and_then(|r| r.guest?.ratio)
            .map_or_else(|| "-".into(), |x| format!("{x:.3}")),
        fmt_ci(main.and_then(|r| r.guest?.ci95)),
        main.map_or_else(|| "-".into(), |r| fmt_ratio(r.model)),
        main.map_or_else(|| "-".into(), verdict_cell),
        acted_cell(&e.guest_acted),
        acted_cell(&e.model_acted),
        yes_no(e.direction_hit()),
        yes_no(e.size_hit()),
    ]
}

fn verdict_cell(r: &EffectRow) -> String {
    let v = r.verdict.map_or("-", Verdict::name);
    match &r.apart {
        Some(Apart::Fitted(_)) => format!("fitted, not scored ({v})"),
        Some(a) => a.label().into(),
        None => v.into(),
    }
}

fn effect_cells(e: &ExperimentResult, r: &EffectRow) -> Vec<String> {
    vec![
        e.topology.clone(),
        e.id.clone(),
        r.metric.clone(),
        r.guest
            .and_then(|g| g.ratio)
            .map_or_else(|| "-".into(), |x| format!("{x:.3}")),
        fmt_ci(r.guest.and_then(|g| g.ci95)),
        fmt_ratio(r.model),
        verdict_cell(r),
    ]
}

fn level_cells(r: &Row) -> Vec<String> {
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
        match (r.fitted, r.agrees) {
            (Some(_), true) => "fitted, not scored (agree)",
            (Some(_), false) => "fitted, not scored (disagree)",
            (None, true) => "agree",
            (None, false) => "disagree",
        }
        .into(),
    ]
}

/// The rows set apart in one list for one reason: per metric, the
/// experiments.
struct ApartGroup {
    label: &'static str,
    reason: String,
    metrics: Vec<(String, Vec<String>)>,
}

/// The rows set apart, grouped by list and reason, with the metrics and
/// how many experiments each.
fn apart_lists(exps: &[ExperimentResult], md: bool) -> Vec<String> {
    let tick = if md { "`" } else { "``" };
    let mut groups: Vec<ApartGroup> = Vec::new();
    for e in exps {
        for r in &e.rows {
            let Some(a) = &r.apart else { continue };
            let gi = match groups
                .iter()
                .position(|g| g.label == a.label() && g.reason == a.reason())
            {
                Some(i) => i,
                None => {
                    groups.push(ApartGroup {
                        label: a.label(),
                        reason: a.reason().to_string(),
                        metrics: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let Some(g) = groups.get_mut(gi) else {
                continue;
            };
            let name = format!("{} {}", e.topology, e.id);
            match g.metrics.iter_mut().find(|(m, _)| *m == r.metric) {
                Some((_, v)) => v.push(name),
                None => g.metrics.push((r.metric.clone(), vec![name])),
            }
        }
    }
    groups.sort_by_key(|g| match g.label {
        "fitted" => 0,
        "cannot produce" => 1,
        "structural zero" => 2,
        _ => 3,
    });
    groups
        .iter()
        .map(|g| {
            let ms: Vec<String> = g
                .metrics
                .iter()
                .map(|(m, exps)| {
                    if exps.len() <= 3 {
                        format!("{tick}{m}{tick} ({})", exps.join(", "))
                    } else {
                        format!("{tick}{m}{tick} ({} experiments)", exps.len())
                    }
                })
                .collect();
            format!("{}: {}: {}.", g.label, g.reason, ms.join(", "))
        })
        .collect()
}

const EXPERIMENT_HEADERS: [&str; 12] = [
    "topology",
    "experiment",
    "rule",
    "main metric",
    "guest on/off",
    "guest 95% interval",
    "schedsim on/off",
    "verdict",
    "acted in the guest",
    "acted in schedsim",
    "direction",
    "size",
];

const EFFECT_HEADERS: [&str; 7] = [
    "topology",
    "experiment",
    "metric",
    "guest on/off",
    "guest 95% interval",
    "schedsim on/off",
    "verdict",
];

const LEVEL_HEADERS: [&str; 9] = [
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

/// The whole calibration as reST (or Markdown): the headline, every
/// experiment's main metric, every compared metric effect, the rows set
/// apart, what was not run, and the levels.
pub fn table(cal: &Calibration, md: bool) -> String {
    let mut d = Doc {
        md,
        text: String::new(),
    };
    for l in summary_lines(cal) {
        d.para(&l);
    }
    let tick = if md { "`" } else { "``" };
    let script = format!("{tick}scripts/bench_report.py{tick}");
    d.para(&format!(
        "The model ran {n} seeds a state, the same seeds in both (an A/A's on arm the next {n}); \
         its on/off ratio is the geometric mean of the seeds' ratios (the ratio of means where a \
         count is 0 in some run), the guest's the same over its repetitions, with the paired t \
         95% interval {script} gives. Verdicts: inside the guest's interval; same direction (the \
         interval clear of 1.0, the model on its side); opposite; outside; model 0 (the model \
         counted none in either state). The rule acted in the guest where the module's \
         {tick}differs_<FLAG>{tick} counter (the answers the flag changed against stock 6.12) is \
         above 0 in the runs of either state, as {script}'s \"inert here\" reads it; the model \
         keeps no such count, so it acted there where its on run's trace differs from the off \
         run's of the same seed.",
        n = cal.seeds
    ));

    d.heading("Experiments: the main metric, and whether the rule acted");
    let rows: Vec<Vec<String>> = cal.experiments.iter().map(experiment_cells).collect();
    d.table(&EXPERIMENT_HEADERS, &rows);
    for (title, why) in [
        (
            "Out of the direction count",
            &ExperimentResult::direction_exclusion as &dyn Fn(&ExperimentResult) -> Option<String>,
        ),
        ("Out of the size count", &ExperimentResult::size_exclusion),
    ] {
        d.para(&format!("{title}:"));
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for e in &cal.experiments {
            let Some(w) = why(e) else { continue };
            let name = format!("{} {}", e.topology, e.id);
            match groups.iter_mut().find(|(g, _)| *g == w) {
                Some((_, v)) => v.push(name),
                None => groups.push((w, vec![name])),
            }
        }
        for (w, names) in &groups {
            d.item(&format!("{w}: {}", names.join(", ")));
        }
        d.para("");
    }

    d.heading("Metric effects: every compared row, and the fitted ones");
    let rows: Vec<Vec<String>> = cal
        .experiments
        .iter()
        .flat_map(|e| {
            e.rows
                .iter()
                .filter(|r| r.scored() || matches!(r.apart, Some(Apart::Fitted(_))))
                .map(move |r| effect_cells(e, r))
        })
        .collect();
    d.table(&EFFECT_HEADERS, &rows);

    d.heading("Set apart: in no denominator");
    for l in apart_lists(&cal.experiments, md) {
        d.item(&l);
    }
    d.para("");

    if !cal.skipped.is_empty() {
        d.heading("Not run");
        for (t, e, why) in &cal.skipped {
            d.item(&format!("{t} {e}: {why}."));
        }
        d.para("");
    }

    d.heading("Levels (secondary): each state's value against the guest's interval of the median");
    let rows: Vec<Vec<String>> = cal.levels.iter().map(level_cells).collect();
    d.table(&LEVEL_HEADERS, &rows);
    d.text.trim_end().to_string() + "\n"
}

/// The plot rows of one topology: each compared or fitted effect, with
/// the guest's interval and the model's ratio.
pub fn plot_points(cal: &Calibration, topology: &str) -> Vec<crate::svg::EffectPoint> {
    cal.experiments
        .iter()
        .filter(|e| e.topology == topology)
        .flat_map(|e| {
            e.rows.iter().filter_map(move |r| {
                let ci = r.guest?.ci95?;
                let fitted = matches!(r.apart, Some(Apart::Fitted(_)));
                (r.scored() || fitted).then(|| crate::svg::EffectPoint {
                    label: format!(
                        "{} {}{}",
                        e.id,
                        r.metric,
                        if fitted { " (fitted)" } else { "" }
                    ),
                    ci,
                    model: r.model,
                    verdict: r.verdict.unwrap_or(Verdict::Outside),
                })
            })
        })
        .collect()
}
