/* SPDX-License-Identifier: BSD-3-Clause */
/* What the processes under test cost over one measured interval, from /proc:
 * CPU time (utime + stime of the whole process, /proc/PID/stat, in clock
 * ticks; and the same time to the nanosecond, the scheduler's run time of each
 * thread, /proc/PID/task/TID/schedstat) and context switches (voluntary and
 * nonvoluntary, summed over its threads, /proc/PID/task/TID/status). Read by
 * esgw-bench at the start and the end of each trial's transmission, so the
 * figures cover exactly the packets of it. */
#ifndef ESGW_BENCH_PROC_STATS_H
#define ESGW_BENCH_PROC_STATS_H

#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_WATCH 16

/* A process named in --watch NAME=PID. */
struct proc_watch {
	char name[32];
	int pid;
};

struct proc_sample {
	uint64_t ticks;  /* utime + stime, clock ticks */
	uint64_t run_ns; /* time on a CPU, all threads */
	uint64_t voluntary, nonvoluntary;
	int ok; /* 0: the process was gone or /proc unreadable */
};

/* "NAME=PID,NAME=PID" into w[]; returns the count, or -1 with a message. */
int proc_watch_parse(const char *arg, struct proc_watch w[BENCH_MAX_WATCH]);
void proc_sample_take(const struct proc_watch *w, unsigned int n, struct proc_sample *out);
/* One JSON array, an object per process: name, pid, cpu_s (utime + stime),
 * run_s (the same from schedstat, to the nanosecond), voluntary, nonvoluntary:
 * differences between the two samples, null if either failed. */
void proc_print_json(FILE *out, const struct proc_watch *w, unsigned int n,
		     const struct proc_sample *before, const struct proc_sample *after);

#endif
