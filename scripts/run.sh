#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: install what is missing, unpack Debian's linux-source-6.12,
# apply patches/ with git am, build the kernel (LLVM=1, CONFIG_RUST=y) and
# the Rust module, boot QEMU, load the module (KUnit runs), show and flip
# every flag in /sys/kernel/debug/sched/features, flip them under load,
# put each judged flag in shadow and then live and show what it decided
# (sched-lb-stat's tables), unload the module, and print a summary.
# With KDIR=/path, that tree and its bzImage are used instead of ours.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rm -f "$SLB_LOGS/stage-times"

"$SLB_ROOT/scripts/setup.sh"
if [ -z "${KDIR:-}" ]; then
	"$SLB_ROOT/scripts/prepare-kernel.sh"
	"$SLB_ROOT/scripts/build-kernel.sh"
else
	export SLB_KERNEL=${SLB_KERNEL:-$KDIR/arch/x86/boot/bzImage}
fi
"$SLB_ROOT/scripts/build-module.sh"
# The shadow step alone runs each judged flag in shadow and live under
# load (up to 20 s a window, 12 flags) and then the schedstat windows:
# about 17 minutes under TCG (1012 s on 2026-12-04), more than
# boot.sh's default limit.
SLB_BOOT_TIMEOUT=${SLB_BOOT_TIMEOUT:-2400} \
	"$SLB_ROOT/scripts/boot.sh" run "kunit flags domains knobs load shadow unload"

log_file="$SLB_LOGS/run.console.log"
echo
echo "==================== sched-lb-rs summary ===================="
sed -n 's/^SLB: boot /kernel:  /p' "$log_file"
ko="$SLB_ROOT/sched_lb_rs.ko"
printf 'module:  %s, vermagic "%s", sha256 %s, lb_hooks ABI %s\n' "$(basename "$ko")" \
	"$(modinfo -F vermagic "$ko" 2>/dev/null | sed 's/ *$//')" "$(sha256sum "$ko" | cut -c1-16)" \
	"$(sed -n 's/^.*policies registered (lb_hooks ABI \([0-9]*\)).*/\1/p' "$log_file" | head -1)"
sed -n 's/^SLB: module \(loaded.*\)/load:    \1/p' "$log_file"
grep -E '^\[..:..:..\] Testing complete' "$SLB_LOGS/run.kunit.txt" | sed 's/^\[..:..:..\] /KUnit:   /'
sed -n 's/^SLB: flag /flag:    /p; s/^SLB: unknown feature /debugfs: unknown feature /p' "$log_file"
sed -n 's/^SLB: domains /domains: /p' "$log_file" | head -4
sed -n 's/^SLB: \(shadow: .*\) ok$/decided: \1/p' "$log_file"
sed -n 's/^SLB: stat: /  /p' "$log_file"
sed -n 's/^SLB: \(module unloaded.*\)/unload:  \1/p' "$log_file"
sed -n 's/^.*sched_lb_rs: \([a-z_]*: [0-9]* calls.*\)/hooks:   \1/p' "$log_file"
echo "stage times (s):"
sed 's/^/  /' "$SLB_LOGS/stage-times"
echo "logs:    $SLB_LOGS"
