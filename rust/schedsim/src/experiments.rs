// SPDX-License-Identifier: GPL-2.0

//! The experiments of `Documentation/schedsim.rst`, one per seed thread.
//!
//! - `fairness-2x4` (Guittot 2020): 9 and 11 always-running
//!   threads on 2x4, min/max work before and after the four patches;
//! - `buddy-x5472` (Galbraith 2016): a buddy pair on 4 L2s of 2
//!   cores, splits and throughput with each idle-CPU threshold;
//! - `sis-hackbench` (Zijlstra's RFC, 2018): scan cost and placement
//!   of SIS_PROP/AGE/ONCE/FOLD against SIS_UTIL;
//! - `newidle` (Low 2013, Jain 2018): newidle attempts
//!   and cost with the backoff and the per-level migration costs;
//! - `steal` (Sistare's reply, 2018): STEAL on and off, and the
//!   8-socket case behind `STEAL_MAX_NUMA_NODES`.
//!
//! Each prints reST tables with the thread's numbers beside the model's.
//! `quick` shortens the runs for the regression tests; the documented
//! numbers come from the full runs. The baseline is [`STOCK`]: 6.12.117
//! as the project boots it with the series' flags at their defaults
//! (NI_RANDOM on, HZ 250 unless `--hz` says otherwise).

use crate::cost::CostModel;
use crate::flags::{Flags, Knobs, PreferSibling};
use crate::sim::{Config, DEFAULT_HZ};
use crate::stats::RunResult;
use crate::topology::Topology;
use crate::workload::Workload;
use std::fmt::Write as _;

/// Experiment names.
pub const NAMES: &[&str] = &[
    "fairness-2x4",
    "buddy-x5472",
    "sis-hackbench",
    "newidle",
    "steal",
];

/// The label of the baseline: every flag at its default, which is stock
/// 6.12.117 with its NI_RANDOM on.
pub const STOCK: &str = "6.12.117 stock (NI_RANDOM on)";

/// The workload of `schedsim bench`: 448 run/sleep tasks and 64 hogs on
/// 224 CPUs, so wakeups, newidle balancing and periodic balancing all run.
pub const BENCH_WORKLOAD: &str = "periodic:448:2000:1000+fairness:64";

/// One simulated configuration of an experiment.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Label in the tables.
    pub label: String,
    /// Flags (applied to the defaults).
    pub flags: String,
    /// Knobs.
    pub knobs: Knobs,
    /// STEAL ablation.
    pub steal_ignore_node_limit: bool,
    /// `CONFIG_HZ`.
    pub hz: u32,
    /// The cost model (the default but in the sensitivity runs).
    pub cost: CostModel,
}

impl Variant {
    /// `label` with `flags` applied to the defaults, default knobs, HZ 250.
    pub fn new(label: &str, flags: &str) -> Self {
        Self {
            label: label.into(),
            flags: flags.into(),
            knobs: Knobs::default(),
            steal_ignore_node_limit: false,
            hz: DEFAULT_HZ,
            cost: CostModel::default(),
        }
    }

    /// The same variant at `hz`.
    fn at_hz(mut self, hz: u32) -> Self {
        self.hz = hz;
        self
    }
}

/// Runs `variant` of `workload` on `topo` for `duration_ms` of simulated time with `seed`.
pub fn run_variant(
    topo: &str,
    workload: &str,
    v: &Variant,
    seed: u64,
    duration_ms: u64,
    samples: u32,
) -> Result<RunResult, String> {
    let t = Topology::preset(topo)?;
    let w = Workload::parse(workload)?;
    let mut cfg = Config::new(t, w, seed, duration_ms.saturating_mul(1_000_000));
    let mut f = Flags::default();
    f.apply(&v.flags)?;
    cfg.flags = f;
    cfg.knobs = v.knobs;
    cfg.steal_ignore_node_limit = v.steal_ignore_node_limit;
    cfg.hz = v.hz;
    cfg.cost = v.cost;
    cfg.samples = samples;
    Ok(crate::run(cfg))
}

