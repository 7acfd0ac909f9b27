#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-configs: the series in the configs a distribution or a
# developer would build, not only the test kernel's. For each config,
# kernel/sched/ is built twice, from the stock tree (tag sched-lb-base, a
# git worktree of the project's tree) and with the series, and:
#   - the series must add no compiler warning the stock tree does not give;
#   - with CONFIG_SCHED_LB_HOOKS=n, kernel/sched/fair.o must have the stock
#     object's size and symbol set, or the difference is printed and fails.
# The module itself needs CONFIG_RUST and a full kernel; make test builds
# it on the test kernel. Here CONFIG_RUST is off, so a config builds in
# minutes (per-directory builds, ccache).
#   hooks-off   the common fragment, SCHED_LB_HOOKS=n
#   no-debug    SCHED_DEBUG=n (which SCHED_LB_HOOKS needs: off too)
#   no-smt      SCHED_SMT=n, built for arm64: x86 selects SCHED_SMT whenever
#               SMP is on (def_bool y), arm64 lets it be turned off
#   offstack    CPUMASK_OFFSTACK=y, NR_CPUS=512 (cpumask_var_t allocated)
#   no-numa     NUMA=n
#   hooks-on    the common fragment, SCHED_LB_HOOKS=y (the reference)
#   debian      Debian's own 6.12 amd64 config (package linux-config-6.12),
#               SCHED_LB_HOOKS=y
# CONFIGS="a b" picks some. Results: .cache/configs/<name>/, a summary in
# .cache/logs/check-configs.txt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

all="hooks-on hooks-off no-debug no-smt offstack no-numa debian"
configs=${CONFIGS:-$all}
for c in $configs; do
	[[ " $all " == *" $c "* ]] || die "CONFIGS: unknown config '$c' (known: $all)"
done
for t in clang ld.lld make nm size; do need_tool "$t"; done
[ -d "$SLB_SRC/.git" ] || die "no kernel tree in $SLB_SRC: run scripts/prepare-kernel.sh"
git -C "$SLB_SRC" rev-parse -q --verify sched-lb-base >/dev/null ||
	die "$SLB_SRC has no sched-lb-base tag"

# The stock tree's path has the length of $SLB_SRC's (linux-src): the
# objects carry their source paths as strings (__FILE__), and the fair.o
# comparison below would otherwise differ by the name alone.
stock="$SLB_CACHE/linux-ref"
[ ${#stock} = ${#SLB_SRC} ] || die "stock tree $stock and $SLB_SRC need paths of one length"
stage "stock tree"
if [ ! -d "$stock" ]; then
	git -C "$SLB_SRC" worktree prune
	git -C "$SLB_SRC" worktree add -q --detach "$stock" sched-lb-base
fi
git -C "$stock" checkout -q --detach sched-lb-base

debian_config() {
	local pkg=linux-config-6.12 f
	f=$(ls /usr/src/$pkg/config.amd64_none_amd64.xz 2>/dev/null || true)
	if [ -z "$f" ]; then
		log "installing $pkg (Debian's kernel configs)"
		apt-get install -y -q "$pkg" >/dev/null ||
			die "cannot install $pkg: run 'make setup' or apt-get install $pkg"
		f=/usr/src/$pkg/config.amd64_none_amd64.xz
	fi
	[ -f "$f" ] || die "$pkg has no $f"
	xz -dc "$f"
}

# config NAME: the .config lines of a matrix entry.
config() {
	local base
	base=$(slb_fragment_norust)
	case $1 in
	hooks-on) echo "$base" ;;
	hooks-off) echo "$base" | sed 's/^CONFIG_SCHED_LB_HOOKS=y$/CONFIG_SCHED_LB_HOOKS=n/' ;;
	no-debug) echo "$base" | grep -v '^CONFIG_SCHED_LB_HOOKS=' | sed 's/^CONFIG_SCHED_DEBUG=y$/CONFIG_SCHED_DEBUG=n/' ;;
	no-smt) echo "$base" | sed 's/^CONFIG_SCHED_SMT=y$/CONFIG_SCHED_SMT=n/' ;;
	offstack) echo "$base" | sed 's/^CONFIG_NR_CPUS=.*/CONFIG_NR_CPUS=512/'
		printf '%s\n' CONFIG_DEBUG_PER_CPU_MAPS=y CONFIG_CPUMASK_OFFSTACK=y ;;
	no-numa) echo "$base" | grep -vE '^CONFIG_(X86_64_ACPI_NUMA|ACPI_NUMA)=' | sed 's/^CONFIG_NUMA=y$/CONFIG_NUMA=n/' ;;
	debian) debian_config | grep -vE '^CONFIG_(SCHED_LB_HOOKS|RUST)='
		printf '%s\n' CONFIG_SCHED_LB_HOOKS=y CONFIG_RUST=n CONFIG_DEBUG_INFO_NONE=y \
			CONFIG_DEBUG_INFO_DWARF5=n CONFIG_DEBUG_INFO_BTF=n CONFIG_SYSTEM_TRUSTED_KEYS=\"\" \
			CONFIG_SYSTEM_REVOCATION_KEYS=\"\" CONFIG_MODULE_SIG_KEY=\"\" ;;
	esac
}

# arch NAME: the architecture a matrix entry builds for.
arch() { case $1 in no-smt) echo arm64 ;; *) echo x86_64 ;; esac; }

