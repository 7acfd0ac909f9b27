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

Output: a Markdown table of every metric per experiment with the median
and min-max spread of each state, and the paired comparison: each
repetition ran its off and on runs back to back (scripts/guest/init
alternates which first), so the host's drift moves both and the runs are
analysed as pairs. The on/off ratio is the geometric mean of the pairs'
ratios, with its paired-t 95% interval and p (a counter that read 0 in
some run: the ratio of means, from the paired differences). Holm's
adjustment runs over the main metrics of the whole run (every topology);
a main metric is an "effect" only where it survives, else the verdict
says the raw interval excluded 1.0 but not after Holm, or "none seen"
with how far the interval reaches and the change the run would detect
with 80% power. Other metrics are described ("excludes 1.0
(unadjusted)"), not tested. "inert here" marks a flag experiment whose
flag's differs counter (the module's count of the answers that flag
changed against stock 6.12) stayed 0 in every run: the rule never acted,
so its runs say nothing of its effect, and it stays out of Holm's family.
An experiment of kind "same" (A/A: both arms the same state) reports the
run's own false-positive rate. Domain counters of schedstat are given per
domain level ("lb_count@MC"). With --json PATH, every sample per
topology, experiment, state and metric with its repetition, its median
and the bootstrap 95% interval of that median (schedsim calibrate reads
it); the same as reST for Documentation/; one SVG per topology with each
experiment's main metric, coloured where it is an effect. --warmup N
drops each state's first N runs (warm-up; the guest numbers runs from 1)
before any of this. --from-json re-analyses a bench.json's samples
instead of console logs (what cover_results.py does for the cover letter).

Standard library only. Exits non-zero, saying why, when a topology's sched
domains do not have the expected shape or a run failed.
"""

import argparse
import functools
import html
import json
import math
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
# ttwu_count (the wakeups) is what a wakeup hook's calls are a share of:
# the SIS scan's rate.
SCHED_METRICS = ["lb_count", "lb_count_newidle", "lb_imbalance",
                 "lb_gained", "alb_pushed", "ttwu_move_affine",
                 "sched_goidle", "ttwu_count"]
# The domain-line ones of those, which the tables give per domain level
# ("lb_count@MC"). 6.12's schedstat (version 16) has one lb_imbalance per
# idle type; its split by type (load, util, tasks, misfit) is version 17,
# Linux 6.13, so this kernel cannot give it.
DOMAIN_METRICS = {"lb_count", "lb_count_newidle", "lb_imbalance", "lb_gained",
                  "alb_pushed", "ttwu_move_affine"}
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
# The family-wise error rate Holm's adjustment holds the main metrics to.
ALPHA = 0.05
# Which direction is better for a main metric.
HIGHER_IS_BETTER = {"work_ratio": True, "rounds_per_s": True,
                    "time_s": False}


def parse_schedstat(lines, levels=()):
    """Sums of every schedstat counter over all CPUs and domains, and of
    the DOMAIN_METRICS per domain level as "name@LEVEL", levels[N] naming
    domainN (cpu0's levels: this bench's topologies are symmetric)."""
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
            idx = int(f[0][len("domain"):])
            level = levels[idx] if idx < len(levels) else None
            fields = []
            for t, tname in enumerate(IDLE_TYPES):
                for i, name in enumerate(LB_FIELDS):
                    v = vals[t * len(LB_FIELDS) + i]
                    fields += [(name, v), (f"{name}_{tname}", v)]
            fields += zip(TAIL_FIELDS, vals[len(IDLE_TYPES) * len(LB_FIELDS):])
            for name, v in fields:
                add(name, v)
                if level and name in DOMAIN_METRICS:
                    add(f"{name}@{level}", v)
    tot["lb_count_newidle"] = tot.get("lb_count_newidle", 0)
    return tot


def workload_metrics(out):
    """The workload's own numbers from its output line."""
    m = {}
    # Anywhere in the output: a command may start a background load first
    # (bench.sh's partly idle LLC).
    if re.search(r"(^|\s)reqresp groups=", out):
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
            before, after = parse_schedstat(dumps[0], domains), parse_schedstat(dumps[1], domains)
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
    # A ratio computed through logs lands a hair off the integer it is.
    if abs(v - round(v)) < 1e-9:
        v = round(v)
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.2f}"


def apart(clear):
    return {True: "yes", False: "no", None: f"n<{MIN_RUNS_APART}"}[clear]


