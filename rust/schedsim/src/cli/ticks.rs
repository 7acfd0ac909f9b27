// SPDX-License-Identifier: GPL-2.0

//! `schedsim ticks TRACE...`: what became of the CPUs' ticks in guest
//! traces that logged them (`make replay`'s `SLB_REPLAY_FUNCS`,
//! `sched_tick()` by default), pooled over the traces: for the idle
//! CPUs, the odds `cost::TCG_IDLE_TICK_TURN` holds and each replay
//! given the guest's latencies takes from its own trace; for the busy
//! ones, how many their vCPUs' turns lost (`schedsim::replay::ticks`).

use schedsim::replay::ticks::{TickClass, TickFate, TickTurns};
use schedsim::replay::{compare, trace};
use std::fmt::Write as _;

/// Reads the traces and prints the table.
pub fn main(args: &[String]) -> Result<(), String> {
    if args.is_empty() {
        return Err("ticks needs one or more trace files (make replay writes them)".into());
    }
    if let Some(a) = args.iter().find(|a| a.starts_with('-')) {
        return Err(format!("unknown argument '{a}'"));
    }
    let mut sum = TickTurns::default();
    let (mut by_tick, mut by_balance) = (0u32, 0u32);
    for f in args {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
        let t = trace::parse(&text).map_err(|e| format!("{f}: {e}"))?;
        let turns = compare::guest_metrics(&t)
            .map_err(|e| format!("{f}: {e}"))?
            .tick_turns;
        if turns.is_empty() {
            continue;
        }
        if turns.by_balance {
            by_balance += 1;
        } else {
            by_tick += 1;
        }
        sum.add(&turns);
    }
    if by_tick + by_balance == 0 {
        return Err(
            "no tick (B sched_tick) or periodic balance (B sched_balance_softirq) in these traces"
                .into(),
        );
    }
    print!("{}", table(&sum, by_tick, by_balance));
    Ok(())
}

/// The pooled counts as a table: each class's ticks and the share of
/// each fate.
fn table(sum: &TickTurns, by_tick: u32, by_balance: u32) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ticks by the CPU's state at the tick's instant, {} traces ({by_tick} by sched_tick(), {by_balance} by sched_balance_softirq()):",
        by_tick + by_balance
    );
    if by_balance > 0 {
        let _ = writeln!(
            s,
            "  (by sched_balance_softirq(): a tick with no balance due counts as lost; busy CPUs not read)"
        );
    }
    let _ = write!(s, "  {:<17} {:>6}", "state at the tick", "ticks");
    for fate in TickFate::ALL {
        let _ = write!(s, "  {:>12}", fate.name());
    }
    s.push('\n');
    for class in TickClass::ALL {
        let n = sum.total(class);
        let _ = write!(s, "  {:<17} {n:>6}", class.name());
        for fate in TickFate::ALL {
            let pct = 100.0 * sum.count(class, fate) as f64 / (n.max(1) as f64);
            let _ = write!(s, "  {:>11.0}%", pct);
        }
        s.push('\n');
    }
    s
}
