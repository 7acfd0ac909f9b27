# SPDX-License-Identifier: GPL-2.0
#
# Checks /sys/kernel/debug/sched/lb_llc (the series' struct sched_lb_llc,
# shown in debugfs: one line per LLC, "<span> cores <cores> smt_weight <n>
# overloaded <cpus|->", or "<span> none") against the topology the kernel
# has attached now. The guest's stress step runs it after every CPU hotplug
# and cpuset partition change, each of which rebuilds the sched domains and
# so every struct sched_lb_llc.
#
# What must hold:
#  - each online CPU whose domains share an LLC (an attached level with
#    SD_SHARE_LLC) is in exactly one line, and that line's span is the span
#    of its highest such level (sd_llc, as highest_flag_domain() finds it);
#  - a CPU without such a level (offline, in an isolated partition, or the
#    only CPU of its root domain, whose levels all degenerate) is in none;
#  - the cores mask holds the first SMT sibling (within the span) of each
#    core, smt_weight is the most siblings a core has within the span, and
#    the STEAL mask holds only CPUs of its own span.
# The expected spans come from the kernel's own accounts of the domains:
# /proc/schedstat gives each level's span, the sched_verbose debugfs tree
# each level's flags, both lowest level first, as for_each_domain() walks.
#
# Arguments, in this order (FILENAME tells them apart):
#   /sys/devices/system/cpu/online
#   /sys/devices/system/cpu/cpu<N>/topology/thread_siblings_list  (online CPUs)
#   /proc/schedstat
#   /sys/kernel/debug/sched/domains/cpu<N>/domain<K>/flags
#   /sys/kernel/debug/sched/lb_llc                                (last)
# Prints one line per error, nothing when all hold.
#
# Runs under busybox awk in the guest and under mawk and gawk in
# tests/scripts.sh: POSIX awk only, and no name is used both as a scalar and
# as an array (mawk aborts on that, and an aborted check printed nothing).

# A "%*pbl" list ("0-3,6", or "-" for none) into the set a; returns its size.
function expand(list, a,    n, i, parts, ends, c, k, m) {
	split("", a)
	m = 0
	if (list == "-" || list == "")
		return 0
	n = split(list, parts, ",")
	for (i = 1; i <= n; i++) {
		k = split(parts[i], ends, "-")
		for (c = ends[1] + 0; c <= (k > 1 ? ends[2] + 0 : ends[1] + 0); c++) {
			a[c] = 1
			m++
		}
	}
	return m
}

# A set as "0,1,2": one spelling per set, so that spans compare as strings.
function canon(a,    c, top, out) {
	top = -1
	for (c in a)
		if (c + 0 > top)
			top = c + 0
	out = ""
	for (c = 0; c <= top; c++)
		if (c in a)
			out = out (out == "" ? "" : ",") c
	return out
}

# A "%*pb" mask ("f", "00000000,0000000f") as canon() spells its set.
function hexcanon(mask,    hex, i, d, b, cpu, a) {
	split("", a)
	hex = tolower(mask)
	gsub(/,/, "", hex)
	cpu = 0
	for (i = length(hex); i >= 1; i--) {
		d = index("0123456789abcdef", substr(hex, i, 1)) - 1
		if (d < 0)
			return "bad mask " mask
		for (b = 0; b < 4; b++) {
			if (d % 2 == 1)
				a[cpu] = 1
			d = int(d / 2)
			cpu++
		}
	}
	return canon(a)
}

FILENAME ~ /\/online$/ {
	expand($1, online)
	read_online = 1
	next
}

FILENAME ~ /thread_siblings_list$/ {
	cpu = FILENAME
	sub(/.*\/cpu/, "", cpu)
	sub(/\/.*/, "", cpu)
	expand($1, tsibs)
	sibs[cpu] = ""
	for (c in tsibs)
		sibs[cpu] = sibs[cpu] " " c
	next
}

FILENAME ~ /schedstat$/ {
	if ($1 == "version")
		read_schedstat = 1
	else if ($1 ~ /^cpu[0-9]+$/)
		stat_cpu = substr($1, 4) + 0
	else if ($1 ~ /^domain[0-9]+$/) {
		# Version 17 (6.14 on) prints the level's name before its mask.
		mask = ($2 ~ /^[0-9a-fA-F,]+$/) ? $2 : $3
		level_span[stat_cpu "." (substr($1, 7) + 0)] = hexcanon(mask)
	}
	next
}

FILENAME ~ /\/flags$/ {
	cpu = FILENAME
	sub(/.*\/domains\/cpu/, "", cpu)
	sub(/\/.*/, "", cpu)
	level = FILENAME
	sub(/.*\/domain/, "", level)
	sub(/\/.*/, "", level)
	flag_files++
	if ($0 ~ /(^| )SD_SHARE_LLC( |$)/ && (!(cpu in llc_level) || level + 0 > llc_level[cpu]))
		llc_level[cpu] = level + 0
	next
}

FILENAME ~ /lb_llc$/ {
	span = $1
	expand(span, sp)
	span_canon = canon(sp)
	for (c in sp) {
		if (!(c in online))
			print "llc " span ": cpu " c " is offline"
		if (c in line_of)
			print "llc " span ": cpu " c " also in " line_of[c]
		line_of[c] = span_canon
	}
	if ($2 == "none") {
		print "llc " span ": no sched_lb_llc"
		next
	}
	if ($2 != "cores" || $4 != "smt_weight" || $6 != "overloaded" || NF != 7) {
		print "llc " span ": cannot read \"" $0 "\""
		next
	}
	expand($3, co)
	expand($7, ov)
	split("", want)
	want_w = 1
	for (c in sp) {
		n = split(sibs[c], sib, " ")
		first = -1
		w = 0
		for (i = 1; i <= n; i++)
			if (sib[i] in sp) {
				w++
				if (first < 0 || sib[i] + 0 < first)
					first = sib[i] + 0
			}
		if (first < 0)
			print "llc " span ": no thread_siblings_list read for cpu " c
		else
			want[first] = 1
		if (w > want_w)
			want_w = w
	}
	for (c in want)
		if (!(c in co))
			print "llc " span ": core of cpu " c " missing from cores " $3
	for (c in co)
		if (!(c in want))
			print "llc " span ": cores " $3 " has " c ", not the first sibling of a core"
	if ($5 != want_w)
		print "llc " span ": smt_weight " $5 ", want " want_w
	for (c in ov)
		if (!(c in sp))
			print "llc " span ": STEAL mask holds cpu " c ", outside the span"
	next
}

{
	print "llc check: unexpected input " FILENAME
}

END {
	# Without these the checks below would pass on nothing.
	if (!read_online)
		print "llc check: no online CPU list read"
	if (!read_schedstat)
		print "llc check: /proc/schedstat not read"
	if (flag_files == 0)
		print "llc check: no sched domain flags read (is sched_verbose on the command line?)"
	for (c in online) {
		if (c in llc_level) {
			key = c "." llc_level[c]
			if (!(key in level_span))
				print "cpu " c ": /proc/schedstat has no domain" llc_level[c]
			else if (!(c in line_of))
				print "cpu " c ": in no lb_llc line, its LLC domain spans " level_span[key]
			else if (line_of[c] != level_span[key])
				print "cpu " c ": lb_llc span " line_of[c] ", its LLC domain spans " level_span[key]
		} else if (c in line_of)
			print "cpu " c ": in lb_llc span " line_of[c] ", but it has no LLC domain"
	}
}
