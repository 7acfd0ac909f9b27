#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make replay: a traced bench guest's console log into trace files.

Usage: replay_extract.py CONSOLE_LOG CONF TOPOLOGY CPUS OUT_DIR

CONF is the guest's plan (scripts/bench-plan.sh's experiments_of: "ID
KIND FLAG COMMAND..." a line). For every traced run (scripts/bench-runner.sh
with a "trace" file in its bench dir) writes OUT_DIR/ID.STATE.rREP.trace in
the "slb-trace 1" format `schedsim replay` reads: a header of "#" lines
(topology, experiment, the features the run had, the workload's process
names, the module's counters over the run and whether they took in the
trace's dump, the run's balance counters per domain level and idle type
from /proc/schedstat where they did not, the events lost, the run's
wall time), then the guest's
event lines as scripts/guest/trace.awk wrote them (sent gzipped in
base64, "SLB-TRACE-GZ " lines, or plain, "SLB-TRACE " lines). A kernel message the console printed into the
middle of a base64 line (the guest's shell and printk share the serial
port) is cut out again: the line's start is the run of base64 before it,
its rest the bare base64 line after it, and every line but the last has
the width of the trace's first. When a CPU's buffer filled (the guest keeps a run's
start), the trace is cut where the first such CPU's record ends, and
duration_ns is that window, the run's wall time run_ns. Prints one line
per file written; exits 1 when the log holds no traced run, or a run's
trace is cut short (no SLB-TRACE-END) or does not decode.
"""

import base64
import gzip
import os
import re
import sys

BEGIN = re.compile(r"^SLB-BENCH-BEGIN (\S+) (on|off) (\d+)$")
END = re.compile(r"^SLB-BENCH-END (\S+) (on|off) (\d+) t0=([0-9.]+) t1=([0-9.]+) ")
CTR = re.compile(r"^SLB-BENCH-CTR (\S+) (\d+)$")
TBEGIN = re.compile(r"^SLB-TRACE-BEGIN (\S+) (on|off) (\d+)$")
TEND = re.compile(r"^SLB-TRACE-END (\S+) (on|off) (\d+)$")
META = re.compile(r"^SLB-TRACE-META (\S+) ?(.*)$")
DOMAIN = re.compile(r"^SLB-BENCH-DOMAIN domain(\d+) (\S+)$")
# /proc/schedstat version 16 (scripts/bench_report.py reads it the same
# way): a domain line is "domainN <mask>", then for each idle type the
# eight balance counters below.
SCHEDSTAT = re.compile(r"^(version|timestamp|cpu\d+|domain\d+) ")
LB_FIELDS = ["lb_count", "lb_balanced", "lb_failed", "lb_imbalance",
             "lb_gained", "lb_hot_gained", "lb_nobusyq", "lb_nobusyg"]
IDLE_TYPES = ["busy", "idle", "newidle"]
DROPPED = re.compile(r"^SLB-TRACE-META dropped (\d+) (\d+)$")
EVENT = "SLB-TRACE "
GZ = "SLB-TRACE-GZ "
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")
B64_RUN = re.compile(r"^[A-Za-z0-9+/=]*")


def mend(trace, rest):
    """Closes a base64 line a console message broke: its start is
    trace["broken"] (the base64 run before the message, perhaps with the
    message's first letters), `rest` the bare line the console went on
    with ("" when the message came at the line's end). Returns an error,
    or None."""
    head = trace.pop("broken")
    width = trace["width"]
    keep = width - len(rest)
    if width == 0 or keep < 0 or keep > len(head):
        return f"a console message broke line {len(trace['gz']) + 1} of its base64 where it cannot be mended"
    trace["gz"].append(head[:keep] + rest)
    return None


def balance_counters(dump, levels):
    """The balance counters of one /proc/schedstat dump, summed over
    CPUs per domain level and idle type: {"lb_count_idle@NUMA": n}; None
    when a domain line is not whole (a console message broke it), so that
    no count of a run is compared that is not its own."""
    tot = {}
    need = len(IDLE_TYPES) * len(LB_FIELDS)
    for line in dump:
        f = line.split()
        if not f[0].startswith("domain"):
            continue
        idx = int(f[0][len("domain"):])
        level = levels.get(idx, f"domain{idx}")
        if len(f) < 2 + need or not all(x.isdigit() for x in f[2:2 + need]):
            return None
        vals = [int(x) for x in f[2:]]
        for t, tname in enumerate(IDLE_TYPES):
            for i, name in enumerate(LB_FIELDS):
                k = f"{name}_{tname}@{level}"
                tot[k] = tot.get(k, 0) + vals[t * len(LB_FIELDS) + i]
    return tot


def seconds_to_ns(text):
    """/proc/uptime's "123.45" as ns, in integers (no float rounding)."""
    whole, _, frac = text.partition(".")
    return int(whole) * 1_000_000_000 + int((frac + "000000000")[:9])


def read_conf(path):
    plan = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and not fields[0].startswith("#"):
                plan[fields[0]] = (fields[1], fields[2])
    return plan


def main(argv):
    if len(argv) != 6:
        sys.exit("usage: replay_extract.py CONSOLE_LOG CONF TOPOLOGY CPUS OUT_DIR")
    log, conf, topology, cpus, out = argv[1:]
    if not cpus.isdigit():
        sys.exit(f"replay_extract.py: CPUS '{cpus}' is not a number")
    plan = read_conf(conf)
    os.makedirs(out, exist_ok=True)
    # A run is BEGIN, its counters, schedstat, schedstat again, its
    # counters again, the trace (between SLB-TRACE-BEGIN and -END), END:
    # the first block of counters is before the run, the last after it,
    # and the file is written at END, when both and the wall time are
    # known. In the recordings before the third of 2026-12-06 the trace
    # came before the second block, whose counters then took in the
    # dump's seconds too: the header's "counters" line says which.
    run = None
    blocks = []
    # The run's /proc/schedstat dumps before its trace (both, in the new
    # order), and the domain levels' names (bench_run's
    # SLB-BENCH-DOMAIN lines, cpu0's: the topologies are symmetric).
    dumps = []
    levels = {}
    last_was_ctr = False
    trace = None
    done = None
    written = 0
    with open(log, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = CTR.match(line)
            if m and run is not None and trace is None:
                if not last_was_ctr:
                    blocks.append({})
                blocks[-1][m.group(1)] = int(m.group(2))
                last_was_ctr = True
                continue
            last_was_ctr = False
            m = DOMAIN.match(line)
            if m:
                levels[int(m.group(1))] = m.group(2)
                continue
            if run is not None and trace is None and done is None and SCHEDSTAT.match(line):
                if line.startswith("version "):
                    dumps.append([])
                elif dumps:
                    dumps[-1].append(line)
                continue
            m = BEGIN.match(line)
            if m:
                run, blocks, done, dumps = m.groups(), [], None, []
                continue
            m = END.match(line)
            if m and run is not None:
                if done is not None and done["key"] == run:
                    ns = seconds_to_ns(m.group(5)) - seconds_to_ns(m.group(4))
                    before = blocks[0] if blocks else {}
                    after = blocks[-1] if len(blocks) > 1 else {}
                    balance = None
                    # Both dumps before the trace's: the run's alone. A
                    # run without the module (hook_overhead off) has no
                    # module counters to say so, and its schedstat is
                    # the kernel's all the same.
                    if len(dumps) == 2:
                        b0, b1 = (balance_counters(d, levels) for d in dumps)
                        if b0 is not None and b1 is not None:
                            balance = {k: v - b0.get(k, 0) for k, v in b1.items()}
                    write_trace(out, topology, cpus, plan, done, before, after, ns, balance)
                    written += 1
                run, done = None, None
                continue
            m = TBEGIN.match(line)
            if m:
                trace = {"key": m.groups(), "meta": {}, "events": [], "gz": [], "dropped": {}, "width": 0,
                         # Both blocks of counters before the dump: they
                         # cover the run alone, not the dump's seconds.
                         "counters": "run" if len(blocks) > 1 else "run+dump"}
                continue
            if trace is None:
                continue
            if "broken" in trace:
                rest = line.strip() if B64.match(line.strip()) else ""
                err = mend(trace, rest)
                if err:
                    sys.exit(f"{log}: the trace of {' '.join(trace['key'])} does not decode: {err}")
                if rest:
                    continue
            m = TEND.match(line)
            if m:
                if m.groups() != trace["key"]:
                    sys.exit(f"{log}: trace of {trace['key']} ended as {m.groups()}")
                if trace["gz"]:
                    try:
                        text = gzip.decompress(base64.b64decode("".join(trace["gz"])))
                    except (ValueError, OSError, EOFError) as e:
                        sys.exit(f"{log}: the trace of {' '.join(trace['key'])} does not decode: {e}")
                    trace["events"] += text.decode(errors="replace").splitlines()
                done, trace = trace, None
                continue
            m = DROPPED.match(line)
            if m:
                trace["dropped"][int(m.group(1))] = int(m.group(2))
                continue
            m = META.match(line)
            if m:
                trace["meta"][m.group(1)] = m.group(2).strip()
                continue
            if line.startswith(GZ):
                payload = line[len(GZ):].strip()
                if B64.match(payload) and len(payload) <= (trace["width"] or len(payload)):
                    trace["width"] = trace["width"] or len(payload)
                    trace["gz"].append(payload)
                else:
                    trace["broken"] = B64_RUN.match(payload).group(0)
            elif line.startswith(EVENT):
                trace["events"].append(line[len(EVENT):])
    if trace is not None:
        sys.exit(f"{log}: the trace of {' '.join(trace['key'])} has no SLB-TRACE-END (guest cut short?)")
    if written == 0:
        sys.exit(f"{log}: no traced run (was the bench dir's 'trace' file there?)")


def cut_window(events, dropped):
    """The events up to where every CPU's record is whole.

    A CPU whose buffer filled dropped its later events; past its last
    kept event the trace no longer says what that CPU did. Returns the
    events up to the earliest such last event, and that span in ns (None
    when no CPU dropped anything).
    """
    if not dropped:
        return events, None
    last = {}
    first = None
    for e in events:
        f = e.split(" ", 2)
        if len(f) < 2 or not f[0].isdigit() or not f[1].isdigit():
            continue
        ts, cpu = int(f[0]), int(f[1])
        first = ts if first is None else min(first, ts)
        last[cpu] = max(last.get(cpu, ts), ts)
    ends = [last[c] for c in dropped if c in last]
    if not ends or first is None:
        return events, None
    cut = min(ends)
    kept = [e for e in events if not e.split(" ", 1)[0].isdigit() or int(e.split(" ", 1)[0]) <= cut]
    return kept, cut - first


def write_trace(out, topology, cpus, plan, trace, before, after, duration_ns, balance):
    exp, state, rep = trace["key"]
    kind, flag = plan.get(exp, ("?", "?"))
    events, window_ns = cut_window(trace["events"], trace["dropped"])
    path = os.path.join(out, f"{exp}.{state}.r{rep}.trace")
    with open(path, "w") as f:
        f.write("# slb-trace 1\n")
        f.write(f"# topology {topology} cpus {cpus}\n")
        f.write(f"# experiment {exp} state {state} kind {kind} flag {flag}\n")
        f.write(f"# features {trace['meta'].get('features', '')}\n")
        f.write(f"# comm {trace['meta'].get('comm', '')}\n")
        for name in sorted(after):
            if name in before:
                f.write(f"# ctr {name} {after[name] - before[name]}\n")
        if after:
            f.write(f"# counters {trace['counters']}\n")
        # The run's balance counters (schedstat), per level and idle type:
        # only where both dumps came before the dump of the trace.
        for name in sorted(balance or {}):
            f.write(f"# schedstat {name} {balance[name]}\n")
        f.write(f"# lost {trace['meta'].get('lost', '?')}\n")
        if "wakee_flips" in trace["meta"]:
            f.write(f"# wakee_flips {trace['meta']['wakee_flips']}\n")
        if window_ns is not None:
            # The run outlasted the buffer: what follows is its start.
            f.write(f"# dropped {sum(trace['dropped'].values())}\n")
            f.write(f"# run_ns {duration_ns}\n")
            duration_ns = window_ns
        f.write(f"# duration_ns {duration_ns}\n")
        for e in events:
            f.write(e + "\n")
    cut = f" (the first {window_ns / 1e6:.0f} ms: buffers filled)" if window_ns is not None else ""
    print(f"{path}: {len(events)} events{cut}")


if __name__ == "__main__":
    main(sys.argv)