/// Runs `seeds` seeds (1..=seeds) of one variant.
pub fn run_seeds(
    topo: &str,
    workload: &str,
    v: &Variant,
    seeds: u64,
    duration_ms: u64,
) -> Result<Vec<RunResult>, String> {
    (1..=seeds)
        .map(|s| run_variant(topo, workload, v, s, duration_ms, 0))
        .collect()
}

/// Mean of `f` over runs.
pub fn avg(rs: &[RunResult], f: impl Fn(&RunResult) -> f64) -> f64 {
    mean_sd(&rs.iter().map(f).collect::<Vec<_>>()).0
}

/// Mean and sample standard deviation.
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// A reST simple table.
pub fn rst_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let cols = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            w[i] = w[i].max(c.len());
        }
    }
    let rule: String = w
        .iter()
        .map(|&n| "=".repeat(n))
        .collect::<Vec<_>>()
        .join("  ");
    let line = |cells: Vec<&str>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut o = String::new();
    let _ = writeln!(o, "{rule}");
    let _ = writeln!(o, "{}", line(headers.to_vec()));
    let _ = writeln!(o, "{rule}");
    for r in rows {
        let _ = writeln!(o, "{}", line(r.iter().map(String::as_str).collect()));
    }
    let _ = writeln!(o, "{rule}");
    o
}

/// Options of an experiment run.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Where to write SVG plots.
    pub plot_dir: Option<String>,
    /// Short runs (tests).
    pub quick: bool,
    /// `CONFIG_HZ` of every run.
    pub hz: u32,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            plot_dir: None,
            quick: false,
            hz: DEFAULT_HZ,
        }
    }
}

fn plot(opts: &Opts, name: &str, r: &RunResult) -> Result<(), String> {
    if let Some(d) = &opts.plot_dir {
        let s = crate::svg::render(r)?;
        let p = format!("{d}/{name}.svg");
        std::fs::write(&p, s).map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    Ok(())
}

/// Result of the fairness experiment for one thread count and mode.
#[derive(Clone, Debug)]
pub struct FairnessRow {
    /// Threads.
    pub threads: u32,
    /// "v5.9 switches" or [`STOCK`].
    pub mode: &'static str,
    /// Per seed, min/max work %.
    pub ratios: Vec<f64>,
}

/// The "before" of Guittot 2020 as the series can A/B it on 6.12.
pub fn v5_9_variant() -> Variant {
    Variant {
        knobs: Knobs::v5_9(),
        ..Variant::new("v5.9 switches", "-LB_RELAX_FAILED,-LB_BUSY_INTERVAL_DEC")
    }
}

/// Guittot 2020: min/max work of N always-running threads on 2x4.
pub fn fairness(opts: &Opts) -> Result<(String, Vec<FairnessRow>), String> {
    let (seeds, duration_ms) = if opts.quick {
        (4u64, 4_000)
    } else {
        (10u64, 10_000)
    };
    let mut rows = Vec::new();
    for n in [9u32, 11] {
        for (mode, v) in [
            ("v5.9 switches", v5_9_variant()),
            (STOCK, Variant::new(STOCK, "")),
        ] {
            let v = v.at_hz(opts.hz);
            let mut ratios = Vec::new();
            for s in 1..=seeds {
                let samples = if s == 1 && opts.plot_dir.is_some() {
                    200
                } else {
                    0
                };
                let r = run_variant("2x4", &format!("fairness:{n}"), &v, s, duration_ms, samples)?;
                if samples > 0 {
                    let tag = if mode == STOCK { "after" } else { "before" };
                    plot(opts, &format!("fairness-{n}-{tag}"), &r)?;
                }
                ratios.push(r.min_max_ratio_pct(None));
            }
            rows.push(FairnessRow {
                threads: n,
                mode,
                ratios,
            });
        }
    }
    let thread = [
        (9u32, "v5.9 switches", "78.3% (+/- 6.60%), worst 68.6%"),
        (9, STOCK, "91.20% (+/- 2.44%), worst 85.67%"),
        (11, "v5.9 switches", "65.91% (+/- 8.26%), worst 53.52%"),
        (11, STOCK, "91.34% (+/- 1.87%), worst 87.26%"),
    ];
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (m, sd) = mean_sd(&r.ratios);
            let worst = r.ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let t = thread
                .iter()
                .find(|(n, md, _)| *n == r.threads && *md == r.mode)
                .map_or("", |x| x.2);
            vec![
                r.threads.to_string(),
                r.mode.to_string(),
                format!("{m:.1}% (+/- {sd:.1}%), worst {worst:.1}%"),
                t.to_string(),
            ]
        })
        .collect();
    let mut o = format!(
        "fairness-2x4: {seeds} seeds x {duration_ms} ms at HZ {}, min/max work of the threads\n\n",
        opts.hz
    );
    o.push_str(&rst_table(
        &["threads", "rules", "schedsim", "thread (rt-app, arm64 2x4)"],
        &table_rows,
    ));
    Ok((o, rows))
}

