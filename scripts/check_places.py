#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every flag of kunit/flags has each place Documentation/adding-a-policy.rst
lists for a flag on an existing hook, or fails naming the flag and the place.

The places the compiler or a test already enforces (the hook table's flag
line, the hostile twin, the simulator's name and its default against the
series) are left to them; this checks the ones nothing else would notice:

  series    a SCHED_FEAT(FLAG, ...) line and a call site that reads it
            (sched_lb_feat(FLAG), or sched_feat(FLAG) where the shim
            gates on it), in patches/
  rule      a file of rust/policy/src that names FLAG and has tests
  kunit     a KUnit case (rust/kunit/*.rs, kunit/*.c) that names FLAG
  cref      rust/cref/tests/differential.rs names FLAG in its module doc,
            among what it compares or what has no C, with the reason
  sim       a mechanism of rust/schedsim/src/sim/ reads the flag's field
  bench     an experiment line of scripts/bench-plan.sh: "<id> flag FLAG ...",
            or with bases on in both states, "<id> flag BASE+FLAG ..."
  docs      a page of Documentation/policies/, README.md's table and
            Documentation/index.rst's table name FLAG

Usage: check_places.py [ROOT] (default: this checkout). A place a flag
lacks on purpose has no exception mechanism here: name the flag where the
place says why (as differential.rs does for a rule without C).
"""
import glob
import os
import re
import sys


def read(paths):
    """(path, text) of each file matched by the globs, relative to ROOT."""
    out = []
    for pattern in paths:
        for p in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(p, encoding="utf-8") as f:
                out.append((os.path.relpath(p, ROOT), f.read()))
    return out


def names(flag):
    return re.compile(r"\b" + re.escape(flag) + r"\b")


def any_file(files, pred):
    return any(pred(text) for _, text in files)


def field_of(flag, flags_rs):
    """The simulator's field of FLAG, from its flags! table line."""
    m = re.search(r"^\s*(\w+) = \"" + re.escape(flag) + r"\",", flags_rs, re.M)
    return m.group(1) if m else None


def module_doc(text):
    return "\n".join(l for l in text.splitlines() if l.startswith("//!"))


def main():
    flags = [l.strip() for l in open(os.path.join(ROOT, "kunit/flags"), encoding="utf-8")
             if l.strip()]
    if not flags:
        sys.exit("check_places: kunit/flags is empty")
    patches = read(["patches/[0-9][0-9][0-9][0-9]-*.patch"])
    rules = read(["rust/policy/src/*.rs"])
    kunit = read(["rust/kunit/*.rs", "kunit/*.c"])
    diff = read(["rust/cref/tests/differential.rs"])
    sim = read(["rust/schedsim/src/sim/*.rs"])
    flags_rs = "".join(t for _, t in read(["rust/schedsim/src/flags.rs"]))
    bench = read(["scripts/bench-plan.sh"])
    policies = read(["Documentation/policies/*.rst"])
    readme = read(["README.md"])
    index = read(["Documentation/index.rst"])
    missing = []
    for flag in flags:
        n = names(flag)
        field = field_of(flag, flags_rs)
        checks = [
            ("series: SCHED_FEAT() line",
             any_file(patches, lambda t: re.search(r"^\+SCHED_FEAT\(" + flag + r",", t, re.M))),
            ("series: a call site reading sched_lb_feat() or sched_feat()",
             any_file(patches, lambda t: re.search(
                 r"^\+(?!\s*/?\*).*\bsched_(lb_)?feat\(" + flag + r"\)", t, re.M))),
            ("rule: a rust/policy file naming it, with tests",
             any_file(rules, lambda t: n.search(t) and "#[test]" in t)),
            ("kunit: a case naming it", any_file(kunit, lambda t: n.search(t))),
            ("cref: differential.rs's module doc names it",
             any_file(diff, lambda t: n.search(module_doc(t)))),
            ("sim: a flags! line", field is not None),
            ("sim: a mechanism reading flags." + str(field),
             field is not None and any_file(sim, lambda t: re.search(r"\." + field + r"\b", t))),
            ("bench: an experiment '<id> flag " + flag + "'",
             any_file(bench, lambda t: re.search(r"\b\w+ flag (\w+\+)*" + flag + r" ", t))),
            ("docs: a page of Documentation/policies/", any_file(policies, lambda t: n.search(t))),
            ("docs: README.md's table", any_file(readme, lambda t: re.search(
                r"^\|.*`" + flag + r"`", t, re.M))),
            ("docs: index.rst's table", any_file(index, lambda t: re.search(
                r"``" + flag + r"``", t))),
        ]
        for place, ok in checks:
            if not ok:
                missing.append(f"{flag}: no {place}")
    if missing:
        print("\n".join(missing))
        sys.exit(f"check_places: {len(missing)} place(s) missing "
                 "(Documentation/adding-a-policy.rst lists them)")
    print(f"check_places: {len(flags)} flags, each in all "
          f"{len(checks)} places of Documentation/adding-a-policy.rst")


ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
main()
