/* SPDX-License-Identifier: BSD-3-Clause */
/* esp-core: the cost of esgw's own ESP core (esp_encap_burst, esp_decap_burst)
 * on one core with warm buffers and no rings, mbufs or other processes, next to
 * imb-raw's cycles for the same point: the ratio is the ESP framing's overhead
 * over the bare crypto, apart from the pipeline's (rings, cross-core misses).
 * Each point is measured again "uncached": the packets flushed from every cache
 * level before each burst, the worst case of packets written by another core
 * long ago, which is how the crypto worker finds them in the real pipeline.
 */
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <intel-ipsec-mb.h>

#include "esp.h"
#include "replay.h"
#include "sizes.h"

#define BURST 32
/* Templates cycled through, like imb-raw's 256 buffers; a multiple of BURST so
 * that a burst never wraps and its sequence numbers only grow. */
#define NB_TEMPLATES 256
#define HEADROOM 128
#define BUF_SIZE 2048

static const char *const alg_names[] = {"aes-gcm-128", "aes-cbc-128-sha1-96"};
static const enum esp_alg alg_ids[] = {ESP_ALG_AES_GCM_128, ESP_ALG_AES_CBC_128_HMAC_SHA1_96};
static const char *const dir_names[] = {"encrypt", "decrypt"};

struct options {
	double duration;
	const char *imb_raw_json; /* imb-raw --json output; else imb-raw is run */
	int markdown;
	char size_arg[128], alg_arg[128], dir_arg[64];
	struct bench_size sizes[BENCH_MAX_SIZES];
	int nb_sizes;
	int algs[2], nb_algs;
	int dirs[2], nb_dirs;
	unsigned int sas; /* --sas: the SA scale run instead */
};

/* A packet kept aside, copied into a work buffer before each burst. */
struct template
{
	uint8_t data[BUF_SIZE - HEADROOM];
	uint16_t len;
};

struct work {
	uint8_t mem[BURST][BUF_SIZE] __attribute__((aligned(64)));
	struct esp_buf buf[BURST];
};

struct point {
	double seconds, pps;
	uint64_t packets, cycles, failed;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A valid inner IPv4 packet of len bytes (what the router hands a worker). */
static void inner_ipv4(uint8_t *p, unsigned int len, unsigned int seed)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 7 + i);
	memset(p, 0, IPV4_HDR_LEN);
	p[0] = 0x45;
	write_be16(p + 2, (uint16_t)len);
	p[8] = 64;
	p[9] = 17;
	memcpy(p + 12, "\xc0\xa8\x01\x01\xc0\xa8\x02\x01", 8);
	write_be16(p + 10, checksum_inet(p, IPV4_HDR_LEN));
}

static struct esp_sa *sa_new(IMB_MGR *mgr, int alg, struct esgw_sa_runtime *rt, int outbound)
{
	/* Fixed test keys: nothing secret is protected by a benchmark. */
	static const uint8_t key[16] = "esgw-bench-key-1";
	static const uint8_t integ[20] = "esgw-bench-integ-k-1";
	static const uint8_t salt[4] = "salt";
	struct esp_sa_params p = {.spi = 0x1000,
				  .alg = alg_ids[alg],
				  .crypto_key = key,
				  .crypto_key_len = 16,
				  .rt = rt};
	struct esp_sa *sa = esp_sa_alloc();
	char err[128];

	memset(rt, 0, sizeof(*rt));
	replay_init(&rt->replay, 64);
	rt->spi = p.spi;
	rt->installed_at = esp_clock_seconds();
	if (alg == 0) {
		p.salt = salt;
		p.salt_len = 4;
	} else {
		p.integ_key = integ;
		p.integ_key_len = 20;
	}
	if (outbound) {
		p.outer_src = 0x0103a8c0; /* 192.168.3.1, network order */
		p.outer_dst = 0x0203a8c0;
	}
	if (sa == NULL || esp_sa_init(mgr, sa, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "esp-core: esp_sa_init: %s\n", sa ? err : "out of memory");
		exit(1);
	}
	esp_seq_limit_raise(sa, UINT64_MAX); /* no reservation to wait for */
	return sa;
}

