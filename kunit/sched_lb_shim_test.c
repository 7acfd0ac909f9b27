// SPDX-License-Identifier: GPL-2.0
/*
 * C KUnit suite of sched-lb-rs, linked into the module beside the Rust code.
 *
 * Drives the kernel's own shims in kernel/sched/fair.c (exported for KUnit
 * by the series) with each sched_feat setting, so what is checked is the
 * whole path a load balancer takes: C shim -> ops table -> Rust rule. The
 * table is the module's KUnit twin of the registered one (rust/hooks.rs:
 * the same callbacks, counting nothing). Also checks that the
 * registration API refuses what it must.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/lb_hooks.h>

/* kernel/sched/, on the include path of this file only (Kbuild). */
#include "lb_hooks_test.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* rust/hooks.rs: the KUnit twin, and the table the module registers. */
extern const struct sched_lb_ops sched_lb_rs_kunit_ops;
extern const struct sched_lb_ops sched_lb_rs_ops;

static bool idle_cpus_shim(u32 local_idle, u32 busiest_idle, u32 llc_size,
			   bool balance_idle_cpus, bool balance_idle_llc2)
{
	return sched_lb_test_idle_cpus_balanced(&sched_lb_rs_kunit_ops,
						local_idle, busiest_idle,
						llc_size, balance_idle_cpus,
						balance_idle_llc2);
}

/*
 * Galbraith's X5472: four MC groups of two cores, sd_llc_size == 2, and a
 * netperf buddy pair on one group (idle CPUs 2 local vs 0 busiest).
 */
static void idle_cpus_flag_on_off_llc2(struct kunit *test)
{
	/* BALANCE_IDLE_CPUS on (stock): the pair is split. */
	KUNIT_EXPECT_FALSE(test, idle_cpus_shim(2, 0, 2, true, false));
	/* NO_BALANCE_IDLE_CPUS (Guittot): tolerate llc_size == 2. */
	KUNIT_EXPECT_TRUE(test, idle_cpus_shim(2, 0, 2, false, false));
	/* BALANCE_IDLE_LLC2 (Galbraith v2): tolerate 2 on an L2 pair. */
	KUNIT_EXPECT_TRUE(test, idle_cpus_shim(2, 0, 2, true, true));
	/* ...but not 3. */
	KUNIT_EXPECT_FALSE(test, idle_cpus_shim(3, 0, 2, true, true));
}

/* Guittot: "3 tasks on system with 4 cores per MC". */
static void idle_cpus_flag_on_off_llc4(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, idle_cpus_shim(4, 1, 4, true, false));
	KUNIT_EXPECT_TRUE(test, idle_cpus_shim(4, 1, 4, false, false));
	/* Galbraith v2 leaves L3-sized LLCs alone. */
	KUNIT_EXPECT_FALSE(test, idle_cpus_shim(4, 1, 4, true, true));
	/* The +1 tie-breaker holds with every flag. */
	KUNIT_EXPECT_TRUE(test, idle_cpus_shim(3, 2, 4, true, false));
	KUNIT_EXPECT_TRUE(test, idle_cpus_shim(3, 2, 4, false, false));
}

static void register_rejects_abi_mismatch(struct kunit *test)
{
	struct sched_lb_ops bad = {
		.abi_version = SCHED_LB_HOOKS_ABI_VERSION + 1,
		.size = sizeof(bad),
		.args_size = SCHED_LB_ARGS_SIZES,
		.name = "kunit-bad-version",
	};
	int i;

	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(&bad), -EINVAL);
	bad.abi_version = SCHED_LB_HOOKS_ABI_VERSION;
	bad.size = sizeof(bad) - 1;
	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(&bad), -EINVAL);
	bad.size = sizeof(bad);
	/*
	 * Each argument struct's size is checked on its own: a module built
	 * against a header where one struct had another layout is refused
	 * even with the right version and table size. (The table with every
	 * size right gets -EBUSY below, not -EINVAL.)
	 */
	for (i = 0; i < SCHED_LB_NR_ARGS; i++) {
		bad.args_size[i] += 8;
		KUNIT_EXPECT_EQ_MSG(test, sched_lb_ops_register(&bad), -EINVAL,
				    "argument struct %d", i);
		bad.args_size[i] -= 8;
	}
	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(NULL), -EINVAL);
}

