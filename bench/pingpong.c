// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: a buddy pair that wakes each other over two pipes.
 *
 * The workload of seed 000 ("sched: Further improve spurious CPU_IDLE
 * active migrations", Mike Galbraith, 2016), where netperf TCP_RR's
 * client and server are such a pair: on an X5472 (pairs of cores sharing
 * an L2, sd_llc_size == 2) the idle-CPU balance kept pulling them apart.
 * Reports round trips, how often the two ran on different CPUs and on
 * different LLCs at a round trip (the bouncing the thread was about), and
 * the pair's migrations (se.nr_migrations in /proc/PID/sched).
 *
 * With -s, a stream instead: the thread's 2x gain came from netperf
 * UDP_STREAM with 64 KB messages, whose two ends are both mostly
 * runnable (the sender copying out, the receiver copying in), so the idle
 * balancer found each end's LLC busy and split them across LLCs, which a
 * ping-pong pair that sleeps half the time never shows. The parent
 * writes 64 KB messages into a pipe and the child reads each and sums its
 * bytes; a round is a message, and the two ends' CPUs are compared at
 * each (the child publishes its CPU in shared memory).
 *
 * With -u, the thread's own shape: UDP datagrams of 64000 bytes over
 * loopback (the guest's lo is brought up here), the sender never blocking
 * (a full receive queue drops), the receiver summing each; rounds are
 * datagrams received.
 *
 * Usage: pingpong [-s|-u] MILLISECONDS
 * Prints: rounds=N per_s=R apart=F apart_llc=F migrations=M
 *   (with -s, "stream" first; with -u, "udp")
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long nr_migrations(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "se.nr_migrations", 16)) {
			char *colon = strchr(line, ':');

			v = colon ? atol(colon + 1) : -1;
			break;
		}
	}
	fclose(f);
	return v;
}

#define MAX_CPUS 256

/*
 * LLC of each CPU: the first CPU sharing its L3 (cache/index3/
 * shared_cpu_list), else its package. Not cache/index3/id: QEMU reports
 * one id per CPU there.
 */
static int llc_of[MAX_CPUS];

static int first_cpu_in(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void read_llcs(void)
{
	char path[112];
	int cpu;

	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list",
			 cpu);
		llc_of[cpu] = first_cpu_in(path);
		if (llc_of[cpu] >= 0)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
			 cpu);
		llc_of[cpu] = first_cpu_in(path);
		if (llc_of[cpu] < 0)
			llc_of[cpu] = -1 - cpu;
	}
}