/* Copy templates first..first+BURST-1 into the work buffers, as a NIC or the
 * previous stage would have filled them. */
static void burst_load(struct work *w, const struct template *t, unsigned int first)
{
	for (unsigned int j = 0; j < BURST; j++) {
		const struct template *s = &t[first + j];

		memcpy(w->mem[j] + HEADROOM, s->data, s->len);
		w->buf[j] = (struct esp_buf){.data = w->mem[j] + HEADROOM,
					     .len = s->len,
					     .headroom = HEADROOM,
					     .tailroom = (uint16_t)(BUF_SIZE - HEADROOM - s->len),
					     .drop = ESP_NO_DROP};
	}
}

/* Evict the burst's packets from every cache level, so that the ESP core reads
 * them from DRAM like packets another core wrote long ago. clflushopt where the
 * CPU has it (the flushes overlap, clflush's do not); the mfence waits for them
 * all, so that none is still in flight when the clock starts. */
__attribute__((target("clflushopt"))) static void work_flush(struct work *w)
{
	int opt = __builtin_cpu_supports("clflushopt");

	for (unsigned int j = 0; j < BURST; j++)
		for (unsigned int off = 0; off < BUF_SIZE; off += 64) {
			if (opt)
				_mm_clflushopt(&w->mem[j][off]);
			else
				_mm_clflush(&w->mem[j][off]);
		}
	_mm_mfence();
}

/* The TSC once the instructions before have executed: neither the flush nor
 * the burst's tail leaks out of (or into) the span between two readings. */
static uint64_t tsc_fenced(void)
{
	_mm_lfence();
	return __rdtsc();
}

/* mode 0: copy only (the reset cost, reported and subtracted); 1: encap;
 * 2: decap. Decap resets the window before each burst so that the
 * templates' sequence numbers are new again; the copy-only run does the same.
 * Uncached (encap or decap only): the packets are flushed after the copy and
 * r->cycles counts only the burst calls, so there is nothing to subtract.
 */
static void run(IMB_MGR *mgr, struct esp_sa *sa, struct work *w, const struct template *t, int mode,
		int reset_window, int uncached, double duration, struct point *r)
{
	struct esp_sa *sas[BURST];
	double start = now_seconds(), deadline = start + duration;
	unsigned int next = 0;
	uint64_t tsc, call = 0;

	for (unsigned int j = 0; j < BURST; j++)
		sas[j] = sa;
	memset(r, 0, sizeof(*r));
	tsc = __rdtsc();
	for (unsigned int round = 0;; round++) {
		uint16_t passed = BURST;

		if (reset_window) {
			sa->rt->replay.top = 0;
			memset(sa->rt->replay.bitmap, 0, sa->rt->replay.words * sizeof(uint64_t));
		}
		burst_load(w, t, next);
		if (uncached) {
			work_flush(w);
			call = tsc_fenced();
		}
		if (mode == 1)
			passed = esp_encap_burst(mgr, sas, w->buf, BURST);
		else if (mode == 2)
			passed = esp_decap_burst(mgr, sas, w->buf, BURST);
		if (uncached)
			r->cycles += tsc_fenced() - call;
		r->failed += BURST - passed;
		r->packets += BURST;
		next = (next + BURST) % NB_TEMPLATES;
		if ((round & 63) == 63 && now_seconds() >= deadline)
			break;
	}
	if (!uncached)
		r->cycles = __rdtsc() - tsc;
	r->seconds = now_seconds() - start;
	r->pps = (double)r->packets / r->seconds;
}

/* Inner packets of the size mix; for decap, the same encrypted once by an
 * outbound SA with the same keys (sequence numbers 1..NB_TEMPLATES). */
static int templates_make(IMB_MGR *mgr, int alg, const struct bench_size *size, int decrypt,
			  struct template *t, struct work *w)
{
	struct esgw_sa_runtime rt __attribute__((aligned(64)));
	struct esp_sa *out;

