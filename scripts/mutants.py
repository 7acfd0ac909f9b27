#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The two halves of `make mutants` that cargo-mutants does not do.

hand OUT      Applies the hand mutants to a copy of the workspace, one at a
              time, and runs the same tests cargo-mutants runs (rust/policy
              and the differential tests of rust/cref) against each.
              cargo-mutants never mutates a method call, so `saturating_add`
              against `wrapping_add`, `min` against `max` and `div_ceil`
              against a floor division, the arithmetic this project's rules
              are made of, would otherwise go untested. Every such call in
              the rules (test modules excluded) is mutated, not a sample:
              the list derives from the source, so a new call is covered
              the day it is written. Writes OUT/outcomes.txt.
check OUT     Reads cargo-mutants' outcomes (OUT/outcomes.json) and the hand
              outcomes, prints caught / missed / timeout / unviable per file,
              and fails on any survivor that rust/policy/mutants-equivalent.txt
              does not list with a reason, and on any entry of that list that
              no longer names a surviving mutant (a stale excuse hides the
              next real gap).

Mutants are named without line and column, so the list survives edits that
only move code; a hand mutant's name carries its function and its source
line, so an edit of that line makes its entry stale and asks for a new look.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "rust" / "policy" / "src"
# SLB_MUTANTS_EQUIV: another list (tests/scripts.sh tests `check` on one).
EQUIV = Path(os.environ.get("SLB_MUTANTS_EQUIV")
             or ROOT / "rust" / "policy" / "mutants-equivalent.txt").resolve()
TEST_PACKAGES = ["sched-lb-policy", "sched-lb-cref"]

# Method call -> its mutant. One list; the generator and the docs use it.
SWAPS = {
    "saturating_add": "wrapping_add",
    "saturating_sub": "wrapping_sub",
    "saturating_mul": "wrapping_mul",
    "wrapping_add": "saturating_add",
    "wrapping_sub": "saturating_sub",
    "wrapping_mul": "saturating_mul",
    "min": "max",
    "max": "min",
    # For unsigned integers div_euclid is the floor division: the mutant
    # rounds down where the rule rounds up.
    "div_ceil": "div_euclid",
}
CALL = re.compile(r"\.(" + "|".join(sorted(SWAPS, key=len, reverse=True)) + r")\(")
FN = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:const\s+)?fn\s+([A-Za-z0-9_]+)")
LINE_COL = re.compile(r"^([^:]+\.rs):\d+:\d+: ")


def die(msg):
    print(f"[sched-lb-rs] ERROR: {msg}", file=sys.stderr)
    sys.exit(1)