static void register_refuses_second_table(struct kunit *test)
{
	static const struct sched_lb_ops other = {
		.abi_version = SCHED_LB_HOOKS_ABI_VERSION,
		.size = sizeof(other),
		.args_size = SCHED_LB_ARGS_SIZES,
		.name = "kunit-second",
	};
	int ret = sched_lb_ops_register(&other);

	/* The Rust half of this module registered first. */
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	if (!ret)
		sched_lb_ops_unregister(&other);
}

/*
 * The kernel trusts nothing a module returns: a table whose balance
 * interval is out of [1, max_load_balance_interval] gets the stock
 * interval instead, and each refusal is counted.
 */
static u64 interval_zero(u32 balance_interval_ms, u32 busy_factor,
			 u64 max_interval_jiffies, bool cpu_busy, bool busy_dec)
{
	return 0;
}

static u64 interval_huge(u32 balance_interval_ms, u32 busy_factor,
			 u64 max_interval_jiffies, bool cpu_busy, bool busy_dec)
{
	return U64_MAX;
}

static u64 interval_five(u32 balance_interval_ms, u32 busy_factor,
			 u64 max_interval_jiffies, bool cpu_busy, bool busy_dec)
{
	return 5;
}

#define TABLE(fn, member) {					\
	.abi_version = SCHED_LB_HOOKS_ABI_VERSION,		\
	.size = sizeof(struct sched_lb_ops),			\
	.args_size = SCHED_LB_ARGS_SIZES,			\
	.name = "kunit-" #fn,					\
	.member = fn,						\
}

/* 8 ms, busy_factor 16, at most 100 jiffies, busy, LB_BUSY_INTERVAL_DEC. */
#define INTERVAL(ops) sched_lb_test_balance_interval(ops, 8, 16, 100, true, true)

static void interval_out_of_range_refused(struct kunit *test)
{
	static const struct sched_lb_ops none = {
		.abi_version = SCHED_LB_HOOKS_ABI_VERSION,
		.size = sizeof(none),
		.args_size = SCHED_LB_ARGS_SIZES,
		.name = "kunit-stock",
	};
	static const struct sched_lb_ops zero = TABLE(interval_zero, balance_interval);
	static const struct sched_lb_ops huge = TABLE(interval_huge, balance_interval);
	static const struct sched_lb_ops five = TABLE(interval_five, balance_interval);
	int before = sched_lb_test_violations("balance_interval");
	unsigned long stock = INTERVAL(&none);

	KUNIT_ASSERT_GE(test, before, 0);
	KUNIT_EXPECT_GE(test, stock, 1UL);
	KUNIT_EXPECT_EQ(test, INTERVAL(&zero), stock);
	KUNIT_EXPECT_EQ(test, INTERVAL(&huge), stock);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("balance_interval"),
			before + 2);
	/* An answer in range is the policy's, and costs nothing. */
	KUNIT_EXPECT_EQ(test, INTERVAL(&five), 5UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("balance_interval"),
			before + 2);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("no_such_hook"), -ENOENT);
}

static void streak_jump(struct sched_lb_streak_args *args)
{
	args->failures += 2;
	args->stamp_jiffies = args->now_jiffies;
}

static void streak_future(struct sched_lb_streak_args *args)
{
	args->failures = 0;
	args->stamp_jiffies = args->now_jiffies + 1;
}

static void streak_past(struct sched_lb_streak_args *args)
{
	args->stamp_jiffies -= 1;
}

static void streak_count(struct sched_lb_streak_args *args)
{
	args->failures += 1;
	args->stamp_jiffies = args->now_jiffies;
}

