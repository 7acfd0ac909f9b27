// SPDX-License-Identifier: GPL-2.0
/*
 * coresched: core scheduling cookies for the test guest (util-linux's
 * coresched came in 2.40; Debian 12 has 2.38).
 *
 *   coresched new CMD [ARG...]   runs CMD with a cookie of its own, which
 *                                every task it forks inherits
 *   coresched get PID            prints PID's cookie (0: none)
 *
 * The coresched step of scripts/guest/init gives two groups of tasks two
 * cookies, to check that STEAL never moves a task onto a core that runs
 * the other cookie. Exits 2 on a usage error, 3 if the kernel has no core
 * scheduling (or the CPU no SMT), with the reason on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE			62
#define PR_SCHED_CORE_GET		0
#define PR_SCHED_CORE_CREATE		1
#endif
#ifndef PR_SCHED_CORE_SCOPE_THREAD_GROUP
#define PR_SCHED_CORE_SCOPE_THREAD	0
#define PR_SCHED_CORE_SCOPE_THREAD_GROUP 1
#endif

int main(int argc, char **argv)
{
	unsigned long cookie = 0;
	char *end;
	long pid;

	if (argc >= 3 && !strcmp(argv[1], "new")) {
		if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
			  PR_SCHED_CORE_SCOPE_THREAD_GROUP, 0)) {
			fprintf(stderr, "coresched: PR_SCHED_CORE_CREATE: %s\n",
				strerror(errno));
			return 3;
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "coresched: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "get")) {
		pid = strtol(argv[2], &end, 10);
		if (*end || pid < 1) {
			fprintf(stderr, "coresched: get: '%s' is not a PID\n", argv[2]);
			return 2;
		}
		/* GET takes one thread: the thread group's leader's. */
		if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, pid,
			  PR_SCHED_CORE_SCOPE_THREAD, &cookie)) {
			fprintf(stderr, "coresched: PR_SCHED_CORE_GET %ld: %s\n",
				pid, strerror(errno));
			return 3;
		}
		printf("%lu\n", cookie);
		return 0;
	}
	fprintf(stderr, "usage: coresched new CMD [ARG...] | coresched get PID\n");
	return 2;
}
