/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-ins for the kernel infrastructure around the C that
 * build.rs takes out of the real sources. None of it is a rule under test:
 * the types and configuration of an x86_64 kernel, and the few kernel
 * facilities the extracted code names, reduced to what they do for a
 * value. Everything the tests compare comes from the 6.12 tree or the seed
 * threads (see build.rs and $OUT_DIR/sources.txt); the one thing that does
 * not is in transcribed.h.
 */
#ifndef SCHED_LB_CREF_SHIM_H
#define SCHED_LB_CREF_SHIM_H

#include <stdbool.h>

/* include/uapi/asm-generic/int-ll64.h on x86_64. */
typedef unsigned int u32;
typedef long long s64;
typedef unsigned long long u64;

/* A 64-bit kernel: selects BITS_PER_LONG in asm-generic/bitsperlong.h. */
#define CONFIG_64BIT 1

/*
 * include/linux/build_bug.h: a compile-time check of the types given to
 * clamp(); it never changes a value. Its arguments are not expanded.
 */
#define BUILD_BUG_ON_MSG(cond, msg) ((void)0)

/*
 * kernel/sched/sched.h: sched_feat(x) reads bit x of the feature mask; the
 * glue declares a bool sched_feat_x for each flag a piece tests.
 */
#define sched_feat(x) (sched_feat_##x)

/* A per-CPU variable of the running CPU: the glue declares it as a local. */
#define __this_cpu_read(pcp) (pcp)

#endif /* SCHED_LB_CREF_SHIM_H */
