/* SPDX-License-Identifier: BSD-3-Clause */
/* ctld's record of each dataplane process (rxtx, router, crypto-N): made at
 * start, grown and shrunk with the worker count, found by name. */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dp_proc_state_name(enum proc_state s)
{
	switch (s) {
	case PROC_STARTING:
		return "starting";
	case PROC_RUNNING:
		return "running";
	case PROC_BACKOFF:
		return "backoff";
	default:
		return "stopped";
	}
}

struct dp_proc *dp_proc_by_name(const char *name)
{
	for (int i = 0; i < ctld.nprocs; i++)
		if (strcmp(ctld.procs[i].name, name) == 0)
			return &ctld.procs[i];
	return NULL;
}

static void proc_init(int i)
{
	struct dp_proc *p;

	if (i < 0 || i >= CTLD_MAX_PROCS)
		return;
	p = &ctld.procs[i];
	memset(p, 0, sizeof(*p));
	dp_conn_init(p);
	p->worker = -1;
	if (i == 0) {
		p->role = "rxtx";
		snprintf(p->name, sizeof(p->name), "rxtx");
	} else if (i == 1) {
		p->role = "router";
		snprintf(p->name, sizeof(p->name), "router");
	} else {
		p->role = "crypto";
		p->worker = i - 2;
		snprintf(p->name, sizeof(p->name), "crypto-%d", p->worker);
	}
}

void dp_procs_init(int workers)
{
	ctld.nprocs = 2 + workers;
	for (int i = 0; i < ctld.nprocs; i++)
		proc_init(i);
}

void dp_procs_resize(int workers)
{
	for (int i = ctld.nprocs; i < 2 + workers; i++)
		proc_init(i);
	if (2 + workers > ctld.nprocs)
		ctld.nprocs = 2 + workers;
}

void dp_procs_shrink(int workers)
{
	while (ctld.nprocs > 2 + workers) {
		struct dp_proc *p = &ctld.procs[ctld.nprocs - 1];

		dp_conn_close(p);
		free(p->stats_cache);
		p->stats_cache = NULL;
		ctld.nprocs--;
	}
}