/*
 * NEWIDLE_BACKOFF's streak: the kernel keeps an answer only if counting
 * and aging could give it, at most one failure more and a stamp between
 * the old one and now, and leaves the streak alone otherwise.
 */
static void streak_out_of_range_refused(struct kunit *test)
{
	static const struct sched_lb_ops jump = TABLE(streak_jump, newidle_account);
	static const struct sched_lb_ops future = TABLE(streak_future, newidle_account);
	static const struct sched_lb_ops past = TABLE(streak_past, newidle_account);
	static const struct sched_lb_ops count = TABLE(streak_count, newidle_account);
	int before = sched_lb_test_violations("newidle_account");
	unsigned long stamp = 1000;
	unsigned int failures = 7;

	KUNIT_ASSERT_GE(test, before, 0);
	sched_lb_test_newidle_streak(&jump, &failures, &stamp, 1005, false);
	sched_lb_test_newidle_streak(&future, &failures, &stamp, 1005, false);
	sched_lb_test_newidle_streak(&past, &failures, &stamp, 1005, false);
	KUNIT_EXPECT_EQ(test, failures, 7U);
	KUNIT_EXPECT_EQ(test, stamp, 1000UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_account"),
			before + 3);
	sched_lb_test_newidle_streak(&count, &failures, &stamp, 1005, false);
	KUNIT_EXPECT_EQ(test, failures, 8U);
	KUNIT_EXPECT_EQ(test, stamp, 1005UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_account"),
			before + 3);
}

/* Keeps the count after a pull; the stamp moves to now, which is fine. */
static void streak_keep(struct sched_lb_streak_args *args)
{
	args->stamp_jiffies = args->now_jiffies;
}

/* Any pull resets the streak: the kernel refuses a count that stays. */
static void streak_kept_after_pull_refused(struct kunit *test)
{
	static const struct sched_lb_ops keep = TABLE(streak_keep, newidle_account);
	int before = sched_lb_test_violations("newidle_account");
	unsigned long stamp = 1000;
	unsigned int failures = 7;

	KUNIT_ASSERT_GE(test, before, 0);
	sched_lb_test_newidle_streak(&keep, &failures, &stamp, 1005, true);
	KUNIT_EXPECT_EQ(test, failures, 7U);
	KUNIT_EXPECT_EQ(test, stamp, 1000UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_account"),
			before + 1);
	/* The same answer without a pull is an attempt that aged nothing. */
	sched_lb_test_newidle_streak(&keep, &failures, &stamp, 1005, false);
	KUNIT_EXPECT_EQ(test, failures, 7U);
	KUNIT_EXPECT_EQ(test, stamp, 1005UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_account"),
			before + 1);
}

/*
 * The streak's stamp as nohz balancing on another CPU moves it while the
 * policy runs: the answer must be checked against what the policy got.
 */
static unsigned long *streak_racing_stamp;

static void streak_raced(struct sched_lb_streak_args *args)
{
	/* Another CPU stamps the streak now, in the middle of the call... */
	WRITE_ONCE(*streak_racing_stamp, args->now_jiffies);
	/* ...and this answer, from the stamp it was given, is still right. */
	args->failures += 1;
}

static void streak_race_not_refused(struct kunit *test)
{
	static const struct sched_lb_ops raced = TABLE(streak_raced, newidle_account);
	int before = sched_lb_test_violations("newidle_account");
	unsigned long stamp = 1000;
	unsigned int failures = 7;

	KUNIT_ASSERT_GE(test, before, 0);
	streak_racing_stamp = &stamp;
	sched_lb_test_newidle_streak(&raced, &failures, &stamp, 1005, false);
	/* Taken: the racing update is the one lost. */
	KUNIT_EXPECT_EQ(test, failures, 8U);
	KUNIT_EXPECT_EQ(test, stamp, 1000UL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_account"),
			before);
}

static bool never_stop(u64 avg_idle_ns, u64 cost_ns, u32 consecutive_failures,
		       bool backoff, u64 migration_cost_ns, bool migration_cost)
{
	return false;
}