/// One row of the buddy experiment.
#[derive(Clone, Debug)]
pub struct BuddyRow {
    /// Topology flags.
    pub prefer: &'static str,
    /// Threshold variant.
    pub label: String,
    /// Messages per second, mean over seeds.
    pub msgs_per_s: f64,
    /// Pair splits (one LLC to two), mean.
    pub splits: f64,
    /// Migrations, mean.
    pub migrations: f64,
    /// Active balances, mean.
    pub active: f64,
}

/// Galbraith 2016: a buddy pair on x5472 with each idle-CPU threshold.
pub fn buddy(opts: &Opts) -> Result<(String, Vec<BuddyRow>), String> {
    let (seeds, duration_ms) = if opts.quick {
        (2u64, 2_000)
    } else {
        (5u64, 10_000)
    };
    let thresholds = [
        ("stock (+1)", ""),
        ("BALANCE_IDLE_LLC2 (+2)", "+BALANCE_IDLE_LLC2"),
        ("NO_BALANCE_IDLE_CPUS (+llc)", "-BALANCE_IDLE_CPUS"),
    ];
    let mut rows = Vec::new();
    for (prefer, ps) in [
        ("6.12 (all levels)", PreferSibling::All),
        ("v4.8 (SMT only)", PreferSibling::SmtOnly),
    ] {
        for (label, flags) in thresholds {
            let mut v = Variant::new(label, flags).at_hz(opts.hz);
            v.knobs.prefer_sibling = ps;
            let (mut m, mut sp, mut mi, mut ac) = (vec![], vec![], vec![], vec![]);
            for s in 1..=seeds {
                let samples = if s == 1
                    && opts.plot_dir.is_some()
                    && flags.is_empty()
                    && ps == PreferSibling::SmtOnly
                {
                    200
                } else {
                    0
                };
                let r = run_variant("x5472", "buddy:1", &v, s, duration_ms, samples)?;
                if samples > 0 {
                    plot(opts, "buddy-x5472-stock", &r)?;
                }
                m.push(r.messages_per_s());
                sp.push(r.stats.buddy_splits as f64);
                mi.push(r.stats.migrations as f64);
                ac.push(r.stats.active_balances as f64);
            }
            rows.push(BuddyRow {
                prefer,
                label: label.into(),
                msgs_per_s: mean_sd(&m).0,
                splits: mean_sd(&sp).0,
                migrations: mean_sd(&mi).0,
                active: mean_sd(&ac).0,
            });
        }
    }
    let t: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.prefer.to_string(),
                r.label.clone(),
                format!("{:.0}", r.msgs_per_s),
                format!("{:.1}", r.splits),
                format!("{:.1}", r.migrations),
                format!("{:.1}", r.active),
            ]
        })
        .collect();
    let mut o = format!(
        "buddy-x5472: buddy:1 (20 us work, 10 us overlap), {seeds} seeds x {duration_ms} ms at HZ {}, means\n\n",
        opts.hz
    );
    o.push_str(&rst_table(
        &[
            "SD_PREFER_SIBLING",
            "threshold",
            "messages/s",
            "splits",
            "migrations",
            "active balances",
        ],
        &t,
    ));
    o.push_str(
        "\nthread (netperf UDP_STREAM, X5472, v3.18+ with +1 vs +2): 15539 -> 32486 Mbit/s\n",
    );
    Ok((o, rows))
}

