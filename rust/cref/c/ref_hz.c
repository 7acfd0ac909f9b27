// SPDX-License-Identifier: GPL-2.0
/*
 * The C references of the HZ-dependent rules, for one HZ: glue only.
 * build.rs compiles this once per HZ through a wrapper that defines HZ,
 * REF_SUFFIX (hz<HZ>) and TIMECONST_H, the timeconst.h that the tree's
 * kernel/time/timeconst.bc generates for that HZ. jiffies_to_msecs(),
 * _msecs_to_jiffies(), __msecs_to_jiffies(), msecs_to_jiffies() and
 * get_sd_balance_interval() are in ref_hz_gen.h, taken by build.rs out of
 * the Linux 6.12 tree (and get_sd_balance_interval() once more with seed
 * 001's [PATCH 3/4] reversed), with the macros they use.
 */
#include "shim.h"
#include TIMECONST_H

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define REF(name) CAT(name, REF_SUFFIX)

/* The two functions with external linkage get a name per HZ. */
#define jiffies_to_msecs REF(jiffies_to_msecs)
#define __msecs_to_jiffies REF(__msecs_to_jiffies)

/*
 * kernel/sched/fair.c's max_load_balance_interval (HZ*num_online_cpus()/10
 * at boot), which get_sd_balance_interval() reads: set per call, per
 * thread, as cargo runs tests in parallel.
 */
static _Thread_local unsigned long max_load_balance_interval;

#include "ref_hz_gen.h"

unsigned int REF(ref_jiffies_to_msecs)(unsigned long j)
{
	return jiffies_to_msecs(j);
}

unsigned long REF(ref_msecs_to_jiffies)(unsigned int m)
{
	return msecs_to_jiffies(m);
}

/*
 * Seed 001 3/4 (LB_BUSY_INTERVAL_DEC): busy_dec is 6.12's function, !busy_dec
 * the one before the patch.
 */
unsigned long REF(ref_balance_interval)(unsigned int balance_interval,
					unsigned int busy_factor, int cpu_busy,
					unsigned long max_interval, bool busy_dec)
{
	struct sched_domain sd = {
		.balance_interval = balance_interval,
		.busy_factor = busy_factor,
	};

	max_load_balance_interval = max_interval;
	if (busy_dec)
		return get_sd_balance_interval(&sd, cpu_busy);
	return get_sd_balance_interval_v59(&sd, cpu_busy);
}
