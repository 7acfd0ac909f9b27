#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The results section of the cover letter, from Documentation/results/bench.json.

scripts/export-series.sh puts its output where patches/cover-letter.in
says @RESULTS@, so the cover letter quotes the numbers of the bench run
that Documentation/results.rst reports, and no others. The verdicts are
bench_report.py's own (the same main metric, bootstrap interval and seed
per comparison), computed from the samples the JSON keeps, so each line
matches the verdict table of Documentation/results/generated.rst;
tests/scripts.sh checks that they do.

  cover_results.py BENCH_JSON
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as br  # noqa: E402


def runs_from_json(exp):
    """bench_report's run records of one experiment, rebuilt from the JSON's
    samples (run i of a state holds sample i of each metric it has). The
    derived *_per_s metrics are left out: the report computes them, the
    logs do not carry them."""
    runs = []
    for state, st in exp["states"].items():
        names = st["metrics"]
        mets = {k: v["samples"] for k, v in names.items()
                if not (k.endswith("_per_s") and k[:-len("_per_s")] in names)}
        n = max((len(v) for v in mets.values()), default=0)
        for i in range(n):
            m = {k: v[i] for k, v in mets.items() if i < len(v)}
            if exp.get("workload"):
                m["_kind"] = exp["workload"]
            runs.append({"id": None, "state": state, "rep": i + 1, "m": m})
    return runs


def summary(doc):
    """bench_report's summary rows and chance line for the whole document."""
    per_topo, all_rows = {}, []
    for topo, t in doc["topologies"].items():
        conf = {}
        for eid, exp in t["experiments"].items():
            conf[eid] = (exp.get("kind"), exp.get("flag"), exp.get("command"))
            runs = runs_from_json(exp)
            by_state = {"off": [r for r in runs if r["state"] == "off"],
                        "on": [r for r in runs if r["state"] == "on"]}
            all_rows += br.rows_for(topo, eid, by_state)
        per_topo[topo] = (t.get("domains"), [], conf)
    return br.summary_rows(all_rows, per_topo), br.chance_line(all_rows)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cover_results.py BENCH_JSON")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    if doc.get("format") != "sched-lb-rs bench 1":
        sys.exit(f"{sys.argv[1]}: not a sched-lb-rs bench document")
    rows, chance = summary(doc)
    if not rows:
        sys.exit(f"{sys.argv[1]}: no experiment with a main metric")
    cols = [("topology", "topo"), ("experiment", "exp"), ("flag", "flag"), ("metric", "metric")]
    width = {k: max(len(h), *(len(r[k]) for r in rows)) for h, k in cols}
    head = "  ".join(f"{h:<{width[k]}}" for h, k in cols)
    print(f"  {head}  on/off  95% interval  verdict")
    for r in rows:
        cells = "  ".join(f"{r[k]:<{width[k]}}" for _, k in cols)
        print(f"  {cells}  {br.fmt(r['ratio']):>6}  {br.fmt_ci(r['ci']):<12}  {r['verdict']}"
              + (f" ({r['direction']})" if r["direction"] != "-" else ""))
    print()
    print(chance)


if __name__ == "__main__":
    main()