/// One row of the SIS experiment.
#[derive(Clone, Debug)]
pub struct SisRow {
    /// Groups.
    pub groups: u32,
    /// Variant label.
    pub label: String,
    /// Messages per second.
    pub msgs_per_s: f64,
    /// Its standard deviation over seeds.
    pub msgs_sd: f64,
    /// CPUs read per scan.
    pub cpus_per_scan: f64,
    /// Modelled scan time per wakeup, ns.
    pub scan_ns_per_wakeup: f64,
    /// Wakeups placed on an idle CPU, %.
    pub idle_placed_pct: f64,
}

/// The SIS variants of Zijlstra's RFC, as the RFC's table names them.
pub fn sis_variants() -> Vec<Variant> {
    vec![
        Variant::new("6.12.117 stock (SIS_UTIL, NI_RANDOM on)", ""),
        Variant::new("no limit", "-SIS_UTIL"),
        Variant::new("ORIG: SIS_PROP", "-SIS_UTIL,+SIS_PROP"),
        Variant::new("AGE+ONCE", "-SIS_UTIL,+SIS_PROP,+SIS_AGE,+SIS_ONCE"),
        Variant::new("FOLD", "-SIS_UTIL,+SIS_PROP,+SIS_FOLD"),
        Variant::new("FOLD+", "-SIS_UTIL,+SIS_PROP,+SIS_AGE,+SIS_ONCE,+SIS_FOLD"),
        Variant::new(
            "FOLD+ and SIS_UTIL",
            "+SIS_PROP,+SIS_AGE,+SIS_ONCE,+SIS_FOLD",
        ),
    ]
}

/// Zijlstra's RFC: hackbench scan cost and placement per SIS variant.
pub fn sis(opts: &Opts) -> Result<(String, Vec<SisRow>), String> {
    let (groups, duration_ms, seeds): (&[u32], u64, u64) = if opts.quick {
        (&[2], 200, 1)
    } else {
        (&[1, 2, 5, 10], 1_000, 3)
    };
    let mut rows = Vec::new();
    for &g in groups {
        for v in sis_variants() {
            let v = v.at_hz(opts.hz);
            let rs = run_seeds(
                "xeon2x22",
                &format!("hackbench:{g}"),
                &v,
                seeds,
                duration_ms,
            )?;
            let wake = |r: &RunResult| r.stats.sis_calls.max(1) as f64;
            let msgs: Vec<f64> = rs.iter().map(RunResult::messages_per_s).collect();
            rows.push(SisRow {
                groups: g,
                label: v.label.clone(),
                msgs_per_s: mean_sd(&msgs).0,
                msgs_sd: mean_sd(&msgs).1,
                cpus_per_scan: avg(&rs, |r| {
                    r.stats.sis_scan_cpus as f64 / r.stats.sis_scans.max(1) as f64
                }),
                scan_ns_per_wakeup: avg(&rs, |r| r.stats.sis_scan_ns as f64 / wake(r)),
                idle_placed_pct: avg(&rs, |r| 100.0 * r.stats.sis_placed_idle as f64 / wake(r)),
            });
        }
    }
    let t: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.groups.to_string(),
                r.label.clone(),
                format!("{:.0} +/- {:.0}", r.msgs_per_s / 1000.0, r.msgs_sd / 1000.0),
                format!("{:.1}", r.cpus_per_scan),
                format!("{:.0}", r.scan_ns_per_wakeup),
                format!("{:.1}", r.idle_placed_pct),
            ]
        })
        .collect();
    let mut o = format!(
        "sis-hackbench: xeon2x22, hackbench:G (20 fds, 20 us per message), {seeds} seeds x {duration_ms} ms at HZ {}, means\n\n",
        opts.hz
    );
    o.push_str(&rst_table(
        &[
            "groups",
            "variant",
            "kmsg/s",
            "CPUs/scan",
            "scan ns/wakeup",
            "wakeups on idle CPU %",
        ],
        &t,
    ));
    Ok((o, rows))
}

