#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The results section of the cover letter, from Documentation/results/bench.json.

scripts/export-series.sh puts its output where patches/cover-letter.in
says @RESULTS@, so the cover letter quotes the numbers of the bench run
that Documentation/results.rst reports, and no others. The verdicts are
bench_report.py's own (the same main metric, paired interval and Holm
family), computed from the samples the JSON keeps, so each line matches
the verdict table of Documentation/results/generated.rst;
tests/scripts.sh checks that they do.

  cover_results.py BENCH_JSON
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as br  # noqa: E402


def summary(path):
    """bench_report's summary rows and chance line for the whole document,
    judged as bench_report judges a run (one Holm family)."""
    per_topo, _ = br.per_topo_from_json(path)
    rows = br.rows_of(per_topo)
    return br.summary_rows(rows, per_topo), br.chance_line(rows, per_topo)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cover_results.py BENCH_JSON")
    rows, chance = summary(sys.argv[1])
    if not rows:
        sys.exit(f"{sys.argv[1]}: no experiment with a main metric")
    cols = [("topology", "topo"), ("experiment", "exp"), ("flag", "flag"), ("metric", "metric")]
    width = {k: max(len(h), *(len(r[k]) for r in rows)) for h, k in cols}
    head = "  ".join(f"{h:<{width[k]}}" for h, k in cols)
    print(f"  {head}  on/off  95% interval  p (Holm)         verdict")
    for r in rows:
        cells = "  ".join(f"{r[k]:<{width[k]}}" for _, k in cols)
        print(f"  {cells}  {br.fmt(r['ratio']):>6}  {br.fmt_ci(r['ci']):<12}  {r['p']:<15}  {r['verdict']}"
              + (f" ({r['direction']})" if r["direction"] != "-" else ""))
    print()
    print(chance)


if __name__ == "__main__":
    main()
