#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make topologies`: the guest plan on layouts unlike the test guest's, so
# that no check holds only because of one topology. Each check derives its
# expectation from what the guest finds (nodes with CPUs for STEAL, the
# top domain for the per-domain knobs).
#   smt3     1 socket of 3 SMT2 cores: one LLC of 6 CPUs, SMT and MC
#            levels only (PKG degenerates), an odd number of cores for
#            the folded scan and STEAL's walk
#   numa3    3 sockets x 2 cores, one NUMA node each: more than 2 nodes
#            with CPUs, where STEAL must refuse by design
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan="kunit flags domains knobs load flagsites cgroups cycle stress hostile unload"
[ -f "$SLB_ROOT/sched_lb_rs.ko" ] || "$SLB_ROOT/scripts/build-module.sh"
stage "hostile module build"
module_variant "$SLB_CACHE/guest-modules" hostile SLB_HOSTILE=1
module_variant "$SLB_CACHE/guest-modules" nokunit SLB_KUNIT=n
stage_end
export SLB_GUEST_MODULES="$SLB_CACHE/guest-modules/hostile.ko $SLB_CACHE/guest-modules/nokunit.ko"
SLB_MIN_DOMAINS=2 "$SLB_ROOT/scripts/boot.sh" smt3 "$plan" "6,sockets=1,cores=3,threads=2"
SLB_MIN_DOMAINS=2 SLB_QEMU_EXTRA="$(qemu_numa 1G:0-1 512M:2-3 512M:4-5)" "$SLB_ROOT/scripts/boot.sh" numa3 "$plan" "6,sockets=3,cores=2,threads=1"
log "topologies: smt3 and numa3 passed"
