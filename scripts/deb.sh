#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb [DEB_CONFIG=/boot/config-...]: Debian packages of the patched
# kernel for a real machine (Documentation/real-hardware.rst), into
# .cache/debs/:
#   linux-image-KREL, linux-headers-KREL   the kernel's own bindeb-pkg
#   linux-sched-lb-headers-KREL  what the module needs beside
#                                linux-headers: 6.12's headers package has
#                                no rust/ (the crates' .rmeta, the macros
#                                library), no .clippy.toml, and not the
#                                series' kernel/sched/lb_hooks_test.h
# On the machine, the module builds against the installed headers with
# Kbuild: make module KDIR=/lib/modules/KREL/build (the same rustc as
# here; build-module.sh refuses another).
#
# Without DEB_CONFIG the kernel is the plain flavour (the bench kernel:
# QEMU's devices, no distribution drivers), reused from its build tree:
# what make check-deb packs, boots and tests. With DEB_CONFIG (a
# distribution kernel's config, e.g. the target's /boot/config-$(uname -r))
# the plain fragment goes on top of it (SLB_BASE_CONFIG of
# build-kernel.sh) in a tree of its own,
# .cache/linux-build-deb, and the build takes as long as that config's
# modules do.
#
# make check-deb (--check): then unpacks the headers and the Rust headers
# into a scratch root, builds the module against them as a machine with
# them installed would, and boots the packaged vmlinuz in QEMU with that
# module: its KUnit suites, slb-bench on the guest, and the unload.
set -euo pipefail
export SLB_FLAVOR=plain
check=0
[ "${1:-}" = --check ] && check=1
if [ -n "${DEB_CONFIG:-}" ]; then
	[ "$check" = 0 ] || {
		echo "[sched-lb-rs] ERROR: make check-deb boots the plain flavour; unset DEB_CONFIG" >&2
		exit 1
	}
	[ -r "$DEB_CONFIG" ] || {
		echo "[sched-lb-rs] ERROR: DEB_CONFIG=$DEB_CONFIG: no such readable file" >&2
		exit 1
	}
	export SLB_OUT=${SLB_OUT:-$(cd "$(dirname "$0")/.." && pwd)/.cache/linux-build-deb}
	export SLB_BASE_CONFIG=$DEB_CONFIG
fi
. "$(dirname "$0")/lib.sh"
for t in dpkg-deb dpkg-buildpackage qemu-system-x86_64; do need_tool "$t"; done

"$SLB_ROOT/scripts/prepare-kernel.sh"
"$SLB_ROOT/scripts/build-kernel.sh"
krel=$(cat "$SLB_OUT/include/config/kernel.release")

stage "bindeb-pkg ($krel)"
debs=$SLB_CACHE/debs
parent=$(dirname "$SLB_OUT")
rm -f "$parent"/linux-*_*.deb "$parent"/linux-upstream_*.{buildinfo,changes}
(cd "$SLB_SRC" && kmake O="$SLB_OUT" bindeb-pkg > "$SLB_LOGS/deb.log" 2>&1) ||
	{ tail -30 "$SLB_LOGS/deb.log" >&2; die "bindeb-pkg failed (log: $SLB_LOGS/deb.log)"; }
rm -rf "$debs"
mkdir -p "$debs"
mv "$parent"/linux-image-"$krel"_*.deb "$parent"/linux-headers-"$krel"_*.deb "$debs/" ||
	die "bindeb-pkg made no linux-image-$krel or linux-headers-$krel package"
rm -f "$parent"/linux-*_*.deb "$parent"/linux-upstream_*.{buildinfo,changes}
stage_end

