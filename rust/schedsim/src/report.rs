// SPDX-License-Identifier: GPL-2.0

//! Output: the table, the JSON and the progress bar.
//!
//! No kernel code is mirrored. JSON is written by hand (no dependency) with
//! fixed float precision, so the same run prints the same bytes on every
//! machine; the progress bar goes to stderr only, so it never mixes with
//! results.

use crate::stats::RunResult;
use std::fmt::Write as _;
use std::io::Write as _;

/// JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The run as one JSON object.
pub fn to_json(r: &RunResult) -> String {
    let mut o = String::new();
    o.push_str("{\n");
    let _ = writeln!(o, "  \"topology\": {},", json_str(&r.topology));
    let _ = writeln!(o, "  \"nr_cpus\": {},", r.nr_cpus);
    let _ = writeln!(o, "  \"workload\": {},", json_str(&r.workload));
    let _ = writeln!(o, "  \"flags\": {},", json_str(&r.flags));
    let _ = writeln!(
        o,
        "  \"knobs\": {{\"busy_factor\": {}, \"imbalance_pct_above_llc\": {}, \"prefer_sibling\": {}, \"active_balance_v5_9\": {}}},",
        r.knobs.busy_factor,
        r.knobs.imbalance_pct_above_llc,
        json_str(match r.knobs.prefer_sibling {
            crate::flags::PreferSibling::All => "all",
            crate::flags::PreferSibling::SmtOnly => "smt-only",
        }),
        r.knobs.active_balance_v5_9
    );
    let _ = writeln!(o, "  \"seed\": {},", r.seed);
    let _ = writeln!(o, "  \"duration_ns\": {},", r.duration_ns);
    let _ = writeln!(o, "  \"trace_hash\": \"{:016x}\",", r.trace_hash);
    let _ = writeln!(o, "  \"utilisation_pct\": {:.3},", r.utilisation_pct());
    let _ = writeln!(
        o,
        "  \"min_max_work_pct\": {:.3},",
        r.min_max_ratio_pct(None)
    );
    let _ = writeln!(o, "  \"messages_per_s\": {:.1},", r.messages_per_s());
    o.push_str("  \"stats\": {");
    let f = r.stats.fields();
    for (i, (k, v)) in f.iter().enumerate() {
        let _ = write!(o, "{}\"{k}\": {v}", if i == 0 { "" } else { ", " });
    }
    o.push_str("},\n");
    let c = &r.conservation;
    let _ = writeln!(
        o,
        "  \"conservation\": {{\"wasted_cpu_ns\": {}, \"violation_ns\": {}, \"episodes\": {}, \"episodes_over_1ms\": {}, \"episodes_over_100ms\": {}, \"worst_ns\": {}, \"worst_start_ns\": {}, \"worst_idle_cpus\": {}}},",
        c.wasted_cpu_ns,
        c.violation_ns,
        c.episodes,
        c.episodes_over_1ms,
        c.episodes_over_100ms,
        c.worst_ns,
        c.worst_start_ns,
        json_str(&c.worst_idle_cpus)
    );
    o.push_str("  \"tasks\": [\n");
    for (i, t) in r.tasks.iter().enumerate() {
        let _ = writeln!(
            o,
            "    {{\"id\": {i}, \"kind\": {}, \"work_ns\": {}, \"migrations\": {}, \"wakeups\": {}}}{}",
            json_str(t.kind),
            t.work_ns,
            t.migrations,
            t.wakeups,
            if i + 1 == r.tasks.len() { "" } else { "," }
        );
    }
    o.push_str("  ]\n}\n");
    o
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }
}