def summarise(vals):
    return statistics.median(vals), min(vals), max(vals)


def median_ci(vals, seed, iters=BOOTSTRAP_ITERS, level=0.95):
    """Percentile bootstrap interval of the median of one state's runs,
    resampled with replacement (bench.json's ci95, for schedsim
    calibrate)."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(vals, k=len(vals))) for _ in range(iters))
    tail = (1 - level) / 2
    return meds[int(tail * len(meds))], meds[min(len(meds) - 1, int((1 - tail) * len(meds)))]


def _betacf(a, b, x):
    """The continued fraction of the regularised incomplete beta function
    (modified Lentz), as in Numerical Recipes' betacf."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betai(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return betai(df / 2.0, 0.5, df / (df + t * t))


@functools.lru_cache(maxsize=None)
def t_quantile(q, df):
    """The q quantile (q > 0.5) of Student's t, by bisection on
    t_two_sided_p (which falls from 1 as t grows). Cached: a run asks for
    the same two quantiles, of the same few df, for every row."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - t_two_sided_p(mid, df) / 2.0 < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def pairs_of(off, on, met):
    """(off, on) values of one metric, paired by repetition: the guest ran
    rep r's two states back to back (scripts/guest/init alternates which
    goes first), so they shared the host's state of that moment."""
    a = {r["rep"]: r["m"][met] for r in off if met in r["m"]}
    b = {r["rep"]: r["m"][met] for r in on if met in r["m"]}
    return [(a[k], b[k]) for k in sorted(a) if k in b]


def pearson(xs, ys):
    """The correlation of two series, None when either is constant."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def paired_stats(pairs, level=0.95, power=0.80):
    """The paired comparison of one metric: the on/off ratio, its interval,
    the two-sided p of "no change", the change the run would detect with
    the given power, and the off/on correlation the pairing exploits.

    When every value is positive, the pairs' log ratios get a paired t
    analysis: the ratio is their geometric mean, the interval exact for
    log-normal noise. Otherwise (a counter that reads 0 in some run) the
    differences on - off do, scaled by the off mean: the ratio is
    mean(on) / mean(off), the off mean taken as known. The detectable
    change is (t_(1-a/2) + t_power) standard errors, the usual normal-
    shift approximation of the t test's power. None with fewer than
    MIN_RUNS_CI pairs; "ratio" None when the off values are all 0."""
    n = len(pairs)
    if n < MIN_RUNS_CI:
        return None
    off = [x for x, _ in pairs]
    on = [y for _, y in pairs]
    logs = all(x > 0 and y > 0 for x, y in pairs)
    if logs:
        d, base = [math.log(y / x) for x, y in pairs], 1.0
    else:
        d, base = [y - x for x, y in pairs], statistics.mean(off)
    st = {"n": n, "method": "log" if logs else "diff", "corr": pearson(off, on),
          "ratio": None, "ci": None, "p": None, "detect": None}
    if not logs and base == 0:
        return st
    mean_d, se = statistics.mean(d), statistics.stdev(d) / math.sqrt(n)
    tc = t_quantile(1 - (1 - level) / 2, n - 1)
    tp = t_quantile(power, n - 1)
    if se == 0:
        p = 1.0 if mean_d == 0 else 0.0
    else:
        p = t_two_sided_p(mean_d / se, n - 1)
    lo, hi, det = mean_d - tc * se, mean_d + tc * se, (tc + tp) * se
    if logs:
        st.update(ratio=math.exp(mean_d), ci=(math.exp(lo), math.exp(hi)),
                  detect=math.exp(det) - 1)
    else:
        st.update(ratio=1 + mean_d / base, ci=(1 + lo / base, 1 + hi / base),
                  detect=det / abs(base))
    st["p"] = p
    return st


def holm(ps):
    """Holm's step-down adjustment of a family of p-values, in their order:
    the k-th smallest is multiplied by (m - k + 1), then made monotone."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    adj, run = [0.0] * len(ps), 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - k) * ps[i]))
        adj[i] = run
    return adj


def reach(ci):
    """How far from 1.0 an interval reaches, in percent."""
    return 100 * max(1 - ci[0], ci[1] - 1)


