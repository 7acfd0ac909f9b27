#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks that every lb_hooks call site is a direct call (issue 16).

Each hook's patch makes it a static call: the call site in fair.o is a
`call __SCT__sched_lb_<hook>`, which the kernel patches into a direct call
to the registered callback. This reads the disassembly of the object with
its relocations and fails when

  - a function that calls a hook also makes an indirect call or jump, or
    calls a retpoline thunk (`__x86_indirect_thunk_*`): the dispatch the
    static calls replaced, or a new one;
  - a hook of the list (kernel/sched/lb_hooks_list.h) has no call site
    outside the KUnit entry points (`sched_lb_test_*`, which ask the
    suite's own table through a pointer by design, and are skipped);
  - with --sites, the object objtool wrote the static call sites into
    (vmlinux.o when objtool runs at link time, as with X86_KERNEL_IBT)
    does not register every call site for inline patching: an unlisted
    site would stay a call to the trampoline, which jumps on.

  check_hook_calls.py --list LIST --obj fair.o [--sites vmlinux.o]
"""

import argparse
import collections
import re
import subprocess
import sys

SCT = re.compile(r"__SCT__sched_lb_(\w+)")
INDIRECT = re.compile(
    r"\b(call|jmp)q?\s+\*|__x86_indirect_(thunk|call_thunk|jump_thunk)_")
FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
RELOC = re.compile(r"^[0-9a-f]+: R_\w+\s")
# A call, or a jump (a tail call, conditional or not), to what follows.
BRANCH = re.compile(r"^[0-9a-f]+:\s+(call|j[a-z]+)q?\s")


def run(*cmd):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"check_hook_calls: {cmd[0]} not found (Debian package binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"check_hook_calls: {' '.join(cmd)} failed:\n{e.stderr}")


def hooks_of(path):
    try:
        text = open(path).read()
    except OSError as e:
        sys.exit(f"check_hook_calls: cannot read the hook list: {e}")
    # Both line kinds: SCHED_LB_HOOK(hook) and, for the hooks whose answers
    # the kernel checks, SCHED_LB_HOOK_CHECKED(hook).
    hooks = re.findall(r"^SCHED_LB_HOOK(?:_CHECKED)?\((\w+)\)", text, re.M)
    if not hooks:
        sys.exit(f"check_hook_calls: no SCHED_LB_HOOK(...) line in {path}")
    return hooks


def functions(obj):
    """{function: [disassembly lines with their relocations]}"""
    funcs, cur = collections.OrderedDict(), None
    for line in run("objdump", "-dr", "--no-show-raw-insn", obj).splitlines():
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
        elif cur is not None and line.strip():
            funcs[cur].append(line.strip())
    return funcs


def hook_sites(lines):
    """The hooks that @lines call or jump to through their static call.

    Only a relocation of a call or jump is a site: sched_lb_set_calls()
    also names each trampoline, to repoint it, and that is no call.
    """
    sites, insn = [], None
    for line in lines:
        if RELOC.match(line):
            m = SCT.search(line)
            if m and insn is not None and BRANCH.match(insn):
                sites.append(m.group(1))
        else:
            insn = line
    return sites


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", required=True, help="kernel/sched/lb_hooks_list.h")
    ap.add_argument("--obj", required=True, help="the object with the call sites (fair.o)")
    ap.add_argument("--sites", help="the object with .static_call_sites (vmlinux.o)")
    a = ap.parse_args()

    hooks = hooks_of(a.list)
    calls = collections.Counter()  # hook -> call sites in production code
    every = collections.Counter()  # hook -> call sites, KUnit's too
    bad = []
    for fn, lines in functions(a.obj).items():
        if fn.startswith("__SCT__"):
            continue
        sites = hook_sites(lines)
        every.update(sites)
        if not sites or fn.startswith("sched_lb_test_"):
            continue
        calls.update(sites)
        ind = [l for l in lines if INDIRECT.search(l)]
        if ind:
            bad.append(f"{fn} calls hook(s) {', '.join(sorted(set(sites)))} and makes "
                       f"{len(ind)} indirect call(s) or jump(s):\n    " + "\n    ".join(ind[:6]))
        print(f"{fn}: {len(sites)} hook call(s) ({', '.join(sorted(set(sites)))}), "
              f"{len(ind)} indirect")
    for h in hooks:
        if calls[h] == 0:
            bad.append(f"hook {h} has no static call site in {a.obj}")
    for h in sorted(set(calls) - set(hooks)):
        bad.append(f"{a.obj} calls __SCT__sched_lb_{h}, which {a.list} does not list")

    if a.sites:
        listed = collections.Counter()
        sec = None
        for line in run("readelf", "-rW", a.sites).splitlines():
            m = re.match(r"Relocation section '([^']+)'", line)
            if m:
                sec = m.group(1)
            elif sec == ".rela.static_call_sites":
                m = re.search(r"__SCK__sched_lb_(\w+)", line)
                if m:
                    listed[m.group(1)] += 1
        for h in hooks:
            if listed[h] != every[h]:
                bad.append(f"hook {h}: {every[h]} call site(s) in {a.obj}, {listed[h]} "
                           f"registered for inline patching in {a.sites}")
        print(f"static call sites registered in {a.sites}: {sum(listed.values())}")

    if bad:
        print("check_hook_calls: FAILED\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    print(f"check_hook_calls: {sum(calls.values())} call sites of {len(hooks)} hooks, "
          "all direct static calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
