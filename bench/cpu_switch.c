/* SPDX-License-Identifier: BSD-3-Clause */
/* cpu-switch: what handing the CPU from one process to another costs this
 * machine, the way esgw's processes hand work to each other when they share
 * a CPU: two processes pinned to one CPU pass a token through a word of
 * shared memory, each waking the other with FUTEX_WAKE and sleeping in
 * FUTEX_WAIT (common/doorbell.c's calls). Every hand-over is a wake, a
 * sleep and a context switch. bench/run.sh prints it with its results: the
 * context switches per 1,000 packets it reports for each process, times
 * this, are what the stages pay for sharing a CPU (on a virtual machine a
 * switch costs several times what it does on bare metal). Output: median,
 * min and max ns per hand-over, over samples of 20 ms each. */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "samples.h"

#define TRIPS_PER_CHECK 64

enum { IDLE = 0, PARENT_GAVE = 1, CHILD_GAVE = 2, STOP = 3 };

static void futex_wait(uint32_t *w, uint32_t value)
{
	syscall(SYS_futex, w, FUTEX_WAIT, value, NULL, NULL, 0);
}

static void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Hand the token to the other side (give) and sleep until it comes back as
 * anything but give. */
static uint32_t hand_over(uint32_t *w, uint32_t give)
{
	uint32_t v;

	__atomic_store_n(w, give, __ATOMIC_RELEASE);
	futex_wake(w);
	while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) == give)
		futex_wait(w, give);
	return v;
}

/* TRIPS_PER_CHECK round trips through the shared word arg: twice as many
 * hand-overs. */
static long round_trips(void *arg)
{
	for (int k = 0; k < TRIPS_PER_CHECK; k++)
		hand_over(arg, PARENT_GAVE);
	return 2 * TRIPS_PER_CHECK; /* there and back */
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	uint32_t *w;
	double seconds;
	int cpu, status;
	pid_t child;

	if (argc != 3 || (cpu = atoi(argv[1])) < 0 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: cpu-switch CPU SECONDS\n");
		return 2;
	}
	if (pin(cpu) != 0) {
		fprintf(stderr, "cpu-switch: CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}
	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		fprintf(stderr, "cpu-switch: mmap: %s\n", strerror(errno));
		return 1;
	}
	*w = IDLE;
	child = fork();
	if (child < 0) {
		fprintf(stderr, "cpu-switch: fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) { /* pinned with its parent: each token back at once */
		uint32_t v;

		while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != PARENT_GAVE && v != STOP)
			futex_wait(w, v);
		while (v != STOP)
			v = hand_over(w, CHILD_GAVE);
		_exit(0);
	}
	samples_print_ns(seconds, round_trips, w);
	__atomic_store_n(w, STOP, __ATOMIC_RELEASE);
	futex_wake(w);
	waitpid(child, &status, 0);
	return 0;
}
