/* SPDX-License-Identifier: BSD-3-Clause */
/* imb-raw: the crypto ceiling. Runs the ESP crypto of esgw's SAs (AES-GCM-128,
 * AES-CBC-128 + HMAC-SHA1-96) through intel-ipsec-mb alone, on one core, in
 * 32-packet bursts, with no rings and no mbufs, and prints packets per second
 * and TSC cycles per packet: the rate a crypto worker could reach if ESP
 * framing, rings and packet I/O cost nothing. */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <intel-ipsec-mb.h>

#include "esp_jobs.h"
#include "sizes.h"

#define MAX_BURST BENCH_ESP_MAX_BURST
#define BUF_HEADROOM 64
#define BUF_SIZE 2048

struct options {
	double duration;
	unsigned int burst;
	unsigned int nb_bufs;
	enum api { API_ESGW, API_BURST, API_JOB } api;
	int json;
	int algs[2], nb_algs;
	int dirs[2], nb_dirs; /* 0 encrypt, 1 decrypt */
	struct bench_size sizes[BENCH_MAX_SIZES];
	int nb_sizes;
};

/* One ESP packet and the frame it stands for. */
struct packet {
	struct bench_esp_buf esp; /* first: the job's user_data points here */
	unsigned int frame_len;
};

struct result {
	uint64_t packets, bytes, cycles;
	struct bench_esp_counts failed;
	double seconds;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void keys_init(IMB_MGR *mgr, struct bench_keys *k)
{
	/* Fixed test keys: nothing secret is protected by a benchmark. */
	static const uint8_t cipher_key[16] = "esgw-bench-key-1";
	static const uint8_t integ_key[20] = "esgw-bench-integ-k-1";

	bench_keys_init(mgr, cipher_key, integ_key, (const uint8_t *)"salt", k);
}

/* One burst through the burst API. */
static void run_burst_api(IMB_MGR *mgr, int alg, int decrypt, const struct bench_keys *k,
			  struct packet *pkts[], unsigned int n, struct result *r)
{
	struct bench_esp_buf *bufs[MAX_BURST];

	for (unsigned int i = 0; i < n; i++)
		bufs[i] = &pkts[i]->esp;
	bench_esp_burst(mgr, (enum bench_alg)alg, decrypt, k, bufs, n, &r->failed);
}

/* One burst through the job API (submit one, flush at the end), the way
 * crypto-worker/esp_jobs.h does it. */
static void run_job_api(IMB_MGR *mgr, int alg, int decrypt, const struct bench_keys *k,
			struct packet *pkts[], unsigned int n, struct result *r)
{
	IMB_JOB *job;

	for (unsigned int i = 0; i < n; i++) {
		bench_esp_fill_job(IMB_GET_NEXT_JOB(mgr), (enum bench_alg)alg, decrypt, k,
				   &pkts[i]->esp);
		for (job = IMB_SUBMIT_JOB(mgr); job != NULL; job = IMB_GET_COMPLETED_JOB(mgr))
			bench_esp_job_done(job, decrypt, &r->failed);
	}
	while ((job = IMB_FLUSH_JOB(mgr)) != NULL)
		for (; job != NULL; job = IMB_GET_COMPLETED_JOB(mgr))
			bench_esp_job_done(job, decrypt, &r->failed);
}

/* One burst the way esgw's crypto worker runs it (crypto-worker/esp_jobs.h):
 * AES-GCM packet by packet through the one-call API, from a job of our own
 * filled as for the manager; the other algorithms as one burst. */
static void run_esgw_api(IMB_MGR *mgr, int alg, int decrypt, const struct bench_keys *k,
			 struct packet *pkts[], unsigned int n, struct result *r)
{
	struct gcm_context_data ctx;
	IMB_JOB job;

