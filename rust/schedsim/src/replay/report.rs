// SPDX-License-Identifier: GPL-2.0

//! The replay report: per trace, each measure in the guest and the
//! model, their ratio and whether it lies within 20% (issue 32's goal
//! for migrations per level and LLC placement); per experiment with both
//! states, each measure's on/off ratio in the guest and in the model.

use super::compare::Replayed;
use super::metrics::Metrics;
use std::fmt::Write as _;

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
    }
}

/// The rows of one replay.
pub fn rows(r: &Replayed) -> Vec<Row> {
    let (g, m) = (&r.guest, &r.model);
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
                out.push(row(
                    format!("migrations {cause} {name}"),
                    a as f64,
                    b as f64,
                ));
            }
        }
    }
    if g.task_wakeups > 0 || m.task_wakeups > 0 {
        out.push(row(
            "wakeups in waker's LLC".into(),
            g.waker_llc_frac(),
            m.waker_llc_frac(),
        ));
        out.push(row(
            "wakeups on waker's CPU".into(),
            g.waker_cpu_frac(),
            m.waker_cpu_frac(),
        ));
        out.push(row(
            "wakeups on prev CPU".into(),
            g.prev_cpu_frac(),
            m.prev_cpu_frac(),
        ));
    }
    out.push(row(
        "idle while work waited".into(),
        g.wasted_frac(),
        m.wasted_frac(),
    ));
    // A row of one field of both sides, in `unit` ns (1e3: us, 1e6: ms).
    let field = |name: &str, f: fn(&Metrics) -> u64, unit: f64| {
        row(name.into(), f(g) as f64 / unit, f(m) as f64 / unit)
    };
    if g.idle_wakeups > 0 || m.idle_wakeups > 0 {
        out.push(field(
            "wakeup to idle CPU, us",
            |x| x.idle_wakeup_latency_ns,
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
    let (gt, gs) = r.steal_guest;
    let (mt, ms) = r.steal_model;
    if gt > 0 || mt > 0 {
        let frac = |s: u64, t: u64| s as f64 / (t as f64).max(1.0);
        out.push(row("STEAL success".into(), frac(gs, gt), frac(ms, mt)));
        out.push(row("STEAL tries".into(), gt as f64, mt as f64));
    }
    out.push(row("idle".into(), g.idle_frac(), m.idle_frac()));
    out.push(field("wakeups", |x| x.wakeups, 1.0));
    out.push(field("context switches", |x| x.switches, 1.0));
    out.push(field("task CPU ms", |x| x.task_cpu_ns, 1e6));
    out.push(field("span ms", |x| x.span_ns, 1e6));
    out
}

fn num(v: f64) -> String {
    if v != 0.0 && v.abs() < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.0}")
    }
}

/// The report as text.
pub fn table(all: &[Replayed]) -> String {
    let mut s = String::new();
    let mut within = 0usize;
    let mut scored = 0usize;
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
            if r.wake_idle_ns > 0 {
                format!(", model wakeup to idle {} us", r.wake_idle_ns / 1000)
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
        let (q, run, other) = r.model_early_wakes;
        let early = q.saturating_add(run).saturating_add(other);
        if early > 0 {
            let _ = writeln!(
                s,
                "   model: {early} wakes found the wakee not yet blocked (queued {q}, running {run}, other {other})"
            );
        }
        let _ = writeln!(
            s,
            "   {:<28} {:>10} {:>10} {:>7}  within 20%",
            "measure", "guest", "model", "ratio"
        );
        for row in rows(r) {
            let graded =
                row.metric.starts_with("migrations") || row.metric == "wakeups in waker's LLC";
            if graded {
                scored += 1;
                within += usize::from(row.within);
            }
            let _ = writeln!(
                s,
                "   {:<28} {:>10} {:>10} {:>7}  {}",
                row.metric,
                num(row.guest),
                num(row.model),
                row.ratio.map_or("-".into(), |x| format!("{x:.2}")),
                if row.within { "yes" } else { "no" }
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "per-level migrations and LLC placement within 20% of the guest: {within} of {scored} rows"
    );
    let early = all.iter().fold((0u64, 0u64, 0u64), |a, r| {
        let (q, run, o) = r.model_early_wakes;
        (
            a.0.saturating_add(q),
            a.1.saturating_add(run),
            a.2.saturating_add(o),
        )
    });
    let _ = writeln!(
        s,
        "model wakes that found the wakee not yet blocked (the guest's had): {} (queued {}, running {}, other {})",
        early.0.saturating_add(early.1).saturating_add(early.2),
        early.0,
        early.1,
        early.2
    );
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
                "   {:<28} guest {:>6}  model {:>6}",
                a.metric,
                q(a.guest, b.guest),
                q(a.model, b.model)
            );
        }
    }
    s
}

/// Per measure, over every trace: rows, rows within 20%, and the median
/// and range of model/guest: where the model is off, and which way.
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
        "\n{:<28} {:>5} {:>7} {:>8} {:>15}\n",
        "measure, every trace", "rows", "within", "median", "range"
    );
    for (metric, v) in by {
        let mut ratios: Vec<f64> = v
            .iter()
            .filter_map(|r| r.ratio)
            .filter(|x| x.is_finite())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let within = v.iter().filter(|r| r.within).count();
        // No ratio where the guest counted none in every trace: "-".
        let spread = match (ratios.first(), ratios.last()) {
            (Some(&lo), Some(&hi)) => {
                format!("{:>8.2} {:>7.2}-{:<7.2}", ratios[ratios.len() / 2], lo, hi)
            }
            _ => format!("{:>8} {:>15}", "-", "-"),
        };
        let _ = writeln!(s, "{:<28} {:>5} {:>7} {spread}", metric, v.len(), within);
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

    #[test]
    fn within_twenty_percent() {
        assert!(row("x".into(), 100.0, 119.0).within);
        assert!(!row("x".into(), 100.0, 121.0).within);
        assert!(!row("x".into(), 100.0, 79.0).within);
        assert!(row("x".into(), 0.0, 0.0).within);
        assert!(!row("x".into(), 0.0, 1.0).within);
        assert_eq!(row("x".into(), 0.0, 1.0).ratio, None);
    }
}
