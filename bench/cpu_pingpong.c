/* SPDX-License-Identifier: BSD-3-Clause */
/* cpu-pingpong: how long a cache line takes from one CPU to another and
 * back. Two threads, one pinned to each CPU, hand a counter to each other
 * through one 64-byte line; the round trip is the time of a hand-over there
 * and back. On a virtual machine it depends on where the host puts the two
 * vCPUs, and changes when it moves them: every packet esgw hands from a
 * process on one CPU to one on the other waits for it, so bench/run.sh
 * prints it with its results. Output: median, min and max in ns over
 * samples of 20 ms each. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"

#define HANDS_PER_CHECK 256 /* round trips between two clock reads */

static _Alignas(64) _Atomic uint64_t line;
static _Atomic int done;

/* The far side (started on its CPU): every odd value back as the next
 * even one. */
static void *echo(void *arg)
{
	uint64_t want = 1;

	(void)arg;
	while (!atomic_load_explicit(&done, memory_order_relaxed)) {
		if (atomic_load_explicit(&line, memory_order_acquire) != want)
			continue;
		atomic_store_explicit(&line, want + 1, memory_order_release);
		want += 2;
	}
	return NULL;
}

/* HANDS_PER_CHECK round trips; *arg is the last value handed back. */
static long round_trips(void *arg)
{
	uint64_t *v = arg;

	for (int k = 0; k < HANDS_PER_CHECK; k++, *v += 2) {
		atomic_store_explicit(&line, *v + 1, memory_order_release);
		while (atomic_load_explicit(&line, memory_order_acquire) != *v + 2)
			;
	}
	return HANDS_PER_CHECK;
}

int main(int argc, char **argv)
{
	int here, there;
	double seconds;
	uint64_t v = 0;
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t t;

	if (argc != 4 || (here = atoi(argv[1])) < 0 || (there = atoi(argv[2])) < 0 ||
	    (seconds = atof(argv[3])) <= 0 || here == there) {
		fprintf(stderr, "usage: cpu-pingpong CPU OTHER-CPU SECONDS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(here, &set);
	if ((errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) != 0) {
		fprintf(stderr, "cpu-pingpong: CPU %d: %s\n", here, strerror(errno));
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(there, &set);
	pthread_attr_init(&attr);
	if ((errno = pthread_attr_setaffinity_np(&attr, sizeof(set), &set)) != 0 ||
	    (errno = pthread_create(&t, &attr, echo, NULL)) != 0) {
		fprintf(stderr, "cpu-pingpong: CPU %d: %s\n", there, strerror(errno));
		return 1;
	}
	pthread_attr_destroy(&attr);
	samples_print_ns(seconds, round_trips, &v);
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	return 0;
}
