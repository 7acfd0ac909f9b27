#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots the test kernel with the module in QEMU (TCG), runs a guest plan
# and checks what the guest printed:
#   - KUnit: the KTAP the module's suites print at insmod, parsed by the
#     kernel's own tools/testing/kunit/kunit.py;
#   - every "SLB: FAIL" line the guest init printed;
#   - any BUG:, WARNING:, Oops or lockdep report in the console log.
# Usage: boot.sh NAME "PLAN" [QEMU -smp spec]
# SLB_QEMU_EXTRA adds QEMU arguments (the benchmarks' NUMA nodes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

name=$1 plan=$2
smp=${3:-${SLB_SMP:-8,sockets=2,cores=2,threads=2}}
# The flags of the series that the guest round-trips; one per policy.
flags=${SLB_FLAGS:-$(cat "$SLB_ROOT/kunit/flags")}
kernel=${SLB_KERNEL:-$SLB_OUT/arch/x86/boot/bzImage}
timeout_s=${SLB_BOOT_TIMEOUT:-600}
# SLB_QEMU: another QEMU binary (make tcg-check compares two).
qemu=${SLB_QEMU:-qemu-system-x86_64}

need_tool "$qemu"
[ -f "$kernel" ] || die "no kernel at $kernel: run 'make kernel'"
mkdir -p "$SLB_LOGS"
log_file="$SLB_LOGS/$name.console.log"
initrd="$SLB_CACHE/$name.cpio"

stage "guest $name"
"$SLB_ROOT/scripts/mkinitramfs.sh" "$initrd" "$plan" "$flags"
# TCG only: KVM guests hang after the BIOS on these machines. Single-threaded
# TCG by default: with multi-threaded TCG one boot in about 15 hit
# "Oops: int3" at a static-key site just patched by text_poke_bp() on
# another vCPU (see Documentation/testing.rst); SLB_TCG_THREAD=multi opts in.
# log_buf_len: the guest checks one log line per check site for the whole
# boot (printk_deferred_once, shared by a site and its KUnit entry point),
# so the ring buffer must hold every line of it; the default 128 KB
# wrapped once the console reached about 110 KB (stop 38).
rc=0
timeout --foreground "$timeout_s" "$qemu" \
	-accel tcg,thread=${SLB_TCG_THREAD:-single} -cpu max -m 2G \
	-smp "$smp" ${SLB_QEMU_EXTRA:-} \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic sched_verbose loglevel=7 log_buf_len=4M" \
	-nographic -no-reboot -monitor none -serial stdio \
	< /dev/null > "$log_file" 2>&1 || rc=$?
tr -d '\r' < "$log_file" > "$log_file.tmp" && mv "$log_file.tmp" "$log_file"
stage_end
if [ $rc = 124 ]; then
	# CI keeps only this script's output, not the log: say where the guest
	# was (each step's time, the step it never finished, any FAIL line), what
	# the step watchdog dumped, any splat, and the console's last lines.
	grep -a '^SLB: ' "$log_file" | tail -40 >&2 || true
	last=$(grep -a '^SLB: step .* started' "$log_file" | tail -1 | sed 's/^SLB: step \([a-z]*\).*/\1/' || true)
	[ -z "$last" ] || grep -qa "^SLB: step $last took" "$log_file" ||
		warn "guest $name: step '$last' did not finish"
	"$SLB_ROOT/scripts/splats.sh" "$log_file" "guest $name" || true
	warn "guest $name: the console's last 30 lines:"
	tail -30 "$log_file" >&2
	die "guest $name timed out after ${timeout_s}s (log: $log_file)"
fi
[ $rc = 0 ] || die "QEMU exited with $rc (log: $log_file)"
grep -q '^SLB: done' "$log_file" || die "guest $name did not finish its plan (log: $log_file)"

# Each reason the run fails is kept and said again last: CI keeps only the
# tail of this script's output, and the guest's own lines come before it.
why=()
if grep -q '^SLB: FAIL' "$log_file"; then
	grep '^SLB: FAIL' "$log_file" >&2
	why+=("$(grep -c '^SLB: FAIL' "$log_file") FAIL line(s), the first: $(grep -m1 '^SLB: FAIL' "$log_file")")
fi
# Every step of the plan this host sent must have its verdict: the guest's
# runner says "verdict STEP ok" only for a step that said something ok and
# nothing failed (scripts/guest/init), so a step that returned early, or
# one the plan named but the guest never ran, fails here.
for step in $plan; do
	v=$(grep -a "^SLB: verdict $step " "$log_file" | tail -1 || true)
	if [ "$v" != "SLB: verdict $step ok" ]; then
		warn "guest $name: step '$step': ${v:-no verdict}"
		why+=("step '$step': ${v:-no verdict}")
	fi
done
# Kernel splats (scripts/splats.sh: which reports are excused, and why).
splats=$("$SLB_ROOT/scripts/splats.sh" "$log_file" "guest $name" 2>&1) ||
	why+=("a kernel splat, the first: $(grep -m1 -vE '^\[sched-lb-rs\]|^ *[0-9]+ ' <<< "$splats" || true)")
[ -z "$splats" ] || printf '%s\n' "$splats" >&2

# Every load of the module runs its KUnit suites again (cycle, hostile):
# a failing case anywhere in the log fails the run, not only in the first.
if grep -naE '^[[:space:]]*not ok [0-9]' "$log_file" >&2; then
	warn "guest $name: a KUnit case failed (above)"
	why+=("a KUnit case failed: $(grep -m1 -aE '^[[:space:]]*not ok [0-9]' "$log_file" | sed 's/^[[:space:]]*//')")
fi
case " $plan " in
*" kunit "*)
	# Our own begin/end markers bound the KTAP of the module's suites; the
	# built-in executor prints an empty "1..0" document at boot, before them.
	ktap="$SLB_LOGS/$name.ktap"
	sed -n '/SLB: kunit begin/,/SLB: kunit end/p' "$log_file" > "$ktap"
	if ! python3 "$SLB_SRC/tools/testing/kunit/kunit.py" parse "$ktap" | tee "$SLB_LOGS/$name.kunit.txt"; then
		why+=("kunit.py failed the KTAP of the first load (see $SLB_LOGS/$name.kunit.txt)")
	fi
	;;
esac
grep '^SLB: ' "$log_file" | grep -v '^SLB: FAIL' || true
[ ${#why[@]} = 0 ] || {
	for w in "${why[@]}"; do warn "guest $name failed: $w"; done
	die "guest $name failed (log: $log_file)"
}
log "guest $name passed"
