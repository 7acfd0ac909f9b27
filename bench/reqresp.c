// SPDX-License-Identifier: GPL-2.0
/*
 * reqresp: rounds of requests and responses between message threads and
 * their workers, with a short sleep after each round, in the spirit of
 * schbench's request loop (Chris Mason).
 *
 * Seed 003 ("sched: Reduce overhead of frequent newidle balancing", Jason
 * Low, 2013) is about machines where CPUs go idle and come back many times
 * a millisecond: each idle entry runs a newidle balance, and a failing one
 * is pure overhead. Here every worker sleeps between requests and every
 * message thread sleeps after each round, so each CPU goes idle once per
 * round or more; what is measured is how fast the rounds go and how long
 * a woken worker waits to run (the wakeup latency, from the request being
 * posted to the worker running, on CLOCK_MONOTONIC).
 *
 * Usage: reqresp GROUPS WORKERS THINK_US SLEEP_US MILLISECONDS
 *   GROUPS message threads, each with WORKERS workers; a worker burns
 *   THINK_US of its own CPU time per request; a message thread sleeps
 *   SLEEP_US after each round (all its workers answered).
 * Prints: reqresp groups=.. workers=.. think_us=.. sleep_us=.. ms=..
 *   rounds=.. rounds_per_s=.. wake_p50_us=.. wake_p99_us=.. wake_max_us=..
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GROUPS 64
#define MAX_WORKERS 64
/* Wakeup latency histogram: 1 us buckets up to 100 ms, then one more. */
#define LAT_BUCKETS 100001

/* The message threads stop at the end of a round; the workers only once
 * every message thread has (a worker gone early would leave a round
 * waiting for its answer). */
static atomic_int stop, quit;

struct group;

struct worker {
	pthread_t tid;
	struct group *g;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending;			/* a request waits (under lock) */
	struct timespec posted;		/* when it was posted */
};

struct group {
	pthread_t tid;
	int nworkers;
	struct worker w[MAX_WORKERS];
	pthread_mutex_t lock;
	pthread_cond_t done;
	int outstanding;		/* requests not answered (under lock) */
	unsigned long rounds;
};

static long think_us, sleep_us;
static unsigned long *lat_hist;		/* shared, atomically incremented */
static struct group groups[MAX_GROUPS];

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

static void burn_cpu_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while (ns_between(&t0, &t) < us * 1000LL);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct group *g = w->g;
	struct timespec now;
	long long lat_us;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->pending && !atomic_load(&quit))
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->pending) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		w->pending = 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		lat_us = ns_between(&w->posted, &now) / 1000;
		pthread_mutex_unlock(&w->lock);
		if (lat_us < 0)
			lat_us = 0;
		if (lat_us >= LAT_BUCKETS)
			lat_us = LAT_BUCKETS - 1;
		__atomic_fetch_add(&lat_hist[lat_us], 1, __ATOMIC_RELAXED);

		burn_cpu_us(think_us);

		pthread_mutex_lock(&g->lock);
		if (--g->outstanding == 0)
			pthread_cond_signal(&g->done);
		pthread_mutex_unlock(&g->lock);
	}
}

static void *group_main(void *arg)
{
	struct group *g = arg;
	struct timespec nap = { sleep_us / 1000000, (sleep_us % 1000000) * 1000 };
	int i;

	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&g->lock);
		g->outstanding = g->nworkers;
		pthread_mutex_unlock(&g->lock);
		for (i = 0; i < g->nworkers; i++) {
			struct worker *w = &g->w[i];

			pthread_mutex_lock(&w->lock);
			clock_gettime(CLOCK_MONOTONIC, &w->posted);
			w->pending = 1;
			pthread_cond_signal(&w->cond);
			pthread_mutex_unlock(&w->lock);
		}
		pthread_mutex_lock(&g->lock);
		while (g->outstanding > 0)
			pthread_cond_wait(&g->done, &g->lock);
		pthread_mutex_unlock(&g->lock);
		g->rounds++;
		if (sleep_us > 0)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