	for (unsigned int i = 0; i < NB_TEMPLATES; i++) {
		t[i].len = (uint16_t)(bench_size_frame(size, i) - BENCH_L2_OVERHEAD);
		inner_ipv4(t[i].data, t[i].len, i);
	}
	if (!decrypt)
		return 0;
	out = sa_new(mgr, alg, &rt, 1);
	for (unsigned int i = 0; i < NB_TEMPLATES; i += BURST) {
		struct esp_sa *sas[BURST];

		for (unsigned int j = 0; j < BURST; j++)
			sas[j] = out;
		burst_load(w, t, i);
		if (esp_encap_burst(mgr, sas, w->buf, BURST) != BURST) {
			esp_sa_free(out);
			return -1;
		}
		for (unsigned int j = 0; j < BURST; j++) {
			memcpy(t[i + j].data, w->buf[j].data, w->buf[j].len);
			t[i + j].len = w->buf[j].len;
		}
	}
	esp_sa_free(out);
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* --sas N: encrypt with N outbound SAs touched round-robin (each packet of
 * a burst another SA, as in setting S of bench/run.sh), without and with the
 * crypto worker's burst prefetch (esp_sa_prefetch_hot, then _keys), against
 * one SA. That prefetch is empty unless ESP_GROUP is 0 (the ESP core asks
 * for the SA lines itself), so the two columns then differ only by the
 * host's noise. Only the prefetch and esp_encap_burst are timed, the median
 * burst reported; the runtime slots are one array, as in esgw-rxtx's
 * hugepage table. Cycles per packet. */
static double sa_scale_point(IMB_MGR *mgr, struct esp_sa **sas, unsigned int n, struct work *w,
			     const struct template *t, int prefetch, double duration)
{
	static uint64_t samples[1 << 16];
	double deadline = now_seconds() + duration;
	unsigned int next = 0, k = 0, round;

	for (round = 0; round < RTE_DIM(samples); round++) {
		struct esp_sa *b[BURST];
		uint64_t begin;

		for (unsigned int j = 0; j < BURST; j++, k = (k + 1) % n)
			b[j] = sas[k];
		burst_load(w, t, next);
		begin = tsc_fenced();
		if (prefetch) {
			for (unsigned int j = 0; j < BURST; j++)
				esp_sa_prefetch_hot(b[j], b[j]->rt, 0);
			for (unsigned int j = 0; j < BURST; j++)
				esp_sa_prefetch_keys(b[j], esp_hashed_out(b[j], w->buf[j].len), 0);
		}
		if (esp_encap_burst(mgr, b, w->buf, BURST) != BURST) {
			fprintf(stderr, "esp-core: --sas: packets dropped\n");
			exit(1);
		}
		samples[round] = tsc_fenced() - begin;
		next = (next + BURST) % NB_TEMPLATES;
		if ((round & 63) == 63 && now_seconds() >= deadline)
			break;
	}
	/* The median burst: the machine is shared, and a burst the scheduler
	 * interrupted counts someone else's time. */
	qsort(samples, round, sizeof(samples[0]), u64_cmp);
	return (double)samples[round / 2] / BURST;
}

static void sa_scale(IMB_MGR *mgr, const struct options *o, struct template *t, struct work *w)
{
	unsigned int n = o->sas;
	struct esgw_sa_runtime *rt = aligned_alloc(64, sizeof(*rt) * n);
	struct esp_sa **sas = calloc(n, sizeof(*sas));

	if (rt == NULL || sas == NULL) {
		fprintf(stderr, "esp-core: --sas: out of memory\n");
		exit(1);
	}
	for (unsigned int i = 0; i < n; i++)
		sas[i] = sa_new(mgr, 0, &rt[i], 1);
	printf("aes-gcm-128 encrypt, cycles per packet (prefetch: the worker's burst prefetch)\n"
	       "%-5s %12s %12s %12s %12s %8s\n",
	       "size", "1 SA", "1 SA pref.", "N SAs", "N SAs pref.", "N");
	for (int s = 0; s < o->nb_sizes; s++) {
		double c[4];

		templates_make(mgr, 0, &o->sizes[s], 0, t, w);
		for (int v = 0; v < 4; v++)
			c[v] = sa_scale_point(mgr, sas, v < 2 ? 1 : n, w, t, v & 1, o->duration);
		printf("%-5s %12.1f %12.1f %12.1f %12.1f %8u\n", o->sizes[s].name, c[0], c[1], c[2],
		       c[3], n);
		fflush(stdout);
	}
	for (unsigned int i = 0; i < n; i++)
		esp_sa_free(sas[i]);
	free(sas);
	free(rt);
}

/* imb-raw's cycles per packet for one point, from its --json output (or the
 * median bench/run.sh writes with Python's separators): 0 if absent. */
static const char *json_value(const char *obj, const char *end, const char *key)
{
	char quoted[64];
	const char *p;

	snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	p = strstr(obj, quoted);
	if (p == NULL || p >= end)
		return NULL;
	p += strlen(quoted);
	while (*p == ' ' || *p == ':')
		p++;
	return p;
}

static int json_string_is(const char *obj, const char *end, const char *key, const char *want)
{
	const char *v = json_value(obj, end, key);
	size_t n = strlen(want);

	return v != NULL && v[0] == '"' && strncmp(v + 1, want, n) == 0 && v[1 + n] == '"';
}

static double imb_cycles(const char *json, const char *alg, const char *dir, const char *size)
{
	for (const char *p = strstr(json, "\"results\""); p && (p = strchr(p, '{')) != NULL;) {
		const char *end = strchr(p, '}');
		const char *v;

		if (end == NULL)
			break;
		if (json_string_is(p, end, "alg", alg) && json_string_is(p, end, "dir", dir) &&
		    json_string_is(p, end, "size", size) &&
		    (v = json_value(p, end, "cycles_per_packet")) != NULL)
			return strtod(v, NULL);
		p = end;
	}
	return 0;
}

static char *read_stream(FILE *f)
{
	size_t cap = 1 << 16, len = 0, got;
	char *buf = malloc(cap);

	while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *bigger = realloc(buf, cap *= 2);

			if (bigger == NULL) {
				free(buf);
				return NULL;
			}
			buf = bigger;
		}
	}
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/* The ceiling: the given file, or imb-raw (beside this executable) run now
 * with the same sizes, algorithms and duration. */
