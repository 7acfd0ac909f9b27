#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make mutants: mutation testing of the rules in rust/policy, as a gate.
#   1. cargo-mutants (installed here if missing) mutates rust/policy and
#      runs the policy's tests and the differential tests of rust/cref
#      against every mutant (.cargo/mutants.toml, profile `mutants`).
#   2. scripts/mutants.py hand: the method-call mutants cargo-mutants does
#      not make (saturating/wrapping, min/max, div_ceil).
#   3. scripts/mutants.py check: per-file counts, and a failure on any
#      survivor that rust/policy/mutants-equivalent.txt does not explain,
#      or any entry there that no longer survives.
# About 70 minutes on 2 cores, so not part of make test (CI has 90 minutes
# for everything); run it before changing a rule is called done.
# SLB_MUTANTS_OUT=dir keeps the results elsewhere (default target/mutants.out).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=${SLB_MUTANTS_OUT:-$SLB_ROOT/target/mutants.out}
cd "$SLB_ROOT"

stage "cargo-mutants install"
need_tool cargo
if ! cargo mutants --version >/dev/null 2>&1; then
	log "cargo-mutants is missing: cargo install --locked cargo-mutants@27.1.0"
	cargo install --locked cargo-mutants@27.1.0
fi
cargo mutants --version

stage "cargo-mutants"
# The exit status says whether mutants survived; check decides if that is
# a failure. Only a failed baseline (4) or a usage error (1) stops here.
rc=0
cargo mutants -j "$SLB_JOBS" --no-shuffle -o "$(dirname "$out")" --cargo-arg=--locked \
	--test-package sched-lb-policy --test-package sched-lb-cref || rc=$?
[ "$(basename "$out")" = mutants.out ] ||
	die "SLB_MUTANTS_OUT must end in mutants.out (cargo-mutants names it)"
case $rc in
0 | 2 | 3) ;;
*) die "cargo mutants failed (exit $rc); see $out/debug.log" ;;
esac

stage "hand mutants"
python3 "$SLB_ROOT/scripts/mutants.py" hand "$out/hand"

stage "survivors"
python3 "$SLB_ROOT/scripts/mutants.py" check "$out"
stage_end
