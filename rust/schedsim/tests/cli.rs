// SPDX-License-Identifier: GPL-2.0

//! The command line: clear errors and non-zero exits for bad input, and
//! the outputs it promises.

use std::process::Command;

fn schedsim(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .output()
        .expect("run schedsim");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_refused_with_a_message() {
    for (args, needle) in [
        (
            &["--topology", "vax", "--workload", "fairness:1"][..],
            "unknown topology 'vax'",
        ),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--flags",
                "+TURBO",
            ][..],
            "unknown flag '+TURBO'",
        ),
        (
            &["--topology", "2x4", "--workload", "bogus:1"][..],
            "bad workload 'bogus'",
        ),
        (
            &["--topology", "2x4", "--workload", "fairness:x"][..],
            "'x' is not a number",
        ),
        (&["--topology", "2x4"][..], "--workload is required"),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--format",
                "xml",
            ][..],
            "bad --format",
        ),
        (
            &["--topology", "2x4", "--workload", "fairness:1", "--seed"][..],
            "--seed needs a value",
        ),
        (&["experiment", "nope"][..], "unknown experiment 'nope'"),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--hz",
                "64",
            ][..],
            "bad --hz '64'",
        ),
        (&["experiment", "steal", "--hz", "x"][..], "bad --hz 'x'"),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--lb-clock",
                "0",
            ][..],
            "bad --lb-clock '0'",
        ),
        (&["frobnicate"][..], "unknown command"),
    ] {
        let (code, _, err) = schedsim(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn json_table_and_plot() {
    let dir = std::env::temp_dir().join(format!("schedsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("out.svg");
    let (code, out, _) = schedsim(&[
        "--topology",
        "qemu8",
        "--workload",
        "fairness:9",
        "--flags",
        "+STEAL,-SIS_UTIL",
        "--seed",
        "3",
        "--duration-ms",
        "200",
        "--format",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with('{') && out.contains("\"flags\": \"-SIS_UTIL,+STEAL\""));
    assert!(out.contains("\"hz\": 250"), "HZ 250 is the default");
    assert!(out.contains("\"conservation\": {"));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("<polyline"));
    let (code, out, _) = schedsim(&[
        "run",
        "--topology",
        "2x4",
        "--workload",
        "fairness:9",
        "--duration-ms",
        "100",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("min/max work %") && out.contains("work conservation"));
    let (code, out, _) = schedsim(&[
        "--topology",
        "2x4",
        "--workload",
        "fairness:9",
        "--duration-ms",
        "100",
        "--hz",
        "1000",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("seed 1, HZ 1000"), "{out}");
    let (code, out, _) = schedsim(&["topology", "qemu8"]);
    assert_eq!(code, 0);
    assert!(out.contains("domain-2: span=0-7 level=PKG"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `schedsim replay` on real guest traces (`tests/data/replay/`, from
/// `make replay`): the guest's measures are the trace's own, exactly; the
/// model ran every task's CPU time; the pair gets its on/off section.
/// These traces read their counters after the trace's dump (recorded
/// before the third recording of 2026-12-06): their `differs` count is
/// not the run's, so the header says "differs -" and the JSON has none,
/// and no balancer counts are compared.
#[test]
fn replay_reports_guest_and_model() {
    let d = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replay/");
    let off = format!("{d}stream_busy_llc2.off.r1.trace");
    let on = format!("{d}stream_busy_llc2.on.r1.trace");
    let (code, out, err) = schedsim(&["replay", &off, &on]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(
        "== x5472 stream_busy_llc2 on (BALANCE_IDLE_LLC2 differs -, model rule inert): 5 tasks"
    ));
    assert!(!out.contains(", tries "), "{out}");
    // The guest's columns: 245 wakeups and 597 switches in the trace.
    let row = |name: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with("== x5472 stream_busy_llc2 on"))
            .find(|l| l.trim_start().starts_with(name))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(
        row("wakeups  ").get(1).map(String::as_str),
        Some("245"),
        "{out}"
    );
    assert_eq!(
        row("context switches").get(2).map(String::as_str),
        Some("597"),
        "{out}"
    );
    // The model runs the same CPU time (9552 ms of it), give or take the
    // wakeups' own cost charged to the wakers (1 us each, 246 of them).
    let cpu_ms = row("task CPU ms");
    assert_eq!(cpu_ms.get(3).map(String::as_str), Some("9552"), "{out}");
    let model_ms: f64 = cpu_ms.get(4).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert!((model_ms / 9552.0 - 1.0).abs() < 0.001, "{out}");
    assert!(out.contains("-- x5472 stream_busy_llc2: on/off, guest against model"));
    // A measure whose guest counted none in every trace has no ratio to
    // summarise: "-", not NaN.
    // Its columns: rows, within, as the control, counting noise (0 of
    // 1, the model's 1 move against none), median, range, the control's
    // median (the model's own run had some: 1.00).
    let summary = |name: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with("measure, every trace"))
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].split_whitespace().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(
        summary("migrations balance PKG"),
        ["1", "0", "0", "1", "-", "-", "1.00"],
        "{out}"
    );
    assert!(!out.contains("NaN"), "{out}");
    let (code, json, err) = schedsim(&["replay", "--format", "json", &on]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["replay"]["guest"]["wakeups"], 245);
    assert_eq!(v[0]["replay"]["guest_differs"], serde_json::Value::Null);
    // The same trace with its counters marked as the run's: its differs.
    let marked = std::env::temp_dir().join(format!("slb-marked-{}.trace", std::process::id()));
    let text = std::fs::read_to_string(&on).unwrap();
    std::fs::write(
        &marked,
        text.replace("# lost 0\n", "# counters run\n# lost 0\n"),
    )
    .unwrap();
    let (code, out, err) = schedsim(&["replay", marked.to_str().unwrap()]);
    let _ = std::fs::remove_file(&marked);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(BALANCE_IDLE_LLC2 guest differs 81, model rule inert)"),
        "{out}"
    );
}

/// `--seeds N`: the first seed's table, then the span of the goal's row
/// counts over N seeds; a bad count or JSON with it is refused.
#[test]
fn replay_over_several_seeds() {
    let d = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replay/");
    let on = format!("{d}stream_busy_llc2.on.r1.trace");
    let (code, one, err) = schedsim(&["replay", &on]);
    assert_eq!(code, 0, "{err}");
    let (code, three, err) = schedsim(&["replay", "--seeds", "3", &on]);
    assert_eq!(code, 0, "{err}");
    assert!(three.starts_with(&one), "the first seed's table first");
    let last = three.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("over the model's seeds 1-3: within 20% "),
        "{last}"
    );
    for (args, needle) in [
        (
            &["replay", "--seeds", "0", on.as_str()][..],
            "bad --seeds '0'",
        ),
        (
            &["replay", "--seeds", "x", on.as_str()][..],
            "bad --seeds 'x'",
        ),
        (
            &["replay", "--seeds", "2", "--format", "json", on.as_str()][..],
            "--seeds is for the table",
        ),
    ] {
        let (code, _, err) = schedsim(args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A hackbench trace's first 3000 events (a cut the guest's buffer could
/// have made): 81 tasks, each run's CPU time replayed.
#[test]
fn replay_a_hackbench_start() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/hb_sis_prop.off.head.trace"
    );
    let (code, json, err) = schedsim(&["replay", "--format", "json", f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let r = &v[0]["replay"];
    assert_eq!(r["topology"], "smt2");
    // Every wake of the guest's script is a wakeup in the model or one
    // that found its wakee not yet blocked (queued or running: the model
    // behind the guest's schedule), kept as a token: together they are
    // the guest's wakeups, to the few the cut trace leaves undone.
    let early = |who: &str| -> Vec<u64> {
        ["queued", "running", "other"]
            .iter()
            .map(|k| r[format!("{who}_early_wakes")][k].as_u64().unwrap())
            .collect()
    };
    let wakeups = |who: &str| r[who]["wakeups"].as_u64().unwrap();
    let (gw, mw, cw) = (wakeups("guest"), wakeups("model"), wakeups("control"));
    let (me, ce) = (early("model"), early("control"));
    assert!(me[0] + me[1] > 0, "{me:?}");
    let sum = mw + me.iter().sum::<u64>();
    assert!(
        sum.abs_diff(gw) * 100 <= gw * 3,
        "guest {gw}, model {mw} + {me:?}"
    );
    // The control (the model's own run replayed into it) loses its
    // wakeups the same way, one way only: its wakeups and its early
    // wakes are the model's wakeups, and some wakes are early although
    // the model is, there, the recorded system itself.
    assert!(ce[0] + ce[1] > 0, "{ce:?}");
    assert!(cw < mw, "control {cw}, model {mw}");
    let sum = cw + ce.iter().sum::<u64>();
    assert!(
        sum.abs_diff(mw) * 100 <= mw * 3,
        "model {mw}, control {cw} + {ce:?}"
    );
    assert_eq!(r["tasks"], 81);
    let g = r["guest"]["task_cpu_ns"].as_f64().unwrap();
    let m = r["model"]["task_cpu_ns"].as_f64().unwrap();
    assert!((m / g - 1.0).abs() < 0.1, "guest {g} model {m}");
    // TCG's turns (--tcg-rr): a busy vCPU handles its tick only on its
    // turn, which changes when tasks are preempted but not the CPU time
    // they replay. (That the turns cut the switches is
    // `run_with_tcg_turns`' spinners: under hackbench, where tasks block
    // far more often than a tick preempts them, the count may go either
    // way.)
    let (code, rr, err) = schedsim(&["replay", "--tcg-rr", "--format", "json", f]);
    assert_eq!(code, 0, "{err}");
    let rr: serde_json::Value = serde_json::from_str(&rr).unwrap();
    let sw = |v: &serde_json::Value| v[0]["replay"]["model"]["switches"].as_u64().unwrap_or(0);
    assert!(sw(&rr) != sw(&v) && sw(&rr) > 0, "{} {}", sw(&rr), sw(&v));
    let m_rr = rr[0]["replay"]["model"]["task_cpu_ns"]
        .as_f64()
        .unwrap_or(0.0);
    assert!((m_rr / g - 1.0).abs() < 0.1, "guest {g} model {m_rr}");
    // The guest's switch count is the trace's own.
    assert_eq!(r["guest"]["switches"], 1076);
}

#[test]
fn replay_refuses_bad_input() {
    let dir = std::env::temp_dir().join(format!("schedsim-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "# slb-trace 1\n# topology smt2 cpus 8\n10 0 Q 1\n").unwrap();
    let vax = dir.join("vax.trace");
    std::fs::write(&vax, "# slb-trace 1\n# topology vax cpus 8\n").unwrap();
    let cpus = dir.join("cpus.trace");
    std::fs::write(&cpus, "# slb-trace 1\n# topology smt2 cpus 4\n").unwrap();
    for (args, needle) in [
        (
            vec!["replay".to_string()],
            "replay needs one or more trace files".to_string(),
        ),
        (
            vec!["replay".into(), bad.display().to_string()],
            "line 3: unknown event code 'Q'".into(),
        ),
        (
            vec!["replay".into(), vax.display().to_string()],
            "topology 'vax': no model preset".into(),
        ),
        (
            vec!["replay".into(), cpus.display().to_string()],
            "has 4 CPUs in the trace, the model's 'qemu8' 8".into(),
        ),
        (
            vec![
                "replay".into(),
                "--format".into(),
                "xml".into(),
                bad.display().to_string(),
            ],
            "bad --format 'xml'".into(),
        ),
        (
            vec!["replay".into(), "/nonexistent.trace".into()],
            "/nonexistent.trace:".into(),
        ),
        (
            vec![
                "replay".into(),
                "--cost".into(),
                "lb_base_ns".into(),
                bad.display().to_string(),
            ],
            "bad --cost 'lb_base_ns': NAME=FACTOR".into(),
        ),
        (
            vec![
                "replay".into(),
                "--cost".into(),
                "warp_ns=2".into(),
                bad.display().to_string(),
            ],
            "unknown cost constant 'warp_ns'".into(),
        ),
        (
            vec![
                "replay".into(),
                "--wake-idle-us".into(),
                "soon".into(),
                bad.display().to_string(),
            ],
            "bad --wake-idle-us 'soon'".into(),
        ),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = schedsim(&a);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(&needle), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// STEAL's window in the TCG guest (`CostModel::tcg_steal`): the first
/// 8000 events of llc16's `hackbench -g 1` with STEAL on. Slowed as the
/// guest's, the model's steals fail some of the time (the guest's whole
/// run: 154 of 227); at native speed the victim seldom changes before
/// the lock is taken, and every steal of this window succeeds.
#[test]
fn replay_steal_fails_in_the_guests_window() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/hb1_steal_llc16.on.head.trace"
    );
    let steal = |native: bool| {
        let mut args = vec!["replay", "--format", "json", f];
        if native {
            args.push("--native-steal");
        }
        let (code, json, err) = schedsim(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let s = &v[0]["replay"]["steal_model"];
        (s[0].as_u64().unwrap_or(0), s[1].as_u64().unwrap_or(0))
    };
    let (tried, stolen) = steal(false);
    assert!(
        tried > 20 && stolen * 100 < tried * 95,
        "{stolen} of {tried}"
    );
    assert!(stolen * 100 > tried * 50, "{stolen} of {tried}");
    let (tried, stolen) = steal(true);
    assert!(tried > 20 && stolen == tried, "{stolen} of {tried}");
}

/// The TCG guest's clock around a newidle balance (`--lb-clock`): the
/// first 8000 events of numa2's request-response load, whose CPUs idle
/// for 100-300 us at a time. The guest's newidle balances read 0.4-1.1
/// ms on its clock and so are skipped; it moved 1 task across the nodes
/// by balancing in this window. The model at the native clock pulls
/// across the nodes over and over; at the guest's (the default) seldom.
#[test]
fn replay_newidle_skipped_on_the_guests_clock() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/rr_newidle_backoff.off.head.trace"
    );
    let numa = |clock: &str| {
        let (code, json, err) = schedsim(&["replay", "--lb-clock", clock, "--format", "json", f]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let rows = v[0]["rows"].as_array().cloned().unwrap_or_default();
        let row = rows
            .iter()
            .find(|r| r["metric"] == "migrations balance NUMA")
            .cloned()
            .unwrap_or_default();
        (
            row["guest"].as_f64().unwrap_or(-1.0),
            row["model"].as_f64().unwrap_or(-1.0),
        )
    };
    let (guest, native) = numa("1");
    assert_eq!(guest, 1.0);
    let (_, tcg) = numa(&schedsim::cost::TCG_LB_CLOCK_FACTOR.to_string());
    assert!(
        native >= 20.0 && tcg <= 10.0 && tcg * 3.0 < native,
        "native {native} tcg {tcg}"
    );
    let (code, _, err) = schedsim(&["replay", "--lb-clock", "0", f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad --lb-clock '0'"), "{err}");
}

/// `schedsim run --tcg-rr`: 9 spinners on 2x4 under TCG's turns switch
/// once a round of the busy vCPUs, far less often than at each tick.
#[test]
fn run_with_tcg_turns() {
    let switches = |extra: &[&str]| {
        let mut args = vec![
            "--topology",
            "2x4",
            "--workload",
            "fairness:9",
            "--duration-ms",
            "1000",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = schedsim(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["stats"]["context_switches"].as_u64().unwrap_or(0)
    };
    let (hw, tcg) = (switches(&[]), switches(&["--tcg-rr"]));
    assert!(tcg > 0 && tcg * 5 < hw, "hw {hw} tcg {tcg}");
}

/// `schedsim calibrate` takes TCG's turns by default (the guest is a TCG
/// guest) and `--hw-tick` ticks as hardware instead: the same experiment
/// and seeds read differently; `--tcg-rr`, `run`'s and `replay`'s switch,
/// is not calibrate's and is refused, as is an unknown experiment.
#[test]
fn calibrate_takes_tcg_turns_unless_hw_tick() {
    let guest = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/guest-bench-2026-12-04.json"
    );
    let dir = std::env::temp_dir().join(format!("schedsim-cal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = |name: &str, extra: &[&str]| {
        let path = dir.join(name);
        let p = path.to_str().unwrap();
        let mut args = vec![
            "calibrate",
            "--guest",
            guest,
            "--topology",
            "llc16",
            "--experiment",
            "hb2_steal_llc16",
            "--seeds",
            "1",
            "--out",
            p,
        ];
        args.extend_from_slice(extra);
        let (code, stdout, err) = schedsim(&args);
        assert_eq!(code, 0, "{err}");
        assert!(stdout.contains("Direction:"), "{stdout}");
        std::fs::read_to_string(&path).unwrap()
    };
    let (tcg, hw) = (out("tcg.rst", &[]), out("hw.rst", &["--hw-tick"]));
    assert!(tcg.contains("hb2_steal_llc16") && hw.contains("hb2_steal_llc16"));
    assert_ne!(tcg, hw, "--hw-tick changed nothing");
    assert_eq!(tcg, out("again.rst", &[]), "one seed, one answer");
    let _ = std::fs::remove_dir_all(&dir);
    for (args, needle) in [
        (&["--tcg-rr"][..], "unknown argument '--tcg-rr'"),
        (&["--experiment", "nope"][..], "no experiment that"),
    ] {
        let mut a = vec!["calibrate", "--guest", guest];
        a.extend_from_slice(args);
        let (code, _, err) = schedsim(&a);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `schedsim ticks`: the CPUs' ticks of a trace whose recording
/// logged `sched_tick()` (`make replay`'s default since 2026-12-07), by
/// the state at each tick's instant; the numbers are those the Python
/// reading it replaced gave on the same file. Given the guest's
/// latencies, a replay compares its fates with the model's.
#[test]
fn ticks_of_a_traced_run() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/hb_sis_age.off.ticks.head.trace"
    );
    let (code, out, err) = schedsim(&["ticks", f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 traces (1 by sched_tick(), 0 by sched_balance_softirq())"),
        "{out}"
    );
    let row = |class: &str| -> Vec<String> {
        out.lines()
            .find_map(|l| l.trim_start().strip_prefix(class))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    assert_eq!(row("none waiting"), ["292", "94%", "2%", "4%"], "{out}");
    assert_eq!(row("task waiting"), ["7", "14%", "29%", "57%"], "{out}");
    assert_eq!(row("wakeup pending"), ["32", "0%", "44%", "56%"], "{out}");
    // A busy CPU's ticks: taken with its task running, or lost.
    assert_eq!(row("task running"), ["758", "0%", "44%", "56%"], "{out}");
    let (code, json, err) = schedsim(&["replay", "--wake-idle-us", "guest", "--format", "json", f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = v[0]["rows"].as_array().unwrap();
    // The model takes every busy CPU's tick; TCG's round (`--tcg-rr`)
    // loses them as the guest's turns do.
    let busy_lost = |rows: &[serde_json::Value]| -> (f64, f64) {
        let r = rows
            .iter()
            .find(|r| r["metric"] == "busy ticks, lost")
            .expect("a busy ticks row");
        (r["guest"].as_f64().unwrap(), r["model"].as_f64().unwrap())
    };
    let (guest, model) = busy_lost(rows);
    assert!((guest - 427.0 / 758.0).abs() < 1e-9, "{guest}");
    assert_eq!(model, 0.0);
    let (code, rr, err) = schedsim(&[
        "replay",
        "--wake-idle-us",
        "guest",
        "--tcg-rr",
        "--format",
        "json",
        f,
    ]);
    assert_eq!(code, 0, "{err}");
    let rr: serde_json::Value = serde_json::from_str(&rr).unwrap();
    let (_, model_rr) = busy_lost(rr[0]["rows"].as_array().unwrap());
    assert!(model_rr > 0.3, "{model_rr}");
    let at_once = rows
        .iter()
        .find(|r| r["metric"] == "idle ticks, none waiting, at once")
        .expect("an idle ticks row");
    assert!(
        (at_once["guest"].as_f64().unwrap() - 274.0 / 292.0).abs() < 1e-9,
        "{at_once}"
    );
    assert!(at_once["model"].as_f64().unwrap() > 0.5, "{at_once}");
    // Without the B lines: no idle ticks row, and ticks has nothing to
    // read.
    let bare = std::env::temp_dir().join(format!("slb-noticks-{}.trace", std::process::id()));
    let text = std::fs::read_to_string(f).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains(" B "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&bare, kept).unwrap();
    let (code, _, err) = schedsim(&["ticks", bare.to_str().unwrap()]);
    let (rcode, json, _) = schedsim(&["replay", "--format", "json", bare.to_str().unwrap()]);
    let _ = std::fs::remove_file(&bare);
    assert_eq!(code, 2);
    assert!(
        err.contains("no tick (B sched_tick) or periodic balance"),
        "{err}"
    );
    assert_eq!(rcode, 0);
    assert!(!json.contains("idle ticks,"), "no guest ticks, no rows");
    assert!(!json.contains("busy ticks,"), "no guest ticks, no rows");
    let (code, _, err) = schedsim(&["ticks", "--x", f]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown argument '--x'"), "{err}");
}

/// The guest's latencies bring two TCG turns with them, each with its
/// switch off: a replayed timer handled at its idle vCPU's turn
/// (`--timer-on-time` fires it at its recorded end: request-response's
/// message threads sleep on one, and the model's moves change), and a
/// wakeup preemption of another busy CPU after the trace's latency
/// (`--resched-at-once`: at once, the model's latency row reads 0).
#[test]
fn replay_timer_and_resched_turns() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/rr_newidle_backoff.off.head.trace"
    );
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["replay", "--wake-idle-us", "guest", "--format", "json", f];
        args.extend_from_slice(extra);
        let (code, json, err) = schedsim(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&json).unwrap()
    };
    let row = |v: &serde_json::Value, metric: &str, side: &str| -> f64 {
        v[0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == metric)
            .and_then(|r| r[side].as_f64())
            .unwrap_or_else(|| panic!("no {side} {metric} in {v}"))
    };
    let turns = run(&[]);
    let guest_ns = turns[0]["replay"]["guest"]["resched_busy_latency_ns"]
        .as_u64()
        .unwrap();
    assert!(guest_ns > 0);
    assert_eq!(
        turns[0]["replay"]["resched_busy_ns"].as_u64(),
        Some(guest_ns)
    );
    let preempts = "wakeup preempts a busy CPU elsewhere, us";
    assert!(row(&turns, preempts, "model") > 0.0);
    let at_once = run(&["--resched-at-once"]);
    assert_eq!(at_once[0]["replay"]["resched_busy_ns"].as_u64(), Some(0));
    assert_eq!(row(&at_once, preempts, "model"), 0.0);
    let moves = "migrations wakeup MC";
    let on_time = run(&["--timer-on-time"]);
    assert_eq!(row(&on_time, moves, "guest"), row(&turns, moves, "guest"));
    assert_ne!(row(&on_time, moves, "model"), row(&turns, moves, "model"));
}

/// `--rerun DIR`: the same recording as its own rerun reproduces every
/// row; a directory without traces, or without these experiments, is
/// refused.
#[test]
fn replay_against_the_guests_rerun() {
    let d = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replay/");
    let on = format!("{d}stream_busy_llc2.on.r1.trace");
    let off = format!("{d}stream_busy_llc2.off.r1.trace");
    let dir = std::env::temp_dir().join(format!("slb-rerun-{}", std::process::id()));
    let sub = dir.join("x5472");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(&on, sub.join("stream_busy_llc2.on.r1.trace")).unwrap();
    let rerun = dir.to_str().unwrap();
    let (code, out, err) = schedsim(&["replay", "--rerun", rerun, &on]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("the guest's own rerun (1 traces): "))
        .unwrap_or_default();
    let n: Vec<&str> = line.split_whitespace().collect();
    // "... in N of N rows ...": every row reproduced.
    let at = n.iter().position(|w| *w == "in").unwrap_or(0);
    assert!(at > 0 && n[at + 1] == n[at + 3], "{line}");
    // The off run has no rerun there: counted in neither part.
    let (code, out, err) = schedsim(&["replay", "--rerun", rerun, &on, &off]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("the guest's own rerun (1 traces)"), "{out}");
    let (code, _, err) = schedsim(&["replay", "--rerun", rerun, &off]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no trace there of these traces' experiments"),
        "{err}"
    );
    std::fs::remove_file(sub.join("stream_busy_llc2.on.r1.trace")).unwrap();
    let (code, _, err) = schedsim(&["replay", "--rerun", rerun, &on]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2);
    assert!(err.contains("no DIR/TOPOLOGY/*.trace there"), "{err}");
}

/// Every own gap says where it sits (`replay::gaps`), and the table of
/// them adds up to the census's count: here the test traces' 4, one of
/// them the seat of the waker, two the decision, and one a balancing
/// row whose guest trace has no `/proc/schedstat` to part it by.
#[test]
fn replay_places_each_own_gap() {
    let d = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replay/");
    let files: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".trace"))
        .collect();
    let mut args = vec!["replay"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = schedsim(&args);
    assert_eq!(code, 0, "{err}");
    let own: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("the model's own gap: "))
        .and_then(|n| n.parse().ok())
        .expect("the census");
    assert_eq!(own, 4, "{out}");
    let said: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once("  no: ").map(|(_, s)| s))
        .collect();
    assert_eq!(said.len(), own, "{out}");
    let table: Vec<(String, usize)> = out
        .lines()
        .skip_while(|l| !l.starts_with("the model's own gaps by where they sit"))
        .skip(2)
        .take_while(|l| l.starts_with("   "))
        .map(|l| {
            let (name, rest) = l.trim_start().split_at(34);
            let rows = rest.split_whitespace().next().unwrap().parse().unwrap();
            (name.trim_end().to_string(), rows)
        })
        .collect();
    assert_eq!(table.len(), 10, "{out}");
    assert_eq!(table.iter().map(|(_, n)| n).sum::<usize>(), own, "{out}");
    for (name, n) in &table {
        assert_eq!(
            said.iter().filter(|s| **s == name).count(),
            *n,
            "{name}: {out}"
        );
    }
    let rows = |name: &str| table.iter().find(|(n, _)| n == name).map(|(_, n)| *n);
    assert_eq!(rows("where the waker sat"), Some(1), "{out}");
    assert_eq!(rows("the wakeup decision"), Some(2), "{out}");
    assert_eq!(rows("unplaced"), Some(1), "{out}");
}