/*
 * Every flag behind newidle_stop only adds cost, so where stock stops the
 * walk the policy must too: a walk that goes on there is refused and the
 * stock answer used; where stock goes on, the policy decides.
 */
static void newidle_stop_below_stock_refused(struct kunit *test)
{
	static const struct sched_lb_ops never = TABLE(never_stop, newidle_stop);
	int before = sched_lb_test_violations("newidle_stop");

	KUNIT_ASSERT_GE(test, before, 0);
	/* 100 us idle against 40 + 80 us of cost: stock stops. */
	KUNIT_EXPECT_TRUE(test, sched_lb_test_newidle_stop(&never, 100000, 120000,
							   0, false, 0, false));
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_stop"),
			before + 1);
	KUNIT_EXPECT_FALSE(test, sched_lb_test_newidle_stop(&never, 200000, 120000,
							    0, false, 0, false));
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("newidle_stop"),
			before + 1);
}

static bool never_balanced(u32 local_idle_cpus, u32 busiest_idle_cpus,
			   u32 llc_size, bool balance_idle_cpus,
			   bool balance_idle_llc2)
{
	return false;
}

/*
 * The idle-CPU flags only tolerate more idle CPUs than stock: groups that
 * stock counts as balanced must stay balanced.
 */
static void idle_cpus_below_stock_refused(struct kunit *test)
{
	static const struct sched_lb_ops never = TABLE(never_balanced, idle_cpus_balanced);
	int before = sched_lb_test_violations("idle_cpus_balanced");

	KUNIT_ASSERT_GE(test, before, 0);
	/* 3 idle CPUs against 2, on an LLC of 4: stock's +1 tie. */
	KUNIT_EXPECT_TRUE(test, sched_lb_test_idle_cpus_balanced(&never, 3, 2, 4,
								 true, false));
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("idle_cpus_balanced"),
			before + 1);
	KUNIT_EXPECT_FALSE(test, sched_lb_test_idle_cpus_balanced(&never, 4, 2, 4,
								  true, false));
	KUNIT_EXPECT_EQ(test, sched_lb_test_violations("idle_cpus_balanced"),
			before + 1);
}

/*
 * Passes through each hook's call site in site_cost, as the load balancer
 * reaches it; the kernel takes 1 to 65536 (the passes run with interrupts
 * off).
 */
static unsigned int site_cost_passes = 1000;
module_param(site_cost_passes, uint, 0444);
MODULE_PARM_DESC(site_cost_passes,
		 "passes through each hook's call site in the site_cost KUnit case (1 to 65536)");

/* A table that supplies no callback. */
static const struct sched_lb_ops sched_lb_no_hooks = {
	.abi_version = SCHED_LB_HOOKS_ABI_VERSION,
	.size = sizeof(struct sched_lb_ops),
	.args_size = SCHED_LB_ARGS_SIZES,
	.name = "kunit-no-hooks",
};

/* Deferred action: the module's table back, however site_cost ended. */
static void site_cost_reregister(void *unused)
{
	if (sched_lb_ops_register(&sched_lb_rs_ops))
		pr_err("sched_lb_rs: site_cost could not register the table again\n");
}

/*
 * Each hook's real call site in fair.c, through this module's table (the
 * counting instance the module registers, so the passes show in its
 * debugfs statistics), through its KUnit table (the same callbacks without
 * the counters, so the difference is what counting costs) and with no
 * table at all (the stock code at the same site): with the default flags
 * the three paths give the same answers.
 * The kernel times a site only while no table is registered, so the case
 * unregisters the module's own first and registers it again at its end.
 * The get_cycles() counts go to the log, where scripts/site-cost.sh,
 * which boots QEMU with -icount shift=0 (a cycle is a guest instruction),
 * reads them.
 */
