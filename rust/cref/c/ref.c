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
typedef int64_t s64_t;

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

/* Seed 002, RFC 01/11: select_idle_cpu()'s per-CPU scan cost. */
u64 ref_sis_update_cost(u64 avg_scan_cost, u64 time, int loops)
{
	s64_t delta;

	time = time / loops;			/* div_u64(time, loops) */
	delta = (s64_t)(time - avg_scan_cost) / 8;
	return avg_scan_cost + delta;
}

/* RFC 02/11: age wake_avg by one halving per elapsed jiffy. */
void ref_sis_age(u64 *wake_avg, unsigned long *wake_stamp, unsigned long now)
{
	if (*wake_stamp < now) {
		while (*wake_stamp < now && *wake_avg) {
			(*wake_stamp)++;
			*wake_avg >>= 1;
		}
	}
}

/* RFC 06/11: SIS_PROP's budget in cores, sis_min_cores = 2. */
int ref_sis_prop_nr(unsigned int span_weight, u64 avg_idle, u64 avg_scan_cost)
{
	u64 avg_cost = avg_scan_cost + 1;
	u64 span_avg = span_weight * avg_idle;
	int nr;

	if (span_avg > 2 * avg_cost)
		nr = span_avg / avg_cost;	/* div_u64() */
	else
		nr = 2;
	return nr;
}
