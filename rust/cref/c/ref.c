// SPDX-License-Identifier: GPL-2.0
/*
 * C references of the Linux 6.12 rules that sched-lb-rs implements in
 * Rust, written from kernel/sched/fair.c and the seed threads' patches with
 * the kernel's types, so C's conversions and wrap-around are the kernel's.
 * Built for userspace by build.rs; compared with rust/policy by
 * tests/differential.rs.
 */
#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;

#define min_t(type, x, y) ((type)(x) < (type)(y) ? (type)(x) : (type)(y))
#define BITS_PER_TYPE(type) (sizeof(type) * 8)
/* kernel/sched/sched.h */
#define shr_bound(val, shift) \
	(val >> min_t(typeof(shift), shift, BITS_PER_TYPE(typeof(val)) - 1))

/*
 * Seed 000: sched_balance_find_src_group(), with Galbraith's v2 and
 * Guittot's BALANCE_IDLE_CPUS patch combined as the series does.
 */
bool ref_idle_cpus_balanced(unsigned int local_idle, unsigned int busiest_idle,
			    int llc_size, bool balance_idle_cpus, bool llc2)
{
	int imbalance = 1;

	if (!balance_idle_cpus)
		imbalance = llc_size;
	else if (llc2 && llc_size == 2)
		imbalance = 2;
	return local_idle <= busiest_idle + imbalance;
}

/* Seed 001 1/4: detach_tasks(), v5.10 and v5.9. */
bool ref_detach_skip(unsigned long load, long imbalance,
		     unsigned int nr_balance_failed,
		     unsigned int cache_nice_tries, bool relax_failed)
{
	if (relax_failed)
		return shr_bound(load, nr_balance_failed) > imbalance;
	return load / 2 > imbalance && nr_balance_failed <= cache_nice_tries;
}

/* Seed 001 2/4: the imbalance_pct test. */
bool ref_avg_load_balanced(unsigned long busiest, unsigned long local,
			   unsigned int imbalance_pct)
{
	return 100 * busiest <= imbalance_pct * local;
}

/* sched_balance_newidle()'s stop test in 6.12. */
bool ref_newidle_stop(u64 avg_idle, u64 curr_cost, u64 max_newidle_lb_cost)
{
	return avg_idle < curr_cost + max_newidle_lb_cost;
}
