#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# What became of each idle CPU's tick in traces that logged it (make
# replay with SLB_REPLAY_FUNCS: "<ts> <cpu> B sched_tick
# update_process_times" lines; schedsim's trace format,
# rust/schedsim/src/replay/trace.rs). The numbers behind
# cost::TCG_IDLE_TICK_TURN (Documentation/schedsim.rst, "An idle vCPU's
# tick comes on its turn").
#
# Usage: replay_ticks.py TRACE...
#
# The guest is CONFIG_HZ_PERIODIC at 250 Hz, its ticks aligned across
# CPUs: the tick instants are the trace's own, the start of the 4 ms
# phase where its sched_tick() entries bunch. At each tick instant every
# CPU that runs nothing and has nothing queued is put in one class:
#   pend     a wakeup is on its way to it (its W seen, its U not yet),
#   waiting  some CPU has a task waiting behind a running one,
#   none     neither;
# then its first sched_tick() before the next tick instant says what
# became of that tick: "idle" (taken with the CPU still free), "busy"
# (taken after a task came), or "lost" (none in the period: merged into
# the next). A trace that logged only the periodic balance
# (sched_balance_softirq) is read the same way with it in sched_tick's
# place, which also counts as lost the ticks whose CPU had no balance
# due (rq->next_balance: an idle MC level balanced every other tick once
# its interval doubled), and says so.
#
# Where a trace of smt2 (SMT siblings CPU and CPU ^ 1) also logged
# sched_balance_softirq(), sched_balance_rq() and
# sched_balance_find_src_rq(), a second table: the free CPUs' periodic
# balances by whether the SMT sibling had a task waiting, and how often
# their first level (SMT) found a busiest group.
import collections
import sys

TICK_NS = 4_000_000
BIN_NS = 20_000
TICK_BALANCE = "sched_balance_softirq"
TICK = "sched_tick"


def read(path):
    """The event and call lines of a trace, in time order (stable: a call
    keeps its place among events of its timestamp)."""
    evs = []
    cpus = 0
    topology = None
    with open(path) as f:
        for line in f:
            if line.startswith("# topology"):
                w = line.split()
                topology = w[2] if len(w) > 2 else None
                if "cpus" in w:
                    cpus = int(w[w.index("cpus") + 1])
                continue
            if line.startswith("#") or not line.strip():
                continue
            evs.append(line.split())
    evs.sort(key=lambda f: int(f[0]))
    if cpus == 0:
        sys.exit(f"replay_ticks.py: {path}: no '# topology NAME cpus N' line")
    return evs, cpus, topology


def tick_phase(evs, tick):
    """The tick instants' phase in the 4 ms period: the start of the
    densest bunch of the tick function's entries."""
    h = collections.Counter((int(f[0]) % TICK_NS) // BIN_NS
                            for f in evs if f[2] == "B" and f[3] == tick)
    if not h:
        return None
    k = max(h, key=h.get)
    bins = TICK_NS // BIN_NS
    for _ in range(bins):
        if h[(k - 1) % bins] <= h[k] * 0.3:
            break
        k = (k - 1) % bins
    return k * BIN_NS


class State:
    """Each CPU's runnable tasks (running or queued) and the wakeups on
    their way, as the record shows them."""

    def __init__(self, cpus):
        self.nr = [0] * cpus
        self.on = {}
        self.headed = {}

    def put(self, pid, cpu):
        old = self.on.get(pid)
        if old is not None:
            self.nr[old] -= 1
        if cpu is None:
            self.on.pop(pid, None)
        else:
            self.on[pid] = cpu
            self.nr[cpu] += 1

    def pending(self, cpu):
        return any(c == cpu for c in self.headed.values())

    def free(self, cpu):
        return self.nr[cpu] == 0 and not self.pending(cpu)

    def event(self, f):
        cpu, code = int(f[1]), f[2]
        if code == "W":
            pid = int(f[3])
            if pid not in self.on:
                self.headed[pid] = int(f[4])
        elif code == "M":
            pid = int(f[3])
            if pid in self.headed:
                self.headed[pid] = int(f[5])
            if pid in self.on:
                self.put(pid, int(f[5]))
        elif code in "UN":
            pid = int(f[3])
            self.headed.pop(pid, None)
            self.put(pid, int(f[4]))
        elif code == "S":
            prev, state, nxt = int(f[3]), f[4], int(f[5])
            if prev:
                self.put(prev, cpu if state == "R" else None)
            if nxt:
                self.put(nxt, cpu)
                self.headed.pop(nxt, None)
        elif code == "X":
            pid = int(f[3])
            self.put(pid, None)
            self.headed.pop(pid, None)