def hand_mutants():
    """Yields (name, path, line index, column, old, new) for every call."""
    for path in sorted(POLICY.glob("*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text().splitlines(keepends=True)
        func = "(module)"
        for i, line in enumerate(lines):
            if line.strip() == "#[cfg(test)]":
                break
            m = FN.match(line)
            if m:
                func = m.group(1)
            code = line.split("//", 1)[0]
            seen = Counter()
            for c in CALL.finditer(code):
                old, new = c.group(1), SWAPS[c.group(1)]
                seen[old] += 1
                nth = f" (#{seen[old]})" if seen[old] > 1 else ""
                name = (f"{rel}: replace .{old}( with .{new}({nth} in {func}: "
                        f"`{line.strip()}`")
                yield name, path, i, c.start(1), old, new


def cargo_test(workdir, target, log):
    cmd = ["cargo", "test", "--profile", "mutants", "--locked"]
    for p in TEST_PACKAGES:
        cmd += ["-p", p]
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    build = subprocess.run(cmd + ["--no-run"], cwd=workdir, env=env,
                           stdout=log, stderr=subprocess.STDOUT)
    if build.returncode != 0:
        return "unviable"
    # Its own process group, killed whole on a timeout: killing cargo alone
    # left the test binary of a looping mutant running, and each such
    # orphan took a core from every later mutant (and timed more out).
    run = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log,
                           stderr=subprocess.STDOUT, start_new_session=True)
    try:
        rc = run.wait(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        return "timeout"
    return "missed" if rc == 0 else "caught"


def cmd_hand(out):
    out.mkdir(parents=True, exist_ok=True)
    (out / "log").mkdir(exist_ok=True)
    mutants = list(hand_mutants())
    only = os.environ.get("SLB_MUTANTS_RE")
    if only:
        # For iterating on one rule; `check` then sees the others missing.
        mutants = [m for m in mutants if re.search(only, m[0])]
    names = [m[0] for m in mutants]
    dup = [n for n, k in Counter(names).items() if k > 1]
    if dup:
        die(f"two hand mutants share a name (identical lines in one fn): {dup[0]}")
    target = ROOT / "target" / "hand-mutants"
    results = []
    with tempfile.TemporaryDirectory(prefix="slb-hand-mutants-") as tmp:
        work = Path(tmp)
        for f in ["Cargo.toml", "Cargo.lock", ".cargo", "kernel.version"]:
            src = ROOT / f
            if src.is_dir():
                shutil.copytree(src, work / f)
            elif src.exists():
                shutil.copy2(src, work / f)
        shutil.copytree(ROOT / "rust", work / "rust",
                        ignore=shutil.ignore_patterns("*.o", "*.ko", "target"))
        with open(out / "log" / "baseline.log", "w") as log:
            if cargo_test(work, target, log) != "missed":
                die(f"the unmutated tests fail; see {out}/log/baseline.log")
        for k, (name, path, i, col, old, new) in enumerate(mutants, 1):
            copy = work / path.relative_to(ROOT)
            orig = copy.read_text()
            lines = orig.splitlines(keepends=True)
            line = lines[i]
            assert line[col:col + len(old)] == old, name
            lines[i] = line[:col] + new + line[col + len(old):]
            copy.write_text("".join(lines))
            try:
                with open(out / "log" / f"{k:03d}.log", "w") as log:
                    log.write(f"*** {name}\n")
                    log.flush()
                    outcome = cargo_test(work, target, log)
            finally:
                copy.write_text(orig)
            print(f"{outcome:8} {name}", flush=True)
            results.append((outcome, name))
    with open(out / "outcomes.txt", "w") as f:
        for outcome, name in results:
            f.write(f"{outcome}\t{name}\n")


def strip_pos(name):
    return LINE_COL.sub(r"\1: ", name)


def read_equivalent():
    """The checked-in survivors: a mutant's name, then a `why:` line."""
    if not EQUIV.exists():
        die(f"{EQUIV} is missing")
    entries, name = Counter(), None
    for n, raw in enumerate(EQUIV.read_text().splitlines(), 1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("    why: "):
            if name is None or len(line[9:].strip()) < 10:
                die(f"{EQUIV.name}:{n}: a `why:` line must follow a mutant and say why")
            entries[name] += 1
            name = None
        elif line.startswith(" "):
            die(f"{EQUIV.name}:{n}: only `    why: ...` lines are indented")
        else:
            if name is not None:
                die(f"{EQUIV.name}:{n}: the mutant before this line has no `why:`")
            name = line
    if name is not None:
        die(f"{EQUIV.name}: the last mutant has no `why:`")
    return entries


def cmd_check(out):
    outcomes_json = out / "outcomes.json"
    hand_txt = out / "hand" / "outcomes.txt"
    for f in (outcomes_json, hand_txt):
        if not f.exists():
            die(f"{f} is missing: run 'make mutants' (scripts/mutants.sh)")
    data = json.loads(outcomes_json.read_text())
    found = len(json.loads((out / "mutants.json").read_text()))
    done = sum(data.get(k, 0) for k in ("caught", "missed", "timeout", "unviable"))
    if data.get("end_time") is None or done != found:
        die(f"{outcomes_json}: {done} of the {found} mutants found were "
            "tested; the cargo-mutants run did not finish")
    rows = []  # (file, kind, outcome, name)
    for o in data["outcomes"]:
        scen = o["scenario"]
        if not isinstance(scen, dict) or "Mutant" not in scen:
            continue
        m = scen["Mutant"]
        # summary: CaughtMutant, MissedMutant, Timeout, Unviable
        outcome = {"CaughtMutant": "caught", "MissedMutant": "missed",
                   "Timeout": "timeout", "Unviable": "unviable"}.get(o["summary"])
        if outcome is None:
            die(f"unknown cargo-mutants outcome {o['summary']!r}")
        name = strip_pos(m["name"]) if "name" in m else None
        if name is None:
            die("outcomes.json has no mutant name; cargo-mutants 27 is expected")
        rows.append((m["file"], "cargo-mutants", outcome, name))
    for line in hand_txt.read_text().splitlines():
        outcome, name = line.split("\t", 1)
        rows.append((name.split(":", 1)[0], "hand", outcome, name))

    listed = read_equivalent()
    survivors = Counter(r[3] for r in rows if r[2] == "missed")
    unlisted = survivors - listed
    stale = listed - survivors

    table = defaultdict(Counter)
    for file, kind, outcome, name in rows:
        key = outcome
        if outcome == "missed":
            key = "listed" if listed[name] > 0 else "MISSED"
        table[(file, kind)][key] += 1
    cols = ["caught", "listed", "MISSED", "timeout", "unviable"]
    print(f"{'file':38} {'by':13} " + " ".join(f"{c:>8}" for c in cols))
    total = Counter()
    for (file, kind) in sorted(table):
        c = table[(file, kind)]
        total.update(c)
        print(f"{file:38} {kind:13} " + " ".join(f"{c[k]:8d}" for k in cols))
    print(f"{'total':38} {'':13} " + " ".join(f"{total[k]:8d}" for k in cols))

    bad = False
    for name in sorted(unlisted.elements()):
        print(f"UNLISTED SURVIVOR: {name}")
        bad = True
    for name in sorted(stale.elements()):
        print(f"STALE ENTRY (not a survivor now): {name}")
        bad = True
    if bad:
        print(f"mutants: {sum(unlisted.values())} unlisted survivors, "
              f"{sum(stale.values())} stale entries in "
              f"{EQUIV}: kill each survivor with a test, "
              "or list it with the reason it is equivalent")
        sys.exit(1)
    print(f"mutants: {len(rows)} mutants, {total['caught']} caught, "
          f"{total['listed']} equivalent (listed), {total['timeout']} timeouts, "
          f"{total['unviable']} unviable, 0 unlisted survivors")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("hand", "check", "list"):
        die("usage: scripts/mutants.py hand|check OUT  (or: list -)")
    if sys.argv[1] == "list":
        for m in hand_mutants():
            print(m[0])
        return
    out = Path(sys.argv[2])
    {"hand": cmd_hand, "check": cmd_check}[sys.argv[1]](out)


if __name__ == "__main__":
    main()
