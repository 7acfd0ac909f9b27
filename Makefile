# SPDX-License-Identifier: GPL-2.0
#
# sched-lb-rs entry points. The two a newcomer needs:
#   make run    patch, build and boot Debian's 6.12 with the Rust module
#   make test   every test, from cargo to KUnit in QEMU (what CI runs)
# KDIR=/path uses another built, Rust-enabled kernel tree that carries the
# series instead of the project's own (make run/test then skip the kernel).
#
# Kbuild reads ./Kbuild, not this file, when it builds the module.

SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help setup kernel module run shell bench-here deb check-deb test topologies stress tcg-check mutants bench bench-hooks site-cost sched-cost rule-cost schedsim calibrate replay schedsim-bench \
	cargo-test script-test checkpatch check-series check-configs check-apply check-b4 fuzz fmt clean distclean

help:
	@echo "make run           main job: setup, patch, build, boot, KUnit, flags"
	@echo "make test          all tests (cargo, scripts, checkpatch, KUnit in QEMU)"
	@echo "make shell         a shell in the patched kernel with the module loaded (TOPOLOGY=smt2 FLAVOR=plain)"
	@echo "make setup         install packages, rust-src, bindgen-cli"
	@echo "make kernel        unpack linux-source-6.12, git am patches/, build"
	@echo "make module        build sched_lb_rs.ko against KDIR"
	@echo "make check-series  build the kernel after each patch (bisectability; HOOKS=n: kernel/sched/ with the hooks off)"
	@echo "make check-apply   git am the series onto the pinned and the oldest archived linux-source-6.12 (VERSIONS=...)"
	@echo "make check-b4      b4 prep --check on the series (checkpatch as b4 runs it)"
	@echo "make check-configs kernel/sched/ in 7 configs, stock vs series (CONFIGS=...)"
	@echo "make topologies    the guest plan on two unusual layouts (smt3, numa3)"
	@echo "make stress        seeded module swaps, hotplug, partitions (SEED= CYCLES= KCSAN=1 CONTROL=1)"
	@echo "make tcg-check     multi-threaded TCG: code patching under load, boot after boot, per QEMU (SLB_TCG_QEMUS= REPS=)"
	@echo "make mutants       mutation testing of rust/policy, a gate (~70 min)"
	@echo "make fuzz          10^7 inputs per hook across the C/Rust boundary (~2 min)"
	@echo "make bench         A/B of every flag in QEMU, tables and plots (QUICK=1: minutes)"
	@echo "make deb           Debian packages of the patched kernel, for a real machine (DEB_CONFIG=/boot/config-...)"
	@echo "make check-deb     make deb's packages unpacked: the module built against their headers, their kernel booted"
	@echo "make bench-here    make bench on this machine, booted into the series (QUICK=1 TOPOLOGIES= EXPERIMENTS=)"
	@echo "make bench-hooks   what loading the module costs, hook by hook (smt2, ~10 min)"
	@echo "make site-cost     instructions per call of each hooked call site, stock and hooked (QEMU -icount)"
	@echo "make sched-cost    instructions per wakeup and per newidle entry, each flag and upstream's (QEMU -icount)"
	@echo "make rule-cost     instructions per call of each Rust rule against the 6.12 C (callgrind, both overflow modes)"
	@echo "make schedsim      the simulator's seed experiments, plots in Documentation/schedsim"
	@echo "make calibrate     the simulator against the guest's make bench numbers (GUEST=Documentation/results/bench.json)"
	@echo "make replay        traced guest runs of make bench's plan replayed into the simulator (QUICK=1, SLB_REPLAY_*)"
	@echo "make schedsim-bench  the simulator's speed budget (224 CPUs, 10 s simulated)"

setup:
	@scripts/setup.sh

kernel:
	@scripts/prepare-kernel.sh
	@scripts/build-kernel.sh

module:
	@scripts/build-module.sh

run:
	@scripts/run.sh

test:
	@scripts/test.sh

topologies:
	@scripts/topologies.sh

stress:
	@SEED=$(SEED) CYCLES=$(CYCLES) KCSAN=$(KCSAN) CONTROL=$(CONTROL) scripts/stress.sh

tcg-check:
	@REPS=$(REPS) scripts/tcg-check.sh

mutants:
	@scripts/mutants.sh

bench:
	@QUICK=$(QUICK) scripts/bench.sh

bench-hooks:
	@HOOKS=1 scripts/bench.sh

site-cost:
	@scripts/site-cost.sh

# Debian packages of the patched kernel (DEB_CONFIG= a distribution's
# config under the plain fragment), and the check that they boot and take
# the module built against their headers.
deb:
	@DEB_CONFIG="$(DEB_CONFIG)" scripts/deb.sh

check-deb:
	@scripts/deb.sh --check

# make bench on this machine, booted into the series with the module
# loaded (scripts/slb-bench; as root): QUICK=1, TOPOLOGIES=, EXPERIMENTS=.
bench-here:
	@scripts/slb-bench $(if $(filter 1,$(QUICK)),-q) $(if $(TOPOLOGIES),-t "$(TOPOLOGIES)") \
		$(if $(EXPERIMENTS),-e '$(EXPERIMENTS)') -o .cache/bench-here

# An interactive guest: TOPOLOGY (smt2, ...) and FLAVOR (plain, test, kcsan).
shell:
	@TOPOLOGY="$(TOPOLOGY)" FLAVOR="$(FLAVOR)" scripts/shell.sh

sched-cost:
	@scripts/sched-cost.sh

rule-cost:
	@scripts/rule-cost.sh --check .cache/rule-cost.txt

schedsim:
	cargo run --release --locked -p schedsim -- experiment all --plot-dir Documentation/schedsim

# GUEST: the bench.json to compare with; the models were fitted to
# rust/schedsim/tests/data/guest-bench-2026-12-02.json.
GUEST ?= Documentation/results/bench.json
calibrate:
	cargo run --release --locked -p schedsim -- calibrate --guest $(GUEST) \
		--out Documentation/schedsim/calibration.rst --svg Documentation/schedsim

# Each bench experiment run once a state with the scheduler's trace events
# on, and what its tasks did replayed into the simulator (issue 32).
replay:
	@QUICK=$(QUICK) scripts/replay.sh

schedsim-bench:
	cargo run --release --locked -p schedsim -- bench

# rust/policy/tests/boundary_fuzz.rs at full count (cargo test runs 20 000).
fuzz:
	SLB_FUZZ_ITERS=$${SLB_FUZZ_ITERS:-10000000} cargo test --locked --profile fuzz \
		-p sched-lb-policy --test boundary_fuzz -- --nocapture

cargo-test:
	cargo test --workspace --locked

script-test:
	@tests/scripts.sh

checkpatch:
	@scripts/checkpatch.sh

check-apply:
	@VERSIONS="$(VERSIONS)" scripts/check-apply.sh

check-b4:
	@scripts/check-b4.sh

check-configs:
	@CONFIGS="$(CONFIGS)" scripts/check-configs.sh

check-series:
	@HOOKS=$(HOOKS) scripts/check-series.sh

fmt:
	cargo fmt --all
	rustfmt --edition 2021 rust/sched_lb.rs

clean:
	rm -f *.ko *.o *.mod *.mod.c modules.order Module.symvers .*.cmd
	rm -f rust/*.o rust/.*.cmd rust/*.d kunit/*.o kunit/.*.cmd

distclean: clean
	rm -rf .cache target
