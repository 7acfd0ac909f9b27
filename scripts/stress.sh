#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make stress [SEED=n] [CYCLES=n] [KCSAN=1]: the seeded stress step of the
# guest (scripts/guest/init, step_stress) at full size: CYCLES (default
# 100) module swaps under hackbench, each with 3 random actions among flag
# flips, valid and invalid knob writes, CPU hotplug and cpuset partition
# changes, every domain rebuild checked against the topology, load in
# throttled nested cgroups first. The seed is printed; the same SEED and
# CYCLES repeat the run. On the test kernel (KASAN, UBSAN, lockdep) by
# default; KCSAN=1 builds and boots the KCSAN flavour instead (KASAN and
# KCSAN exclude each other). Passes only with no splat in the log, but
# for KCSAN reports of the known stock races in scripts/guest/kcsan-stock.
# CONTROL=1 is the control run for those: the same seeded load, hotplug,
# partitions and knob writes on the same kernel, without the module and
# with every flag at its default (plan "cgroups stress", no KUnit).
set -euo pipefail
case "${KCSAN:-}" in
"" | 0) export SLB_FLAVOR=${SLB_FLAVOR:-test} ;;
1) export SLB_FLAVOR=kcsan ;;
*)
	echo "[sched-lb-rs] ERROR: KCSAN=$KCSAN: expected 1 or nothing" >&2
	exit 1
	;;
esac
. "$(dirname "$0")/lib.sh"

case "${CONTROL:-}" in
"" | 0) control="" ;;
1) control=control ;;
*) die "CONTROL=$CONTROL: expected 1 or nothing" ;;
esac
seed=${SEED:-$(( $(date +%s) % 1000000 ))}
cycles=${CYCLES:-100}
[[ "$seed" =~ ^[0-9]+$ ]] || die "SEED=$seed: expected a non-negative integer"
[[ "$cycles" =~ ^[1-9][0-9]*$ ]] || die "CYCLES=$cycles: expected a positive integer"
again="make stress SEED=$seed CYCLES=$cycles${KCSAN:+ KCSAN=$KCSAN}${control:+ CONTROL=1}"
log "stress: seed $seed, $cycles cycles, $SLB_FLAVOR kernel${control:+, control run: no module, default flags} (repeat: $again)"

"$SLB_ROOT/scripts/prepare-kernel.sh"
"$SLB_ROOT/scripts/build-kernel.sh"
# A build of the module of its own per flavour: the one in the checkout
# belongs to the test kernel.
stage "module builds ($SLB_FLAVOR)"
mods="$SLB_CACHE/guest-modules/$SLB_FLAVOR"
module_variant "$mods" module
module_variant "$mods" nokunit SLB_KUNIT=n
stage_end
t0=$(date +%s)
plan="kunit cgroups stress unload" name=stress-$SLB_FLAVOR
[ -z "$control" ] || plan="cgroups stress" name=$name-control
SLB_KCSAN_CONTROL=${control:+1} \
	SLB_MODULE="$mods/module.ko" SLB_GUEST_MODULES="$mods/nokunit.ko" SLB_STRESS="$seed $cycles $control" \
	SLB_BOOT_TIMEOUT=${SLB_BOOT_TIMEOUT:-5400} \
	"$SLB_ROOT/scripts/boot.sh" "$name" "$plan" ||
	die "stress failed: seed $seed, $cycles cycles (repeat: $again)"
log "stress: seed $seed, $cycles cycles passed on the $SLB_FLAVOR kernel${control:+ (control run)} in $(( $(date +%s) - t0 )) s"
grep '^SLB: stress' "$SLB_LOGS/$name.console.log" >&2 || true
