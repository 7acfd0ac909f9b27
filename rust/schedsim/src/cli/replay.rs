// SPDX-License-Identifier: GPL-2.0

//! `schedsim replay TRACE... [--seed N] [--seeds N] [--format table|json]
//! [--wake-idle-us N|guest|guest-spread] [--cost NAME=FACTOR]... [--kthreads]
//! [--tcg-rr] [--wake-list-at-tick] [--native-steal] [--lb-clock N]
//! [--timer-on-time] [--resched-at-once] [--model-trace DIR] [--rerun DIR]`:
//! each guest trace (`make replay`) replayed into the model and measured both ways
//! (`schedsim::replay`); `--tcg-rr` ticks as the TCG guest does
//! (`Config::tcg_rr`); `--wake-list-at-tick` takes the wake list's IPI
//! at the next tick (`Config::wake_list_at_tick`); STEAL's attempt is as slow as in that guest
//! (`CostModel::tcg_steal`) unless `--native-steal`; `--wake-idle-us
//! guest` gives the model each trace's TCG latencies, a wakeup's onto
//! an idle CPU, the wake list's onto an idle CPU and onto a busy one
//! across LLCs, a fork's onto an idle CPU and a wakeup preemption's of
//! another busy CPU (`CostModel::wake_idle_ns`, `wake_list_ns`,
//! `wake_list_busy_ns`, `fork_idle_ns`, `resched_busy_ns`), their
//! medians, and `guest-spread` draws each from the trace's own spread
//! of it (`cost::LatencySpread`); both also give an idle vCPU's tick
//! the trace's odds (`Config::idle_tick_turn`) and handle a timer that
//! fired on an idle vCPU at its turn (`Config::timer_turn`);
//! `--timer-on-time` fires every timer at its recorded end and
//! `--resched-at-once` preempts another CPU at once; with
//! `--model-trace`, the model's run of each is written to DIR as a trace
//! of the same format; `--cost` scales one constant of the cost model
//! (`cost.rs`'s names), as the sensitivity runs do; `--seeds N` replays
//! every trace again with the next N-1 seeds and adds the span of the
//! goal's row counts over the N (`report::seeds_line`) to the table;
//! `--rerun DIR` reads another recording of the same experiments
//! (`DIR/TOPOLOGY/*.trace`) and says how far the guest is from itself,
//! row by row, and how the model fares where the guest reproduced itself
//! (`report::rerun_census`).

use schedsim::replay::compare::{Opts, WakeIdle};
use schedsim::replay::{compare, gaps, report, trace};

