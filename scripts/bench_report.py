#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the console logs of `make bench` guests into tables and plots.

Input: one console log per topology (TOPO=PATH), written by the guest's
`step_bench` (scripts/guest/init): for every run, "SLB-BENCH-BEGIN id state
rep", /proc/schedstat (version 16) and the module's counters before and
after, then "SLB-BENCH-END id state rep t0= t1= rc= out=<workload output>".
With --domains-dir, also each topology's guest-TOPO/conf (the experiments
as bench.sh wrote them: "ID KIND FLAG COMMAND..."), for --json. Also the
instruction counts of scripts/rule-cost.sh (rule_cost.txt): per
rule, the 6.12 C's and the Rust's instructions per call and their ratio,
with the Rust's overflow checks off and on (a chain without a C shows the
Rust alone).

Output: a Markdown table of every metric per experiment with the median,
the min-max spread, the on/off ratio of the medians with its bootstrap 95%
confidence interval and a verdict: "effect" only where the interval
excludes 1.0, else "none beyond +-X%", X being how far the interval
reaches, the smallest effect the run could have seen; "inert here" for a
flag experiment whose flag's differs counter (the module's count of the
answers that flag changed against stock 6.12) stayed 0 in every run: the
rule never acted, so its runs say nothing of its effect; with --json PATH,
every sample per topology, experiment, state and metric with its median
and the bootstrap 95% interval of that median (schedsim calibrate reads
it); the same as reST for
Documentation/; one SVG per topology with the on/off ratio of each
experiment's main metric and its interval. --warmup N drops each state's
first N runs (warm-up; the guest numbers runs from 1) before any of this.