/// One row of the newidle experiment.
#[derive(Clone, Debug)]
pub struct NewidleRow {
    /// Topology.
    pub topo: &'static str,
    /// Variant.
    pub label: String,
    /// Newidle walks.
    pub walks: u64,
    /// Domains balanced by newidle.
    pub domains: u64,
    /// Walks that pulled.
    pub pulled: u64,
    /// Modelled newidle cost, % of CPU time.
    pub cost_pct: f64,
    /// Messages per second.
    pub msgs_per_s: f64,
    /// Its standard deviation over seeds.
    pub msgs_sd: f64,
    /// Idle CPU time during conservation violations, % of CPU time.
    pub wasted_pct: f64,
}

/// Low 2013 and Jain 2018: the newidle walk with the backoff and the costs.
pub fn newidle(opts: &Opts) -> Result<(String, Vec<NewidleRow>), String> {
    let (duration_ms, seeds) = if opts.quick { (200, 1) } else { (1_000, 3) };
    let mut variants = vec![
        Variant::new(STOCK, ""),
        Variant::new("NEWIDLE_BACKOFF", "+NEWIDLE_BACKOFF"),
        Variant::new("SD_MIGRATION_COST", "+SD_MIGRATION_COST"),
        Variant::new("both", "+NEWIDLE_BACKOFF,+SD_MIGRATION_COST"),
    ];
    if !opts.quick {
        // For scale, what NI_RANDOM (6.12.117's own newidle limit, on in
        // every other row) does; the regression tests do not read it.
        variants.insert(1, Variant::new("NO_NI_RANDOM", "-NI_RANDOM"));
    }
    let mut rows = Vec::new();
    for (topo, wl) in [("8socket", "hackbench:4"), ("xeon2x22", "hackbench:4")] {
        for v in &variants {
            let rs = run_seeds(topo, wl, &v.clone().at_hz(opts.hz), seeds, duration_ms)?;
            let cap = |r: &RunResult| r.duration_ns as f64 * f64::from(r.nr_cpus);
            rows.push(NewidleRow {
                topo,
                label: v.label.clone(),
                walks: avg(&rs, |r| r.stats.newidle_walks as f64) as u64,
                domains: avg(&rs, |r| r.stats.newidle_domains as f64) as u64,
                pulled: avg(&rs, |r| r.stats.newidle_pulled as f64) as u64,
                cost_pct: avg(&rs, |r| 100.0 * r.stats.newidle_cost_ns as f64 / cap(r)),
                msgs_per_s: avg(&rs, RunResult::messages_per_s),
                msgs_sd: mean_sd(&rs.iter().map(RunResult::messages_per_s).collect::<Vec<_>>()).1,
                wasted_pct: avg(&rs, |r| {
                    100.0 * r.conservation.wasted_cpu_ns as f64 / cap(r)
                }),
            });
        }
    }
    let t: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.topo.to_string(),
                r.label.clone(),
                r.walks.to_string(),
                r.domains.to_string(),
                r.pulled.to_string(),
                format!("{:.2}", r.cost_pct),
                format!("{:.0} +/- {:.0}", r.msgs_per_s / 1000.0, r.msgs_sd / 1000.0),
                format!("{:.2}", r.wasted_pct),
            ]
        })
        .collect();
    let mut o = format!(
        "newidle: hackbench:4 (160 tasks), {seeds} seeds x {duration_ms} ms at HZ {}, means\n\n",
        opts.hz
    );
    o.push_str(&rst_table(
        &[
            "machine",
            "flags",
            "walks",
            "domains balanced",
            "pulled",
            "cost % CPU",
            "kmsg/s",
            "wasted % CPU",
        ],
        &t,
    ));
    Ok((o, rows))
}

/// One row of the STEAL experiment.
#[derive(Clone, Debug)]
pub struct StealRow {
    /// Topology.
    pub topo: &'static str,
    /// Groups.
    pub groups: u32,
    /// Variant.
    pub label: String,
    /// Utilisation %.
    pub util_pct: f64,
    /// Messages per second.
    pub msgs_per_s: f64,
    /// Its standard deviation over seeds.
    pub msgs_sd: f64,
    /// Steals.
    pub steals: u64,
    /// Newidle walks.
    pub walks: u64,
    /// The runs' trace hashes, combined.
    pub trace: u64,
}

