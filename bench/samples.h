/* SPDX-License-Identifier: BSD-3-Clause */
/* Timed samples of a hand-over loop, shared by cpu-pingpong and cpu-switch:
 * the clock, and a run of 20 ms samples printed as median, min and max ns
 * per hand-over (the line bench/run.sh reads). */
#ifndef ESGW_BENCH_SAMPLES_H
#define ESGW_BENCH_SAMPLES_H

/* CLOCK_MONOTONIC in seconds. */
double samples_now_s(void);

/* Do a batch of hand-overs; returns how many. */
typedef long (*samples_batch_fn)(void *arg);

/* Call batch(arg) in samples of 20 ms for about seconds (at least one
 * sample) and print "median min max" ns per hand-over on stdout. */
void samples_print_ns(double seconds, samples_batch_fn batch, void *arg);

#endif
