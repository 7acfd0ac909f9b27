// SPDX-License-Identifier: GPL-2.0

//! Output: the table, the JSON and the progress bar.
//!
//! No kernel code is mirrored. The JSON comes from serde, with floats
//! rounded to 3 decimals and printed by `serde_json`'s shortest
//! round-trip formatting, so the same run prints the same bytes on every
//! machine; the progress bar goes to stderr only, so it never mixes with
//! results.

use crate::conserve::ConservationReport;
use crate::flags::Knobs;
use crate::stats::{RunResult, Stats};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A float as the report prints it: 3 decimals.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One task in the JSON report.
#[derive(Serialize)]
struct JsonTask {
    id: usize,
    kind: &'static str,
    work_ns: u64,
    migrations: u64,
    wakeups: u64,
}

/// The JSON report: the run's identity, its headline numbers, every
/// counter, the conservation checker's findings and each task.
#[derive(Serialize)]
struct JsonRun<'a> {
    topology: &'a str,
    nr_cpus: u32,
    workload: &'a str,
    flags: &'a str,
    knobs: &'a Knobs,
    seed: u64,
    hz: u32,
    duration_ns: u64,
    trace_hash: String,
    utilisation_pct: f64,
    min_max_work_pct: f64,
    messages_per_s: f64,
    stats: &'a Stats,
    conservation: &'a ConservationReport,
    tasks: Vec<JsonTask>,
}

/// The run as one JSON object, or why it could not be written.
pub fn to_json(r: &RunResult) -> Result<String, String> {
    let run = JsonRun {
        topology: &r.topology,
        nr_cpus: r.nr_cpus,
        workload: &r.workload,
        flags: &r.flags,
        knobs: &r.knobs,
        seed: r.seed,
        hz: r.hz,
        duration_ns: r.duration_ns,
        trace_hash: format!("{:016x}", r.trace_hash),
        utilisation_pct: round3(r.utilisation_pct()),
        min_max_work_pct: round3(r.min_max_ratio_pct(None)),
        messages_per_s: (r.messages_per_s() * 10.0).round() / 10.0,
        stats: &r.stats,
        conservation: &r.conservation,
        tasks: r
            .tasks
            .iter()
            .enumerate()
            .map(|(id, t)| JsonTask {
                id,
                kind: t.kind,
                work_ns: t.work_ns,
                migrations: t.migrations,
                wakeups: t.wakeups,
            })
            .collect(),
    };
    // Plain structs of numbers and strings, which serde_json writes
    // without fail today (it refuses only map keys that are not strings);
    // a later field that breaks that is an error to see, not empty output.
    let mut o = serde_json::to_string_pretty(&run).map_err(|e| format!("the run's JSON: {e}"))?;
    o.push('\n');
    Ok(o)
}

/// The run as a human-readable table.
pub fn to_table(r: &RunResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "schedsim: {}, {:.0} ms", r.title(), ms(r.duration_ns));
    let _ = writeln!(
        o,
        "knobs: busy_factor {}, imbalance_pct above LLC {}, prefer_sibling {:?}, v5.9 active balance {}",
        r.knobs.busy_factor,
        r.knobs.imbalance_pct_above_llc,
        r.knobs.prefer_sibling,
        r.knobs.active_balance_v5_9
    );
    let _ = writeln!(o, "trace hash {:016x}", r.trace_hash);
    let _ = writeln!(o);
    let _ = writeln!(o, "{:<28} {:>14}", "metric", "value");
    let _ = writeln!(o, "{:<28} {:>14.2}", "utilisation %", r.utilisation_pct());
    let _ = writeln!(
        o,
        "{:<28} {:>14.2}",
        "min/max work %",
        r.min_max_ratio_pct(None)
    );
    let _ = writeln!(o, "{:<28} {:>14.1}", "messages/s", r.messages_per_s());
    for (k, v) in r.stats.fields() {
        let _ = writeln!(o, "{k:<28} {v:>14}");
    }
    let c = &r.conservation;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "work conservation (idle CPU while another has a waiting task):"
    );
    let _ = writeln!(
        o,
        "  wasted CPU time {:.3} ms over {:.3} ms of violation; {} episodes, {} >= 1 ms, {} >= 100 ms",
        ms(c.wasted_cpu_ns),
        ms(c.violation_ns),
        c.episodes,
        c.episodes_over_1ms,
        c.episodes_over_100ms
    );
    let _ = writeln!(
        o,
        "  worst episode {:.3} ms at {:.3} ms, idle CPUs {}",
        ms(c.worst_ns),
        ms(c.worst_start_ns),
        if c.worst_idle_cpus.is_empty() {
            "-"
        } else {
            &c.worst_idle_cpus
        }
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:>5} {:<9} {:>12} {:>10} {:>9}",
        "task", "kind", "work ms", "migrations", "wakeups"
    );
    let shown = r.tasks.len().min(32);
    for (i, t) in r.tasks.iter().take(shown).enumerate() {
        let _ = writeln!(
            o,
            "{i:>5} {:<9} {:>12.3} {:>10} {:>9}",
            t.kind,
            ms(t.work_ns),
            t.migrations,
            t.wakeups
        );
    }
    if r.tasks.len() > shown {
        let _ = writeln!(
            o,
            "  ... {} more tasks (use --format json)",
            r.tasks.len() - shown
        );
    }
    o
}

/// Writes results to stdout. A closed pipe (`schedsim ... | head`) ends
/// the output quietly instead of panicking as `print!` would.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

/// Draws the progress bar for `pct` percent on stderr.
pub fn progress(pct: u64) {
    let filled = (pct.min(100) / 5) as usize;
    let mut e = std::io::stderr();
    let _ = write!(
        e,
        "\r[{}{}] {:>3}%",
        "#".repeat(filled),
        " ".repeat(20 - filled),
        pct.min(100)
    );
    let _ = e.flush();
}

/// Ends the progress bar line.
pub fn progress_done() {
    let mut e = std::io::stderr();
    let _ = writeln!(e, "\r[{}] 100%", "#".repeat(20));
}
