/* SPDX-License-Identifier: BSD-3-Clause */
/* Reassembly of IPv4 fragments addressed to the gateway (fragmented ESP from
 * a peer whose path MTU is smaller than its packets, RFC 4303 3.4.1: ESP is
 * reassembled before it is decrypted). Memory is bounded: a small table of
 * datagrams with a few fragments each, 2 s to complete, and a datagram no
 * larger than one mbuf (the crypto worker wants contiguous packets). What
 * does not fit is dropped and counted (reassembly_overflow), what does not
 * complete in time too (reassembly_timeout). */
#include <stdlib.h>
#include <string.h>

#include "headers.h"
#include "router.h"

#define REASM_DATAGRAMS 16
#define REASM_FRAGMENTS 16 /* per datagram */
#define REASM_TIMEOUT_MS 2000
#define IPV4_MF 0x2000
#define IPV4_OFFSET_MASK 0x1fff

struct reassembly_datagram {
	uint8_t used;
	uint8_t nb;
	uint8_t proto;
	uint16_t id;
	uint32_t src, dst;
	uint32_t total;    /* payload length once the last fragment came, else 0 */
	uint32_t received; /* payload bytes held */
	uint64_t expires;  /* TSC */
	struct {
		struct rte_mbuf *m;
		uint32_t offset, len; /* of the payload */
	} frags[REASM_FRAGMENTS];
};

struct reassembly_table {
	struct reassembly_datagram d[REASM_DATAGRAMS];
	uint32_t nb_used;
};

struct reassembly_table *reassembly_table_alloc(void)
{
	return calloc(1, sizeof(struct reassembly_table));
}

static void datagram_drop(struct router *r, struct reassembly_datagram *d, enum esgw_drop reason)
{
	for (uint8_t i = 0; i < d->nb; i++)
		router_drop(r, d->frags[i].m, reason);
	memset(d, 0, sizeof(*d));
	r->reasm->nb_used--;
}

void reassembly_timer(struct router *r, uint64_t now)
{
	if (r->reasm == NULL || r->reasm->nb_used == 0)
		return;
	for (int i = 0; i < REASM_DATAGRAMS; i++)
		if (r->reasm->d[i].used && now >= r->reasm->d[i].expires)
			datagram_drop(r, &r->reasm->d[i], ESGW_DROP_REASSEMBLY_TIMEOUT);
}

static struct reassembly_datagram *datagram_find(struct router *r, const uint8_t *ip)
{
	struct reassembly_datagram *free_slot = NULL;
	uint32_t src = read_be32(ip + 12), dst = read_be32(ip + 16);
	uint16_t id = read_be16(ip + 4);

	for (int i = 0; i < REASM_DATAGRAMS; i++) {
		struct reassembly_datagram *d = &r->reasm->d[i];

		if (!d->used) {
			if (free_slot == NULL)
				free_slot = d;
			continue;
		}
		if (r->now >= d->expires) { /* the timer has not run yet */
			datagram_drop(r, d, ESGW_DROP_REASSEMBLY_TIMEOUT);
			if (free_slot == NULL)
				free_slot = d;
			continue;
		}
		if (d->src == src && d->dst == dst && d->id == id && d->proto == ip[9])
			return d;
	}
	if (free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = 1;
	free_slot->src = src;
	free_slot->dst = dst;
	free_slot->id = id;
	free_slot->proto = ip[9];
	free_slot->expires = r->now + r->hz * REASM_TIMEOUT_MS / 1000;
	r->reasm->nb_used++;
	return free_slot;
}

/* The datagram in one new mbuf: the first fragment's header, then the
 * payloads in offset order. NULL if the pool is empty. */
static struct rte_mbuf *datagram_build(struct router *r, struct reassembly_datagram *d)
{
	struct rte_mbuf *first = NULL, *out;
	uint32_t ihl;
	uint8_t *p, *ip;