	if (alg != BENCH_ALG_GCM) {
		run_burst_api(mgr, alg, decrypt, k, pkts, n, r);
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		bench_esp_fill_job(&job, (enum bench_alg)alg, decrypt, k, &pkts[i]->esp);
		if (decrypt)
			IMB_AES128_GCM_DEC(mgr, job.enc_keys, &ctx, job.dst,
					   job.src + job.cipher_start_src_offset_in_bytes,
					   job.msg_len_to_cipher_in_bytes, job.iv, job.u.GCM.aad,
					   job.u.GCM.aad_len_in_bytes, job.auth_tag_output,
					   job.auth_tag_output_len_in_bytes);
		else
			IMB_AES128_GCM_ENC(mgr, job.enc_keys, &ctx, job.dst,
					   job.src + job.cipher_start_src_offset_in_bytes,
					   job.msg_len_to_cipher_in_bytes, job.iv, job.u.GCM.aad,
					   job.u.GCM.aad_len_in_bytes, job.auth_tag_output,
					   job.auth_tag_output_len_in_bytes);
		job.status = IMB_STATUS_COMPLETED;
		bench_esp_job_done(&job, decrypt, &r->failed);
	}
}

static const char *api_name(enum api api)
{
	return api == API_ESGW  ? "esgw's (GCM one-call, others burst)"
	       : api == API_JOB ? "job"
				: "burst";
}

/* Lay out nb_bufs ESP packets whose inner packets follow the size mix. */
static struct packet *packets_make(const struct bench_size *size, int alg, unsigned int nb_bufs,
				   uint8_t **mem)
{
	struct packet *pkts = calloc(nb_bufs, sizeof(*pkts));
	uint8_t *m = aligned_alloc(64, (size_t)nb_bufs * BUF_SIZE * 2);

	if (pkts == NULL || m == NULL) {
		free(pkts);
		free(m);
		return NULL;
	}
	for (unsigned int i = 0; i < nb_bufs; i++) {
		struct packet *p = &pkts[i];
		unsigned int frame = bench_size_frame(size, i);
		unsigned int inner = frame - BENCH_L2_OVERHEAD; /* the inner IPv4 packet */
		const struct esp_alg_info *info = bench_alg_info((enum bench_alg)alg);

		p->esp.iv_len = info->iv_len;
		p->esp.icv_len = info->icv_len;
		p->esp.payload_len = bench_esp_payload_len(info, inner);
		p->frame_len = frame;
		p->esp.esp = m + (size_t)i * BUF_SIZE * 2 + BUF_HEADROOM;
		p->esp.plain_out = p->esp.esp + BUF_SIZE;
		for (unsigned int j = 0; j < BENCH_ESP_HDR_LEN + p->esp.iv_len + p->esp.payload_len;
		     j++)
			p->esp.esp[j] = (uint8_t)(i * 7 + j);
	}
	*mem = m;
	return pkts;
}

static int run_point(IMB_MGR *mgr, const struct options *o, const struct bench_keys *k,
		     const struct bench_size *size, int alg, int decrypt, struct result *r)
{
	struct packet *pkts, *burst[MAX_BURST];
	uint8_t *mem;
	unsigned int next = 0;
	uint64_t tsc_start;
	double start, deadline;

	memset(r, 0, sizeof(*r));
	pkts = packets_make(size, alg, o->nb_bufs, &mem);
	if (pkts == NULL) {
		fprintf(stderr, "imb-raw: out of memory\n");
		return -1;
	}
	/* Decrypt needs packets that verify: encrypt them once, in place. */
	if (decrypt) {
		struct result setup = {0};

		for (unsigned int i = 0; i < o->nb_bufs; i += o->burst) {
			unsigned int n = o->nb_bufs - i < o->burst ? o->nb_bufs - i : o->burst;

			for (unsigned int j = 0; j < n; j++)
				burst[j] = &pkts[i + j];
			run_burst_api(mgr, alg, 0, k, burst, n, &setup);
		}
	}

	start = now_seconds();
	deadline = start + o->duration;
	tsc_start = __rdtsc();
	for (unsigned int round = 0;; round++) {
		for (unsigned int j = 0; j < o->burst; j++) {
			burst[j] = &pkts[next];
			r->bytes += pkts[next].frame_len;
			next = next + 1 == o->nb_bufs ? 0 : next + 1;
		}
		if (o->api == API_JOB)
			run_job_api(mgr, alg, decrypt, k, burst, o->burst, r);
		else if (o->api == API_BURST)
			run_burst_api(mgr, alg, decrypt, k, burst, o->burst, r);
		else
			run_esgw_api(mgr, alg, decrypt, k, burst, o->burst, r);
		r->packets += o->burst;
		if ((round & 63) == 63 && now_seconds() >= deadline)
			break;
	}
	r->cycles = __rdtsc() - tsc_start;
	r->seconds = now_seconds() - start;
	free(pkts);
	free(mem);
	return 0;
}

static const char *arch_name(uint32_t arch)
{
	switch (arch) {
	case IMB_ARCH_NOAESNI:
		return "noaesni";
	case IMB_ARCH_SSE:
		return "sse";
	case IMB_ARCH_AVX:
		return "avx";
	case IMB_ARCH_AVX2:
		return "avx2";
	case IMB_ARCH_AVX512:
		return "avx512";
	default:
		return "unknown";
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: imb-raw [--size LIST] [--alg LIST] [--dir LIST] [--duration S] [--burst N]\n"
		"               [--buffers N] [--api esgw|burst|job] [--json]\n"
		"  --size LIST     frame sizes, comma separated: bytes (64..1518, Ethernet frame\n"
		"                  with FCS, RFC 2544) or imix (%s); default 64,512,1400,imix\n"
		"  --alg LIST      aes-gcm-128,aes-cbc-128-sha1-96 (default both)\n"
		"  --dir LIST      encrypt,decrypt (default both; decrypt = ICV verify + decrypt)\n"
		"  --duration S    seconds per point (default 1)\n"
		"  --burst N       jobs per burst (default 32)\n"
		"  --buffers N     packet buffers cycled through (default 256)\n"
		"  --api esgw|burst|job  the intel-ipsec-mb API esgw's crypto worker uses for\n"
		"                  the algorithm (default: AES-GCM's one-call functions, the burst\n"
		"                  API for the others), the burst API, or the job API\n"
		"What is encrypted: the ESP payload of the frame's inner IPv4 packet (frame size - %d),\n"
		"padded, with trailer and ICV, as esgw's crypto worker does; not the framing.\n",
		BENCH_IMIX_DESCRIPTION, BENCH_L2_OVERHEAD);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const char *const dir_names[] = {"encrypt", "decrypt"};
	static const struct option options[] = {
		{"size", required_argument, NULL, 's'},  {"alg", required_argument, NULL, 'a'},
		{"dir", required_argument, NULL, 'd'},   {"duration", required_argument, NULL, 't'},
		{"burst", required_argument, NULL, 'b'}, {"buffers", required_argument, NULL, 'n'},
		{"api", required_argument, NULL, 'p'},   {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	int opt;
	char *end;

	*o = (struct options){.duration = 1.0,
			      .burst = 32,
			      .nb_bufs = 256,
			      .algs = {BENCH_ALG_GCM, BENCH_ALG_CBC_SHA1},
			      .nb_algs = 2,
			      .dirs = {0, 1},
			      .nb_dirs = 2};
	o->nb_sizes = bench_sizes_parse("64,512,1400,imix", o->sizes);
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->nb_sizes = bench_sizes_parse(optarg, o->sizes);
			if (o->nb_sizes <= 0) {
				fprintf(stderr, "imb-raw: bad --size %s\n", optarg);
				return -1;
			}
			break;
		case 'a':
			if (bench_parse_list("imb-raw", optarg, bench_alg_names, BENCH_ALG_COUNT,
					     o->algs, &o->nb_algs) < 0)
				return -1;
			break;
		case 'd':
			if (bench_parse_list("imb-raw", optarg, dir_names, 2, o->dirs,
					     &o->nb_dirs) < 0)
				return -1;
			break;
		case 't':
			o->duration = strtod(optarg, &end);
			if (*end != '\0' || !(o->duration > 0 && o->duration <= 3600)) {
				fprintf(stderr, "imb-raw: bad --duration %s\n", optarg);
				return -1;
			}
			break;
		case 'b':
			o->burst = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->burst < 1 || o->burst > MAX_BURST) {
				fprintf(stderr, "imb-raw: --burst must be 1..%d\n", MAX_BURST);
				return -1;
			}
			break;
		case 'n':
			o->nb_bufs = (unsigned int)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->nb_bufs < 1 || o->nb_bufs > 65536) {
				fprintf(stderr, "imb-raw: --buffers must be 1..65536\n");
				return -1;
			}
			break;
		case 'p':
			if (strcmp(optarg, "esgw") == 0) {
				o->api = API_ESGW;
			} else if (strcmp(optarg, "burst") == 0) {
				o->api = API_BURST;
			} else if (strcmp(optarg, "job") == 0) {
				o->api = API_JOB;
			} else {
				fprintf(stderr, "imb-raw: --api esgw|burst|job\n");
				return -1;
			}
			break;
		case 'j':
			o->json = 1;
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
		fprintf(stderr, "imb-raw: unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	if (o->nb_bufs < o->burst)
		o->nb_bufs = o->burst;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const dir_names[] = {"encrypt", "decrypt"};
	struct bench_keys *k = aligned_alloc(64, sizeof(*k));
	struct options o;
	IMB_MGR *mgr;
	int first = 1, failed = 0;

	if (k == NULL || parse_options(argc, argv, &o) < 0)
		return 2;
	mgr = alloc_mb_mgr(0);
	if (mgr == NULL) {
		fprintf(stderr, "imb-raw: cannot allocate the intel-ipsec-mb manager\n");
		return 1;
	}
	init_mb_mgr_auto(mgr, NULL);
	if (imb_get_errno(mgr) != 0) {
		fprintf(stderr, "imb-raw: intel-ipsec-mb: %s\n",
			imb_get_strerror(imb_get_errno(mgr)));
		return 1;
	}
	keys_init(mgr, k);

	if (o.json)
		printf("{\"tool\":\"imb-raw\",\"library\":\"intel-ipsec-mb %s\",\"arch\":\"%s\","
		       "\"api\":\"%s\",\"burst\":%u,\"duration\":%.3f,\"imix\":\"%s\",\"results\":[",
		       imb_get_version_str(), arch_name(mgr->used_arch), api_name(o.api), o.burst,
		       o.duration, BENCH_IMIX_DESCRIPTION);
	else
		printf("imb-raw: intel-ipsec-mb %s (%s), %s API, %u-packet bursts, %.1f s per point\n"
		       "%-20s %-8s %-6s %12s %10s %10s\n",
		       imb_get_version_str(), arch_name(mgr->used_arch), api_name(o.api), o.burst,
		       o.duration, "algorithm", "dir", "size", "pps", "cyc/pkt", "Gbit/s");
	for (int a = 0; a < o.nb_algs; a++)
		for (int d = 0; d < o.nb_dirs; d++)
			for (int s = 0; s < o.nb_sizes; s++) {
				struct result r;
				double pps, gbps;

				if (run_point(mgr, &o, k, &o.sizes[s], o.algs[a], o.dirs[d], &r) <
				    0)
					return 1;
				pps = (double)r.packets / r.seconds;
				gbps = (double)r.bytes * 8 / r.seconds / 1e9;
				if (r.failed.errors || r.failed.auth_failures)
					failed = 1;
				if (o.json) {
					printf("%s{\"alg\":\"%s\",\"dir\":\"%s\",\"size\":\"%s\","
					       "\"avg_frame_bytes\":%.1f,\"packets\":%" PRIu64
					       ",\"seconds\":%.4f,\"pps\":%.0f,\"cycles_per_packet\":%.1f,"
					       "\"gbps\":%.3f,\"errors\":%" PRIu64
					       ",\"auth_failures\":%" PRIu64 "}",
					       first ? "" : ",", bench_alg_names[o.algs[a]],
					       dir_names[o.dirs[d]], o.sizes[s].name,
					       (double)r.bytes / (double)r.packets, r.packets,
					       r.seconds, pps, (double)r.cycles / (double)r.packets,
					       gbps, r.failed.errors, r.failed.auth_failures);
					first = 0;
				} else {
					printf("%-20s %-8s %-6s %12.0f %10.1f %10.3f\n",
					       bench_alg_names[o.algs[a]], dir_names[o.dirs[d]],
					       o.sizes[s].name, pps,
					       (double)r.cycles / (double)r.packets, gbps);
					if (r.failed.errors || r.failed.auth_failures)
						printf("  ERROR: %" PRIu64 " jobs failed, %" PRIu64
						       " ICVs did not verify\n",
						       r.failed.errors, r.failed.auth_failures);
				}
				fflush(stdout);
			}
	if (o.json)
		printf("]}\n");
	free_mb_mgr(mgr);
	free(k);
	return failed;
}