stage "linux-sched-lb-headers-$krel"
# What the kernel's Makefile hands rustc for an external module: the
# crates' metadata (--extern kernel, ...) and the proc-macro library
# (macros), from the build tree's rust/, and the source's .clippy.toml.
stage_dir=$(mktemp -d)
trap 'rm -rf "$stage_dir"' EXIT
dest=$stage_dir/usr/src/linux-headers-$krel/rust
mkdir -p "$dest" "$stage_dir/DEBIAN"
files=("$SLB_OUT"/rust/*.rmeta "$SLB_OUT"/rust/*.so)
[ -f "$SLB_OUT/rust/libkernel.rmeta" ] || die "no rust/libkernel.rmeta in $SLB_OUT: is it a CONFIG_RUST=y tree?"
cp "${files[@]}" "$dest/"
# Clippy's settings for the kernel's Rust (msrv 1.78: no lint that asks
# for a newer rustc's API), which Kbuild points clippy at
# (CLIPPY_CONF_DIR=$(srctree)).
cp "$SLB_SRC/.clippy.toml" "$dest/../.clippy.toml"
# The series' header for KUnit suites of a policy module (patch 0018),
# in kernel/sched/ and so not among the installed headers.
mkdir -p "$dest/../kernel/sched"
cp "$SLB_SRC/kernel/sched/lb_hooks_test.h" "$dest/../kernel/sched/"
version=$(dpkg-deb -f "$debs"/linux-headers-"$krel"_*.deb Version)
cat > "$stage_dir/DEBIAN/control" <<-EOF
	Package: linux-sched-lb-headers-$krel
	Version: $version
	Architecture: amd64
	Maintainer: sched-lb-rs <sched-lb-rs@localhost>
	Depends: linux-headers-$krel (= $version)
	Section: kernel
	Priority: optional
	Description: what sched_lb_rs needs beside linux-headers-$krel to build
	 The rust/ directory of the kernel build (libkernel and its crates'
	 .rmeta, the macros proc-macro library), the source's .clippy.toml and
	 the series' kernel/sched/lb_hooks_test.h, which linux-headers-$krel
	 lacks, so that Kbuild can build the sched_lb_rs module (or another
	 Rust module) against /lib/modules/$krel/build with the rustc that
	 built the kernel: $(rustc --version).
EOF
dpkg-deb --root-owner-group -Zxz --build "$stage_dir" "$debs/linux-sched-lb-headers-${krel}_${version}_amd64.deb" > /dev/null
stage_end
log "packages in $debs:"
ls -1 "$debs" | sed 's/^/  /'

[ "$check" = 1 ] || exit 0

stage "check-deb: the module against the packaged headers"
root=$SLB_CACHE/deb-root
rm -rf "$root"
for d in "$debs"/linux-headers-*.deb "$debs"/linux-sched-lb-headers-*.deb "$debs"/linux-image-"$krel"_*.deb; do
	dpkg-deb -x "$d" "$root"
done
kdir=$root/usr/src/linux-headers-$krel
vmlinuz=$root/boot/vmlinuz-$krel
[ -f "$vmlinuz" ] || die "linux-image-$krel has no /boot/vmlinuz-$krel"
# Kbuild refuses a KDIR without rust/ (build-module.sh's checks): the
# headers alone must not do.
rm -rf "$SLB_CACHE/deb-nort"
mkdir -p "$SLB_CACHE/deb-nort"
dpkg-deb -x "$debs"/linux-headers-*.deb "$SLB_CACHE/deb-nort"
if KDIR=$SLB_CACHE/deb-nort/usr/src/linux-headers-$krel "$SLB_ROOT/scripts/build-module.sh" > "$SLB_LOGS/deb-nort.log" 2>&1; then
	die "the module built against linux-headers-$krel without linux-sched-lb-headers: the check below proves nothing"
fi
grep -q "without rust/libkernel.rmeta: install linux-sched-lb-headers-$krel" "$SLB_LOGS/deb-nort.log" ||
	die "without linux-sched-lb-headers the module build failed for another reason (log: $SLB_LOGS/deb-nort.log)"
rm -rf "$SLB_CACHE/deb-nort"
KDIR=$kdir module_variant "$SLB_CACHE/guest-modules" module-deb
ko=$SLB_CACHE/guest-modules/module-deb.ko
vermagic=$(modinfo -F vermagic "$ko")
[ "${vermagic%% *}" = "$krel" ] || die "module-deb.ko's vermagic is '$vermagic', the package's kernel $krel"
log "module built against $kdir (vermagic $vermagic)"
stage_end

tools=$SLB_CACHE/deb-bench
rm -rf "$tools"
bench_tools "$tools"
SLB_KERNEL=$vmlinuz SLB_MODULE=$ko SLB_BENCH_DIR=$tools \
	"$SLB_ROOT/scripts/boot.sh" check-deb "kunit benchhere unload" "$(smp_of smt2)"
log "check-deb: the packaged kernel booted, the module built against its headers loaded, slb-bench ran"
