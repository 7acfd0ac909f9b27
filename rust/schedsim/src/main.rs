// SPDX-License-Identifier: GPL-2.0

//! `schedsim`: the command line.
//!
//! No kernel code is mirrored. `schedsim run` (the default) simulates one
//! configuration; `schedsim experiment NAME` runs one of the documented
//! experiments; `schedsim calibrate` compares the model with the guest's
//! `make bench` numbers; `schedsim replay` replays guest traces into it;
//! `schedsim bench` measures the speed budget; `schedsim
//! topology NAME` prints the domains as the kernel's `sched_verbose` does.

use schedsim::flags::{Flags, Knobs};
use schedsim::topology::{Topology, PRESETS};
use schedsim::workload::Workload;
use schedsim::{experiments, report, svg, Config};
use std::process::ExitCode;

mod cli;
use cli::value;
use std::time::Instant;

const USAGE: &str = "usage:
  schedsim [run] --topology NAME --workload SPEC [--flags LIST] [--knobs LIST]
                 [--seed N] [--hz N] [--duration-ms N] [--format table|json]
                 [--plot FILE.svg] [--no-progress] [--nohz] [--tcg-rr]
                 [--lb-clock N]
  schedsim experiment NAME|all [--plot-dir DIR] [--quick] [--hz N]
  schedsim calibrate --guest FILE.json [--topology T] [--experiment E]
                 [--table rst|md] [--svg DIR] [--out FILE] [--seeds N]
                 [--max-ms N] [--hackbench SEND_US:RECV_US:QUEUE] [--flags LIST]
                 [--knobs LIST] [--tcg-cost WAKEUP_NS:SWITCH_NS]
                 [--cost-ns NAME=NS,...] [--hw-tick] [--lb-clock N]
  schedsim replay TRACE... [--seed N] [--format table|json]
                 [--wake-idle-us N|guest|guest-spread] [--cost NAME=FACTOR]...
                 [--kthreads] [--tcg-rr] [--wake-list-at-tick] [--seeds N]
                 [--native-steal] [--lb-clock N] [--timer-on-time]
                 [--resched-at-once] [--model-trace DIR] [--rerun DIR]
  schedsim ticks TRACE...
  schedsim bench
  schedsim topology NAME
  schedsim list

  --workload  fairness:N | buddy:P[:work_us[:overlap_us]] |
              hackbench:G[:fds[:send_us[:recv_us[:queue[:loops]]]]] |
              periodic:N:run_us:sleep_us,
              parts joined with '+'
  --flags     comma list of +FLAG / -FLAG / NO_FLAG (sched_feat names)
  --knobs     busy_factor=N, imbalance_pct=N (levels above the LLC),
              prefer_sibling=all|smt-only, active_balance=6.12|v5.9
  --hz        CONFIG_HZ, 100..=1000 (default 250, the guest kernel's)
  --nohz      CONFIG_NO_HZ_IDLE: idle CPUs stop their tick and a kicked one
              balances for them (default: HZ_PERIODIC, the guest kernel's)
  --tcg-rr    tick as the TCG guest does: a busy vCPU only on its turn
              (calibrate's default; --hw-tick there ticks as hardware)
  --lb-clock  a newidle balance reads N times its cost on the kernel's
              clock (1, hardware; the TCG guest's is about 300)";

struct RunArgs {
    topology: Option<String>,
    workload: Option<String>,
    flags: Flags,
    knobs: Knobs,
    seed: u64,
    hz: u32,
    duration_ms: u64,
    json: bool,
    plot: Option<String>,
    progress: bool,
    nohz: bool,
    tcg_rr: bool,
    lb_clock_factor: u32,
}

fn parse_run(args: &[String]) -> Result<RunArgs, String> {
    use lexopt::Arg::{Long, Short, Value};
    let mut r = RunArgs {
        topology: None,
        workload: None,
        flags: Flags::default(),
        knobs: Knobs::default(),
        seed: 1,
        hz: schedsim::sim::DEFAULT_HZ,
        duration_ms: 10_000,
        json: false,
        plot: None,
        progress: true,
        nohz: false,
        tcg_rr: false,
        lb_clock_factor: 1,
    };
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let name = match &arg {
            Long(n) => format!("--{n}"),
            Short(c) => format!("-{c}"),
            Value(v) => return Err(format!("unknown argument '{}'", v.to_string_lossy())),
        };
        match name.as_str() {
            "--topology" => r.topology = Some(value(&mut p, &name)?),
            "--workload" => r.workload = Some(value(&mut p, &name)?),
            "--flags" => r.flags.apply(&value(&mut p, &name)?)?,
            "--knobs" => r.knobs.apply(&value(&mut p, &name)?)?,
            "--seed" => {
                let v = value(&mut p, &name)?;
                r.seed = v
                    .parse()
                    .map_err(|_| format!("bad --seed '{v}': expected a number"))?;
            }
            "--hz" => r.hz = cli::parse_hz(&value(&mut p, &name)?)?,
            "--duration-ms" => {
                let v = value(&mut p, &name)?;
                r.duration_ms = v
                    .parse()
                    .ok()
                    .filter(|&d| d > 0 && d <= 3_600_000)
                    .ok_or_else(|| format!("bad --duration-ms '{v}': expected 1..=3600000"))?;
            }
            "--format" => {
                r.json = match value(&mut p, &name)?.as_str() {
                    "json" => true,
                    "table" => false,
                    other => return Err(format!("bad --format '{other}': expected table or json")),
                }
            }
            "--plot" => r.plot = Some(value(&mut p, &name)?),
            "--no-progress" => r.progress = false,
            "--nohz" => r.nohz = true,
            "--tcg-rr" => r.tcg_rr = true,
            "--lb-clock" => r.lb_clock_factor = cli::parse_lb_clock(&value(&mut p, &name)?)?,
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(r)
}

fn cmd_run(args: &[String]) -> Result<(), String> {
    let a = parse_run(args)?;
    let topo = Topology::preset(a.topology.as_deref().ok_or("--topology is required")?)?;
    let wl = Workload::parse(a.workload.as_deref().ok_or("--workload is required")?)?;
    let mut cfg = Config::new(topo, wl, a.seed, a.duration_ms.saturating_mul(1_000_000));
    cfg.flags = a.flags;
    cfg.knobs = a.knobs;
    cfg.hz = a.hz;
    cfg.nohz = a.nohz;
    cfg.tcg_rr = a.tcg_rr;
    cfg.lb_clock_factor = a.lb_clock_factor;
    cfg.progress = a.progress && a.duration_ms >= 2_000;
    if a.plot.is_some() {
        // Fewer columns on big machines keep the SVG small.
        cfg.samples = match cfg.topology.nr_cpus {
            0..=16 => 200,
            17..=64 => 100,
            _ => 60,
        };
    }
    let r = schedsim::run(cfg);
    if let Some(p) = &a.plot {
        let s = svg::render(&r)?;
        std::fs::write(p, s).map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    report::emit(&if a.json {
        report::to_json(&r)?
    } else {
        report::to_table(&r)
    });
    Ok(())
}

fn cmd_bench() -> Result<(), String> {
    // The speed budget of issue 7: thx2, 10 s simulated, one core.
    let topo = Topology::preset("thx2")?;
    let wl = Workload::parse(experiments::BENCH_WORKLOAD)?;
    let cfg = Config::new(topo, wl, 1, 10_000_000_000);
    let t0 = Instant::now();
    let r = schedsim::run(cfg);
    let wall = t0.elapsed();
    report::emit(&format!(
        "bench: thx2 (224 CPUs), workload {}, 10000 ms simulated in {:.2} s wall ({} context switches, {} migrations, trace {:016x})\n",
        experiments::BENCH_WORKLOAD,
        wall.as_secs_f64(),
        r.stats.context_switches,
        r.stats.migrations,
        r.trace_hash
    ));
    Ok(())
}

fn real_main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("-h") | Some("--help") | Some("help") => {
            report::emit(&format!("{USAGE}\n"));
            Ok(())
        }
        Some("run") => cmd_run(&args[1..]),
        Some("bench") => cmd_bench(),
        Some("list") => {
            report::emit("topologies:\n");
            for p in PRESETS {
                report::emit(&format!("  {:<9} {}\n", p.name, p.about));
            }
            report::emit(&format!(
                "flags: {}\n",
                schedsim::flags::FLAG_NAMES.join(", ")
            ));
            report::emit(&format!("experiments: {}\n", experiments::NAMES.join(", ")));
            Ok(())
        }
        Some("topology") => {
            let name = args.get(1).ok_or("topology needs a name")?;
            let t = Topology::preset(name)?;
            for c in 0..t.nr_cpus {
                report::emit(&t.describe_cpu(c));
            }
            Ok(())
        }
        Some("experiment") => cli::experiment::main(&args[1..]),
        Some("calibrate") => cli::calibrate::main(&args[1..]),
        Some("replay") => cli::replay::main(&args[1..]),
        Some("ticks") => cli::ticks::main(&args[1..]),
        Some(a) if a.starts_with("--") => cmd_run(&args),
        Some(other) => Err(format!("unknown command '{other}'\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schedsim: error: {e}");
            ExitCode::from(2)
        }
    }
}