# build NAME TREE OUT: olddefconfig, then kernel/sched/; warnings to OUT/warnings.
build() {
	local name=$1 tree=$2 out=$3 want line a
	a=$(arch "$name")
	mkdir -p "$out"
	config "$name" > "$out/.config"
	# The stock tree has no SCHED_LB_HOOKS: Kconfig drops it there.
	local keep='SCHED_DEBUG|SCHED_SMT|NUMA|CPUMASK_OFFSTACK|NR_CPUS'
	[ "$tree" = "$stock" ] || keep="SCHED_LB_HOOKS|$keep"
	want=$(grep -E "^CONFIG_($keep)=" "$out/.config" || true)
	(cd "$tree" && kmake ARCH="$a" O="$out" olddefconfig) > "$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log" >&2; die "$name: olddefconfig failed in $out"; }
	while read -r line; do
		[ -n "$line" ] || continue
		case "$line" in
		*=n) ! grep -q "^${line%=n}=" "$out/.config" ;;
		*) grep -qxF "$line" "$out/.config" ;;
		esac || die "$name: Kconfig did not keep $line (see $out/.config)"
	done <<< "$want"
	# W=0: the warnings every build prints; -k so one error shows them all.
	(cd "$tree" && kmake ARCH="$a" O="$out" kernel/sched/) >> "$out/build.log" 2>&1 ||
		{ grep -E 'error:' "$out/build.log" | head -20 >&2; die "$name: kernel/sched/ failed to build in $out"; }
	grep -E 'warning:' "$out/build.log" | sed -E "s|$tree/||g; s|:[0-9]+:[0-9]+:|:|" | sort -u > "$out/warnings" || true
}

summary="$SLB_LOGS/check-configs.txt"
mkdir -p "$SLB_LOGS"
: > "$summary"
bad=0
for c in $configs; do
	stage "config $c"
	d="$SLB_CACHE/configs/$c"
	build "$c" "$stock" "$d/stock"
	build "$c" "$SLB_SRC" "$d/series"
	new=$(comm -13 "$d/stock/warnings" "$d/series/warnings")
	hooks=$(sed -n 's/^CONFIG_SCHED_LB_HOOKS=\(.*\)/\1/p' "$d/series/.config")
	msg="$c: SCHED_LB_HOOKS=${hooks:-n}, $(wc -l < "$d/stock/warnings") stock warnings, $(echo -n "$new" | grep -c . || true) new"
	if [ -n "$new" ]; then
		echo "$new" >&2
		bad=1
	fi
	if [ "${hooks:-n}" != y ]; then
		# Without the hooks the series must compile to the stock object:
		# the same symbols, the same section sizes, or symbol sizes that
		# differ only as patches/fair-o-accepted lists and explains.
		sz() { size -A "$1" | awk '$1 ~ /^\.(text|data|rodata|bss)/ { s = s " " $1 "=" $2 } END { print s }'; }
		# An initcall's symbol carries the source line of its
		# *_initcall() (__initcall__kmod_fair__<counter>_<line>_<fn>):
		# a line added above it renames it with the code unchanged, so
		# the counter and the line are left out of the comparison.
		syms() {
			nm --defined-only "$1" | awk '{ print $2, $3 }' | grep -v ' \.L' |
				sed -E 's/^(. __initcall__kmod_[A-Za-z0-9_]+)__[0-9]+_[0-9]+_/\1__N_L_/' | sort
		}
		symsz() { nm -S --defined-only "$1" | awk 'NF == 4 { print $4, $2 }' | sort; }
		a="$d/stock/kernel/sched/fair.o" b="$d/series/kernel/sched/fair.o"
		if [ "$(sz "$a")" = "$(sz "$b")" ] && [ "$(syms "$a")" = "$(syms "$b")" ]; then
			msg="$msg, fair.o as stock ($(sz "$b" | tr -s ' ' | cut -c2-))"
		else
			# "config symbol stock-size series-size" of each changed size.
			changed=$(join <(symsz "$a") <(symsz "$b") | awk -v c="$c" '$2 != $3 { print c, $1, $2, $3 }')
			unexplained=$(grep -vxFf <(grep -v '^#' "$SLB_ROOT/patches/fair-o-accepted" | awk 'NF >= 4 { print $1, $2, $3, $4 }') <<< "$changed" || true)
			other=$(diff <(sz "$a" | tr ' ' '\n' | grep -v '^\.text=') <(sz "$b" | tr ' ' '\n' | grep -v '^\.text=') || true)
			if [ "$(syms "$a")" = "$(syms "$b")" ] && [ -z "$other" ] && [ -n "$changed" ] && [ -z "$unexplained" ]; then
				msg="$msg, fair.o as stock but for the sizes patches/fair-o-accepted explains ($(tr '\n' ';' <<< "$changed"))"
			else
				diff <(sz "$a" | tr ' ' '\n') <(sz "$b" | tr ' ' '\n') >&2 || true
				diff <(syms "$a") <(syms "$b") >&2 || true
				[ -z "$unexplained" ] || printf 'symbol sizes that differ, unexplained:\n%s\n' "$unexplained" >&2
				msg="$msg, fair.o DIFFERS from stock (above)"
				bad=1
			fi
		fi
	fi
	log "$msg"
	echo "$msg" >> "$summary"
done
stage_end
cat "$summary"
[ $bad = 0 ] || die "check-configs: the series adds warnings or changes fair.o where it must not (above)"
log "check-configs: $(wc -l < "$summary") configs, no new warnings"