Standard library only. Exits non-zero, saying why, when a topology's sched
domains do not have the expected shape or a run failed.
"""

import argparse
import html
import json
import os
import random
import re
import statistics
import sys
import zlib

# /proc/schedstat version 16, domain line: "domainN <mask>", then for each
# idle type (0 busy, 1 idle, 2 newly idle) lb_count, lb_balanced,
# lb_failed, lb_imbalance, lb_gained, lb_hot_gained, lb_nobusyq,
# lb_nobusyg; then alb_count, alb_failed, alb_pushed, sbe_*, sbf_* (3
# each), ttwu_wake_remote, ttwu_move_affine, ttwu_move_balance.
LB_FIELDS = ["lb_count", "lb_balanced", "lb_failed", "lb_imbalance",
             "lb_gained", "lb_hot_gained", "lb_nobusyq", "lb_nobusyg"]
IDLE_TYPES = ["busy", "idle", "newidle"]
TAIL_FIELDS = ["alb_count", "alb_failed", "alb_pushed", "sbe_count",
               "sbe_balanced", "sbe_pushed", "sbf_count", "sbf_balanced",
               "sbf_pushed", "ttwu_wake_remote", "ttwu_move_affine",
               "ttwu_move_balance"]
# cpu line: "cpuN yld_count 0 sched_count sched_goidle ttwu_count
# ttwu_local rq_cpu_time run_delay pcount".
CPU_FIELDS = ["yld_count", "zero", "sched_count", "sched_goidle",
              "ttwu_count", "ttwu_local", "rq_cpu_time", "run_delay",
              "pcount"]

# Metrics shown per experiment, after the workload's own: what the
# scheduler decided (schedstat), beside the time. Not because these counts
# are steadier: under TCG they follow the emulated time, and the last full
# run's counts varied 9-28% run to run, as much as its wall times (issue
# 31's review), but because they say which decisions a flag changed.
SCHED_METRICS = ["lb_count", "lb_count_newidle", "lb_imbalance",
                 "lb_gained", "alb_pushed", "ttwu_move_affine",
                 "sched_goidle"]
MAIN_METRIC = {"spin": "work_ratio", "pingpong": "rounds_per_s",
               "hackbench": "time_s", "reqresp": "rounds_per_s"}
# Fewest runs per state for "ranges apart" to be stated at all.
MIN_RUNS_APART = 4
# Fewest runs per state for a confidence interval and a verdict: with
# fewer, a bootstrap has too few distinct resamples to mean anything.
MIN_RUNS_CI = 5
# Bootstrap resamples per interval. Each row's resampling is seeded from
# its names, so the same logs give the same report.
BOOTSTRAP_ITERS = 4000
# Which direction is better for a main metric.
HIGHER_IS_BETTER = {"work_ratio": True, "rounds_per_s": True,
                    "time_s": False}


def parse_schedstat(lines):
    """Sums of every schedstat counter over all CPUs and domains."""
    tot = {}

    def add(k, v):
        tot[k] = tot.get(k, 0) + v

    for ln in lines:
        f = ln.split()
        if not f:
            continue
        if re.match(r"cpu\d+$", f[0]):
            for name, v in zip(CPU_FIELDS, f[1:]):
                add(name, int(v))
        elif re.match(r"domain\d+$", f[0]):
            vals = [int(x) for x in f[2:]]
            for t, tname in enumerate(IDLE_TYPES):
                for i, name in enumerate(LB_FIELDS):
                    v = vals[t * len(LB_FIELDS) + i]
                    add(name, v)
                    add(f"{name}_{tname}", v)
            for name, v in zip(TAIL_FIELDS, vals[len(IDLE_TYPES) * len(LB_FIELDS):]):
                add(name, v)
    tot["lb_count_newidle"] = tot.get("lb_count_newidle", 0)
    return tot


def workload_metrics(out):
    """The workload's own numbers from its output line."""
    m = {}
    if re.match(r"\s*reqresp ", out):
        # bench/reqresp.c: rounds a second and the workers' wakeup latency.
        m["_kind"] = "reqresp"
        for key in ("rounds_per_s", "wake_p50_us", "wake_p99_us"):
            g = re.search(rf"\b{key}=([0-9.]+)", out)
            if g:
                m[key] = float(g.group(1))
        return m
    hb = re.search(r"Time:\s*([0-9.]+)", out)
    if hb:
        m["time_s"] = float(hb.group(1))
        m["_kind"] = "hackbench"
    for key, name in (("ratio", "work_ratio"), ("per_s", "rounds_per_s"),
                      ("apart", "apart"), ("apart_llc", "apart_llc"),
                      ("migrations", "pair_migrations"),
                      ("min_ms", "min_cpu_ms"), ("max_ms", "max_cpu_ms")):
        g = re.search(rf"\b{key}=([0-9.]+)", out)
        if g:
            m[name] = float(g.group(1))
    if "threads=" in out:
        m["_kind"] = "spin"
    elif "rounds=" in out:
        m["_kind"] = "pingpong"
    return m


def parse_log(path):
    """Domains of cpu0 and every run of one guest."""
    with open(path, errors="replace") as f:
        lines = [ln.rstrip("\n") for ln in f]
    domains, spans, runs = [], [], []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("SLB-BENCH-DOMAIN "):
            domains.append(ln.split()[2])
        elif ln.startswith("SLB-BENCH-CPU0SD "):
            mask = ln.split()[2].replace(",", "")
            spans.append(bin(int(mask, 16)).count("1"))
        elif ln.startswith("SLB-BENCH-BEGIN "):
            _, rid, state, rep = ln.split()[:4]
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith("SLB-BENCH-END "):
                block.append(lines[i])
                i += 1
            if i >= len(lines):
                raise SystemExit(f"{path}: run {rid} {state} {rep} has no END (guest died?)")
            end = lines[i]
            dumps, cur, ctr = [], None, [{}, {}]
            for b in block:
                if b.startswith("version "):
                    cur = []
                    dumps.append(cur)
                elif b.startswith("SLB-BENCH-CTR "):
                    _, k, v = b.split()[:3]
                    ctr[len(dumps) - 1 if dumps else 0][k] = int(v)
                elif cur is not None:
                    cur.append(b)
            if len(dumps) != 2:
                raise SystemExit(f"{path}: run {rid} {state} {rep}: {len(dumps)} schedstat dumps, want 2")
            before, after = parse_schedstat(dumps[0]), parse_schedstat(dumps[1])
            kv = dict(re.findall(r"(t0|t1|rc)=(\S+)", end.split(" out=")[0]))
            out = end.split(" out=", 1)[1] if " out=" in end else ""
            run = {"id": rid, "state": state, "rep": int(rep),
                   "rc": int(kv.get("rc", "1")), "out": out}
            m = {k: after[k] - before.get(k, 0) for k in after}
            m["wall_s"] = float(kv["t1"]) - float(kv["t0"])
            m.update(workload_metrics(out))
            for k, v in ctr[1].items():
                m[k] = v - ctr[0].get(k, 0)
            MODULE_COUNTERS.update(ctr[1])
            run["m"] = m
            runs.append(run)
        i += 1
    return domains, spans, runs


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.2f}"


