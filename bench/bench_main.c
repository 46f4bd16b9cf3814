/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench: a DPDK traffic generator and meter for esgw gateways. Sends
 * IPv4/UDP from a LAN host address on port A, receives on port B what the
 * gateways delivered, and reports offered and delivered rates, loss, latency
 * percentiles, and (--search) the zero-loss rate by an RFC 2544 binary search. */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench.h"

struct options {
	struct bench_size sizes[BENCH_MAX_SIZES];
	int nb_sizes;
	double rate;          /* --rate, 0 = as fast as possible */
	double duration;      /* --duration, of a fixed-rate trial */
	int search;           /* --search */
	double trial;         /* --trial, seconds per search trial */
	int steps;            /* --steps, search trials after the first at full speed */
	double precision_pct; /* --precision, stop when hi - lo is this close */
	double loss_pct;      /* --loss, tolerated loss in a passing trial */
	double drain;         /* --drain, seconds to wait for packets in flight */
	double connect_timeout;
	int json;
	int probe_only; /* --probe-only: start the ports, then stop */
	const char *label;
};

static const char *rate_str(double pps, char *buf, size_t len)
{
	if (pps >= 1e6)
		snprintf(buf, len, "%.3f Mpps", pps / 1e6);
	else
		snprintf(buf, len, "%.1f kpps", pps / 1e3);
	return buf;
}

static void print_trial_json(const struct trial_result *r)
{
	printf("{\"rate_asked\":%.0f,\"seconds\":%.3f,\"sent\":%" PRIu64 ",\"received\":%" PRIu64
	       ",\"tx_refused\":%" PRIu64 ",\"foreign\":%" PRIu64 ",\"reordered\":%" PRIu64
	       ",\"offered_pps\":%.0f,\"delivered_pps\":%.0f,\"loss_pct\":%.4f,"
	       "\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"samples\":%" PRIu64 "}}",
	       r->rate_asked, r->seconds, r->sent, r->received, r->tx_refused, r->foreign,
	       r->reordered, r->offered_pps, r->delivered_pps, r->loss_pct, r->latency_p50_us,
	       r->latency_p99_us, r->latency_max_us, r->latency_samples);
}

static void print_trial_text(const char *what, const struct trial_result *r)
{
	char a[32], b[32];

	printf("  %-12s offered %-13s delivered %-13s loss %7.3f%%  latency p50 %7.1f us "
	       "p99 %8.1f us%s\n",
	       what, rate_str(r->offered_pps, a, sizeof(a)),
	       rate_str(r->delivered_pps, b, sizeof(b)), r->loss_pct, r->latency_p50_us,
	       r->latency_p99_us, r->reordered ? "  (reordered packets seen)" : "");
}

static int trial_passes(const struct options *o, const struct trial_result *r)
{
	return r->sent > 0 && r->loss_pct <= o->loss_pct;
}

/* RFC 2544 26.1 style: a trial at full speed gives the upper bound and a first
 * guess (what got through); then bisect between the best passing and the
 * worst failing rate. */
static int run_search(struct bench *b, const struct options *o, const struct bench_size *size,
		      struct trial_result *best, struct trial_result *full, int *nb_trials)
{
	struct trial_result r;
	double lo = 0, hi, rate;

	if (bench_trial(b, size, 0, o->trial, o->drain, full) < 0)
		return -1;
	(*nb_trials)++;
	if (!o->json)
		print_trial_text("full speed", full);
	memset(best, 0, sizeof(*best));
	if (trial_passes(o, full)) {
		*best = *full; /* the generator's own limit: nothing was lost */
		return 0;
	}
	hi = full->offered_pps;
	rate = full->delivered_pps > 0 ? full->delivered_pps : hi / 2;
	for (int step = 0; step < o->steps; step++) {
		char buf[32];

		if (rate < 1)
			break;
		if (bench_trial(b, size, rate, o->trial, o->drain, &r) < 0)
			return -1;
		(*nb_trials)++;
		if (!o->json) {
			snprintf(buf, sizeof(buf), "try %.0f", rate);
			print_trial_text(buf, &r);
		}
		if (trial_passes(o, &r)) {
			lo = rate;
			*best = r;
		} else {
			hi = rate;
		}
		if (hi - lo <= hi * o->precision_pct / 100)
			break;
		rate = (lo + hi) / 2;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: esgw-bench EAL-ARGS... -- [options]\n"
		"  EAL-ARGS: --file-prefix P --lcores ID@CPU --no-pci\n"
		"            --vdev net_memif0,role=client,socket=A.sock,socket-abstract=no,id=0  (port A)\n"
		"            --vdev net_memif1,role=client,socket=B.sock,socket-abstract=no,id=0  (port B)\n"
		"  --addr-a A.B.C.D     host address on port A, the source (default 192.168.1.1)\n"
		"  --gateway-a A.B.C.D  next hop on port A, resolved by ARP (default 192.168.1.2)\n"
		"  --gateway-mac MAC    skip the ARP: send to this MAC (e.g. a plain forwarder)\n"
		"  --dst A.B.C.D[,...]  destinations, used in turn (up to %d; default 192.168.2.1)\n"
		"  --addr-b A.B.C.D     host address on port B, answered to ARP, as is every --dst\n"
		"                       (default the first --dst)\n"
		"  --size LIST          frame sizes with FCS or imix (%s);\n"
		"                       default 64\n"
		"  --rate PPS           offered load of a fixed trial (default 0: full speed)\n"
		"  --duration S         length of the fixed trial (default 1)\n"
		"  --search             RFC 2544 binary search for the zero-loss rate instead\n"
		"  --trial S            seconds per search trial (default 1)\n"
		"  --steps N            search trials after the full-speed one (default 8)\n"
		"  --precision PCT      stop the search when bounds are this close (default 2)\n"
		"  --loss PCT           loss tolerated in a passing trial (default 0)\n"
		"  --drain S            wait for packets in flight after a trial (default 0.2)\n"
		"  --connect-timeout S  wait this long for the memif peers (default 10)\n"
		"  --label TEXT         copied into the JSON output\n"
		"  --json               one JSON document on stdout\n"
		"  --probe-only         start both ports (links up), then stop: exit 0 if the\n"
		"                       driver works here\n",
		BENCH_MAX_DST, BENCH_IMIX_DESCRIPTION);
}