/// Parses the options and prints the report.
pub fn main(args: &[String]) -> Result<(), String> {
    use lexopt::Arg::{Long, Short, Value};
    let mut files = Vec::new();
    let mut opts = Opts::default();
    let mut json = false;
    let mut model_dir: Option<String> = None;
    let mut seeds = 1u64;
    let mut rerun_dir: Option<String> = None;
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("seed") => {
                let v = super::value(&mut p, "--seed")?;
                opts.seed = v
                    .parse()
                    .map_err(|_| format!("bad --seed '{v}': not a number"))?;
            }
            Long("seeds") => {
                let v = super::value(&mut p, "--seeds")?;
                seeds = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| format!("bad --seeds '{v}': 1..=64"))?;
            }
            Long("format") => match super::value(&mut p, "--format")?.as_str() {
                "table" => json = false,
                "json" => json = true,
                other => return Err(format!("bad --format '{other}': table or json")),
            },
            Long("wake-idle-us") => {
                let v = super::value(&mut p, "--wake-idle-us")?;
                opts.wake_idle = match v.as_str() {
                    "guest" => WakeIdle::Guest,
                    "guest-spread" => WakeIdle::GuestSpread,
                    n => WakeIdle::Ns(
                        n.parse::<u64>()
                            .ok()
                            .filter(|&us| us <= 1_000_000)
                            .ok_or_else(|| {
                                format!("bad --wake-idle-us '{n}': 0..=1000000, 'guest' or 'guest-spread'")
                            })?
                            .saturating_mul(1000),
                    ),
                };
            }
            Long("kthreads") => opts.kthreads = true,
            Long("tcg-rr") => opts.tcg_rr = true,
            Long("wake-list-at-tick") => opts.wake_list_at_tick = true,
            Long("native-steal") => opts.native_steal = true,
            Long("timer-on-time") => opts.timer_on_time = true,
            Long("resched-at-once") => opts.resched_at_once = true,
            Long("lb-clock") => {
                opts.lb_clock_factor = super::parse_lb_clock(&super::value(&mut p, "--lb-clock")?)?;
            }
            Long("cost") => {
                let v = super::value(&mut p, "--cost")?;
                let (name, f) = v
                    .split_once('=')
                    .ok_or_else(|| format!("bad --cost '{v}': NAME=FACTOR"))?;
                let f: f64 = f
                    .parse()
                    .map_err(|_| format!("bad --cost '{v}': '{f}' is not a number"))?;
                opts.cost = opts.cost.scaled(Some(name), f)?;
            }
            Long("model-trace") => model_dir = Some(super::value(&mut p, "--model-trace")?),
            Long("rerun") => rerun_dir = Some(super::value(&mut p, "--rerun")?),
            Long(a) => return Err(format!("unknown argument '--{a}'")),
            Short(c) => return Err(format!("unknown argument '-{c}'")),
            Value(v) => files.push(v.to_string_lossy().into_owned()),
        }
    }
    if files.is_empty() {
        return Err("replay needs one or more trace files (make replay writes them)".into());
    }
    if seeds > 1 && json {
        return Err("--seeds is for the table: with --format json run one seed at a time".into());
    }
    let mut traces = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
        traces.push((f, trace::parse(&text).map_err(|e| format!("{f}: {e}"))?));
    }
    let earlier = match &rerun_dir {
        Some(dir) => Some(rerun_metrics(dir)?),
        None => None,
    };
    let mut all = Vec::new();
    let mut reruns = Vec::new();
    for (f, t) in &traces {
        let r = compare::replay(t, &opts).map_err(|e| format!("{f}: {e}"))?;
        if let Some(dir) = &model_dir {
            let path = format!("{dir}/{}.{}.model.trace", r.experiment, r.state);
            let mut text = format!(
                "# slb-trace 1\n# topology {} cpus {}\n# experiment {} state {} kind model flag {}\n# comm {}\n# duration_ns {}\n",
                r.topology, r.model.cpus, r.experiment, r.state, r.flag,
                t.header.comm.join(" "), r.model.span_ns
            );
            for l in trace::body_lines(&r.model_events, &r.model_calls) {
                text.push_str(&l);
                text.push('\n');
            }
            std::fs::write(&path, text).map_err(|e| format!("{path}: {e}"))?;
        }
        let h = &t.header;
        reruns.push(earlier.as_ref().and_then(|e| {
            e.get(&(h.topology.clone(), h.experiment.clone(), h.state.clone()))
                .map(|m| report::rerun_rows(m, &r.guest))
        }));
        all.push(r);
    }
    if earlier.is_some() && reruns.iter().all(Option::is_none) {
        return Err(format!(
            "--rerun {}: no trace there of these traces' experiments",
            rerun_dir.unwrap_or_default()
        ));
    }
    if json {
        let out: Vec<_> = all
            .iter()
            .zip(&reruns)
            .map(|(r, rr)| serde_json::json!({ "replay": r, "rows": report::rows(r), "rerun_rows": rr }))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report::table(&all));
        print!("{}", gaps::table(&all));
        if earlier.is_some() {
            print!(
                "{}",
                report::rerun_line(&report::rerun_census(&all, &reruns))
            );
        }
        if seeds > 1 {
            let mut censuses = vec![report::census(&all)];
            for k in 1..seeds {
                let o = Opts {
                    seed: opts.seed.saturating_add(k),
                    ..opts
                };
                let again = traces
                    .iter()
                    .map(|(f, t)| compare::replay(t, &o).map_err(|e| format!("{f}: {e}")))
                    .collect::<Result<Vec<_>, _>>()?;
                censuses.push(report::census(&again));
            }
            print!("{}", report::seeds_line(opts.seed, &censuses));
        }
    }
    Ok(())
}

/// The guest's measures of every trace of another recording (`DIR/*/*.trace`,
/// as `make replay` leaves them), by topology, experiment and state.
fn rerun_metrics(dir: &str) -> Result<RerunMap, String> {
    let mut out = RerunMap::new();
    let topologies = std::fs::read_dir(dir).map_err(|e| format!("--rerun {dir}: {e}"))?;
    for t in topologies.flatten().filter(|e| e.path().is_dir()) {
        let files =
            std::fs::read_dir(t.path()).map_err(|e| format!("{}: {e}", t.path().display()))?;
        for f in files.flatten() {
            let path = f.path();
            if path.extension().is_none_or(|x| x != "trace") {
                continue;
            }
            let name = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
            let tr = trace::parse(&text).map_err(|e| format!("{name}: {e}"))?;
            let h = &tr.header;
            let key = (h.topology.clone(), h.experiment.clone(), h.state.clone());
            out.insert(
                key,
                compare::guest_metrics(&tr).map_err(|e| format!("{name}: {e}"))?,
            );
        }
    }
    if out.is_empty() {
        return Err(format!("--rerun {dir}: no DIR/TOPOLOGY/*.trace there"));
    }
    Ok(out)
}

/// A recording's guest measures by topology, experiment and state.
type RerunMap =
    std::collections::HashMap<(String, String, String), schedsim::replay::metrics::Metrics>;