def apart(clear):
    return {True: "yes", False: "no", None: f"n<{MIN_RUNS_APART}"}[clear]


def summarise(vals):
    return statistics.median(vals), min(vals), max(vals)


def ratio_ci(off, on, seed, iters=BOOTSTRAP_ITERS, level=0.95):
    """Percentile bootstrap interval of median(on) / median(off), each state
    resampled with replacement on its own (the runs of one state are
    exchangeable; the two states are not paired). None when the off
    median is 0 in more than a tenth of the resamples."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(iters):
        m_off = statistics.median(rng.choices(off, k=len(off)))
        if m_off == 0:
            continue
        ratios.append(statistics.median(rng.choices(on, k=len(on))) / m_off)
    if len(ratios) < 0.9 * iters:
        return None
    ratios.sort()
    tail = (1 - level) / 2
    return ratios[int(tail * len(ratios))], ratios[min(len(ratios) - 1, int((1 - tail) * len(ratios)))]


def median_ci(vals, seed, iters=BOOTSTRAP_ITERS, level=0.95):
    """Percentile bootstrap interval of the median of one state's runs,
    resampled with replacement as ratio_ci() resamples each state."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(vals, k=len(vals))) for _ in range(iters))
    tail = (1 - level) / 2
    return meds[int(tail * len(meds))], meds[min(len(meds) - 1, int((1 - tail) * len(meds)))]


def verdict(ci, n):
    """"effect" where the interval excludes 1.0; otherwise how large an
    effect the run could have detected: the interval's reach from 1.0."""
    if min(n) < MIN_RUNS_CI:
        return f"n<{MIN_RUNS_CI}"
    if ci is None:
        # Enough runs, but no ratio: a median of 0 (a counter the flag
        # turns on from nothing).
        return "no ratio (median 0)"
    lo, hi = ci
    if lo > 1 or hi < 1:
        return "effect"
    return f"none beyond +-{100 * max(1 - lo, hi - 1):.0f}%"


def fmt_ci(ci):
    return "-" if ci is None else f"{fmt(ci[0])}-{fmt(ci[1])}"


def drop_warmup(runs, warmup):
    """The runs without each experiment and state's first `warmup` reps
    (scripts/guest/init numbers them from 1)."""
    return [r for r in runs if r["rep"] > warmup]


def experiments(runs):
    """{id: {"off": [metrics...], "on": [...]}} in first-seen order."""
    exps = {}
    for r in runs:
        exps.setdefault(r["id"], {"off": [], "on": []})[r["state"]].append(r)
    return exps


# The module's counters the runs carried (SLB-BENCH-CTR lines: every file
# of /sys/kernel/debug/sched_lb_rs/<dir>/ as "<dir>_<file>"), filled in
# as consoles are parsed.
MODULE_COUNTERS = set()


def differs_key(flag):
    """The counter of the answers a flag experiment's flag changed: the
    last name of "BASE+...+FLAG" (the bases are on in both states)."""
    return "differs_" + flag.split("+")[-1] if flag else None