	for (uint8_t i = 0; i < d->nb; i++)
		if (d->frags[i].offset == 0)
			first = d->frags[i].m;
	ip = rte_pktmbuf_mtod(first, uint8_t *);
	ihl = (ip[0] & 0x0fu) * 4u;
	out = rte_pktmbuf_alloc(r->dp.pool);
	if (out == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(out, (uint16_t)(ihl + d->total));
	if (p == NULL) {
		rte_pktmbuf_free(out);
		return NULL;
	}
	memcpy(p, ip, ihl);
	for (uint8_t i = 0; i < d->nb; i++) {
		const struct rte_mbuf *f = d->frags[i].m;
		uint32_t fihl = (rte_pktmbuf_mtod(f, const uint8_t *)[0] & 0x0fu) * 4u;

		uint8_t *to = p + ihl + d->frags[i].offset;
		const void *from = rte_pktmbuf_read(f, fihl, d->frags[i].len, to);

		if (from != to) /* it copies only from segmented mbufs */
			memcpy(to, from, d->frags[i].len);
	}
	write_be16(p + 2, (uint16_t)(ihl + d->total));
	write_be16(p + 6, (uint16_t)(read_be16(p + 6) & ~(IPV4_MF | IPV4_OFFSET_MASK)));
	write_be16(p + 10, 0);
	write_be16(p + 10, inet_checksum(p, ihl));
	*esgw_meta(out) = *esgw_meta(first);
	return out;
}

struct rte_mbuf *reassembly_input(struct router *r, struct rte_mbuf *m)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t ihl = (ip[0] & 0x0fu) * 4u, len = rte_pktmbuf_pkt_len(m) - ihl;
	uint16_t flags = read_be16(ip + 6);
	uint32_t offset = (flags & IPV4_OFFSET_MASK) * 8u;
	uint32_t max_payload = rte_pktmbuf_data_room_size(r->dp.pool) - RTE_PKTMBUF_HEADROOM - ihl;
	struct reassembly_datagram *d;
	struct rte_mbuf *whole;

	if (r->reasm == NULL || ((flags & IPV4_MF) && len % 8 != 0) || len == 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED); /* inner fragments are 8-byte multiples */
		return NULL;
	}
	d = datagram_find(r, ip);
	if (d == NULL) {
		router_drop(r, m, ESGW_DROP_REASSEMBLY_OVERFLOW); /* table full */
		return NULL;
	}
	if (d->nb == REASM_FRAGMENTS || offset + len > max_payload) {
		router_drop(r, m, ESGW_DROP_REASSEMBLY_OVERFLOW);
		datagram_drop(r, d, ESGW_DROP_REASSEMBLY_OVERFLOW);
		return NULL;
	}
	/* Overlaps are refused outright (as RFC 5722 does for IPv6): they
	 * only serve to confuse filters. A duplicate counts as one too. */
	for (uint8_t i = 0; i < d->nb; i++) {
		if (offset < d->frags[i].offset + d->frags[i].len &&
		    d->frags[i].offset < offset + len) {
			router_drop(r, m, ESGW_DROP_MALFORMED);
			datagram_drop(r, d, ESGW_DROP_MALFORMED);
			return NULL;
		}
	}
	if (!(flags & IPV4_MF)) {
		if (d->total != 0 || offset + len < d->received) {
			router_drop(r, m, ESGW_DROP_MALFORMED); /* two ends, or data past it */
			datagram_drop(r, d, ESGW_DROP_MALFORMED);
			return NULL;
		}
		d->total = offset + len;
	} else if (d->total != 0 && offset + len > d->total) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		datagram_drop(r, d, ESGW_DROP_MALFORMED);
		return NULL;
	}
	d->frags[d->nb].m = m;
	d->frags[d->nb].offset = offset;
	d->frags[d->nb++].len = len;
	d->received += len;
	if (d->total == 0 || d->received != d->total)
		return NULL; /* held; no overlaps, so equal sums mean full coverage */
	whole = datagram_build(r, d);
	if (whole == NULL) {
		datagram_drop(r, d, ESGW_DROP_NO_MBUF);
		return NULL;
	}
	for (uint8_t i = 0; i < d->nb; i++)
		rte_pktmbuf_free(d->frags[i].m);
	memset(d, 0, sizeof(*d));
	r->reasm->nb_used--;
	r->ctr.datagrams_reassembled++;
	return whole;
}
