#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make shell [TOPOLOGY=smt2] [FLAVOR=plain]: boots the patched kernel in
# QEMU (TCG) with the module loaded, on one of the bench's named
# topologies (lib.sh's slb_topologies), and hands the console to the
# user: busybox, hackbench, the bench's workloads, sched-lb-stat, and a
# help text on entry (guest step "shell", scripts/guest/init).
#
# FLAVOR picks the kernel: plain (no sanitizers, what make bench times),
# test (lockdep, KASAN, UBSAN: make test's) or kcsan. poweroff in the
# guest, or Ctrl-a x, ends it; the terminal's settings are put back.
# SLB_KERNEL and SLB_MODULE, both set, boot that bzImage and module
# instead of building the flavour's (tests/shell.sh reuses make test's).
set -euo pipefail
export SLB_FLAVOR=${FLAVOR:-${SLB_FLAVOR:-plain}}
. "$(dirname "$0")/lib.sh"

topology=${TOPOLOGY:-smt2}
smp=$(topology_field "$topology" 2) || exit 1
extra=$(extra_of "$topology")
[ -t 0 ] && [ -t 1 ] ||
	die "make shell is interactive: run it in a terminal (stdin and stdout are not one)"
need_tool qemu-system-x86_64
if [ -n "${SLB_KERNEL:-}" ] && [ -n "${SLB_MODULE:-}" ]; then
	kernel=$SLB_KERNEL
	[ -f "$kernel" ] || die "SLB_KERNEL=$kernel: no such file"
	[ -f "$SLB_MODULE" ] || die "SLB_MODULE=$SLB_MODULE: no such file"
else
	unset SLB_KERNEL
	flavor_kernel_and_module
fi

stage "shell initramfs"
tools=$SLB_CACHE/shell-bench
rm -rf "$tools"
bench_tools "$tools"
echo "$topology" > "$tools/topology"
stty size > "$tools/ttysize"
initrd=$SLB_CACHE/shell.cpio
SLB_BENCH_DIR=$tools "$SLB_ROOT/scripts/mkinitramfs.sh" "$initrd" "kunit shell" "$(cat "$SLB_ROOT/kunit/flags")"
stage_end

log "booting $SLB_FLAVOR kernel on $topology ($(topology_field "$topology" 5)); poweroff or Ctrl-a x to leave"
saved_tty=$(stty -g)
trap 'stty "$saved_tty"' EXIT
# -nographic puts the serial console and QEMU's monitor on this terminal
# (Ctrl-a c switches, Ctrl-a x quits). loglevel=4: only warnings and worse
# reach the console while the user types; dmesg has the rest.
rc=0
qemu-system-x86_64 \
	-accel tcg,thread=${SLB_TCG_THREAD:-single} -cpu max -m 2G \
	-smp "$smp" $extra \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=4" \
	-nographic -no-reboot || rc=$?
[ $rc = 0 ] || die "QEMU exited with $rc"
log "shell: the guest is off"
