/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench's command line: what to send, what to count, which trials. */
#ifndef ESGW_BENCH_OPTIONS_H
#define ESGW_BENCH_OPTIONS_H

#include "bench.h"

#define BENCH_MAX_RATES 8

struct options {
	struct bench_size sizes[BENCH_MAX_SIZES];
	int nb_sizes;
	double rates[BENCH_MAX_RATES]; /* --rate, fixed trials in turn; 0 = full speed */
	int nb_rates;
	double duration;      /* --duration, of a fixed-rate trial */
	int search;           /* --search */
	int overload;         /* --overload: after the search, a trial at twice its rate */
	double trial;         /* --trial, seconds per search trial */
	int steps;            /* --steps, search trials after the first at full speed */
	double precision_pct; /* --precision, stop when hi - lo is this close */
	double loss_pct;      /* --loss, tolerated loss in a passing trial */
	double drain;         /* --drain, seconds to wait for packets in flight */
	double prime;         /* --prime, seconds at full speed before a full-speed or search
				 first trial, not counted */
	double connect_timeout;
	int json;
	int probe_only; /* --probe-only: start the ports, then stop */
	const char *label;
	int esp_tx; /* --esp-tx: send ESP, with esp_cfg */
	struct esp_tx_config esp_cfg;
	const char *esp_seq_file; /* --esp-seq-file: where the SA's next sequence number lives */
	const char *before_exit;  /* --before-exit: a shell command run before the ports close */
};

/* Parses what follows the EAL arguments into o and b (addresses, ESP,
 * watched processes). Returns 0, or -1 after a message; exits on --help. */
int bench_options_parse(int argc, char **argv, struct options *o, struct bench *b);

#endif
