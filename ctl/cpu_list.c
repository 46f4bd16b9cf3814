/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing the CPU lists of esgw-ctld's placement options ("1", "0,1",
 * "2-5,8"), strictly: anything but digits, '-' and ',' in the right places is
 * refused, so a typo never pins a process to a CPU nobody meant. */
#include "cpu_list.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A decimal number in [s, end), advancing *s past its digits. It saturates at
 * CPU_SETSIZE, so no input overflows; false when there are no digits. */
static bool parse_number(const char **s, const char *end, unsigned int *value)
{
	const char *p = *s;
	unsigned int v = 0;

	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if (v < CPU_SETSIZE)
			v = v * 10 + (unsigned int)(*p - '0');
	*s = p;
	*value = v;
	return true;
}

int cpu_list_parse(const char *text, int *cpus, int max, char *err, size_t errlen)
{
	const char *s = text;
	int n = 0;

	if (*s == '\0') {
		snprintf(err, errlen, "empty list");
		return -1;
	}
	for (;;) {
		const char *end = s + strcspn(s, ","), *p = s;
		unsigned int lo, hi;

		if (end == s) {
			snprintf(err, errlen, "empty entry in '%s'", text);
			return -1;
		}
		if (!parse_number(&p, end, &lo)) {
			snprintf(err, errlen, "'%.*s' is not a CPU or a range of CPUs",
				 (int)(end - s), s);
			return -1;
		}
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if (!parse_number(&p, end, &hi)) {
				snprintf(err, errlen, "'%.*s' is not a CPU or a range of CPUs",
					 (int)(end - s), s);
				return -1;
			}
		}
		if (p != end) {
			snprintf(err, errlen, "'%.*s' is not a CPU or a range of CPUs",
				 (int)(end - s), s);
			return -1;
		}
		if (lo >= CPU_SETSIZE || hi >= CPU_SETSIZE) {
			snprintf(err, errlen, "'%.*s' is out of range: CPUs are numbered 0..%d",
				 (int)(end - s), s, CPU_SETSIZE - 1);
			return -1;
		}
		if (hi < lo) {
			snprintf(err, errlen, "range '%.*s' goes down", (int)(end - s), s);
			return -1;
		}
		if (hi - lo + 1 > (unsigned int)(max - n)) {
			snprintf(err, errlen, "'%s' names more than %d CPUs", text, max);
			return -1;
		}
		for (unsigned int cpu = lo; cpu <= hi; cpu++)
			cpus[n++] = (int)cpu;
		if (*end == '\0')
			return n;
		s = end + 1;
	}
}

int cpu_list_first_missing(const int *cpus, int n, const cpu_set_t *allowed)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE || !CPU_ISSET(cpus[i], allowed))
			return i;
	return -1;
}

/* printf to buf + *used; false (and "..." at the end of buf) once cut short. */
static bool __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= len - *used) {
		if (len >= 4)
			memcpy(buf + len - 4, "...", 4);
		return false;
	}
	*used += (size_t)w;
	return true;
}

void cpu_list_format(const int *cpus, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		if (!append(buf, len, &used, "%s%d", i ? "," : "", cpus[i]))
			return;
}

void cpu_set_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int last = cpu;

		if (!CPU_ISSET(cpu, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		if (!(last == cpu ? append(buf, len, &used, "%s%d", used ? "," : "", cpu)
				  : append(buf, len, &used, "%s%d-%d", used ? "," : "", cpu, last)))
			return;
		cpu = last;
	}
	if (used == 0)
		snprintf(buf, len, "none");
}