/// Sistare 2018: STEAL on and off, and the 8-socket limit.
pub fn steal(opts: &Opts) -> Result<(String, Vec<StealRow>), String> {
    let (groups, duration_ms, seeds): (&[u32], u64, u64) = if opts.quick {
        (&[2], 200, 1)
    } else {
        (&[1, 2, 4, 8], 1_000, 3)
    };
    let mut unlimited = Variant::new("STEAL, node limit ignored", "+STEAL");
    unlimited.steal_ignore_node_limit = true;
    let cases: Vec<(&'static str, Vec<Variant>)> = vec![
        (
            "xeon2x22",
            vec![Variant::new(STOCK, ""), Variant::new("STEAL", "+STEAL")],
        ),
        (
            "8socket",
            vec![
                Variant::new(STOCK, ""),
                Variant::new("STEAL", "+STEAL"),
                unlimited,
            ],
        ),
    ];
    let mut rows = Vec::new();
    for (topo, vs) in &cases {
        for &g in groups {
            for v in vs {
                let v = v.clone().at_hz(opts.hz);
                let rs = run_seeds(topo, &format!("hackbench:{g}"), &v, seeds, duration_ms)?;
                rows.push(StealRow {
                    topo,
                    groups: g,
                    label: v.label.clone(),
                    util_pct: avg(&rs, RunResult::utilisation_pct),
                    msgs_per_s: avg(&rs, RunResult::messages_per_s),
                    msgs_sd: mean_sd(&rs.iter().map(RunResult::messages_per_s).collect::<Vec<_>>())
                        .1,
                    steals: avg(&rs, |r| r.stats.steals as f64) as u64,
                    walks: avg(&rs, |r| r.stats.newidle_walks as f64) as u64,
                    trace: rs
                        .iter()
                        .fold(0, |h, r| h ^ r.trace_hash.rotate_left(r.seed as u32)),
                });
            }
        }
    }
    let t: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.topo.to_string(),
                r.groups.to_string(),
                r.label.clone(),
                format!("{:.1}", r.util_pct),
                format!("{:.0} +/- {:.0}", r.msgs_per_s / 1000.0, r.msgs_sd / 1000.0),
                r.steals.to_string(),
                r.walks.to_string(),
            ]
        })
        .collect();
    let mut o = format!(
        "steal: hackbench:G (20 fds), {seeds} seeds x {duration_ms} ms at HZ {}, means\n\n",
        opts.hz
    );
    o.push_str(&rst_table(
        &[
            "machine",
            "groups",
            "variant",
            "util %",
            "kmsg/s",
            "steals",
            "newidle walks",
        ],
        &t,
    ));
    o.push_str(
        "\nthread (Sistare, 1 node x 28 cores x SMT2, hackbench G process 100000): \
         2 groups 16.94 s -> 8.99 s (+88%), %util 76.97 -> 98.74\n",
    );
    Ok((o, rows))
}

/// Runs one experiment by name and returns its text.
pub fn run_named(name: &str, opts: &Opts) -> Result<String, String> {
    match name {
        "fairness-2x4" => fairness(opts).map(|x| x.0),
        "buddy-x5472" => buddy(opts).map(|x| x.0),
        "sis-hackbench" => sis(opts).map(|x| x.0),
        "newidle" => newidle(opts).map(|x| x.0),
        "steal" => steal(opts).map(|x| x.0),
        // Not in NAMES (and so not in `all`): about 15 minutes on one core.
        "sensitivity" => crate::sensitivity::run(opts),
        other => Err(format!(
            "unknown experiment '{other}'; known: {}, sensitivity, all",
            NAMES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_stats_helpers() {
        let t = rst_table(&["a", "bb"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "===  ==\na    bb\n===  ==\nxyz  1\n===  ==\n");
        let (m, sd) = mean_sd(&[1.0, 2.0, 3.0]);
        assert!((m - 2.0).abs() < 1e-12 && (sd - 1.0).abs() < 1e-12);
        assert!(run_named("nope", &Opts::default()).is_err());
    }
}