def verdict(st, main=False, p_holm=None):
    """A row's verdict from its paired statistics. A main metric is an
    "effect" only where Holm's adjusted p over the run's main metrics is
    below ALPHA; an interval that excludes 1.0 without that says so, with
    both p. Where nothing is seen, how far the interval reaches and the
    change the run would have detected with 80% power (not the same: the
    interval is what this run measured, the power what runs this noisy
    detect four times in five). Other metrics are described, not tested:
    whether their own interval excludes 1.0."""
    if st is None:
        return f"n<{MIN_RUNS_CI}"
    if st["ratio"] is None:
        # Enough runs, but no ratio: a counter the flag turns on from 0.
        return "no ratio (off 0)"
    excl = ci_excludes_one(st["ci"])
    if not main:
        return "excludes 1.0 (unadjusted)" if excl else f"interval reaches +-{reach(st['ci']):.0f}%"
    if p_holm is not None and p_holm < ALPHA:
        return "effect"
    if excl:
        holm_s = "-" if p_holm is None else fmt_pval(p_holm)
        return f"not after Holm (p {fmt_pval(st['p'])}; Holm {holm_s})"
    return (f"none seen: interval reaches +-{reach(st['ci']):.0f}%; "
            f"80% power at +-{100 * st['detect']:.0f}%")


