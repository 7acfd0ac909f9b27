// SPDX-License-Identifier: GPL-2.0
/*
 * C KUnit suite of sched-lb-rs, linked into the module beside the Rust code.
 *
 * Drives the kernel's own shims in kernel/sched/fair.c (exported for KUnit
 * by the series) with each sched_feat setting, so what is checked is the
 * whole path a load balancer takes: C shim -> registered ops table -> Rust
 * rule. Also checks that the registration API refuses what it must.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/sched/lb_hooks.h>

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static bool idle_cpus_shim(u32 local_idle, u32 busiest_idle, u32 llc_size,
			   bool balance_idle_cpus, bool balance_idle_llc2)
{
	struct sched_lb_idle_cpus_args args = {
		.local_idle_cpus = local_idle,
		.busiest_idle_cpus = busiest_idle,
		.llc_size = llc_size,
		.balance_idle_cpus = balance_idle_cpus,
		.balance_idle_llc2 = balance_idle_llc2,
	};

	return sched_lb_test_idle_cpus_balanced(&args);
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
		.name = "kunit-bad-version",
	};

	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(&bad), -EINVAL);
	bad.abi_version = SCHED_LB_HOOKS_ABI_VERSION;
	bad.size = sizeof(bad) - 1;
	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(&bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, sched_lb_ops_register(NULL), -EINVAL);
}

static void register_refuses_second_table(struct kunit *test)
{
	static const struct sched_lb_ops other = {
		.abi_version = SCHED_LB_HOOKS_ABI_VERSION,
		.size = sizeof(other),
		.name = "kunit-second",
	};
	int ret = sched_lb_ops_register(&other);

	/* The Rust half of this module registered first. */
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	if (!ret)
		sched_lb_ops_unregister(&other);
}

static struct kunit_case sched_lb_shim_cases[] = {
	KUNIT_CASE(idle_cpus_flag_on_off_llc2),
	KUNIT_CASE(idle_cpus_flag_on_off_llc4),
	KUNIT_CASE(register_rejects_abi_mismatch),
	KUNIT_CASE(register_refuses_second_table),
	{}
};

static struct kunit_suite sched_lb_shim_suite = {
	.name = "sched_lb_c_shim",
	.test_cases = sched_lb_shim_cases,
};

kunit_test_suite(sched_lb_shim_suite);
