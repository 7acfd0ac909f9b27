#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make shell, used the way a person uses it: in a tmux pane, keys typed
# with send-keys, the screen read with capture-pane. Boots the kernel and
# module that make test built (SLB_KERNEL, SLB_MODULE) on TOPOLOGY
# (default x5472), then: wait for the prompt, turn STEAL on and read the
# flag back, run hackbench, read STEAL's hook calls in sched-lb-stat (which
# hackbench with STEAL on must have made), power off, and check that the
# terminal's settings are what they were before; then the same end with
# Ctrl-a x from a guest on smt4.
# Prints "ok - ..." per check and ends with "shell: N passed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib.sh"
need_tool tmux
: "${SLB_KERNEL:?SLB_KERNEL: the bzImage to boot}" "${SLB_MODULE:?SLB_MODULE: the module to load}"
topology=${TOPOLOGY:-x5472}
boot_s=${SLB_SHELL_BOOT_S:-600}
tmp=$(mktemp -d)
session=slb-shell-$$
trap 'tmux kill-session -t "$session" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0

check() {
	echo "ok - $1"
	pass=$((pass + 1))
}
broken() {
	echo "not ok - $1" >&2
	echo "--- the pane:" >&2
	tmux capture-pane -p -S -60 -t "$session" >&2 2>/dev/null || cat "$tmp/pane" >&2
	die "make shell: $1"
}
# until PATTERN SECONDS: waits until the pane shows a line matching
# PATTERN (an extended regex), polling once a second.
until_pane() {
	local i
	for ((i = 0; i < $2; i++)); do
		tmux capture-pane -p -S -200 -t "$session" > "$tmp/pane" 2>/dev/null || return 1
		grep -qE "$1" "$tmp/pane" && return 0
		sleep 1
	done
	return 1
}
# type LINE: types LINE and Enter into the guest's shell.
type_line() { tmux send-keys -t "$session" -l "$1" && tmux send-keys -t "$session" Enter; }

# start TOPOLOGY: a pane that runs make shell between two snapshots of
# its terminal's settings, then says how make shell exited.
start() {
	tmux kill-session -t "$session" 2>/dev/null
	rm -f "$tmp/tty.before" "$tmp/tty.after"
	tmux new-session -d -s "$session" -x 120 -y 40 \
		"stty -g > '$tmp/tty.before'; SLB_KERNEL='$SLB_KERNEL' SLB_MODULE='$SLB_MODULE' \
		TOPOLOGY=$1 FLAVOR=${FLAVOR:-test} make -s -C '$root' shell; echo \"SHELL-RC=\$?\"; \
		stty -g > '$tmp/tty.after'; sleep 3600"
}
# ended HOW: make shell exited 0 and left the terminal as it found it.
ended() {
	until_pane '^SHELL-RC=' 120 || broken "$1 did not end the guest"
	grep -qx 'SHELL-RC=0' "$tmp/pane" || broken "after $1 make shell exited with $(grep -o 'SHELL-RC=.*' "$tmp/pane")"
	for i in 1 2 3 4 5; do [ -s "$tmp/tty.after" ] && break; sleep 1; done
	cmp -s "$tmp/tty.before" "$tmp/tty.after" ||
		broken "after $1 the terminal's settings changed: $(cat "$tmp/tty.before") -> $(cat "$tmp/tty.after" 2>/dev/null)"
	check "make shell: $1 ends it, make shell exits 0, the terminal's settings as they were"
}

start "$topology"

until_pane '^slb:/# ?$' "$boot_s" || broken "no shell prompt within ${boot_s}s"
grep -q "topology $topology" "$tmp/pane" && grep -q 'module sched_lb_rs: loaded' "$tmp/pane" ||
	broken "the help text does not name topology $topology and the module loaded"
check "make shell: prompt, help text names $topology, module loaded"

type_line 'echo STEAL > /sys/kernel/debug/sched/features; tr " " "\n" < /sys/kernel/debug/sched/features | grep -x STEAL | sed s/^/FLAG-/'
until_pane '^FLAG-STEAL$' 30 || broken "STEAL written to sched/features did not read back"
check "make shell: STEAL turned on and read back"

type_line 'hackbench -g 2 -l 20 && echo HB-DONE'
until_pane '^HB-DONE$' 300 || broken "hackbench did not finish"
grep -qE '^Time: [0-9.]+' "$tmp/pane" || broken "hackbench printed no time"
check "make shell: hackbench ran"

# sched-lb-stat's flag table: FLAG SET MODE CALLS DIFFERS.
type_line 'sched-lb-stat | awk '\''$1 == "STEAL" { print "STEAL-CALLS=" $4 }'\'''
until_pane '^STEAL-CALLS=[0-9]+$' 30 || broken "sched-lb-stat printed no STEAL row"
calls=$(sed -n 's/^STEAL-CALLS=\([0-9]*\)$/\1/p' "$tmp/pane" | tail -1)
[ "$calls" -gt 0 ] || broken "STEAL on under hackbench, but sched-lb-stat counts $calls calls of its hook"
check "make shell: sched-lb-stat counts $calls STEAL hook calls"

type_line 'poweroff'
ended poweroff

# Ctrl-a x, QEMU's own way out, on another topology.
start smt4
until_pane '^slb:/# ?$' "$boot_s" || broken "no shell prompt on smt4 within ${boot_s}s"
grep -q "topology smt4" "$tmp/pane" || broken "the help text does not name topology smt4"
tmux send-keys -t "$session" C-a x
ended "Ctrl-a x"
echo "shell: $pass passed"
