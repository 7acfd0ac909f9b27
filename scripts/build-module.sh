#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds sched_lb_rs.ko out of tree against KDIR (default: the project's own
# build tree). Refuses, with a message that says what to do, a KDIR that is
# missing, not configured, not Rust-enabled, not carrying the series, not
# built yet, or built with another rustc.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KDIR=${KDIR:-$SLB_OUT}

check_kdir() {
	local k=$1
	[ -d "$k" ] || die "KDIR=$k does not exist (build one with 'make kernel', or point KDIR at a built Rust-enabled kernel tree)"
	# A build tree has .config; an installed headers package
	# (/lib/modules/KREL/build) only include/config/auto.conf, which
	# Kbuild reads for an external module, and which holds the same lines.
	local cfg=$k/.config
	[ -f "$cfg" ] || cfg=$k/include/config/auto.conf
	[ -f "$k/Makefile" ] && [ -f "$cfg" ] ||
		die "KDIR=$k is not a configured kernel tree (no Makefile, and no .config or include/config/auto.conf)"
	grep -qx 'CONFIG_RUST=y' "$cfg" ||
		die "KDIR=$k is not Rust-enabled (CONFIG_RUST is not set); rebuild it with CONFIG_RUST=y and LLVM=1"
	grep -qx 'CONFIG_SCHED_LB_HOOKS=y' "$cfg" ||
		die "KDIR=$k does not carry the sched-lb-rs series (CONFIG_SCHED_LB_HOOKS is not set): apply patches/ with 'git am' and enable it"
	if [ "$cfg" != "$k/.config" ] && [ ! -f "$k/rust/libkernel.rmeta" ]; then
		die "KDIR=$k is an installed headers tree without rust/libkernel.rmeta: install linux-sched-lb-headers-$(basename "$k" | sed 's/^linux-headers-//') beside linux-headers (make deb builds both)"
	fi
	[ -f "$k/rust/libkernel.rmeta" ] && [ -f "$k/Module.symvers" ] ||
		die "KDIR=$k is configured but not built (no rust/libkernel.rmeta or Module.symvers): run 'make' there first"
	local want have
	# Quoted in .config, bare in auto.conf.
	want=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$cfg")
	have=$(rustc --version)
	[ "$want" = "$have" ] ||
		die "KDIR=$k was built with '$want' but rustc here is '$have'; a Rust module must be built with its kernel's rustc"
}

for t in rustc clippy-driver make clang ld.lld; do need_tool "$t"; done
check_kdir "$KDIR"

stage "module build"
# Module.symvers of an O= build does not list the series' exports until the
# kernel is built; KBUILD_MODPOST_WARN stays unset so a missing one fails.
mkdir -p "$SLB_LOGS"
KDIR=$KDIR kmake_module "$SLB_ROOT" "$SLB_LOGS/module-build.log"
stage_end
log "module: $SLB_ROOT/sched_lb_rs.ko"