def ticks(path, out, smt):
    """Counts one trace's ticks into out and its free CPUs' balances
    into smt; returns the function that stood for the tick, or None."""
    evs, cpus, topology = read(path)
    siblings = topology == "smt2"
    tick = TICK if any(f[2] == "B" and f[3] == TICK for f in evs) else TICK_BALANCE
    phase = tick_phase(evs, tick)
    if phase is None:
        return None
    st = State(cpus)
    period = None
    watch = {}
    # The free CPU whose periodic balance is under way: its SMT sibling
    # had a task waiting, and whether its first level found a group.
    bal = {}

    def close_balance(cpu):
        b = bal.pop(cpu, None)
        if b is not None and b[1] is not None:
            smt[(b[0], b[1])] += 1

    for f in evs:
        ts, cpu = int(f[0]), int(f[1])
        p = (ts - phase) // TICK_NS
        if period is None:
            period = p
        while period < p:
            period += 1
            for cls in watch.values():
                out[(cls, "lost")] += 1
            waiting = any(n >= 2 for n in st.nr)
            watch = {c: ("pend" if st.pending(c) else "waiting" if waiting else "none")
                     for c in range(cpus) if st.nr[c] == 0}
        if f[2] != "B":
            st.event(f)
            continue
        fn = f[3]
        if fn == tick and cpu in watch:
            out[(watch.pop(cpu), "idle" if st.free(cpu) else "busy")] += 1
        if fn == TICK_BALANCE and siblings:
            close_balance(cpu)
            if st.free(cpu):
                bal[cpu] = [st.nr[cpu ^ 1] >= 2 if cpu ^ 1 < cpus else False, None, 0]
        elif cpu in bal and len(f) > 4:
            b = bal[cpu]
            if fn == "sched_balance_rq" and f[4] == "sched_balance_domains":
                b[2] += 1
                if b[2] == 1:
                    b[1] = False
                else:
                    close_balance(cpu)
            elif fn == "sched_balance_find_src_rq" and b[2] == 1:
                b[1] = True
    for cpu in list(bal):
        close_balance(cpu)
    return tick


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: replay_ticks.py TRACE...")
    out = collections.Counter()
    smt = collections.Counter()
    used = collections.Counter()
    for path in argv[1:]:
        tick = ticks(path, out, smt)
        if tick:
            used[tick] += 1
    if not used:
        sys.exit("replay_ticks.py: no tick (B sched_tick) or periodic balance "
                 "(B sched_balance_softirq) in these traces")
    by = ", ".join(f"{n} by {fn}()" for fn, n in sorted(used.items()))
    print(f"ticks of CPUs with nothing running or queued, {sum(used.values())} traces ({by}):")
    if used[TICK_BALANCE]:
        print("  (by sched_balance_softirq(): a tick with no balance due counts as lost)")
    for cls in ("none", "waiting", "pend"):
        n = sum(out[(cls, h)] for h in ("idle", "busy", "lost"))
        shares = "  ".join(f"{h} {100 * out[(cls, h)] / max(n, 1):.0f}%" for h in ("idle", "busy", "lost"))
        print(f"  {cls:8s} {n:6d}  {shares}")
    if smt:
        print("free CPUs' periodic balances, by their SMT sibling:")
        for ov in (False, True):
            n = smt[(ov, True)] + smt[(ov, False)]
            what = "a task waiting" if ov else "none waiting  "
            print(f"  {what} {n:6d}  SMT found a busiest group {smt[(ov, True)]}")


if __name__ == "__main__":
    main(sys.argv)