static int parse_ip(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "esgw-bench: bad IPv4 address %s\n", s);
		return -1;
	}
	*out = a.s_addr;
	return 0;
}

/* "A,B,..." -> b->dst[]; -1 on a bad address or too many. */
static int parse_dst_list(const char *arg, struct bench *b)
{
	char buf[256], *save = NULL;

	b->nb_dst = 0;
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (b->nb_dst == BENCH_MAX_DST) {
			fprintf(stderr, "esgw-bench: at most %d --dst addresses\n", BENCH_MAX_DST);
			return -1;
		}
		if (parse_ip(tok, &b->dst[b->nb_dst]) < 0)
			return -1;
		b->nb_dst++;
	}
	return b->nb_dst > 0 ? 0 : -1;
}

static int parse_positive(const char *name, const char *s, double min, double max, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (*end != '\0' || !(*out >= min && *out <= max)) {
		fprintf(stderr, "esgw-bench: bad %s %s (%g..%g)\n", name, s, min, max);
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o, struct bench *b)
{
	static const struct option options[] = {
		{"addr-a", required_argument, NULL, 'a'},
		{"gateway-a", required_argument, NULL, 'g'},
		{"gateway-mac", required_argument, NULL, 'm'},
		{"dst", required_argument, NULL, 'd'},
		{"addr-b", required_argument, NULL, 'b'},
		{"size", required_argument, NULL, 's'},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 't'},
		{"search", no_argument, NULL, 'S'},
		{"trial", required_argument, NULL, 'T'},
		{"steps", required_argument, NULL, 'n'},
		{"precision", required_argument, NULL, 'p'},
		{"loss", required_argument, NULL, 'l'},
		{"drain", required_argument, NULL, 'D'},
		{"connect-timeout", required_argument, NULL, 'c'},
		{"label", required_argument, NULL, 'L'},
		{"json", no_argument, NULL, 'j'},
		{"probe-only", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt, addr_b_set = 0;
	double v;

	optind = 1; /* the EAL used getopt before us */
	parse_ip("192.168.1.1", &b->addr_a);
	parse_ip("192.168.1.2", &b->gateway_a);
	parse_dst_list("192.168.2.1", b);
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'a':
			if (parse_ip(optarg, &b->addr_a) < 0)
				return -1;
			break;
		case 'g':
			if (parse_ip(optarg, &b->gateway_a) < 0)
				return -1;
			break;
		case 'm':
			if (rte_ether_unformat_addr(optarg, &b->gateway_mac) < 0) {
				fprintf(stderr, "esgw-bench: bad MAC %s\n", optarg);
				return -1;
			}
			b->gateway_mac_known = 1;
			break;
		case 'd':
			if (parse_dst_list(optarg, b) < 0)
				return -1;
			break;
		case 'b':
			if (parse_ip(optarg, &b->addr_b) < 0)
				return -1;
			addr_b_set = 1;
			break;
		case 's':
			o->nb_sizes = bench_sizes_parse(optarg, o->sizes);
			if (o->nb_sizes <= 0) {
				fprintf(stderr, "esgw-bench: bad --size %s\n", optarg);
				return -1;
			}
			break;
		case 'r':
			if (parse_positive("--rate", optarg, 0, 1e9, &o->rate) < 0)
				return -1;
			break;
		case 't':
			if (parse_positive("--duration", optarg, 0.01, 3600, &o->duration) < 0)
				return -1;
			break;
		case 'S':
			o->search = 1;
			break;
		case 'T':
			if (parse_positive("--trial", optarg, 0.01, 600, &o->trial) < 0)
				return -1;
			break;
		case 'n':
			if (parse_positive("--steps", optarg, 0, 64, &v) < 0)
				return -1;
			o->steps = (int)v;
			break;
		case 'p':
			if (parse_positive("--precision", optarg, 0.01, 100, &o->precision_pct) < 0)
				return -1;
			break;
		case 'l':
			if (parse_positive("--loss", optarg, 0, 100, &o->loss_pct) < 0)
				return -1;
			break;
		case 'D':
			if (parse_positive("--drain", optarg, 0, 60, &o->drain) < 0)
				return -1;
			break;
		case 'c':
			if (parse_positive("--connect-timeout", optarg, 0.1, 600,
					   &o->connect_timeout) < 0)
				return -1;
			break;
		case 'L':
			o->label = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'P':
			o->probe_only = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "esgw-bench: unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	if (!addr_b_set)
		b->addr_b = b->dst[0];
	return 0;
}

static void print_point(const struct options *o, const struct bench_size *size, int first,
			const struct trial_result *fixed, const struct trial_result *best,
			const struct trial_result *full, int nb_trials)
{
	if (!o->json) {
		char a[32];

		if (o->search)
			printf("  => size %s: zero-loss rate %s (%d trials), latency at that rate "
			       "p50 %.1f us p99 %.1f us\n",
			       size->name, rate_str(best->offered_pps, a, sizeof(a)), nb_trials,
			       best->latency_p50_us, best->latency_p99_us);
		else
			print_trial_text("trial", fixed);
		return;
	}
	printf("%s{\"size\":\"%s\",\"avg_frame_bytes\":%.1f,", first ? "" : ",", size->name,
	       bench_size_mean(size));
	if (o->search) {
		printf("\"zero_loss_pps\":%.0f,\"trials\":%d,\"full_speed\":", best->offered_pps,
		       nb_trials);
		print_trial_json(full);
		printf(",\"at_zero_loss\":");
		print_trial_json(best);
	} else {
		printf("\"trial\":");
		print_trial_json(fixed);
	}
	printf("}");
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct options o = {.duration = 1,
			    .trial = 1,
			    .steps = 8,
			    .precision_pct = 2,
			    .drain = 0.2,
			    .connect_timeout = 10,
			    .label = ""};
	int n, rc = 1;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "esgw-bench: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	o.nb_sizes = bench_sizes_parse("64", o.sizes);
	if (parse_options(argc, argv, &o, &b) < 0)
		goto out_eal;
	b.tsc_hz = rte_get_tsc_hz();
	/* Short sleeps between paced bursts must not overshoot by the default 50 us. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	b.pool = rte_pktmbuf_pool_create("bench.pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	b.latency = rte_malloc("bench.latency", sizeof(uint32_t) * BENCH_MAX_LATENCY_SAMPLES, 0);
	if (b.pool == NULL || b.latency == NULL) {
		fprintf(stderr, "esgw-bench: out of hugepage memory: %s\n",
			rte_strerror(rte_errno));
		goto out_eal;
	}
	if (bench_ports_start(&b, o.connect_timeout) < 0)
		goto out_ports;
	if (o.probe_only) {
		rc = 0;
		goto out_ports;
	}

	if (o.json)
		printf("{\"tool\":\"esgw-bench\",\"label\":\"%s\",\"imix\":\"%s\",\"mode\":\"%s\","
		       "\"tsc_hz\":%" PRIu64 ",\"results\":[",
		       o.label, BENCH_IMIX_DESCRIPTION, o.search ? "search" : "rate", b.tsc_hz);
	for (int s = 0; s < o.nb_sizes; s++) {
		struct trial_result fixed, best, full;
		int nb_trials = 0;

		memset(&fixed, 0, sizeof(fixed));
		memset(&best, 0, sizeof(best));
		memset(&full, 0, sizeof(full));
		if (!o.json)
			printf("size %s (mean frame %.0f bytes)\n", o.sizes[s].name,
			       bench_size_mean(&o.sizes[s]));
		if (bench_warm_up(&b, &o.sizes[s], o.connect_timeout) < 0)
			goto out_json;
		if (o.search) {
			if (run_search(&b, &o, &o.sizes[s], &best, &full, &nb_trials) < 0)
				goto out_json;
		} else if (bench_trial(&b, &o.sizes[s], o.rate, o.duration, o.drain, &fixed) < 0) {
			goto out_json;
		}
		print_point(&o, &o.sizes[s], s == 0, &fixed, &best, &full, nb_trials);
		fflush(stdout);
	}
	rc = 0;
out_json:
	if (o.json)
		printf("]%s}\n", rc ? ",\"error\":\"see stderr\"" : "");
out_ports:
	bench_ports_stop();
out_eal:
	rte_eal_cleanup();
	return rc;
}