def judge(rows):
    """Sets every row's verdict: Holm's adjustment over the main metrics
    of all rows given (one bench run; "inert here" rows are no test of
    their flag and stay out of the family), then verdict() per row."""
    fam = [r for r in rows if r["main"] and r["stats"] and r["stats"]["p"] is not None
           and not r["verdict"]]
    for r, adj in zip(fam, holm([r["stats"]["p"] for r in fam])):
        r["p_holm"] = adj
    for r in rows:
        if not r["verdict"]:
            r["verdict"] = verdict(r["stats"], r["main"], r.get("p_holm"))
    return rows


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
    metrics += extra + ["wall_s"]
    for met in SCHED_METRICS:
        # Per domain level where the runs have it (a level's counters
        # answer for that level's balancing; their sum mixes SMT's with
        # NUMA's), the sum where they do not (an older bench.json).
        levels = list(dict.fromkeys(k for r in off + on for k in r["m"]
                                    if k.startswith(met + "@")))
        metrics += levels or [met]
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
        # Two disjoint ranges mean something only with a few runs each: with
        # 4 and 4 they happen by chance with probability 2/70 (about 3%).
        if min(len(a), len(b)) < MIN_RUNS_APART:
            clear = None
        else:
            clear = hi_a < lo_b or hi_b < lo_a
        st = paired_stats(pairs_of(off, on, met))
        v = None
        if met == main and acted == 0 and not undecided:
            v = f"inert here ({dkey} 0)"
        rows.append({"topo": topo, "exp": eid, "metric": met,
                     "off": (ma, lo_a, hi_a), "on": (mb, lo_b, hi_b),
                     "ratio": st["ratio"] if st else (mb / ma if ma else None),
                     "clear": clear, "n": (len(a), len(b)), "stats": st,
                     "ci": st["ci"] if st else None, "verdict": v, "main": met == main})
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
        # Colour only for what survived Holm; the rest is grey.
        color = ("#4a8" if better else "#c64") if r["verdict"] == "effect" else "#bbb"
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
    out.append(f'<text x="{left}" y="{h - 6}">green: an effect (after Holm), better with the flag on; red: worse; grey: none seen</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def ci_excludes_one(ci):
    """Whether an interval (None: there is none) excludes 1.0."""
    return ci is not None and (ci[0] > 1 or ci[1] < 1)


def excludes_one(r):
    """Whether a row's raw 95% interval excludes 1.0."""
    return ci_excludes_one(r["ci"])


def label_of(kind, flag):
    """What an experiment varies, for the tables. A flag the module keeps
    no differs counter for is one of 6.12's own (SIS_UTIL, NI_RANDOM):
    its rows cannot say whether it acted, and the label says so."""
    if kind == "flag":
        # Only where the run's module had differs counters at all.
        if (any(k.startswith("differs_") for k in MODULE_COUNTERS)
                and differs_key(flag) not in MODULE_COUNTERS):
            return f"{flag} (6.12's own)"
        return flag
    if kind == "module":
        return "module loaded"
    if kind == "same":
        return "A/A (same state)"
    return flag or "-"


def summary_rows(rows, per_topo):
    """One row per experiment: its flag (from the conf in per_topo), the
    main metric's ratio, interval, p with Holm's adjustment and verdict,
    which way the effect goes, and the other metrics whose raw interval
    excludes 1.0 (name and ratio). judge() must have run on rows."""
    out = []
    for r in rows:
        if not r["main"]:
            continue
        conf = per_topo[r["topo"]][2]
        kind, flag, _ = conf.get(r["exp"], (None, None, None))
        direction = "-"
        if r["verdict"] == "effect" and r["ratio"] is not None:
            better = HIGHER_IS_BETTER.get(r["metric"], True) == (r["ratio"] > 1)
            direction = "better" if better else "worse"
        others = [f"{o['metric']} {fmt(o['ratio'])}" for o in rows
                  if o["topo"] == r["topo"] and o["exp"] == r["exp"] and not o["main"]
                  and excludes_one(o)]
        out.append({"topo": r["topo"], "exp": r["exp"], "flag": label_of(kind, flag),
                    "metric": r["metric"], "ratio": r["ratio"], "ci": r["ci"],
                    "p": fmt_p(r), "verdict": r["verdict"],
                    "direction": direction, "others": others})
    return out


def fmt_pairs(r):
    """How many pairs a row's statistics rest on and the off/on
    correlation across them (what pairing gains: the host's drift moves
    both runs of a pair together)."""
    st = r["stats"]
    if not st:
        return "-"
    return f"{st['n']} ({st['corr']:.2f})" if st["corr"] is not None else f"{st['n']} (-)"


def csv_cell(v):
    """A reST csv-table cell: quoted when it holds a comma or a quote."""
    v = str(v)
    return '"' + v.replace('"', '""') + '"' if ("," in v or '"' in v) else v


def fmt_p(r):
    """A main row's p and Holm's adjusted p, as "p (Holm)"."""
    st = r["stats"]
    if not st or st["p"] is None:
        return "-"
    if r.get("p_holm") is not None:
        return f"{fmt_pval(st['p'])} ({fmt_pval(r['p_holm'])})"
    return fmt_pval(st["p"])


def fmt_pval(p):
    """A p-value to 3 decimals, "<0.001" below that."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def summary_cells(s_, sep):
    """Table cells of one summary row; the other metrics joined by sep.
    A verdict that survived Holm is bold (Markdown and reST alike)."""
    v = "**effect**" if s_["verdict"] == "effect" else s_["verdict"]
    return [s_["topo"], s_["exp"], s_["flag"], s_["metric"], fmt(s_["ratio"]), fmt_ci(s_["ci"]),
            s_["p"], v, s_["direction"], sep.join(s_["others"]) or "-"]


def chance_line(rows, per_topo=None):
    """The run's error accounting: the main metrics' raw intervals that
    exclude 1.0 and how many survive Holm; the other metrics' intervals
    that do, beside the 1 in 20 chance gives; and the A/A experiments'
    (both arms the same state) own rate, which is the run's measured
    false-positive rate."""
    judged = [r for r in rows if r["ci"] is not None]
    mains = [r for r in judged if r["main"]]
    others = [r for r in judged if not r["main"]]
    fam = [r for r in mains if r.get("p_holm") is not None]
    line = (f"Main metrics: {sum(map(excludes_one, mains))} of {len(mains)} raw 95% intervals "
            f"exclude 1.0, {sum(r['verdict'] == 'effect' for r in mains)} survive Holm "
            f"over {len(fam)} at {ALPHA:g}. "
            f"Other metrics: {sum(map(excludes_one, others))} of {len(others)} intervals exclude 1.0 "
            f"(about {len(others) / 20:.1f} would by chance alone).")
    if per_topo:
        aa = [r for r in judged
              if per_topo[r["topo"]][2].get(r["exp"], (None,))[0] == "same"]
        if aa:
            n_aa = len({(r["topo"], r["exp"]) for r in aa})
            line += (f" A/A ({n_aa} experiment{'' if n_aa == 1 else 's'}, "
                     f"the same state in both arms): "
                     f"{sum(map(excludes_one, aa))} of {len(aa)} intervals exclude 1.0 "
                     f"(about {len(aa) / 20:.1f} expected), "
                     f"{sum(r['verdict'] == 'effect' for r in aa)} main metrics called an effect.")
    return line


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


def schedstat_field(name):
    """The schedstat field a metric name counts ("lb_count" for
    "lb_count_newidle@MC"), or None when it is no schedstat field."""
    base = name.split("@")[0]
    for tname in IDLE_TYPES:
        if base.endswith("_" + tname):
            base = base[:-len(tname) - 1]
    return base if base in LB_FIELDS + TAIL_FIELDS + CPU_FIELDS else None


def counter_metric(name):
    """Whether a metric is a count over the run (schedstat or the module's
    debugfs), which --json also gives per second of the run's wall time."""
    if name in MODULE_COUNTERS:
        return True
    return schedstat_field(name) in LB_FIELDS + TAIL_FIELDS + [
        "yld_count", "sched_count", "sched_goidle", "ttwu_count", "ttwu_local", "pcount"]


def sig(v):
    """A float to 6 significant digits, an integral one as an int."""
    if float(v).is_integer():
        return int(v)
    return float(f"{v:.6g}")


def json_report(per_topo, warmup):
    """The --json document: per topology, experiment, state and metric the
    samples after warm-up (per_topo's runs), their median and its bootstrap
    95% interval (null with fewer than MIN_RUNS_CI samples); per state the
    repetition of each run (pairing: sample i of "off" and of "on" with
    the same rep ran back to back); the module's counters' names."""
    doc = {"format": "sched-lb-rs bench 1", "warmup": warmup,
           "bootstrap_iters": BOOTSTRAP_ITERS, "interval": 0.95,
           "min_runs_ci": MIN_RUNS_CI, "module_counters": sorted(MODULE_COUNTERS),
           "topologies": {}}
    for topo, (domains, runs, conf) in per_topo.items():
        exps = {}
        for eid, exp in experiments(runs).items():
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
                e["states"][state] = {"n": len(rs), "reps": [r["rep"] for r in rs],
                                      "metrics": mets}
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


def rows_of(per_topo):
    """Every experiment's rows, judged together (one Holm family), from
    per_topo's runs (warm-up already dropped)."""
    rows = []
    for topo, (_, runs, conf) in per_topo.items():
        for eid, exp in experiments(runs).items():
            kind, flag, _ = conf.get(eid, (None, None, None))
            rows += rows_for(topo, eid, exp, flag if kind == "flag" else None)
    return judge(rows)


# Metric names a console log yields without the module: schedstat's, the
# workloads' and the run's wall time. In a bench.json without its
# "module_counters" list, every other name is one of the module's.
def _known_metric(name):
    return (schedstat_field(name) is not None
            or name in ("wall_s", "time_s", "work_ratio", "rounds_per_s", "apart", "apart_llc",
                        "pair_migrations", "min_cpu_ms", "max_cpu_ms", "wake_p50_us",
                        "wake_p99_us"))


def runs_from_json(exp, warmup=0):
    """The run records of one experiment of a bench.json, rebuilt from its
    samples: run i of a state holds sample i of each metric it has, and
    its repetition is the state's "reps"[i] (a bench.json without them
    kept the runs in repetition order, from warmup + 1). The derived
    *_per_s metrics are left out: the report computes them, the logs do
    not carry them."""
    runs = []
    for state, st in exp["states"].items():
        names = st["metrics"]
        mets = {k: v["samples"] for k, v in names.items()
                if not (k.endswith("_per_s") and k[:-len("_per_s")] in names)}
        n = max((len(v) for v in mets.values()), default=0)
        reps = st.get("reps") or list(range(warmup + 1, warmup + 1 + n))
        for i in range(n):
            m = {k: v[i] for k, v in mets.items() if i < len(v)}
            if exp.get("workload"):
                m["_kind"] = exp["workload"]
            runs.append({"id": None, "state": state, "rep": reps[i], "m": m,
                         "out": exp.get("out", "")})
    return runs


def per_topo_from_json(path):
    """per_topo ({topo: (domains, runs, conf)}) and the warm-up count of a
    bench.json; the module's counters it names join MODULE_COUNTERS."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != "sched-lb-rs bench 1":
        raise SystemExit(f"{path}: not a sched-lb-rs bench document")
    warmup = doc.get("warmup", 0)
    per_topo = {}
    for topo, t in doc["topologies"].items():
        conf, runs = {}, []
        for eid, exp in t["experiments"].items():
            conf[eid] = (exp.get("kind"), exp.get("flag"), exp.get("command"))
            for r in runs_from_json(exp, warmup):
                r["id"] = eid
                runs.append(r)
        per_topo[topo] = (t.get("domains") or [], runs, conf)
    if "module_counters" in doc:
        MODULE_COUNTERS.update(doc["module_counters"])
    else:
        MODULE_COUNTERS.update(k for _, runs, _ in per_topo.values() for r in runs
                               for k in r["m"] if not k.startswith("_") and not _known_metric(k))
    return per_topo, warmup


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="*", help="TOPOLOGY=console.log")
    ap.add_argument("--from-json", help="re-analyse the samples of a bench.json instead of console logs")
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

    problems, plots = [], []
    if a.from_json:
        if a.logs:
            raise SystemExit("bench_report: --from-json takes no console logs")
        per_topo, warmup = per_topo_from_json(a.from_json)
    else:
        if not a.logs:
            raise SystemExit("bench_report: no console logs (TOPOLOGY=LOG) and no --from-json")
        per_topo, warmup = {}, a.warmup
    for spec in a.logs:
        if "=" not in spec:
            raise SystemExit(f"bench_report: expected TOPOLOGY=LOG, got {spec!r}")
        topo, path = spec.split("=", 1)
        domains, spans, runs = parse_log(path)
        conf = read_conf(a.domains_dir and os.path.join(a.domains_dir, f"guest-{topo}", "conf"))
        runs_kept = drop_warmup(runs, a.warmup)
        per_topo[topo] = ([f"{n}:{s}" for n, s in zip(domains, spans)], runs_kept, conf)
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
    all_rows = rows_of(per_topo)
    for topo in per_topo:
        svg = svg_plot(topo, [r for r in all_rows if r["topo"] == topo])
        if svg and a.svg_dir:
            plots.append(topo)
            for d in a.svg_dir:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"{topo}.svg"), "w") as f:
                    f.write(svg)

    cost = read_rule_cost(a.rule_cost) if a.rule_cost else []

    summary = summary_rows(all_rows, per_topo)
    md = ["| topology | experiment | flag | main metric | on/off | 95% interval | p (Holm) | verdict | "
          "direction | other metrics whose interval excludes 1.0 |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    md += ["| " + " | ".join(summary_cells(s_, ", ")) + " |" for s_ in summary]
    md += ["", chance_line(all_rows, per_topo), ""]
    md += ["| topology | experiment | metric | off: median [min-max] | on: median [min-max] | "
           "on/off | 95% interval | pairs (corr) | verdict | ranges apart |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in all_rows:
        md.append("| " + " | ".join([
            r["topo"], r["exp"], "**" + r["metric"] + "**" if r["main"] else r["metric"],
            "{} [{}-{}]".format(*map(fmt, r["off"])), "{} [{}-{}]".format(*map(fmt, r["on"])),
            fmt(r["ratio"]), fmt_ci(r["ci"]), fmt_pairs(r), r["verdict"], apart(r["clear"])]) + " |")
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
                "One row per experiment. Each repetition ran its two states back to back, so "
                "the runs are analysed as pairs: on/off is the geometric mean of the pairs' "
                "ratios (the ratio of means for a counter that read 0 in some run), with its "
                "paired-t 95% interval and p. Holm's adjustment runs over the main metrics "
                "of the whole run; only what survives it is an **effect**. Otherwise the "
                "verdict gives how far the raw interval reaches and the change this run "
                "would have detected with 80% power. The last column lists the other "
                "metrics whose raw interval excludes 1.0 (described, not tested).", "",
                ".. csv-table::",
                "   :header: topology, experiment, flag, main metric, on/off, 95% interval, "
                "p (Holm), verdict, direction, other metrics whose interval excludes 1.0", ""]
        for s_ in summary:
            rst.append("   " + ", ".join(map(csv_cell, summary_cells(s_, "; "))))
        rst += ["", chance_line(all_rows, per_topo), ""]
        for topo in dict.fromkeys(r["topo"] for r in all_rows):
            rst += [topo, "-" * len(topo), ""]
            if topo in plots:
                rst += [f".. image:: {a.rst_images}/{topo}.svg", f"   :alt: {topo}: on/off ratios", ""]
            rst += [".. csv-table::",
                    "   :header: experiment, metric, off median, off min-max, on median, on min-max, "
                    "on/off, 95% interval, pairs (corr), verdict, ranges apart",
                    ""]
            for r in all_rows:
                if r["topo"] != topo:
                    continue
                rst.append("   " + ", ".join(map(csv_cell, [
                    r["exp"], r["metric"], fmt(r["off"][0]), "{}-{}".format(*map(fmt, r["off"][1:])),
                    fmt(r["on"][0]), "{}-{}".format(*map(fmt, r["on"][1:])), fmt(r["ratio"]),
                    fmt_ci(r["ci"]), fmt_pairs(r), r["verdict"], apart(r["clear"])])))
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
        text = json.dumps(json_report(per_topo, warmup), indent=1, sort_keys=True)
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
