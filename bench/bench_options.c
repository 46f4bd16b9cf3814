/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench's command line (see bench_options.h and --help). */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_options.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: esgw-bench EAL-ARGS... -- [options]\n"
		"  EAL-ARGS: --file-prefix P --lcores ID@CPU --no-pci\n"
		"            --vdev net_memif0,role=client,socket=A.sock,socket-abstract=no,id=0  (port A)\n"
		"            --vdev net_memif1,role=client,socket=B.sock,socket-abstract=no,id=0  (port B)\n"
		"  --addr-a A.B.C.D     host address on port A, the source (default 192.168.1.1)\n"
		"  --gateway-a A.B.C.D  next hop on port A, resolved by ARP (default 192.168.1.2)\n"
		"  --gateway-mac MAC    skip the ARP: send to this MAC (a gateway without ARP)\n"
		"  --dst A.B.C.D[,...]  destinations, used in turn (up to %d; default 192.168.2.1)\n"
		"  --dst-count N        N destinations from the first --dst, each --dst-step\n"
		"                       (default 256: the next /24) above the one before (up to\n"
		"                       %d): one per tunnel of a hub\n"
		"  --dst-step N         see --dst-count\n"
		"  --addr-b A.B.C.D     host address on port B, answered to ARP, as is every --dst\n"
		"                       (default the first --dst)\n"
		"  --inner-src A.B.C.D  source of the packets (default --addr-a; with --esp-tx the\n"
		"                       host behind the tunnel's far end)\n"
		"  --size LIST          frame sizes with FCS or imix (%s);\n"
		"                       default 64\n"
		"  --rate PPS[,...]     offered load of fixed trials, in turn (default 0: full speed)\n"
		"  --duration S         length of each fixed trial (default 1)\n"
		"  --search             RFC 2544 binary search for the zero-loss rate instead\n"
		"  --overload           after the search, one trial at twice the zero-loss rate\n"
		"  --trial S            seconds per search trial (default 1)\n"
		"  --steps N            search trials after the full-speed one (default 8)\n"
		"  --precision PCT      stop the search when bounds are this close (default 2)\n"
		"  --loss PCT           loss tolerated in a passing trial (default 0)\n"
		"  --drain S            wait for packets in flight after a trial (default 0.2)\n"
		"  --prime S            before a search or a first trial at full speed, send this\n"
		"                       long at full speed, not counted (default 0.5; 0: none):\n"
		"                       the memif rings' buffers are touched for the first time\n"
		"                       then, which costs the first trial after connecting\n"
		"                       (page faults), whichever gateway it measures\n"
		"  --connect-timeout S  wait this long for the memif peers (default 10)\n"
		"  --esp-tx ALG:SPI     port A sends the packets inside ESP (tunnel mode) from\n"
		"                       --addr-a to --gateway-a: a gateway's decrypt direction.\n"
		"                       ALG aes-gcm-128 | aes-cbc-128-sha1-96; test keys from\n"
		"                       --crypto-key HEX (16 bytes), --integ-key HEX (20 bytes),\n"
		"                       --salt HEX (4 bytes)\n"
		"  --esp-seq-file FILE  the SA's next sequence number, read at start and written\n"
		"                       at exit, so that runs against one gateway never go back\n"
		"  --expect-esp ALG[:SPI] port B counts ESP frames of the length the gateway must\n"
		"                       make of each packet with ALG (of SPI, if given): a\n"
		"                       gateway's encrypt direction (no latency: it is encrypted)\n"
		"  --watch NAME=PID[,...] report each process's CPU time and context switches\n"
		"                       over every trial's transmission (from /proc)\n"
		"  --before-exit CMD    run CMD (sh -c) after the last trial, before the ports\n"
		"                       close: to stop a gateway that must not be polling its\n"
		"                       port while its memif peer disconnects\n"
		"  --label TEXT         copied into the JSON output\n"
		"  --json               one JSON document on stdout\n"
		"  --probe-only         start both ports (links up), then stop: exit 0 if the\n"
		"                       driver works here\n",
		BENCH_MAX_DST_LIST, BENCH_MAX_DST, BENCH_IMIX_DESCRIPTION);
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

