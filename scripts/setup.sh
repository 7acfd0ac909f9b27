#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs everything sched-lb-rs needs on a fresh Debian 12 machine, as root:
# Debian packages (LLVM toolchain, QEMU, busybox, kernel build deps and the
# pinned linux-source-6.12), the rust-src component and bindgen-cli.
# Idempotent: each stage checks before it installs. Prints each stage's time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEB_PKGS=(
	build-essential bc bison flex cpio kmod rsync xz-utils python3
	libelf-dev libssl-dev python3-ply python3-git
	clang lld llvm libclang-dev
	ccache
	qemu-system-x86 busybox-static
	rt-tests
	libc6-dev valgrind
	# make test drives make shell as a person would, through tmux.
	tmux
	# make deb, make check-deb: the kernel's bindeb-pkg.
	dpkg-dev debhelper
	# Debian's own kernel configs, for make check-configs.
	linux-config-6.12
)

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

stage "apt packages"
missing=()
for p in "${DEB_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
	log "all Debian packages present"
fi

stage "kernel source package"
have=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG" 2>/dev/null || true)
if [ "$have" = "$LINUX_SOURCE_VERSION" ]; then
	log "$LINUX_SOURCE_PKG $have present"
else
	as_root apt-get update -qq
	if apt-cache madison "$LINUX_SOURCE_PKG" | awk '{print $3}' | grep -qxF "$LINUX_SOURCE_VERSION"; then
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"$LINUX_SOURCE_PKG=$LINUX_SOURCE_VERSION"
	else
		warn "the archive no longer serves $LINUX_SOURCE_PKG=$LINUX_SOURCE_VERSION (pinned in kernel.version)"
		warn "falling back to the newest $LINUX_SOURCE_PKG; the series is kept applying to it"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$LINUX_SOURCE_PKG"
	fi
fi

stage "rust toolchain"
need_tool rustup
rustup component list --installed 2>/dev/null | grep -q '^rust-src' ||
	rustup component add rust-src
for c in rustfmt clippy; do
	rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" || true
done
# One rustc builds the kernel, the module (build-module.sh refuses a
# mismatch) and the cargo workspace. The module's code needs 1.82 (safe
# `addr_of_mut!` of a `static mut`, inline `const {}` blocks); the locked
# workspace needs more (proptest 1.12: 1.88), and that is the version
# Cargo.toml's rust-version states, so checking it covers both.
min_rustc=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$SLB_ROOT/Cargo.toml")
have_rustc=$(rustc --version | awk '{print $2}')
[ "$(printf '%s\n%s\n' "$min_rustc" "$have_rustc" | sort -V | head -1)" = "$min_rustc" ] ||
	die "rustc $have_rustc is older than $min_rustc (rust-version in Cargo.toml): run 'rustup update stable'"
log "rustc $have_rustc (at least $min_rustc)"

stage "bindgen-cli"
if ! command -v bindgen >/dev/null 2>&1; then
	cargo install --locked bindgen-cli
else
	log "$(bindgen --version)"
fi

stage_end
log "setup complete"
