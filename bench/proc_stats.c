/* SPDX-License-Identifier: BSD-3-Clause */
/* /proc readings of the processes under test (see proc_stats.h). */
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_stats.h"

int proc_watch_parse(const char *arg, struct proc_watch w[BENCH_MAX_WATCH])
{
	char *copy = strdup(arg), *save = NULL;
	int n = 0;

	if (copy == NULL)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		long pid;

		if (n == BENCH_MAX_WATCH || eq == NULL || eq == tok ||
		    (size_t)(eq - tok) >= sizeof(w[0].name)) {
			fprintf(stderr, "esgw-bench: bad --watch entry %s (NAME=PID, at most %d)\n",
				tok, BENCH_MAX_WATCH);
			free(copy);
			return -1;
		}
		pid = strtol(eq + 1, &end, 10);
		if (*end != '\0' || pid <= 0) {
			fprintf(stderr, "esgw-bench: bad pid in --watch entry %s\n", tok);
			free(copy);
			return -1;
		}
		memcpy(w[n].name, tok, (size_t)(eq - tok));
		w[n].name[eq - tok] = '\0';
		w[n].pid = (int)pid;
		n++;
	}
	free(copy);
	return n;
}

/* utime and stime: fields 14 and 15 of /proc/PID/stat, counted after the
 * command name, which is in parentheses and may hold spaces. */
static int read_ticks(int pid, uint64_t *ticks)
{
	char path[64], buf[1024];
	unsigned long long utime, stime;
	const char *p;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&utime, &stime) != 2)
		return -1;
	*ticks = utime + stime;
	return 0;
}

/* One thread's context switches (status) and run time (schedstat: ns on a
 * CPU, ns waiting for one, time slices). A thread that just ended adds
 * nothing. */
static void add_thread(int pid, const char *tid, struct proc_sample *s)
{
	char path[300], line[128];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, tid);
	f = fopen(path, "r");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				s->voluntary += v;
			else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				s->nonvoluntary += v;
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, tid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%llu", &v) == 1)
			s->run_ns += v;
		fclose(f);
	}
}

static void sample_one(int pid, struct proc_sample *s)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	memset(s, 0, sizeof(*s));
	if (read_ticks(pid, &s->ticks) < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (dir == NULL)
		return;
	while ((d = readdir(dir)) != NULL)
		if (d->d_name[0] != '.')
			add_thread(pid, d->d_name, s);
	closedir(dir);
	s->ok = 1;
}

void proc_sample_take(const struct proc_watch *w, unsigned int n, struct proc_sample *out)
{
	for (unsigned int i = 0; i < n; i++)
		sample_one(w[i].pid, &out[i]);
}

void proc_print_json(FILE *out, const struct proc_watch *w, unsigned int n,
		     const struct proc_sample *before, const struct proc_sample *after)
{
	double tck = (double)sysconf(_SC_CLK_TCK);

	fputc('[', out);
	for (unsigned int i = 0; i < n; i++) {
		const struct proc_sample *a = &before[i], *b = &after[i];

		fprintf(out, "%s{\"name\":\"%s\",\"pid\":%d,", i ? "," : "", w[i].name, w[i].pid);
		/* Threads only come and go at start-up and exit: a smaller sum means
		 * one ended in between, and the difference would mean nothing. */
		if (a->ok && b->ok && b->ticks >= a->ticks && b->run_ns >= a->run_ns &&
		    b->voluntary >= a->voluntary && b->nonvoluntary >= a->nonvoluntary)
			fprintf(out,
				"\"cpu_s\":%.3f,\"run_s\":%.6f,\"voluntary\":%" PRIu64
				",\"nonvoluntary\":%" PRIu64 "}",
				(double)(b->ticks - a->ticks) / tck,
				(double)(b->run_ns - a->run_ns) * 1e-9, b->voluntary - a->voluntary,
				b->nonvoluntary - a->nonvoluntary);
		else
			fprintf(out, "\"cpu_s\":null,\"run_s\":null,\"voluntary\":null,"
				     "\"nonvoluntary\":null}");
	}
	fputc(']', out);
}
