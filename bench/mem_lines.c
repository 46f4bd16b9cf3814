/* SPDX-License-Identifier: BSD-3-Clause */
/* mem-lines: what a cache line of per-tunnel state costs this machine when
 * it is not in the cache, alone and with others in flight. A working set of
 * MB megabytes (on transparent huge pages, as the crypto worker's SAs are)
 * is linked into one random cycle of its 64-byte lines; K walkers follow
 * the cycle from K places at once, each load depending on its walker's
 * previous one and on no other walker's, so K misses are in flight, as
 * when the crypto worker or the router asks for the lines of the packets
 * ahead. Output: nanoseconds and TSC cycles per line for every size and K;
 * at K = 1 that is the latency, at large K the core's memory-level
 * parallelism bounds it. bench/RESULTS-scale.md uses it to say what 10,000
 * tunnels' state must cost a packet on this host. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include "samples.h"

#define LINE 64
#define WALKERS_MAX 64
#define STEPS_PER_CHECK 4096
#define HUGE_PAGE (2u << 20)

struct line {
	uint32_t next; /* index of the next line of the cycle */
	uint8_t pad[LINE - sizeof(uint32_t)];
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Parse a comma-separated list of positive numbers into v (at most max). */
static int parse_list(const char *s, double v[], int max)
{
	int n = 0;
	char *end;

	while (*s != '\0' && n < max) {
		v[n] = strtod(s, &end);
		if (end == s || v[n] <= 0)
			return -1;
		n++;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return -1;
	}
	return *s == '\0' ? n : -1;
}

/* The lines of mem (n of them) as one random cycle; the order it visits
 * them in is left in order (for the walkers' starting points). */
static void link_cycle(struct line *mem, uint32_t *order, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rng() % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < n; i++)
		mem[order[i]].next = order[(i + 1) % n];
}

/* K walkers for about seconds; returns lines visited, the time in *ns and
 * TSC cycles in *cycles. The walkers start spread over the cycle. */
static uint64_t walk(const struct line *mem, const uint32_t *order, uint32_t n, int k,
		     double seconds, double *ns, uint64_t *cycles)
{
	uint32_t at[WALKERS_MAX];
	uint64_t steps = 0, tsc;
	double start, deadline, t;

	for (int j = 0; j < k; j++)
		at[j] = order[(uint64_t)n * (uint64_t)j / (uint64_t)k];
	start = samples_now_s();
	deadline = start + seconds;
	tsc = __rdtsc();
	do {
		for (int s = 0; s < STEPS_PER_CHECK; s++)
			for (int j = 0; j < k; j++)
				at[j] = mem[at[j]].next;
		steps += STEPS_PER_CHECK;
	} while ((t = samples_now_s()) < deadline);
	*cycles = __rdtsc() - tsc;
	*ns = (t - start) * 1e9;
	/* Keep the walk: a result nothing reads would be optimised away. */
	for (int j = 0; j < k; j++)
		if (at[j] >= n)
			abort();
	return steps * (uint64_t)k;
}

/* The huge pages (kB) of the mapping that holds p, from smaps; -1 if
 * unknown. */
static long huge_kb(const void *p)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end, at = (unsigned long)(uintptr_t)p;
	long kb = -1;
	int in = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start <= at && at < end;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mem-lines [--mb LIST] [--inflight LIST] [--seconds S]\n"
		"  --mb LIST        working sets in MiB (default 0.25,4,16,32,64,256)\n"
		"  --inflight LIST  walkers, misses in flight (default 1,2,4,8,16,24,32,48,64)\n"
		"  --seconds S      per point (default 0.3)\n"
		"Pin it (taskset -c CPU) and run it with nothing else on that CPU.\n");
}

int main(int argc, char **argv)
{
	double mbs[16] = {0.25, 4, 16, 32, 64, 256}, ks[16] = {1, 2, 4, 8, 16, 24, 32, 48, 64};
	int n_mb = 6, n_k = 9;
	double seconds = 0.3;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--mb") == 0)
			n_mb = parse_list(argv[++i], mbs, 16);
		else if (i + 1 < argc && strcmp(argv[i], "--inflight") == 0)
			n_k = parse_list(argv[++i], ks, 16);
		else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[++i]);
		else {
			usage();
			return 2;
		}
		if (n_mb < 0 || n_k < 0 || seconds <= 0) {
			usage();
			return 2;
		}
	}
	for (int i = 0; i < n_k; i++)
		if (ks[i] > WALKERS_MAX || ks[i] != (int)ks[i]) {
			fprintf(stderr, "mem-lines: --inflight: whole numbers up to %d\n",
				WALKERS_MAX);
			return 2;
		}
	printf("%-10s %-10s %-10s %-12s %-12s\n", "MiB", "in flight", "huge kB", "ns/line",
	       "cycles/line");
	for (int m = 0; m < n_mb; m++) {
		size_t bytes =
			((size_t)(mbs[m] * (1 << 20)) + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
		uint32_t n = (uint32_t)(bytes / LINE);
		struct line *mem = aligned_alloc(HUGE_PAGE, bytes);
		uint32_t *order = malloc((size_t)n * sizeof(*order));
		long huge;

		if (mem == NULL || order == NULL) {
			fprintf(stderr, "mem-lines: %.2f MiB: %s\n", mbs[m], strerror(ENOMEM));
			return 1;
		}
		madvise(mem, bytes, MADV_HUGEPAGE);
		memset(mem, 0, bytes);
		link_cycle(mem, order, n);
		huge = huge_kb(mem);
		for (int i = 0; i < n_k; i++) {
			double ns;
			uint64_t cycles, lines;

			lines = walk(mem, order, n, (int)ks[i], seconds, &ns, &cycles);
			printf("%-10.2f %-10d %-10ld %-12.2f %-12.1f\n", mbs[m], (int)ks[i], huge,
			       ns / (double)lines, (double)cycles / (double)lines);
			fflush(stdout);
		}
		free(order);
		free(mem);
	}
	return 0;
}
