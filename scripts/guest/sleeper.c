// SPDX-License-Identifier: GPL-2.0
/*
 * sleeper: sleep USEC microseconds, wake, repeat, until killed.
 *
 * The test guest's sleepers (start_load in scripts/guest/init): tasks that
 * wake every few milliseconds and go straight back to sleep, so CPUs keep
 * going idle (newidle balancing, STEAL) and wakeups keep asking
 * select_idle_sibling() for a CPU. The shell loop it replaces
 * ("while :; do usleep 3000; done") forked and exec'd usleep at every
 * wakeup, about 2700 fork+exec per second with 8 of them: under KASAN and
 * TCG that cost more than everything else the guest ran, and it said
 * nothing about load balancing.
 *
 * Usage: sleeper USEC
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	long usec;
	char *end;

	usec = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || usec < 1 || usec > 1000000) {
		fprintf(stderr, "usage: sleeper USEC (1 to 1000000)\n");
		return 2;
	}
	ts.tv_sec = usec / 1000000;
	ts.tv_nsec = (usec % 1000000) * 1000;
	for (;;)
		nanosleep(&ts, NULL);
}