static char *imb_raw_load(const struct options *o, const char *argv0)
{
	char cmd[1024], *self = strdup(argv0), *json;
	FILE *f;

	if (o->imb_raw_json != NULL) {
		f = fopen(o->imb_raw_json, "r");
		if (f == NULL) {
			perror(o->imb_raw_json);
			exit(1);
		}
		json = read_stream(f);
		fclose(f);
		free(self);
		return json;
	}
	snprintf(cmd, sizeof(cmd),
		 "'%s/imb-raw' --json --size '%s' --alg '%s' --dir '%s' --duration %g",
		 dirname(self), o->size_arg, o->alg_arg, o->dir_arg, o->duration);
	free(self);
	f = popen(cmd, "r");
	if (f == NULL)
		return NULL;
	json = read_stream(f);
	if (pclose(f) != 0)
		fprintf(stderr, "esp-core: %s failed; ratios left out\n", cmd);
	return json;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: esp-core [--size LIST] [--alg LIST] [--dir LIST] [--duration S]\n"
		"                [--imb-raw FILE] [--markdown]\n"
		"  --size LIST     frame sizes with FCS or imix (default "
		"64,512,1400,imix)\n"
		"  --alg LIST      aes-gcm-128,aes-cbc-128-sha1-96 (default both)\n"
		"  --dir LIST      encrypt,decrypt (default both)\n"
		"  --duration S    seconds per point, and again for its copy-only run and "
		"its uncached\n"
		"                  run (default 0.5)\n"
		"  --imb-raw FILE  imb-raw --json output to compare with; default: run "
		"imb-raw\n"
		"  --markdown      print the table as markdown\n"
		"  --sas N         instead: aes-gcm-128 encrypt with N SAs round-robin, "
		"without and\n"
		"                  with the crypto worker's burst prefetch, next to one SA\n"
		"Each burst first copies %d prepared packets into warm buffers (inner "
		"packets for\n"
		"encrypt, ESP packets for decrypt); that copy is timed alone and "
		"subtracted.\n"
		"Uncached: the same bursts, the packets flushed from every cache level "
		"after the copy\n"
		"(clflushopt, mfence) and only the esp_encap_burst/esp_decap_burst call "
		"timed: the\n"
		"packets come from DRAM, as from another core long ago.\n",
		BURST);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{"size", required_argument, NULL, 's'},
		{"alg", required_argument, NULL, 'a'},
		{"dir", required_argument, NULL, 'd'},
		{"duration", required_argument, NULL, 't'},
		{"imb-raw", required_argument, NULL, 'i'},
		{"markdown", no_argument, NULL, 'm'},
		{"sas", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	char *end;

	*o = (struct options){.duration = 0.5};
	snprintf(o->size_arg, sizeof(o->size_arg), "64,512,1400,imix");
	snprintf(o->alg_arg, sizeof(o->alg_arg), "aes-gcm-128,aes-cbc-128-sha1-96");
	snprintf(o->dir_arg, sizeof(o->dir_arg), "encrypt,decrypt");
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			snprintf(o->size_arg, sizeof(o->size_arg), "%s", optarg);
			break;
		case 'a':
			snprintf(o->alg_arg, sizeof(o->alg_arg), "%s", optarg);
			break;
		case 'd':
			snprintf(o->dir_arg, sizeof(o->dir_arg), "%s", optarg);
			break;
		case 't':
			o->duration = strtod(optarg, &end);
			if (*end != '\0' || !(o->duration > 0 && o->duration <= 60)) {
				fprintf(stderr, "esp-core: bad --duration %s\n", optarg);
				return -1;
			}
			break;
		case 'i':
			o->imb_raw_json = optarg;
			break;
		case 'm':
			o->markdown = 1;
			break;
		case 'n':
			o->sas = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->sas == 0 || o->sas > 1000000) {
				fprintf(stderr, "esp-core: bad --sas %s\n", optarg);
				return -1;
			}
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
		fprintf(stderr, "esp-core: unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	o->nb_sizes = bench_sizes_parse(o->size_arg, o->sizes);
	if (o->nb_sizes <= 0) {
		fprintf(stderr, "esp-core: bad --size %s\n", o->size_arg);
		return -1;
	}
	if (bench_parse_list("esp-core", o->alg_arg, alg_names, 2, o->algs, &o->nb_algs) < 0 ||
	    bench_parse_list("esp-core", o->dir_arg, dir_names, 2, o->dirs, &o->nb_dirs) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct template *t = aligned_alloc(64, sizeof(struct template) * NB_TEMPLATES);
	struct work *w = aligned_alloc(64, sizeof(*w));
	struct esgw_sa_runtime *rt = aligned_alloc(64, sizeof(*rt));
	struct options o;
	char *imb_json;
	IMB_MGR *mgr;
	int failed = 0;

	if (t == NULL || w == NULL || rt == NULL || parse_options(argc, argv, &o) < 0)
		return 2;
	mgr = alloc_mb_mgr(0);
	if (mgr == NULL) {
		fprintf(stderr, "esp-core: cannot allocate the intel-ipsec-mb manager\n");
		return 1;
	}
	init_mb_mgr_auto(mgr, NULL);
	if (imb_get_errno(mgr) != 0) {
		fprintf(stderr, "esp-core: %s\n", imb_get_strerror(imb_get_errno(mgr)));
		return 1;
	}
	if (o.sas) {
		sa_scale(mgr, &o, t, w);
		free_mb_mgr(mgr);
		return 0;
	}
	imb_json = imb_raw_load(&o, argv[0]);

	if (o.markdown)
		printf("| algorithm | dir | size | esp-core Mpps | cyc/pkt incl. copy | "
		       "copy cyc/pkt "
		       "| esp-core cyc/pkt | imb-raw cyc/pkt | ratio | uncached cyc/pkt "
		       "| uncached ratio |\n"
		       "|---|---|---|---|---|---|---|---|---|---|---|\n");
	else
		printf("%-20s %-8s %-5s %9s %10s %8s %10s %10s %6s %16s %14s\n", "algorithm", "dir",
		       "size", "Mpps", "cyc+copy", "copy", "cyc/pkt", "imb-raw", "ratio",
		       "uncached cyc/pkt", "uncached ratio");
	for (int a = 0; a < o.nb_algs; a++)
		for (int d = 0; d < o.nb_dirs; d++)
			for (int s = 0; s < o.nb_sizes; s++) {
				int alg = o.algs[a], decrypt = o.dirs[d];
				struct point copy, core, cold;
				struct esp_sa *sa;
				double copy_cyc, core_cyc, net, cold_cyc, imb, hz, mpps;

				if (templates_make(mgr, alg, &o.sizes[s], decrypt, t, w) < 0) {
					fprintf(stderr,
						"esp-core: making the ESP packets failed\n");
					return 1;
				}
				sa = sa_new(mgr, alg, rt, !decrypt);
				run(mgr, sa, w, t, 0, decrypt, 0, o.duration, &copy);
				run(mgr, sa, w, t, decrypt ? 2 : 1, decrypt, 0, o.duration, &core);
				run(mgr, sa, w, t, decrypt ? 2 : 1, decrypt, 1, o.duration, &cold);
				esp_sa_free(sa);
				copy_cyc = (double)copy.cycles / (double)copy.packets;
				core_cyc = (double)core.cycles / (double)core.packets;
				net = core_cyc - copy_cyc;
				cold_cyc = (double)cold.cycles / (double)cold.packets;
				hz = (double)core.cycles / core.seconds;
				mpps = hz / net / 1e6; /* the rate without the copy */
				imb = imb_json ? imb_cycles(imb_json, alg_names[alg],
							    dir_names[decrypt], o.sizes[s].name)
					       : 0;
				if (o.markdown)
					printf("| %s | %s | %s | %.3f | %.0f | %.0f | %.0f | %.0f "
					       "| %.2f | %.0f | %.2f |\n",
					       alg_names[alg], dir_names[decrypt], o.sizes[s].name,
					       mpps, core_cyc, copy_cyc, net, imb,
					       imb > 0 ? net / imb : 0, cold_cyc,
					       imb > 0 ? cold_cyc / imb : 0);
				else
					printf("%-20s %-8s %-5s %9.3f %10.1f %8.1f %10.1f %10.1f "
					       "%6.2f %16.1f %14.2f\n",
					       alg_names[alg], dir_names[decrypt], o.sizes[s].name,
					       mpps, core_cyc, copy_cyc, net, imb,
					       imb > 0 ? net / imb : 0, cold_cyc,
					       imb > 0 ? cold_cyc / imb : 0);
				if (core.failed || cold.failed) {
					fprintf(stderr,
						"esp-core: %s %s %s: %" PRIu64 " of %" PRIu64
						" packets dropped (%" PRIu64 " of %" PRIu64
						" uncached)\n",
						alg_names[alg], dir_names[decrypt], o.sizes[s].name,
						core.failed, core.packets, cold.failed,
						cold.packets);
					failed = 1;
				}
				fflush(stdout);
			}
	/* A quote, not a paragraph: it ends the table even where the blank line
	 * before it is dropped (bench/report.py keeps only non-blank lines). */
	if (o.markdown)
		printf("\n> `uncached cyc/pkt`: the same bursts with only the "
		       "esp_encap_burst/esp_decap_burst call timed and the packets flushed from "
		       "every cache level (clflushopt) before it, as for packets another core "
		       "wrote long ago; `uncached ratio`: that over imb-raw's.\n");
	free(imb_json);
	free_mb_mgr(mgr);
	free(t);
	free(w);
	free(rt);
	return failed;
}
