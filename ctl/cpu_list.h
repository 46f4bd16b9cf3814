/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU lists as operators write them ("1", "0,1", "2-5,8"): parsing them, and
 * printing lists and affinity masks back in that form for messages. */
#ifndef ESGW_CPU_LIST_H
#define ESGW_CPU_LIST_H

#include <sched.h>
#include <stddef.h>

/* The CPUs of text in the order written (a range counts up; repeats are kept,
 * they are the operator's choice), at most max of them, into cpus. Returns
 * how many, or -1 with the reason in err. Every CPU is below CPU_SETSIZE. */
int cpu_list_parse(const char *text, int *cpus, int max, char *err, size_t errlen);

/* The index of the first of cpus[0..n-1] not in allowed, or -1 when all are. */
int cpu_list_first_missing(const int *cpus, int n, const cpu_set_t *allowed);

/* cpus[0..n-1] as "1,0", cut short with "..." to fit len. */
void cpu_list_format(const int *cpus, int n, char *buf, size_t len);

/* set as a list ("0-1,4"; "none" when empty), cut short with "..." to fit len. */
void cpu_set_format(const cpu_set_t *set, char *buf, size_t len);

#endif