/* Calls parse(token, index, ctx) for each comma-separated token of arg, at
 * most max of them. Returns the count, or -1 (with a message) if a token is
 * bad, there are too many or none. */
static int parse_list(const char *arg, const char *what, int max,
		      int (*parse)(const char *tok, int i, void *ctx), void *ctx)
{
	char buf[256], *save = NULL;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			fprintf(stderr, "esgw-bench: at most %d %s values\n", max, what);
			return -1;
		}
		if (parse(tok, n, ctx) < 0)
			return -1;
		n++;
	}
	return n > 0 ? n : -1;
}

static int parse_dst(const char *tok, int i, void *ctx)
{
	return parse_ip(tok, &((struct bench *)ctx)->dst[i]);
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

static int parse_rate(const char *tok, int i, void *ctx)
{
	return parse_positive("--rate", tok, 0, 1e9, &((struct options *)ctx)->rates[i]);
}

/* Exactly len bytes of hex. */
static int parse_hex(const char *name, const char *s, uint8_t *out, size_t len)
{
	if (strlen(s) != 2 * len) {
		fprintf(stderr, "esgw-bench: %s must be %zu bytes of hex\n", name, len);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "esgw-bench: %s is not hex\n", name);
			return -1;
		}
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* "ALG" or "ALG:SPI" (SPI optional only if spi_optional). */
static int parse_alg_spi(const char *name, const char *arg, int spi_optional, enum bench_alg *alg,
			 uint32_t *spi)
{
	char buf[64], *colon;
	int found = -1;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	for (int i = 0; i < BENCH_ALG_COUNT; i++)
		if (strcmp(buf, bench_alg_names[i]) == 0)
			found = i;
	if (found < 0) {
		fprintf(stderr, "esgw-bench: %s: unknown algorithm %s\n", name, buf);
		return -1;
	}
	*alg = (enum bench_alg)found;
	*spi = 0;
	if (colon) {
		char *end;
		unsigned long v = strtoul(colon + 1, &end, 10);

		if (*end != '\0' || v == 0 || v > 0xffffffffUL) {
			fprintf(stderr, "esgw-bench: %s: bad SPI %s\n", name, colon + 1);
			return -1;
		}
		*spi = (uint32_t)v;
	} else if (!spi_optional) {
		fprintf(stderr, "esgw-bench: %s needs ALG:SPI\n", name);
		return -1;
	}
	return 0;
}

int bench_options_parse(int argc, char **argv, struct options *o, struct bench *b)
{
	enum {
		OPT_ADDR_A = 256,
		OPT_GATEWAY_A,
		OPT_GATEWAY_MAC,
		OPT_DST,
		OPT_DST_COUNT,
		OPT_DST_STEP,
		OPT_ADDR_B,
		OPT_INNER_SRC,
		OPT_SIZE,
		OPT_RATE,
		OPT_DURATION,
		OPT_SEARCH,
		OPT_OVERLOAD,
		OPT_TRIAL,
		OPT_STEPS,
		OPT_PRECISION,
		OPT_LOSS,
		OPT_DRAIN,
		OPT_PRIME,
		OPT_CONNECT_TIMEOUT,
		OPT_ESP_TX,
		OPT_CRYPTO_KEY,
		OPT_INTEG_KEY,
		OPT_SALT,
		OPT_ESP_SEQ_FILE,
		OPT_EXPECT_ESP,
		OPT_WATCH,
		OPT_BEFORE_EXIT,
		OPT_LABEL,
		OPT_JSON,
		OPT_PROBE_ONLY,
		OPT_HELP,
	};
	static const struct option options[] = {
		{"addr-a", required_argument, NULL, OPT_ADDR_A},
		{"gateway-a", required_argument, NULL, OPT_GATEWAY_A},
		{"gateway-mac", required_argument, NULL, OPT_GATEWAY_MAC},
		{"dst", required_argument, NULL, OPT_DST},
		{"dst-count", required_argument, NULL, OPT_DST_COUNT},
		{"dst-step", required_argument, NULL, OPT_DST_STEP},
		{"addr-b", required_argument, NULL, OPT_ADDR_B},
		{"inner-src", required_argument, NULL, OPT_INNER_SRC},
		{"size", required_argument, NULL, OPT_SIZE},
		{"rate", required_argument, NULL, OPT_RATE},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"search", no_argument, NULL, OPT_SEARCH},
		{"overload", no_argument, NULL, OPT_OVERLOAD},
		{"trial", required_argument, NULL, OPT_TRIAL},
		{"steps", required_argument, NULL, OPT_STEPS},
		{"precision", required_argument, NULL, OPT_PRECISION},
		{"loss", required_argument, NULL, OPT_LOSS},
		{"drain", required_argument, NULL, OPT_DRAIN},
		{"prime", required_argument, NULL, OPT_PRIME},
		{"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
		{"esp-tx", required_argument, NULL, OPT_ESP_TX},
		{"crypto-key", required_argument, NULL, OPT_CRYPTO_KEY},
		{"integ-key", required_argument, NULL, OPT_INTEG_KEY},
		{"salt", required_argument, NULL, OPT_SALT},
		{"esp-seq-file", required_argument, NULL, OPT_ESP_SEQ_FILE},
		{"expect-esp", required_argument, NULL, OPT_EXPECT_ESP},
		{"watch", required_argument, NULL, OPT_WATCH},
		{"before-exit", required_argument, NULL, OPT_BEFORE_EXIT},
		{"label", required_argument, NULL, OPT_LABEL},
		{"json", no_argument, NULL, OPT_JSON},
		{"probe-only", no_argument, NULL, OPT_PROBE_ONLY},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	int opt, addr_b_set = 0, inner_src_set = 0, n;
	uint32_t dst_count = 0, dst_step = 256;
	uint32_t spi;
	double v;

	optind = 1; /* the EAL used getopt before us */
	parse_ip("192.168.1.1", &b->addr_a);
	parse_ip("192.168.1.2", &b->gateway_a);
	parse_ip("192.168.2.1", &b->dst[0]);
	b->nb_dst = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case OPT_ADDR_A:
			if (parse_ip(optarg, &b->addr_a) < 0)
				return -1;
			break;
		case OPT_GATEWAY_A:
			if (parse_ip(optarg, &b->gateway_a) < 0)
				return -1;
			break;
		case OPT_GATEWAY_MAC:
			if (rte_ether_unformat_addr(optarg, &b->gateway_mac) < 0) {
				fprintf(stderr, "esgw-bench: bad MAC %s\n", optarg);
				return -1;
			}
			b->gateway_mac_known = 1;
			break;
		case OPT_DST:
			n = parse_list(optarg, "--dst", BENCH_MAX_DST_LIST, parse_dst, b);
			if (n < 0)
				return -1;
			b->nb_dst = (unsigned int)n;
			break;
		case OPT_DST_COUNT:
		case OPT_DST_STEP:
			if (parse_positive(opt == OPT_DST_COUNT ? "--dst-count" : "--dst-step", optarg,
					   1, opt == OPT_DST_COUNT ? BENCH_MAX_DST : 1 << 24,
					   &v) < 0)
				return -1;
			*(opt == OPT_DST_COUNT ? &dst_count : &dst_step) = (uint32_t)v;
			break;
		case OPT_ADDR_B:
			if (parse_ip(optarg, &b->addr_b) < 0)
				return -1;
			addr_b_set = 1;
			break;
		case OPT_INNER_SRC:
			if (parse_ip(optarg, &b->inner_src) < 0)
				return -1;
			inner_src_set = 1;
			break;
		case OPT_SIZE:
			o->nb_sizes = bench_sizes_parse(optarg, o->sizes);
			if (o->nb_sizes <= 0) {
				fprintf(stderr, "esgw-bench: bad --size %s\n", optarg);
				return -1;
			}
			break;
		case OPT_RATE:
			o->nb_rates = parse_list(optarg, "--rate", BENCH_MAX_RATES, parse_rate, o);
			if (o->nb_rates < 0)
				return -1;
			break;
		case OPT_DURATION:
			if (parse_positive("--duration", optarg, 0.01, 3600, &o->duration) < 0)
				return -1;
			break;
		case OPT_SEARCH:
			o->search = 1;
			break;
		case OPT_OVERLOAD:
			o->overload = 1;
			break;
		case OPT_TRIAL:
			if (parse_positive("--trial", optarg, 0.01, 600, &o->trial) < 0)
				return -1;
			break;
		case OPT_STEPS:
			if (parse_positive("--steps", optarg, 0, 64, &v) < 0)
				return -1;
			o->steps = (int)v;
			break;
		case OPT_PRECISION:
			if (parse_positive("--precision", optarg, 0.01, 100, &o->precision_pct) < 0)
				return -1;
			break;
		case OPT_LOSS:
			if (parse_positive("--loss", optarg, 0, 100, &o->loss_pct) < 0)
				return -1;
			break;
		case OPT_DRAIN:
			if (parse_positive("--drain", optarg, 0, 60, &o->drain) < 0)
				return -1;
			break;
		case OPT_PRIME:
			if (parse_positive("--prime", optarg, 0, 60, &o->prime) < 0)
				return -1;
			break;
		case OPT_CONNECT_TIMEOUT:
			if (parse_positive("--connect-timeout", optarg, 0.1, 600,
					   &o->connect_timeout) < 0)
				return -1;
			break;
		case OPT_ESP_TX:
			if (parse_alg_spi("--esp-tx", optarg, 0, &o->esp_cfg.alg, &o->esp_cfg.spi) <
			    0)
				return -1;
			o->esp_tx = 1;
			break;
		case OPT_CRYPTO_KEY:
			if (parse_hex("--crypto-key", optarg, o->esp_cfg.cipher_key,
				      sizeof(o->esp_cfg.cipher_key)) < 0)
				return -1;
			break;
		case OPT_INTEG_KEY:
			if (parse_hex("--integ-key", optarg, o->esp_cfg.integ_key,
				      sizeof(o->esp_cfg.integ_key)) < 0)
				return -1;
			break;
		case OPT_SALT:
			if (parse_hex("--salt", optarg, o->esp_cfg.salt, sizeof(o->esp_cfg.salt)) <
			    0)
				return -1;
			break;
		case OPT_ESP_SEQ_FILE:
			o->esp_seq_file = optarg;
			break;
		case OPT_EXPECT_ESP:
			if (parse_alg_spi("--expect-esp", optarg, 1, &b->expect_alg, &spi) < 0)
				return -1;
			b->expect_spi = htonl(spi);
			b->expect_esp = 1;
			break;
		case OPT_WATCH:
			n = proc_watch_parse(optarg, b->watch);
			if (n < 0)
				return -1;
			b->nb_watch = (unsigned int)n;
			break;
		case OPT_BEFORE_EXIT:
			o->before_exit = optarg;
			break;
		case OPT_LABEL:
			o->label = optarg;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_PROBE_ONLY:
			o->probe_only = 1;
			break;
		case OPT_HELP:
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
	for (uint32_t k = b->nb_dst; dst_count > 1 && k < dst_count; k++)
		b->dst[k] = htonl(ntohl(b->dst[0]) + k * dst_step);
	if (dst_count > 1)
		b->nb_dst = dst_count;
	if (!addr_b_set)
		b->addr_b = b->dst[0];
	if (!inner_src_set)
		b->inner_src = b->addr_a;
	if (o->esp_tx) {
		o->esp_cfg.src = b->addr_a;
		o->esp_cfg.dst = b->gateway_a;
	}
	if (o->overload && !o->search) {
		fprintf(stderr, "esgw-bench: --overload goes with --search\n");
		return -1;
	}
	return 0;
}