def rows_for(topo, eid, exp, flag=None):
    """Table rows of one experiment: one per metric. With the flag of a
    flag experiment whose runs carried its differs counter and found it 0
    in every run, the main metric's verdict is "inert here": the rule
    never acted, so the runs cannot say whether it has an effect."""
    off, on = exp["off"], exp["on"]
    kind = next((r["m"].get("_kind") for r in off + on if r["m"].get("_kind")), "?")
    main = MAIN_METRIC.get(kind)
    metrics = []
    if main:
        metrics.append(main)
    extra = {"spin": ["min_cpu_ms", "max_cpu_ms"],
             "pingpong": ["apart", "apart_llc", "pair_migrations"],
             "reqresp": ["wake_p50_us", "wake_p99_us"]}.get(kind, [])
    metrics += extra + ["wall_s"] + SCHED_METRICS
    ctrs = sorted({k for r in off + on for k in r["m"] if k in MODULE_COUNTERS})
    metrics += ctrs
    dkey = differs_key(flag)
    acted = None
    undecided = 0
    if dkey and any(dkey in r["m"] for r in off + on):
        acted = sum(r["m"].get(dkey, 0) for r in off + on)
        # A judge not asked to pay for stock's answer (the SIS scan, live
        # with its event off) counts a call it could not settle as
        # "<hook>_undecided": such calls may have differed, so the rule
        # is not shown to be inert (its row shows the count).
        undecided = sum(v for r in on for k, v in r["m"].items()
                        if k.endswith("_undecided"))
    rows = []
    for met in metrics:
        a = [r["m"][met] for r in off if met in r["m"]]
        b = [r["m"][met] for r in on if met in r["m"]]
        # A zero differs counter is the news: the rule never acted.
        if not a or not b or (met not in (main, dkey) and not any(a) and not any(b)):
            continue
        ma, lo_a, hi_a = summarise(a)
        mb, lo_b, hi_b = summarise(b)
        ratio = mb / ma if ma else None
        # Two disjoint ranges mean something only with a few runs each: with
        # 4 and 4 they happen by chance with probability 2/70 (about 3%).
        if min(len(a), len(b)) < MIN_RUNS_APART:
            clear = None
        else:
            clear = hi_a < lo_b or hi_b < lo_a
        ci = None
        if ma and min(len(a), len(b)) >= MIN_RUNS_CI:
            ci = ratio_ci(a, b, zlib.crc32(f"{topo}/{eid}/{met}".encode()))
        v = verdict(ci, (len(a), len(b)))
        if met == main and acted == 0 and not undecided:
            v = f"inert here ({dkey} 0)"
        rows.append({"topo": topo, "exp": eid, "metric": met,
                     "off": (ma, lo_a, hi_a), "on": (mb, lo_b, hi_b),
                     "ratio": ratio, "clear": clear, "n": (len(a), len(b)),
                     "ci": ci, "verdict": v, "main": met == main})
    return rows


