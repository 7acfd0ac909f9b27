// SPDX-License-Identifier: GPL-2.0
/*
 * msecs_to_jiffies() and get_sd_balance_interval() of Linux 6.12 for one
 * HZ (-DHZ=..., with the timeconst.h kernel/time/timeconst.bc generates
 * for it), 64-bit. Copied from include/linux/jiffies.h,
 * kernel/time/time.c and kernel/sched/fair.c; only the includes differ.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define U64_C(x) x##ULL
#include "timeconst.h"

#define MSEC_PER_SEC	1000L
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1)-1)
#define max_ul(a, b) ((unsigned long)(a) > (unsigned long)(b) ? (unsigned long)(a) : (unsigned long)(b))
#define min_ul(a, b) ((unsigned long)(a) < (unsigned long)(b) ? (unsigned long)(a) : (unsigned long)(b))
/* include/linux/minmax.h: min(max(val, lo), hi) */
#define clamp(val, lo, hi) min_ul(max_ul(val, lo), hi)

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define REF(name) CAT(name, REF_SUFFIX)

static unsigned int jiffies_to_msecs(const unsigned long j)
{
#if HZ <= MSEC_PER_SEC && !(MSEC_PER_SEC % HZ)
	return (MSEC_PER_SEC / HZ) * j;
#elif HZ > MSEC_PER_SEC && !(HZ % MSEC_PER_SEC)
	return (j + (HZ / MSEC_PER_SEC) - 1)/(HZ / MSEC_PER_SEC);
#else
	return (j * HZ_TO_MSEC_NUM) / HZ_TO_MSEC_DEN;
#endif
}

#if HZ <= MSEC_PER_SEC && !(MSEC_PER_SEC % HZ)
static inline unsigned long _msecs_to_jiffies(const unsigned int m)
{
	return (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ);
}
#elif HZ > MSEC_PER_SEC && !(HZ % MSEC_PER_SEC)
static inline unsigned long _msecs_to_jiffies(const unsigned int m)
{
	if (m > jiffies_to_msecs(MAX_JIFFY_OFFSET))
		return MAX_JIFFY_OFFSET;
	return m * (HZ / MSEC_PER_SEC);
}
#else
static inline unsigned long _msecs_to_jiffies(const unsigned int m)
{
	if (HZ > MSEC_PER_SEC && m > jiffies_to_msecs(MAX_JIFFY_OFFSET))
		return MAX_JIFFY_OFFSET;
	return (MSEC_TO_HZ_MUL32 * m + MSEC_TO_HZ_ADJ32) >> MSEC_TO_HZ_SHR32;
}
#endif

unsigned long REF(ref_msecs_to_jiffies)(const unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	return _msecs_to_jiffies(m);
}

unsigned long REF(ref_balance_interval)(unsigned int balance_interval,
					unsigned int busy_factor, int cpu_busy,
					unsigned long max_load_balance_interval,
					bool busy_dec)
{
	unsigned long interval = balance_interval;

	if (cpu_busy)
		interval *= busy_factor;
	interval = REF(ref_msecs_to_jiffies)(interval);
	if (cpu_busy && busy_dec)
		interval -= 1;
	interval = clamp(interval, 1UL, max_load_balance_interval);
	return interval;
}
