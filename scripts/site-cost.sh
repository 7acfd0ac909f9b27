#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make site-cost: instructions per call of each hooked call site in fair.c,
# stock (the hook's static key off) and hooked (static call, the module's
# conversion and rule), counted in the guest (issue 16).
#
# Boots the plain kernel (no sanitizers: they would be what is counted)
# RUNS times (5) under QEMU with -icount shift=0, where the guest's clock,
# and with it the TSC that get_cycles() reads, advances by one per guest
# instruction executed. The KUnit case site_cost of the module (C suite,
# kunit/sched_lb_shim_test.c) runs each site N times both ways with
# interrupts off and logs the counts; scripts/site_cost.py subtracts the
# empty loop and writes the table, with the spread over the runs, to
# .cache/site-cost/ and Documentation/results/site_cost.rst.
#
# Knobs: SLB_SITE_COST_RUNS (5), SLB_KERNEL (a bzImage to use instead of
# building the plain kernel).
set -euo pipefail
export SLB_FLAVOR=${SLB_FLAVOR:-plain}
. "$(dirname "$0")/lib.sh"

runs=${SLB_SITE_COST_RUNS:-5}
icount_runs SLB_SITE_COST_RUNS "$runs"
out=$SLB_CACHE/site-cost
need_tool qemu-system-x86_64
need_tool python3
flavor_kernel_and_module
rm -rf "$out"
mkdir -p "$out"
# One vCPU: under -icount every vCPU advances the one virtual clock, so a
# second one's ticks would be counted with the loop.
SLB_BOOT_TIMEOUT=${SLB_BOOT_TIMEOUT:-900} icount_boots site-cost "kunit unload" 1 "$runs" "$out"
stage "site cost report"
python3 "$SLB_ROOT/scripts/site_cost.py" --md "$out/site_cost.md" \
	--rst "$SLB_ROOT/Documentation/results/site_cost.rst" "${icount_logs[@]}"
stage_end
cat "$out/site_cost.md"