def svg_plot(topo, rows):
    """Horizontal bars: on/off ratio of each experiment's main metric, with
    its 95% interval as whiskers where there is one (else the spread,
    min_on/max_off .. max_on/min_off, dashed). None when no experiment has
    a ratio to show."""
    mains = [r for r in rows if r["main"] and r["ratio"] is not None]
    if not mains:
        return None
    w, bar_h, left, top = 640, 26, 230, 40
    h = top + bar_h * len(mains) + 50
    lo_lim = min(0.5, min(r["on"][1] / r["off"][2] for r in mains if r["off"][2]) * 0.95)
    hi_lim = max(1.5, max(r["on"][2] / r["off"][1] for r in mains if r["off"][1]) * 1.05)

    def x(v):
        return left + (v - lo_lim) / (hi_lim - lo_lim) * (w - left - 20)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<text x="10" y="20" font-size="14">{html.escape(topo)}: on / off, median (bar), 95% interval (line; dashed: spread)</text>',
           f'<line x1="{x(1):.1f}" y1="{top - 8}" x2="{x(1):.1f}" y2="{h - 40}" stroke="#444" stroke-dasharray="4,3"/>']
    for i, r in enumerate(mains):
        y = top + i * bar_h
        better = HIGHER_IS_BETTER.get(r["metric"], True) == (r["ratio"] >= 1)
        color = "#4a8" if better else "#c64"
        x0, x1 = sorted((x(1), x(r["ratio"])))
        out.append(f'<text x="10" y="{y + 16}">{html.escape(r["exp"] + " (" + r["metric"] + ")")}</text>')
        out.append(f'<rect x="{x0:.1f}" y="{y + 4}" width="{max(x1 - x0, 1):.1f}" height="{bar_h - 10}" fill="{color}"/>')
        if r.get("ci"):
            lo, hi = r["ci"]
            out.append(f'<line x1="{x(lo):.1f}" y1="{y + 13}" x2="{x(hi):.1f}" y2="{y + 13}" stroke="#000" stroke-width="2"/>')
        elif r["off"][1] and r["off"][2]:
            lo, hi = r["on"][1] / r["off"][2], r["on"][2] / r["off"][1]
            out.append(f'<line x1="{x(lo):.1f}" y1="{y + 13}" x2="{x(hi):.1f}" y2="{y + 13}" stroke="#000" stroke-dasharray="3,2"/>')
        out.append(f'<text x="{w - 60}" y="{y + 16}">{r["ratio"]:.3f}</text>')
    for v in (lo_lim, 1.0, hi_lim):
        out.append(f'<text x="{x(v) - 12:.1f}" y="{h - 22}">{v:.2f}</text>')
    out.append(f'<text x="{left}" y="{h - 6}">green: better with the flag on; red: worse</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def summary_rows(rows, per_topo):
    """One row per experiment: its flag (from the conf in per_topo), the
    main metric's ratio, interval and verdict, which way the effect goes,
    and the other metrics whose interval excludes 1.0 (name and ratio)."""
    out = []
    for r in rows:
        if not r["main"]:
            continue
        conf = per_topo[r["topo"]][2]
        kind, flag, _ = conf.get(r["exp"], (None, None, None))
        label = flag if kind == "flag" else ("module loaded" if kind == "module" else (flag or "-"))
        direction = "-"
        if r["verdict"] == "effect" and r["ratio"] is not None:
            better = HIGHER_IS_BETTER.get(r["metric"], True) == (r["ratio"] > 1)
            direction = "better" if better else "worse"
        others = [f"{o['metric']} {fmt(o['ratio'])}" for o in rows
                  if o["topo"] == r["topo"] and o["exp"] == r["exp"] and not o["main"]
                  and o["verdict"] == "effect"]
        out.append({"topo": r["topo"], "exp": r["exp"], "flag": label, "metric": r["metric"],
                    "ratio": r["ratio"], "ci": r["ci"], "verdict": r["verdict"],
                    "direction": direction, "others": others})
    return out


def summary_cells(s_, sep):
    """Table cells of one summary row; the other metrics joined by sep."""
    return [s_["topo"], s_["exp"], s_["flag"], s_["metric"], fmt(s_["ratio"]), fmt_ci(s_["ci"]),
            s_["verdict"], s_["direction"], sep.join(s_["others"]) or "-"]


def chance_line(rows):
    """How many comparisons have an interval that excludes 1.0, against how
    many a run where nothing changes would give by chance (1 in 20 at a
    95% interval)."""
    judged = [r for r in rows if r["ci"] is not None]
    effects = sum(r["verdict"] == "effect" for r in judged)
    mains = [r for r in judged if r["main"]]
    main_effects = sum(r["verdict"] == "effect" for r in mains)
    return (f"{effects} of {len(judged)} comparisons have a 95% interval that excludes 1.0 "
            f"(about {len(judged) / 20:.1f} would by chance alone); "
            f"of the main metrics, {main_effects} of {len(mains)} "
            f"(about {len(mains) / 20:.1f} by chance).")


def read_conf(path):
    """{id: (kind, flag, command)} of a guest's bench conf (bench.sh's
    experiments_of), or {} when there is none."""
    conf = {}
    if path and os.path.exists(path):
        for ln in open(path):
            f = ln.split(None, 3)
            if len(f) == 4 and not f[0].startswith("#"):
                conf[f[0]] = (f[1], f[2], f[3].strip())
    return conf


def counter_metric(name):
    """Whether a metric is a count over the run (schedstat or the module's
    debugfs), which --json also gives per second of the run's wall time."""
    if name in MODULE_COUNTERS:
        return True
    for tname in IDLE_TYPES:
        if name.endswith("_" + tname):
            name = name[:-len(tname) - 1]
    return name in LB_FIELDS + TAIL_FIELDS + ["yld_count", "sched_count", "sched_goidle",
                                              "ttwu_count", "ttwu_local", "pcount"]


def sig(v):
    """A float to 6 significant digits, an integral one as an int."""
    if float(v).is_integer():
        return int(v)
    return float(f"{v:.6g}")


def json_report(per_topo, warmup):
    """The --json document: per topology, experiment, state and metric the
    samples after warm-up, their median and its bootstrap 95% interval
    (null with fewer than MIN_RUNS_CI samples)."""
    doc = {"format": "sched-lb-rs bench 1", "warmup": warmup,
           "bootstrap_iters": BOOTSTRAP_ITERS, "interval": 0.95,
           "min_runs_ci": MIN_RUNS_CI, "topologies": {}}
    for topo, (domains, runs, conf) in per_topo.items():
        exps = {}
        for eid, exp in experiments(drop_warmup(runs, warmup)).items():
            kind, flag, cmd = conf.get(eid, (None, None, None))
            e = {"kind": kind, "flag": flag, "command": cmd, "states": {}}
            for state in ("off", "on"):
                rs = exp[state]
                if not rs:
                    continue
                wk = next((r["m"].get("_kind") for r in rs if r["m"].get("_kind")), None)
                e["workload"] = e.get("workload") or wk
                e["out"] = e.get("out") or rs[0]["out"][:200]
                names = sorted({k for r in rs for k in r["m"] if not k.startswith("_")})
                mets = {}
                for met in names:
                    series = [(met, [r["m"][met] for r in rs if met in r["m"]])]
                    if counter_metric(met):
                        series.append((met + "_per_s", [r["m"][met] / r["m"]["wall_s"]
                                                        for r in rs if met in r["m"] and r["m"]["wall_s"] > 0]))
                    for name, vals in series:
                        if not vals:
                            continue
                        ci = None
                        if len(vals) >= MIN_RUNS_CI:
                            ci = [sig(x) for x in median_ci(
                                vals, zlib.crc32(f"{topo}/{eid}/{state}/{name}".encode()))]
                        mets[name] = {"samples": [sig(x) for x in vals],
                                      "median": sig(statistics.median(vals)), "ci95": ci}
                e["states"][state] = {"n": len(rs), "metrics": mets}
            exps[eid] = e
        doc["topologies"][topo] = {"domains": domains, "experiments": exps}
    return doc


def read_rule_cost(path):
    """rule_cost.txt of scripts/rule-cost.sh: per rule, for overflow checks
    off and on, (C instr/call or None, Rust instr/call, Rust/C or None)."""
    cost = []
    for ln in open(path):
        if ln.startswith("#") or not ln.strip():
            continue
        f = ln.split()
        if len(f) != 8:
            raise SystemExit(f"bench_report: {path}: expected RULE ITERS and three counts "
                             f"per column (scripts/rule-cost.sh), got {ln.strip()!r}")
        rule, iters = f[0], int(f[1])
        cols = []
        for none, rust, c in (f[2:5], f[5:8]):
            r_ir = (int(rust) - int(none)) / iters
            c_ir = None if c == "-" else (int(c) - int(none)) / iters
            cols.append((c_ir, r_ir, r_ir / c_ir if c_ir else None))
        cost.append((rule, cols))
    return cost


def cost_cells(cols):
    """Table cells of one rule: C, Rust and Rust/C per column."""
    cells = []
    for c_ir, r_ir, q in cols:
        cells += ["-" if c_ir is None else f"{c_ir:.1f}", f"{r_ir:.1f}",
                  "-" if q is None else f"{q:.3f}"]
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", help="TOPOLOGY=console.log")
    ap.add_argument("--rule-cost", help="rule_cost.txt of scripts/rule-cost.sh")
    ap.add_argument("--domains-dir", help="directory with TOPOLOGY.domains (expected shapes)")
    ap.add_argument("--md", required=True, help="Markdown output")
    ap.add_argument("--rst", help="reST output for Documentation/")
    ap.add_argument("--svg-dir", action="append", default=[], help="where to write the SVGs")
    ap.add_argument("--rst-images", default="results",
                    help="the SVGs' directory as the reST output refers to it (default: results)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="runs per experiment and state to drop first (warm-up)")
    ap.add_argument("--json", action="append", default=[],
                    help="machine-readable output: samples, medians and their 95%% intervals (repeatable)")
    ap.add_argument("--made-by", default="make bench",
                    help="the command the reST output names as its source (default: make bench)")
    a = ap.parse_args()

    all_rows, problems, plots, per_topo = [], [], [], {}
    for spec in a.logs:
        if "=" not in spec:
            raise SystemExit(f"bench_report: expected TOPOLOGY=LOG, got {spec!r}")
        topo, path = spec.split("=", 1)
        domains, spans, runs = parse_log(path)
        conf = read_conf(a.domains_dir and os.path.join(a.domains_dir, f"guest-{topo}", "conf"))
        per_topo[topo] = ([f"{n}:{s}" for n, s in zip(domains, spans)], runs, conf)
        if a.domains_dir:
            want_file = os.path.join(a.domains_dir, f"{topo}.domains")
            if os.path.exists(want_file):
                want = open(want_file).read().split()
                got = [f"{n}:{s}" for n, s in zip(domains, spans)]
                if got != want:
                    problems.append(f"{topo}: cpu0's sched domains are {' '.join(got) or 'none'}, the topology needs {' '.join(want)}")
        if not runs:
            problems.append(f"{topo}: no benchmark runs in {path}")
        for r in runs:
            if r["rc"] != 0:
                problems.append(f"{topo}: {r['id']} {r['state']} rep {r['rep']} exited {r['rc']}: {r['out'][:120]}")
        for eid, exp in experiments(drop_warmup(runs, a.warmup)).items():
            kind, flag, _ = conf.get(eid, (None, None, None))
            all_rows += rows_for(topo, eid, exp, flag if kind == "flag" else None)
        svg = svg_plot(topo, [r for r in all_rows if r["topo"] == topo])
        if svg and a.svg_dir:
            plots.append(topo)
            for d in a.svg_dir:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"{topo}.svg"), "w") as f:
                    f.write(svg)

    cost = read_rule_cost(a.rule_cost) if a.rule_cost else []

    summary = summary_rows(all_rows, per_topo)
    md = ["| topology | experiment | flag | main metric | on/off | 95% interval | verdict | "
          "direction | other metrics with an effect |",
          "|---|---|---|---|---|---|---|---|---|"]
    md += ["| " + " | ".join(summary_cells(s_, ", ")) + " |" for s_ in summary]
    md += ["", chance_line(all_rows), ""]
    md += ["| topology | experiment | metric | off: median [min-max] | on: median [min-max] | on/off | 95% interval | verdict | ranges apart |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in all_rows:
        md.append("| {} | {} | {} | {} [{}-{}] | {} [{}-{}] | {} | {} | {} | {} |".format(
            r["topo"], r["exp"], "**" + r["metric"] + "**" if r["main"] else r["metric"],
            fmt(r["off"][0]), fmt(r["off"][1]), fmt(r["off"][2]),
            fmt(r["on"][0]), fmt(r["on"][1]), fmt(r["on"][2]),
            fmt(r["ratio"]), fmt_ci(r["ci"]), r["verdict"], apart(r["clear"])))
    if cost:
        md += ["", "| rule | 6.12 C instr/call | Rust, overflow checks off | Rust/C | "
               "6.12 C instr/call | Rust, overflow checks on | Rust/C |",
               "|---|---|---|---|---|---|---|"]
        md += ["| " + " | ".join([n] + cost_cells(cols)) + " |" for n, cols in cost]
    with open(a.md, "w") as f:
        f.write("\n".join(md) + "\n")

    if a.rst:
        reps = sorted({n for r in all_rows for n in r["n"]})
        rst = [".. SPDX-License-Identifier: GPL-2.0", "",
               f".. Generated by scripts/bench_report.py ({a.made_by}); do not edit.", ""]
        rst += ["Verdicts", "--------", "",
                "One row per experiment: its main metric's on/off ratio of medians with the "
                "bootstrap 95% interval; \"effect\" only where the interval excludes 1.0, "
                "else the largest effect the run could have missed. The last column lists "
                "the other metrics of the experiment whose interval excludes 1.0.", "",
                ".. csv-table::",
                "   :header: topology, experiment, flag, main metric, on/off, 95% interval, "
                "verdict, direction, other metrics with an effect", ""]
        for s_ in summary:
            cells = summary_cells(s_, "; ")
            rst.append("   " + ", ".join(cells[:-1]) + f', "{cells[-1]}"')
        rst += ["", chance_line(all_rows), ""]
        for topo in dict.fromkeys(r["topo"] for r in all_rows):
            rst += [topo, "-" * len(topo), ""]
            if topo in plots:
                rst += [f".. image:: {a.rst_images}/{topo}.svg", f"   :alt: {topo}: on/off ratios", ""]
            rst += [".. csv-table::",
                    "   :header: experiment, metric, off median, off min-max, on median, on min-max, on/off, 95% interval, verdict, ranges apart",
                    ""]
            for r in all_rows:
                if r["topo"] != topo:
                    continue
                rst.append("   {}, {}, {}, {}-{}, {}, {}-{}, {}, {}, {}, {}".format(
                    r["exp"], r["metric"], fmt(r["off"][0]), fmt(r["off"][1]), fmt(r["off"][2]),
                    fmt(r["on"][0]), fmt(r["on"][1]), fmt(r["on"][2]), fmt(r["ratio"]),
                    fmt_ci(r["ci"]), r["verdict"], apart(r["clear"])))
            rst.append("")
        if cost:
            rst += ["Instructions per call (callgrind)", "---------------------------------", "",
                    ".. csv-table::",
                    "   :header: rule, 6.12 C (off), \"Rust, overflow checks off\", Rust/C (off), "
                    "6.12 C (on), \"Rust, overflow checks on\", Rust/C (on)", ""]
            rst += ["   " + ", ".join([n] + cost_cells(cols)) for n, cols in cost]
            rst.append("")
        rst.append(f"Repetitions per state: {', '.join(map(str, reps))}.")
        os.makedirs(os.path.dirname(a.rst), exist_ok=True)
        with open(a.rst, "w") as f:
            f.write("\n".join(rst) + "\n")

    if a.json:
        text = json.dumps(json_report(per_topo, a.warmup), indent=1, sort_keys=True)
        # One line per metric: its numbers, then the object around them.
        text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        text = re.sub(r"\{\s+([^{}]*?)\s+\}", lambda m: "{" + " ".join(m.group(1).split()) + "}", text)
        for path in a.json:
            if os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text + "\n")

    if problems:
        for p in problems:
            print(f"bench_report: {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
