/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TRANSCRIBED: the only C in rust/cref typed by hand instead of taken out
 * of a real source by build.rs. Each entry stands next to the quoted text
 * it comes from and says why it could not be extracted.
 *
 * 1. struct sched_domain's avg_scan_cost and sched_migration_cost.
 *
 *    RFC 01/11 and 06/11 of seed 002 (Zijlstra's select_idle_sibling
 *    rework, 2018) read and update sd->avg_scan_cost, which the 4.17 tree
 *    they patch declares and 6.12 no longer does (SIS_PROP went in 6.6).
 *    No hunk of the seeds declares it; its declaration appears only in
 *    replies that quote a hunk of Rohit Jain's "[RFC 1/2] sched: reduce
 *    migration cost between faster caches for idle_balance" (seed 004,
 *    e.g. Steven Sistare's reply, lines 944-949 of the thread file), where
 *    the quoting stripped the indentation, so no hunk parses there:
 *
 *    >> @@ -104,6 +104,7 @@ struct sched_domain {
 *    >>  u64 max_newidle_lb_cost;
 *    >>  unsigned long next_decay_max_lb_cost;
 *    >>
 *    >> +u64 sched_migration_cost;
 *    >>  u64 avg_scan_cost;  / * select_idle_sibling * /
 *
 *    ("/ *" and "* /" stand for the comment markers.) The members, as
 *    declared there: avg_scan_cost, and Jain's sched_migration_cost, which
 *    his stop test (JAIN_NEWIDLE_STOP, extracted from his own reply in
 *    seed 004) reads.
 */
#ifndef SCHED_LB_CREF_TRANSCRIBED_H
#define SCHED_LB_CREF_TRANSCRIBED_H

#define RFC_SCHED_DOMAIN_MEMBERS	u64 avg_scan_cost; u64 sched_migration_cost;

#endif /* SCHED_LB_CREF_TRANSCRIBED_H */
