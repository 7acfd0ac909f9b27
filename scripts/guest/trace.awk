# SPDX-License-Identifier: GPL-2.0
#
# make replay (issue 32): /sys/kernel/tracing/trace, as text, into the
# event lines of the "slb-trace 1" format that `schedsim replay` reads
# (rust/schedsim/src/replay/, where the whole format is described):
#
#   <ts_ns> <cpu> T <pid> <comm>                  names a pid: first sight,
#                                                 and again after exec
#   <ts_ns> <cpu> W <pid> <prev_cpu> <t|s|h>      sched_waking, waker's context
#   <ts_ns> <cpu> U <pid> <target_cpu>            sched_wakeup
#   <ts_ns> <cpu> N <pid> <target_cpu>            sched_wakeup_new
#   <ts_ns> <cpu> S <prev_pid> <R|state> <next_pid>  sched_switch
#   <ts_ns> <cpu> M <pid> <orig_cpu> <dest_cpu>   sched_migrate_task
#   <ts_ns> <cpu> F <parent_pid> <child_pid>      sched_process_fork
#   <ts_ns> <cpu> X <pid>                         sched_process_exit
#   <ts_ns> <cpu> B <function> <caller>           a function's entry (the
#                                                 function tracer's line,
#                                                 "<function> <-<caller>")
#
# A trace line is "<comm>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>:
# key=value ...". The comm of the running task may hold spaces and dashes,
# so the line is read from the "[cpu]" field on. The flags' third letter
# says the context: h (hardirq), H (hardirq in softirq), z or Z (NMI) and
# s (softirq); a sched_waking in any of them has no waker task.
#
# The timestamp is text, seconds and microseconds, joined as text: awk's
# numbers are doubles, and an uptime of days in ns is beyond what all
# awks print exactly with %d.
#
# Runs under busybox awk in the guest and under mawk and gawk in
# tests/scripts.sh: POSIX awk only.

# A process's name changes at exec (the shell's child becomes hackbench),
# so a pid is named again whenever an event shows it under a new name.
function named(pid, comm) {
	if (pid == 0 || ((pid in seen) && seen[pid] == comm))
		return
	seen[pid] = comm
	print ts " " cpu " T " pid " " comm
}

# The value of key k among the line's fields from "from" on ("" if none).
function val(k, from,    i, n) {
	n = length(k) + 1
	for (i = from; i <= NF; i++)
		if (substr($i, 1, n) == k "=")
			return substr($i, n + 1)
	return ""
}

# A CPU number as printed ("002" for target_cpu, "[012]" for the
# column) without its zeros. They go as text first: busybox awk, the
# guest's, reads a leading 0 as octal ("012" + 0 is 10 there), which put
# CPUs 10-15 of a 16-CPU guest on 8-13.
function num(s) {
	sub(/^0+/, "", s)
	if (s == "")
		return 0
	return s + 0
}

/^#/ { next }
{
	at = 0
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/) {
			at = i
			break
		}
	if (at == 0 || at + 3 > NF)
		next
	cpu = num(substr($at, 2, length($at) - 2))
	flags = $(at + 1)
	t = $(at + 2)
	sub(/:$/, "", t)
	dot = index(t, ".")
	if (dot == 0)
		next
	ts = substr(t, 1, dot - 1) substr(t, dot + 1) "000"
	sub(/^0+/, "", ts)
	if (ts == "")
		ts = "0"
	ev = $(at + 3)
	f = at + 4
	# The function tracer's line has no colon after the name, and its
	# caller after "<-".
	if (ev !~ /:$/ && substr($f, 1, 2) == "<-") {
		print ts " " cpu " B " ev " " substr($f, 3)
		next
	}
	sub(/:$/, "", ev)
	if (ev == "sched_switch") {
		pp = val("prev_pid", f)
		np = val("next_pid", f)
		st = val("prev_state", f)
		if (st ~ /^R/)
			st = "R"
		else
			st = substr(st, 1, 1)
		named(pp, val("prev_comm", f))
		named(np, val("next_comm", f))
		print ts " " cpu " S " pp " " st " " np
	} else if (ev == "sched_waking") {
		p = val("pid", f)
		named(p, val("comm", f))
		c = substr(flags, 3, 1)
		ctx = "t"
		if (c == "h" || c == "H" || c == "z" || c == "Z")
			ctx = "h"
		else if (c == "s")
			ctx = "s"
		print ts " " cpu " W " p " " num(val("target_cpu", f)) " " ctx
	} else if (ev == "sched_wakeup" || ev == "sched_wakeup_new") {
		p = val("pid", f)
		named(p, val("comm", f))
		print ts " " cpu " " (ev == "sched_wakeup" ? "U" : "N") " " p " " num(val("target_cpu", f))
	} else if (ev == "sched_migrate_task") {
		p = val("pid", f)
		named(p, val("comm", f))
		print ts " " cpu " M " p " " num(val("orig_cpu", f)) " " num(val("dest_cpu", f))
	} else if (ev == "sched_process_fork") {
		p = val("pid", f)
		c = val("child_pid", f)
		named(p, val("comm", f))
		named(c, val("child_comm", f))
		print ts " " cpu " F " p " " c
	} else if (ev == "sched_process_exit") {
		p = val("pid", f)
		named(p, val("comm", f))
		print ts " " cpu " X " p
	}
}
