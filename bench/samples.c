/* SPDX-License-Identifier: BSD-3-Clause */
/* Timed samples of a hand-over loop (samples.h). */
#include "samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SAMPLES_MAX 1000
#define SAMPLE_S 0.02

double samples_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void samples_print_ns(double seconds, samples_batch_fn batch, void *arg)
{
	static double ns[SAMPLES_MAX];
	int n = (int)(seconds / SAMPLE_S);

	n = n < 1 ? 1 : n > SAMPLES_MAX ? SAMPLES_MAX : n;
	for (int s = 0; s < n; s++) {
		double begin = samples_now_s(), end;
		long hands = 0;

		do {
			hands += batch(arg);
			end = samples_now_s();
		} while (end - begin < SAMPLE_S);
		ns[s] = (end - begin) / (double)hands * 1e9;
	}
	qsort(ns, (size_t)n, sizeof(ns[0]), cmp_double);
	printf("%.0f %.0f %.0f\n", ns[n / 2], ns[0], ns[n - 1]);
}
