#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make sched-cost: the scheduler's own cost per call, exactly, for each
# flag and for what upstream shipped instead: instructions per wakeup in
# select_task_rq_fair() (stock 6.12 with SIS_UTIL, without it, SIS_PROP,
# SIS_FOLD: the SIS RFC's argument was the scan's cost) and per newidle
# entry in sched_balance_newidle() (stock, without NI_RANDOM,
# NEWIDLE_BACKOFF, STEAL, which runs inside it). Issue 31.
#
# Boots the plain kernel RUNS times (5) under QEMU -icount shift=0,sleep=off,
# where the guest's clock advances one nanosecond per instruction executed
# (on any vCPU: TCG runs them in turn on one host thread). The guest step
# schedcost (scripts/guest/init) runs hackbench in each state below while
# the function_graph tracer times every call of the two functions at depth
# 1, and prints each one's quartiles. A call interrupted by another vCPU's
# turn counts that vCPU's instructions too; the median is robust to those.
# Only the timed functions are patched (set_ftrace_filter), so their
# callees pay nothing; each call pays the tracer's entry and exit, which
# a pass over idle_cpu() (a dozen instructions) measures first and the
# table subtracts (net column).
# What this cannot show: parallel speed-up, cache effects, SMT sharing
# (TCG has none of them); it counts instructions, not time.
#
# scripts/sched_cost.py writes .cache/sched-cost/sched_cost.md and
# Documentation/results/sched_cost.rst: per function and state the median
# over the boots of the per-boot medians, the spread (max - min) over the
# boots, the calls timed and the ratio to stock.
#
# Knobs: SLB_SCHED_COST_RUNS (5), SLB_KERNEL (a bzImage to use instead of
# building the plain kernel).
set -euo pipefail
export SLB_FLAVOR=${SLB_FLAVOR:-plain}
. "$(dirname "$0")/lib.sh"

runs=${SLB_SCHED_COST_RUNS:-5}
icount_runs SLB_SCHED_COST_RUNS "$runs"
out=$SLB_CACHE/sched-cost
need_tool qemu-system-x86_64
need_tool python3
flavor_kernel_and_module
rm -rf "$out"
mkdir -p "$out/guest"
# The states: a name and the flags set from the boot defaults. One list;
# sched_cost.py takes the first as the reference.
cat > "$out/guest/cost_states" <<'STATES'
stock
no_sis_util NO_SIS_UTIL
sis_prop SIS_PROP
sis_prop_no_util NO_SIS_UTIL SIS_PROP
sis_fold SIS_FOLD
no_ni_random NO_NI_RANDOM
newidle_backoff NEWIDLE_BACKOFF
steal STEAL
STATES
echo "select_task_rq_fair sched_balance_newidle" > "$out/guest/cost_funcs"
# The tracer's own cost per call: a function of a few instructions, timed
# in a pass of its own (so it is not patched while the others are timed).
echo "idle_cpu" > "$out/guest/cost_baseline"
# Two hackbench groups on smt2's 8 vCPUs: wakeups that scan, CPUs that go
# newly idle, and tasks to steal.
echo "/bin/hackbench -g 2 -l 100" > "$out/guest/cost_cmd"
SLB_BENCH_DIR="$out/guest" SLB_BOOT_TIMEOUT=${SLB_BOOT_TIMEOUT:-1800} \
	icount_boots sched-cost schedcost "8,sockets=2,cores=2,threads=2" "$runs" "$out"
stage "sched cost report"
python3 "$SLB_ROOT/scripts/sched_cost.py" --md "$out/sched_cost.md" \
	--rst "$SLB_ROOT/Documentation/results/sched_cost.rst" "${icount_logs[@]}"
stage_end
cat "$out/sched_cost.md"
