/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet sizes shared by imb-raw and esgw-bench, so that the crypto ceiling and
 * the gateway are measured on the same packets: a size is an Ethernet frame
 * length with FCS (RFC 2544), or the IMIX mix below. */
#ifndef ESGW_BENCH_SIZES_H
#define ESGW_BENCH_SIZES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ethernet header and FCS: the inner IPv4 packet is frame - 18 bytes. */
#define BENCH_L2_OVERHEAD 18
#define BENCH_MIN_FRAME 64
/* 1518 would not fit the 1500-byte WAN MTU once ESP is added. */
#define BENCH_MAX_FRAME 1518
#define BENCH_MAX_SIZES 8
#define BENCH_MAX_PATTERN 12

/* Simple IMIX 7:4:1, with 1400 as the large size instead of 1518 so that the
 * encrypted packet still fits a 1500-byte WAN (the demo's LAN MTU is 1400). */
#define BENCH_IMIX_DESCRIPTION "7:4:1 of 64/594/1400-byte frames, mean 352"

struct bench_size {
	char name[16];
	unsigned int frames[BENCH_MAX_PATTERN]; /* frame lengths, cycled in this order */
	unsigned int nb_frames;
};

static inline unsigned int bench_size_frame(const struct bench_size *s, unsigned int i)
{
	return s->frames[i % s->nb_frames];
}

static inline double bench_size_mean(const struct bench_size *s)
{
	double sum = 0;

	for (unsigned int i = 0; i < s->nb_frames; i++)
		sum += s->frames[i];
	return sum / s->nb_frames;
}

/* "64,512,1400,imix" -> sizes; returns the count, or -1 on a bad value. */
static inline int bench_sizes_parse(const char *arg, struct bench_size out[BENCH_MAX_SIZES])
{
	/* Interleaved so that every burst of 32 carries close to the 7:4:1 mix. */
	static const unsigned int imix[BENCH_MAX_PATTERN] = {64,   594, 64,  64, 594, 64,
							     1400, 64,  594, 64, 64,  594};
	char buf[256], *save = NULL;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct bench_size *s = &out[n];
		char *end;
		unsigned long v;

		if (n >= BENCH_MAX_SIZES)
			return -1;
		if (strcmp(tok, "imix") == 0) {
			snprintf(s->name, sizeof(s->name), "imix");
			memcpy(s->frames, imix, sizeof(imix));
			s->nb_frames = BENCH_MAX_PATTERN;
		} else {
			v = strtoul(tok, &end, 10);
			if (*end != '\0' || v < BENCH_MIN_FRAME || v > BENCH_MAX_FRAME)
				return -1;
			snprintf(s->name, sizeof(s->name), "%lu", v);
			s->frames[0] = (unsigned int)v;
			s->nb_frames = 1;
		}
		n++;
	}
	return n;
}

/* A comma-separated list of names ("encrypt,decrypt") into their indexes in
 * names[]; each at most once. Returns 0, or -1 with a message from prog. */
static inline int bench_parse_list(const char *prog, const char *arg, const char *const names[],
				   int nb_names, int out[], int *nb_out)
{
	char *copy = strdup(arg), *save = NULL;

	*nb_out = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = -1;

		for (int i = 0; i < nb_names; i++)
			if (strcmp(tok, names[i]) == 0)
				found = i;
		if (found < 0 || *nb_out >= nb_names) {
			fprintf(stderr, "%s: unknown or repeated value: %s\n", prog, tok);
			free(copy);
			return -1;
		}
		out[(*nb_out)++] = found;
	}
	free(copy);
	return *nb_out > 0 ? 0 : -1;
}

#endif
