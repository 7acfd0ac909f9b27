// SPDX-License-Identifier: GPL-2.0
/*
 * The C references of the HZ-independent rules: glue only. The tests and
 * statements themselves are in ref_gen.h, which build.rs generates from
 * kernel/sched/fair.c and the headers of the Linux 6.12 tree and from the
 * seed threads' hunks (each piece with its origin; $OUT_DIR/sources.txt
 * lists them). Each function below sets up the variables and struct
 * members a piece reads, with the names it uses, runs it, and returns what
 * it decided. Compared with rust/policy by tests/differential.rs.
 */
#include "shim.h"
#include "transcribed.h"
#include "ref_gen.h"

/*
 * Seed 000: the idle-CPU test of sched_balance_find_src_group(), where the
 * series asks its hook: the balancing CPU is idle, the busiest group is not
 * overloaded and has more than one CPU. The flags choose the code as the
 * series does: NO_BALANCE_IDLE_CPUS is Guittot's patch; BALANCE_IDLE_CPUS
 * with BALANCE_IDLE_LLC2 is Galbraith's v2; BALANCE_IDLE_CPUS alone is
 * 6.12's own test.
 */
bool ref_idle_cpus_balanced(unsigned int local_idle, unsigned int busiest_idle,
			    int llc_size, bool balance_idle_cpus, bool llc2)
{
	struct sg_lb_stats local_stats = { .idle_cpus = local_idle };
	struct sg_lb_stats busiest_stats = {
		.idle_cpus = busiest_idle,
		.group_weight = 2,
		.group_type = group_has_spare,
	};
	struct sg_lb_stats *local = &local_stats, *busiest = &busiest_stats;
	bool sched_feat_BALANCE_IDLE_CPUS = balance_idle_cpus;
	int sd_llc_size = llc_size;

	if (!balance_idle_cpus) {
		GUITTOT_IDLE_CPUS
		return false;
	}
	if (llc2) {
		GALBRAITH_V2_IDLE_CPUS
		return false;
	}
	return LINUX_IDLE_CPUS_BALANCED;
out_balanced:
	return true;
}

/*
 * Seed 001 1/4: detach_tasks()'s load test, 6.12's (relax_failed) and the
 * one the patch replaced.
 */
bool ref_detach_skip(unsigned long load, long imbalance,
		     unsigned int nr_balance_failed,
		     unsigned int cache_nice_tries, bool relax_failed)
{
	struct sched_domain sd = {
		.nr_balance_failed = nr_balance_failed,
		.cache_nice_tries = cache_nice_tries,
	};
	struct lb_env env_store = { .sd = &sd, .imbalance = imbalance };
	struct lb_env *env = &env_store;

	if (relax_failed)
		return LINUX_DETACH_LOAD_SKIP;
	return V59_DETACH_LOAD_SKIP;
}

/* Seed 001 2/4: 6.12's imbalance_pct test (the patch changed the value). */
bool ref_avg_load_balanced(unsigned long busiest_avg, unsigned long local_avg,
			   unsigned int imbalance_pct)
{
	struct sg_lb_stats local_stats = { .avg_load = local_avg };
	struct sg_lb_stats busiest_stats = { .avg_load = busiest_avg };
	struct sg_lb_stats *local = &local_stats, *busiest = &busiest_stats;
	struct sched_domain sd = { .imbalance_pct = imbalance_pct };
	struct lb_env env_store = { .sd = &sd };
	struct lb_env *env = &env_store;

	return LINUX_AVG_LOAD_BALANCED;
}

/* sched_balance_newidle()'s stop test in 6.12. */
bool ref_newidle_stop(u64 avg_idle, u64 curr_cost, u64 max_newidle_lb_cost)
{
	struct rq rq = { .avg_idle = avg_idle };
	struct rq *this_rq = &rq;
	struct sched_domain sd_store = { .max_newidle_lb_cost = max_newidle_lb_cost };
	struct sched_domain *sd = &sd_store;

	return LINUX_NEWIDLE_STOP;
}

/*
 * Seed 004: sched_balance_newidle()'s stop test with Rohit Jain's
 * per-domain migration cost added (SD_MIGRATION_COST).
 */
bool ref_newidle_stop_jain(u64 avg_idle, u64 curr_cost, u64 max_newidle_lb_cost,
			   u64 sched_migration_cost)
{
	struct rq rq = { .avg_idle = avg_idle };
	struct rq *this_rq = &rq;
	struct sched_domain sd_store = {
		.max_newidle_lb_cost = max_newidle_lb_cost,
		.sched_migration_cost = sched_migration_cost,
	};
	struct sched_domain *sd = &sd_store;

	return JAIN_NEWIDLE_STOP;
}

/* The series: does the registered policy scan the LLC instead of stock? */
bool ref_sis_wanted(bool fold, bool prop, bool has_idle_core)
{
	sched_feat_SIS_FOLD = fold;
	sched_feat_SIS_PROP = prop;
	return sched_lb_sis_wanted(has_idle_core);
}

/* Seed 002, RFC 01/11: select_idle_cpu()'s per-CPU scan cost. */
u64 ref_sis_update_cost(u64 avg_scan_cost, u64 scan_time, int scan_loops)
{
	struct sched_domain sd_store = { .avg_scan_cost = avg_scan_cost };
	RFC01_DECLS
	this_sd = &sd_store;
	time = scan_time;
	loops = scan_loops;
	RFC01_SCAN_COST
	return this_sd->avg_scan_cost;
}

/* RFC 02/11: SIS_AGE ages wake_avg by one halving per elapsed jiffy. */
#define this_rq() (&rq_store)
void ref_sis_age(u64 *wake_avg, unsigned long *wake_stamp, unsigned long now_j)
{
	struct rq rq_store = { .wake_avg = *wake_avg, .wake_stamp = *wake_stamp };
	unsigned long jiffies = now_j;
	RFC02_AGE_DECLS

	RFC02_AGE
	*wake_avg = this_rq->wake_avg;
	*wake_stamp = this_rq->wake_stamp;
}
#undef this_rq

/* RFC 03/11: SIS_ONCE takes the scan's time out of wake_avg. */
#define this_rq() (&rq_store)
u64 ref_sis_once(u64 wake_avg, u64 scan_time)
{
	struct rq rq_store = { .wake_avg = wake_avg };
	bool sched_feat_SIS_ONCE = true;
	u64 time = scan_time;

	RFC03_ONCE
	return rq_store.wake_avg;
}
#undef this_rq

/* RFC 06/11: SIS_PROP's budget in cores, from RFC 02/11's avg_cost. */
int ref_sis_prop_nr(unsigned int span_weight, u64 idle, u64 avg_scan_cost)
{
	struct sched_domain sd_store = {
		.span_weight = span_weight,
		.avg_scan_cost = avg_scan_cost,
	};
	struct sched_domain *sd = &sd_store;
	bool sched_feat_SIS_PROP = true;
	RFC01_DECLS
	this_sd = &sd_store;
	avg_idle = idle;
	RFC02_AVG_COST
	RFC06_SIS_PROP
	return nr;
}
