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
import re
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as br  # noqa: E402

FLAG_WIDTH = 26


def summary(path):
    """bench_report's summary rows and chance line for the whole document,
    judged as bench_report judges a run (one Holm family)."""
    per_topo, _ = br.per_topo_from_json(path)
    rows = br.rows_of(per_topo)
    return br.summary_rows(rows, per_topo), br.chance_line(rows, per_topo)


def short_verdict(v):
    """A verdict in few words, for a mail's line width: the interval's
    reach and the power of "none seen", no p for "not after Holm" (the p
    column has them), the counter's name dropped from "inert here"."""
    m = re.match(r"none seen: interval reaches \+-(\d+)%; 80% power at \+-(\d+)%$", v)
    if m:
        return f"none seen (+-{m.group(1)}%, power +-{m.group(2)}%)"
    for head in ("not after Holm", "inert here"):
        if v.startswith(head):
            return head
    return v


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cover_results.py BENCH_JSON")
    rows, chance = summary(sys.argv[1])
    if not rows:
        sys.exit(f"{sys.argv[1]}: no experiment with a main metric")
    # The flag column is cut at FLAG_WIDTH: a set of four changes would
    # take the line past what a mail shows (the experiment names it).
    for r in rows:
        if len(r["flag"]) > FLAG_WIDTH:
            r["flag"] = r["flag"][:FLAG_WIDTH - 2] + ".."
    cols = [("topology", "topo"), ("experiment", "exp"), ("flag", "flag")]
    width = {k: max(len(h), *(len(r[k]) for r in rows)) for h, k in cols}
    head = "  ".join(f"{h:<{width[k]}}" for h, k in cols)
    print(f"  {head}  on/off  95% interval  p (Holm)         verdict")
    for r in rows:
        cells = "  ".join(f"{r[k]:<{width[k]}}" for _, k in cols)
        print(f"  {cells}  {br.fmt(r['ratio']):>6}  {br.fmt_ci(r['ci']):<12}  {r['p']:<15}  "
              + short_verdict(r["verdict"])
              + (f", {r['direction']}" if r["direction"] != "-" else ""))
    print()
    for line in textwrap.wrap(chance, 72):
        print(line)


if __name__ == "__main__":
    main()
