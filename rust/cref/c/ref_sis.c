// SPDX-License-Identifier: GPL-2.0
/*
 * The C reference of 6.12's select_idle_cpu(), the stock scan the SIS
 * hook is judged against (rust/policy/src/sis_stock.rs): glue only. The
 * functions are in ref_sis_gen.h, which build.rs takes out of
 * kernel/sched/fair.c of the Linux 6.12 tree: __select_idle_cpu(),
 * set_idle_cores(), select_idle_core() and select_idle_cpu(), as they are.
 *
 * What they call is stood in for here, for an LLC of at most 64 CPUs
 * whose state the caller gives: cpumasks are one word, the iterators
 * read the mask at each step as the kernel's do (a CPU cleared ahead of
 * the walk is not visited), a CPU is idle or busy (no SCHED_IDLE tasks,
 * no core cookies: sis_stock.rs documents that it does not tell a
 * SCHED_IDLE thread from an idle one), and there are no cluster domains.
 * The state is thread-local: the tests run in parallel threads.
 */
#include <limits.h>
#include "shim.h"

#define CONFIG_SCHED_SMT 1

struct cpumask {
	unsigned long bits;
};

struct task_struct {
	const struct cpumask *cpus_ptr;
};

struct rq;

/* include/linux/sched/topology.h: the members the scan reads. */
struct sched_domain_shared {
	int has_idle_cores;
	int nr_idle_scan;
};

struct sched_group {
	unsigned int flags;
};

struct sched_domain {
	struct sched_group *groups;
};

#define SD_CLUSTER 0x1

static _Thread_local unsigned int ref_nbits;
static _Thread_local unsigned long ref_busy;
static _Thread_local struct cpumask ref_llc, ref_select_rq_mask;
static _Thread_local struct cpumask ref_smt[64];
static _Thread_local struct sched_domain_shared *ref_sd_llc_shared;
static _Thread_local bool sched_feat_SIS_UTIL;
/* Idle tests the scan made: each reads a remote runqueue. */
static _Thread_local unsigned int ref_asks;

#define nr_cpumask_bits ref_nbits
#define this_cpu_cpumask_var_ptr(var) (&ref_##var)
#define sched_domain_span(sd) ((const struct cpumask *)&ref_llc)
#define sched_group_span(sg) ((const struct cpumask *)&ref_llc)
#define cpu_smt_mask(cpu) ((const struct cpumask *)&ref_smt[(cpu)])
#define per_cpu(var, cpu) (ref_##var)
#define rcu_dereference(p) (p)
#define READ_ONCE(x) (x)
#define WRITE_ONCE(x, v) ((x) = (v))
/* No cluster domains: sched_cluster_active stays off. */
#define static_branch_unlikely(key) 0

static inline bool cpumask_test_cpu(int cpu, const struct cpumask *m)
{
	return (m->bits >> cpu) & 1;
}

static inline void cpumask_and(struct cpumask *d, const struct cpumask *a,
			       const struct cpumask *b)
{
	d->bits = a->bits & b->bits;
}

static inline void cpumask_andnot(struct cpumask *d, const struct cpumask *a,
				  const struct cpumask *b)
{
	d->bits = a->bits & ~b->bits;
}

#define for_each_cpu(cpu, mask)						\
	for ((cpu) = 0; (cpu) < (int)ref_nbits; (cpu)++)		\
		if (!cpumask_test_cpu((cpu), (mask))) {} else

/* From start, wrapping once, testing each bit as the walk reaches it. */
#define for_each_cpu_wrap(cpu, mask, start)				\
	for (unsigned int __k = 0, __s = (unsigned int)(start) % ref_nbits; \
	     __k < ref_nbits && ((cpu) = (int)((__s + __k) % ref_nbits), 1); \
	     __k++)							\
		if (!cpumask_test_cpu((cpu), (mask))) {} else

static inline bool available_idle_cpu(int cpu)
{
	ref_asks++;
	return !((ref_busy >> cpu) & 1);
}

static inline bool sched_idle_cpu(int cpu)
{
	return false;
}

static inline struct rq *cpu_rq(int cpu)
{
	return 0;
}

static inline bool sched_cpu_cookie_match(struct rq *rq, struct task_struct *p)
{
	return true;
}

#include "ref_sis_gen.h"

/*
 * select_idle_cpu() on an LLC of @nbits CPUs (at most 64): @busy and
 * @allowed are masks, core_of[cpu] the core of each CPU. Returns the CPU
 * picked or -1, in *cleared whether the scan cleared has_idle_cores, and
 * in *asks how many idle tests it made.
 */
int ref_select_idle_cpu(unsigned int nbits, unsigned long busy,
			unsigned long allowed, const unsigned char *core_of,
			int target, bool has_idle_core, bool sis_util,
			int nr_idle_scan, bool *cleared, unsigned int *asks)
{
	struct cpumask allowed_mask = { .bits = allowed };
	struct task_struct p = { .cpus_ptr = &allowed_mask };
	struct sched_group group = { .flags = 0 };
	struct sched_domain sd = { .groups = &group };
	struct sched_domain_shared shared = {
		.has_idle_cores = has_idle_core,
		.nr_idle_scan = nr_idle_scan,
	};
	unsigned int c, s;
	int cpu;

	ref_nbits = nbits;
	ref_busy = busy;
	ref_llc.bits = nbits >= 64 ? ~0UL : (1UL << nbits) - 1;
	for (c = 0; c < nbits; c++) {
		ref_smt[c].bits = 0;
		for (s = 0; s < nbits; s++)
			if (core_of[s] == core_of[c])
				ref_smt[c].bits |= 1UL << s;
	}
	ref_sd_llc_shared = &shared;
	sched_feat_SIS_UTIL = sis_util;
	ref_asks = 0;
	cpu = select_idle_cpu(&p, &sd, has_idle_core, target);
	*asks = ref_asks;
	*cleared = has_idle_core && !shared.has_idle_cores;
	return cpu;
}