/* A whole number in [lo, hi], or a message and exit status 2. */
static long arg_long(const char *s, const char *name, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "reqresp: %s '%s': want a whole number in [%ld, %ld]\n",
			name, s, lo, hi);
		exit(2);
	}
	return v;
}

/* The smallest latency with at least @frac of the samples at or below. */
static long percentile(unsigned long total, double frac)
{
	unsigned long want = (unsigned long)(frac * (double)total), seen = 0;
	long b;

	if (want == 0)
		want = 1;
	for (b = 0; b < LAT_BUCKETS; b++) {
		seen += lat_hist[b];
		if (seen >= want)
			return b;
	}
	return LAT_BUCKETS - 1;
}

int main(int argc, char **argv)
{
	long ngroups, nworkers, ms, b, max_us = 0;
	unsigned long rounds = 0, total = 0;
	struct timespec t0, t1, run;
	double secs;
	int i, j;

	if (argc != 6) {
		fprintf(stderr, "usage: reqresp GROUPS WORKERS THINK_US SLEEP_US MILLISECONDS\n");
		return 2;
	}
	ngroups = arg_long(argv[1], "GROUPS", 1, MAX_GROUPS);
	nworkers = arg_long(argv[2], "WORKERS", 1, MAX_WORKERS);
	think_us = arg_long(argv[3], "THINK_US", 0, 1000000);
	sleep_us = arg_long(argv[4], "SLEEP_US", 0, 1000000);
	ms = arg_long(argv[5], "MILLISECONDS", 1, 3600000);

	lat_hist = calloc(LAT_BUCKETS, sizeof(*lat_hist));
	if (!lat_hist) {
		fprintf(stderr, "reqresp: out of memory\n");
		return 1;
	}
	for (i = 0; i < ngroups; i++) {
		struct group *g = &groups[i];

		g->nworkers = (int)nworkers;
		pthread_mutex_init(&g->lock, NULL);
		pthread_cond_init(&g->done, NULL);
		for (j = 0; j < nworkers; j++) {
			struct worker *w = &g->w[j];

			w->g = g;
			pthread_mutex_init(&w->lock, NULL);
			pthread_cond_init(&w->cond, NULL);
			if (pthread_create(&w->tid, NULL, worker_main, w)) {
				fprintf(stderr, "reqresp: cannot create a worker thread\n");
				return 1;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ngroups; i++) {
		if (pthread_create(&groups[i].tid, NULL, group_main, &groups[i])) {
			fprintf(stderr, "reqresp: cannot create a message thread\n");
			return 1;
		}
	}
	run.tv_sec = ms / 1000;
	run.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&run, &run) && errno == EINTR)
		;
	atomic_store(&stop, 1);
	/* Message threads finish their round (their workers still answer). */
	for (i = 0; i < ngroups; i++)
		pthread_join(groups[i].tid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store(&quit, 1);
	for (i = 0; i < ngroups; i++) {
		for (j = 0; j < nworkers; j++) {
			struct worker *w = &groups[i].w[j];

			pthread_mutex_lock(&w->lock);
			pthread_cond_signal(&w->cond);
			pthread_mutex_unlock(&w->lock);
			pthread_join(w->tid, NULL);
		}
		rounds += groups[i].rounds;
	}
	for (b = 0; b < LAT_BUCKETS; b++) {
		total += lat_hist[b];
		if (lat_hist[b])
			max_us = b;
	}
	secs = (double)ns_between(&t0, &t1) / 1e9;
	printf("reqresp groups=%ld workers=%ld think_us=%ld sleep_us=%ld ms=%ld rounds=%lu "
	       "rounds_per_s=%.1f wake_p50_us=%ld wake_p99_us=%ld wake_max_us=%ld\n",
	       ngroups, nworkers, think_us, sleep_us, ms, rounds,
	       secs > 0 ? (double)rounds / secs : 0.0,
	       total ? percentile(total, 0.50) : 0, total ? percentile(total, 0.99) : 0,
	       max_us);
	return rounds > 0 ? 0 : 1;
}