static int other_llc(int a, int b)
{
	if (a < 0 || b < 0 || a >= MAX_CPUS || b >= MAX_CPUS)
		return 0;
	return llc_of[a] != llc_of[b];
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The pair's migrations so far, read while the child is still alive. */
static long pair_migrations(pid_t child)
{
	long m0 = nr_migrations(getpid()), m1 = nr_migrations(child);

	return m0 >= 0 && m1 >= 0 ? m0 + m1 : -1;
}

/* Where the two ends ran, sampled once a round by the sender. */
struct placement {
	long samples;	/* rounds sampled */
	long apart;	/* of those, the ends on different CPUs */
	long apart_llc;	/* on different LLCs */
};

/* One sample: @peer is the other end's last CPU, -1 before it ran. */
static void place(struct placement *pl, int peer, int cpu)
{
	pl->samples++;
	if (peer < 0)
		return;
	pl->apart += peer != cpu;
	pl->apart_llc += other_llc(peer, cpu);
}

/* The output line, without its newline. */
static void print_result(const char *tag, long rounds, double secs,
			 const struct placement *pl, long migrations)
{
	long n = pl->samples;

	printf("%s%srounds=%ld per_s=%.0f apart=%.4f apart_llc=%.4f migrations=%ld",
	       tag, *tag ? " " : "", rounds, rounds / secs,
	       n ? (double)pl->apart / n : 0.0,
	       n ? (double)pl->apart_llc / n : 0.0, migrations);
}

#define MSG_BYTES (64 * 1024)

static int read_full(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* The -s stream: see the header. */
static int stream(long ms)
{
	static unsigned char buf[MSG_BYTES];
	struct placement pl = { 0 };
	volatile int *child_cpu;
	double t0, limit;
	long migrations;
	int fds[2];
	pid_t child;

	child_cpu = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (child_cpu == MAP_FAILED || pipe(fds)) {
		perror("pingpong: mmap/pipe");
		return 1;
	}
	*child_cpu = -1;
	child = fork();
	if (child < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (!child) {
		unsigned long sum = 0;
		size_t i;

		close(fds[1]);
		while (!read_full(fds[0], buf, sizeof(buf))) {
			for (i = 0; i < sizeof(buf); i++)
				sum += buf[i];
			*child_cpu = sched_getcpu();
		}
		/* Uses the sum, so the compiler keeps the loop that reads the bytes. */
		_exit(sum == 1);
	}
	close(fds[0]);
	memset(buf, 1, sizeof(buf));
	t0 = now_s();
	limit = t0 + ms / 1000.0;
	while (now_s() < limit) {
		size_t put = 0;

		while (put < sizeof(buf)) {
			ssize_t n = write(fds[1], buf + put, sizeof(buf) - put);

			if (n <= 0) {
				perror("pingpong: pipe write");
				return 1;
			}
			put += (size_t)n;
		}
		place(&pl, *child_cpu, sched_getcpu());
	}
	migrations = pair_migrations(child);
	close(fds[1]);
	waitpid(child, NULL, 0);
	print_result("stream", pl.samples, now_s() - t0, &pl, migrations);
	printf("\n");
	return 0;
}

#define UDP_BYTES 64000

/* Brings the loopback interface up (an initramfs guest starts with it down). */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		rc = 0;
		/* Already up (any host): nothing to set, no privilege needed. */
		if (!(ifr.ifr_flags & IFF_UP)) {
			ifr.ifr_flags |= IFF_UP;
			rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
		}
	}
	close(fd);
	return rc;
}

/* The -u stream: see the header. */
static int udp_stream(long ms)
{
	static unsigned char buf[UDP_BYTES];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	struct placement pl = { 0 };
	volatile long *shared;
	double t0, limit, dt;
	long migrations;
	int rx, tx;
	pid_t child;

	if (lo_up()) {
		perror("pingpong: bringing lo up");
		return 1;
	}
	shared = mmap(NULL, 2 * sizeof(long), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (shared == MAP_FAILED || rx < 0 || tx < 0 ||
	    bind(rx, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(rx, (struct sockaddr *)&addr, &alen)) {
		perror("pingpong: udp setup");
		return 1;
	}
	shared[0] = -1;	/* the receiver's CPU */
	shared[1] = 0;	/* datagrams received */
	child = fork();
	if (child < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (!child) {
		unsigned long sum = 0;
		ssize_t n, i;

		close(tx);
		while ((n = recv(rx, buf, sizeof(buf), 0)) > 0) {
			if (n == 1)
				break;	/* the sender's end mark */
			for (i = 0; i < n; i++)
				sum += buf[i];
			shared[0] = sched_getcpu();
			shared[1]++;
		}
		/* Uses the sum, so the compiler keeps the loop that reads the bytes. */
		_exit(sum == 1);
	}
	close(rx);
	memset(buf, 1, sizeof(buf));
	t0 = now_s();
	limit = t0 + ms / 1000.0;
	while (now_s() < limit) {
		/* A full receive queue drops the datagram: the sender goes on. */
		if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&addr,
			   sizeof(addr)) < 0 && errno != ENOBUFS) {
			perror("pingpong: sendto");
			return 1;
		}
		place(&pl, (int)shared[0], sched_getcpu());
	}
	dt = now_s() - t0;
	migrations = pair_migrations(child);
	/* The end mark, until the receiver has gone (drops are possible). */
	while (waitpid(child, NULL, WNOHANG) == 0) {
		sendto(tx, buf, 1, 0, (struct sockaddr *)&addr, sizeof(addr));
		usleep(1000);
	}
	print_result("udp", shared[1], dt, &pl, migrations);
	printf(" sent=%ld\n", pl.samples);
	return 0;
}

int main(int argc, char **argv)
{
	struct placement pl = { 0 };
	int ping[2], pong[2];
	long ms, migrations;
	double t0, limit;
	pid_t child;
	int mode = 0;

	if (argc == 3 && (!strcmp(argv[1], "-s") || !strcmp(argv[1], "-u")))
		mode = argv[1][1];
	if (argc != 2 + !!mode || (ms = atol(argv[1 + !!mode])) < 1) {
		fprintf(stderr, "usage: pingpong [-s|-u] MILLISECONDS\n");
		return 2;
	}
	read_llcs();
	if (mode == 's')
		return stream(ms);
	if (mode == 'u')
		return udp_stream(ms);
	if (pipe(ping) || pipe(pong)) {
		perror("pingpong: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (!child) {
		/* Echo each byte back, with the CPU it ran on. */
		unsigned char c;

		close(ping[1]);
		close(pong[0]);
		while (read(ping[0], &c, 1) == 1) {
			c = (unsigned char)sched_getcpu();
			if (write(pong[1], &c, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	t0 = now_s();
	limit = t0 + ms / 1000.0;
	while (now_s() < limit) {
		unsigned char c = 0;

		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			perror("pingpong: pipe I/O");
			return 1;
		}
		place(&pl, c, (unsigned char)sched_getcpu());
	}
	migrations = pair_migrations(child);
	close(ping[1]);
	waitpid(child, NULL, 0);
	print_result("", pl.samples, now_s() - t0, &pl, migrations);
	printf("\n");
	return 0;
}
