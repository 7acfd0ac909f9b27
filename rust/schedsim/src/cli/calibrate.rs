// SPDX-License-Identifier: GPL-2.0

//! `schedsim calibrate`: compares the model with the guest's `make bench`
//! numbers (`schedsim::calibrate`) and writes the table and plots.

use schedsim::calibrate::tables::plot_points;
use schedsim::calibrate::{calibrate, parse_guest, summary_lines, table, HackbenchModel, Opts};
use schedsim::cost::TcgCost;
use schedsim::flags::Flags;
use schedsim::{report, svg};

/// `--hackbench SEND_US:RECV_US:QUEUE`.
fn parse_hackbench(v: &str) -> Result<HackbenchModel, String> {
    let f: Vec<u64> = v
        .split(':')
        .map(|x| x.parse::<u64>().ok().filter(|&n| n > 0 && n <= 10_000_000))
        .collect::<Option<Vec<_>>>()
        .filter(|f| f.len() == 3)
        .ok_or_else(|| {
            format!("bad --hackbench '{v}': expected SEND_US:RECV_US:QUEUE, each 1..=10000000")
        })?;
    Ok(HackbenchModel {
        send_us: f[0],
        recv_us: f[1],
        queue: u32::try_from(f[2])
            .map_err(|_| format!("bad --hackbench '{v}': queue too large"))?,
    })
}

/// `schedsim calibrate --guest FILE [--topology T] [--experiment E]
/// [--table rst|md] [--svg DIR] [--out FILE] [--seeds N] [--max-ms N]
/// [--hackbench S:R:Q] [--flags LIST] [--knobs LIST] [--cost-ns NAME=NS,...]
/// [--tcg-cost WAKEUP_NS:SWITCH_NS] [--hw-tick] [--lb-clock N]`; `--hw-tick`
/// ticks every busy CPU every period, as hardware does, where the default
/// takes the TCG guest's turns (`Opts::tcg_rr`).
pub fn main(args: &[String]) -> Result<(), String> {
    use lexopt::Arg::{Long, Short, Value as Positional};
    let mut opts = Opts::default();
    let (mut guest, mut md, mut svg_dir, mut out) = (None, false, None, None);
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    let val = |p: &mut lexopt::Parser, name: &str| -> Result<String, String> {
        p.value()
            .map_err(|_| format!("--{name} needs a value"))?
            .into_string()
            .map_err(|_| format!("--{name}: not UTF-8"))
    };
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("guest") => guest = Some(val(&mut p, "guest")?),
            Long("topology") => opts.topology = Some(val(&mut p, "topology")?),
            Long("experiment") => opts.experiment = Some(val(&mut p, "experiment")?),
            Long("table") => {
                md = match val(&mut p, "table")?.as_str() {
                    "md" => true,
                    "rst" => false,
                    other => return Err(format!("bad --table '{other}': expected rst or md")),
                }
            }
            Long("svg") => svg_dir = Some(val(&mut p, "svg")?),
            Long("out") => out = Some(val(&mut p, "out")?),
            Long("seeds") => {
                let v = val(&mut p, "seeds")?;
                opts.seeds = v
                    .parse()
                    .ok()
                    .filter(|&n| (1..=100).contains(&n))
                    .ok_or_else(|| format!("bad --seeds '{v}': expected 1..=100"))?;
            }
            Long("max-ms") => {
                let v = val(&mut p, "max-ms")?;
                opts.max_ms = v
                    .parse()
                    .ok()
                    .filter(|&n| (1..=3_600_000).contains(&n))
                    .ok_or_else(|| format!("bad --max-ms '{v}': expected 1..=3600000"))?;
            }
            Long("hackbench") => opts.hackbench = parse_hackbench(&val(&mut p, "hackbench")?)?,
            Long("flags") => {
                let v = val(&mut p, "flags")?;
                Flags::default().apply(&v)?;
                opts.extra_flags = v;
            }
            Long("knobs") => opts.knobs.apply(&val(&mut p, "knobs")?)?,
            Long("tcg-cost") => {
                let v = val(&mut p, "tcg-cost")?;
                let f: Vec<u64> = v
                    .split(':')
                    .map(|x| x.parse::<u64>().ok().filter(|&n| n <= 100_000_000))
                    .collect::<Option<Vec<_>>>()
                    .filter(|f| f.len() == 2)
                    .ok_or_else(|| {
                        format!("bad --tcg-cost '{v}': expected WAKEUP_NS:SWITCH_NS (host ns)")
                    })?;
                opts.tcg = TcgCost {
                    wakeup_host_ns: f[0],
                    ctx_switch_host_ns: f[1],
                };
            }
            Long("hw-tick") => opts.tcg_rr = false,
            Long("lb-clock") => {
                opts.lb_clock_factor = super::parse_lb_clock(&val(&mut p, "lb-clock")?)?;
            }
            Long("cost-ns") => opts.cost = opts.cost.with(&val(&mut p, "cost-ns")?)?,
            Long(a) => return Err(format!("unknown argument '--{a}'")),
            Short(c) => return Err(format!("unknown argument '-{c}'")),
            Positional(v) => return Err(format!("unknown argument '{}'", v.to_string_lossy())),
        }
    }
    let path = guest.ok_or("calibrate needs --guest FILE (scripts/bench_report.py --json)")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let guest = parse_guest(&text)?;
    let cal = calibrate(&guest, &opts)?;
    if cal.experiments.is_empty() && cal.skipped.is_empty() {
        return Err(format!(
            "nothing to calibrate: {path} has no experiment that --topology/--experiment select"
        ));
    }
    let t = table(&cal, md);
    match &out {
        Some(f) => {
            let head = format!(
                ".. SPDX-License-Identifier: GPL-2.0\n\n.. Generated by schedsim calibrate (make calibrate) from {path}; do not edit.\n\n"
            );
            let body = if md { t.clone() } else { format!("{head}{t}") };
            std::fs::write(f, body).map_err(|e| format!("cannot write {f}: {e}"))?;
            report::emit(&format!("{}\n", summary_lines(&cal).join("\n")));
        }
        None => report::emit(&t),
    }
    if let Some(d) = &svg_dir {
        let mut topos: Vec<&str> = cal
            .experiments
            .iter()
            .map(|e| e.topology.as_str())
            .collect();
        topos.dedup();
        for topo in topos {
            let points = plot_points(&cal, topo);
            // A topology whose experiments have no compared effect has no
            // plot rather than an empty one.
            if points.is_empty() {
                continue;
            }
            let s = svg::calibration(topo, &points)?;
            let f = format!("{d}/calibration-{topo}.svg");
            std::fs::write(&f, s).map_err(|e| format!("cannot write {f}: {e}"))?;
        }
    }
    Ok(())
}
