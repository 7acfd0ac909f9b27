// SPDX-License-Identifier: GPL-2.0
/*
 * spin: N always-running threads for a while, then each thread's CPU time.
 *
 * The fairness workload of seed 001 ("sched/fair: Improve fairness between
 * cfs tasks", Vincent Guittot, 2020): 9 or 11 busy threads on 8 CPUs, where
 * the thread reported the min/max work per thread. Work is measured as CPU
 * time (CLOCK_THREAD_CPUTIME_ID), which is what the scheduler shares out,
 * so the ratio does not depend on how fast the (emulated) CPU runs.
 *
 * Usage: spin NTHREADS MILLISECONDS
 * Prints: threads=N ms=T min_ms=.. max_ms=.. ratio=0.xxx cpu_ms=a,b,...
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 256

static atomic_int stop;
static atomic_int ready;

struct worker {
	pthread_t tid;
	unsigned long long cpu_ns;
};

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned long long start;
	volatile unsigned long spins = 0;

	atomic_fetch_add(&ready, 1);
	start = thread_cpu_ns();
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		spins++;
	w->cpu_ns = thread_cpu_ns() - start;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	unsigned long long min = ~0ULL, max = 0;
	struct timespec ts;
	long n, ms, i;

	if (argc != 3 || (n = atol(argv[1])) < 1 || n > MAX_THREADS ||
	    (ms = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: spin NTHREADS(1-%d) MILLISECONDS\n",
			MAX_THREADS);
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&w[i].tid, NULL, work, &w[i])) {
			perror("spin: pthread_create");
			return 1;
		}
	}
	while (atomic_load(&ready) < n)
		sched_yield();
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].cpu_ns < min)
			min = w[i].cpu_ns;
		if (w[i].cpu_ns > max)
			max = w[i].cpu_ns;
	}
	printf("threads=%ld ms=%ld min_ms=%.1f max_ms=%.1f ratio=%.4f cpu_ms=",
	       n, ms, min / 1e6, max / 1e6, max ? (double)min / max : 0.0);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? "," : "", w[i].cpu_ns / 1e6);
	printf("\n");
	return 0;
}