static void site_cost(struct kunit *test)
{
	static const char * const hooks[] = {
		"idle_cpus_balanced", "avg_load_balanced", "detach_skip",
		"balance_interval", "newidle_stop", "newidle_account",
	};
	const struct sched_lb_ops *ops = &sched_lb_rs_ops;
	unsigned int n = site_cost_passes;
	u64 empty, stock, hooked, quiet, answer, stock_answer;
	int i;

	KUNIT_ASSERT_GT(test, n, 0U);
	/* The kernel bounds the passes it runs with interrupts off. */
	KUNIT_EXPECT_EQ(test, sched_lb_test_site_cost(ops, "none", false, 0,
						      &stock, &answer), -EINVAL);
	KUNIT_EXPECT_EQ(test, sched_lb_test_site_cost(ops, "detach_skip", false,
						      65537, &stock, &answer),
			-EINVAL);
	/* No site to time for these, nor for a name that is no hook. */
	KUNIT_EXPECT_EQ(test, sched_lb_test_site_cost(ops, "steal", false, n,
						      &stock, &answer), -ENOENT);
	KUNIT_EXPECT_EQ(test, sched_lb_test_site_cost(ops, "no_such_hook",
						      false, n, &stock, &answer),
			-ENOENT);
	/* The Rust half registered its table: its keys are live. */
	KUNIT_ASSERT_EQ(test, sched_lb_test_site_cost(ops, "detach_skip", true,
						      n, &stock, &answer), -EBUSY);

	sched_lb_ops_unregister(ops);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, site_cost_reregister,
							NULL), 0);
	KUNIT_ASSERT_EQ(test, sched_lb_test_site_cost(ops, "none", false, n,
						      &empty, &answer), 0);
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		KUNIT_ASSERT_EQ_MSG(test, sched_lb_test_site_cost(ops, hooks[i], true,
								  n, &stock,
								  &stock_answer), 0,
				    "%s", hooks[i]);
		KUNIT_ASSERT_EQ_MSG(test, sched_lb_test_site_cost(ops, hooks[i], false,
								  n, &hooked,
								  &answer), 0,
				    "%s", hooks[i]);
		KUNIT_EXPECT_EQ_MSG(test, answer, stock_answer,
				    "%s: the hooked site answers otherwise than the stock one",
				    hooks[i]);
		/* The same callbacks without their counters: the KUnit table. */
		KUNIT_ASSERT_EQ_MSG(test, sched_lb_test_site_cost(&sched_lb_rs_kunit_ops,
								  hooks[i], false, n,
								  &quiet, &answer), 0,
				    "%s", hooks[i]);
		KUNIT_EXPECT_EQ_MSG(test, answer, stock_answer,
				    "%s: the KUnit table answers otherwise than stock",
				    hooks[i]);
		kunit_info(test, "hook-site %s passes %u empty %llu stock %llu hooked %llu quiet %llu\n",
			   hooks[i], n, empty, stock, hooked, quiet);
	}
	/* A table without the hook cannot be timed through it. */
	KUNIT_EXPECT_EQ(test, sched_lb_test_site_cost(&sched_lb_no_hooks, "detach_skip",
						      false, n, &stock, &answer),
			-ENODEV);
}

static struct kunit_case sched_lb_shim_cases[] = {
	KUNIT_CASE(idle_cpus_flag_on_off_llc2),
	KUNIT_CASE(idle_cpus_flag_on_off_llc4),
	KUNIT_CASE(register_rejects_abi_mismatch),
	KUNIT_CASE(register_refuses_second_table),
	KUNIT_CASE(interval_out_of_range_refused),
	KUNIT_CASE(streak_out_of_range_refused),
	KUNIT_CASE(streak_kept_after_pull_refused),
	KUNIT_CASE(streak_race_not_refused),
	KUNIT_CASE(newidle_stop_below_stock_refused),
	KUNIT_CASE(idle_cpus_below_stock_refused),
	KUNIT_CASE(site_cost),
	{}
};

static struct kunit_suite sched_lb_shim_suite = {
	.name = "sched_lb_c_shim",
	.test_cases = sched_lb_shim_cases,
};

kunit_test_suite(sched_lb_shim_suite);
