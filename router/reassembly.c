/* SPDX-License-Identifier: BSD-3-Clause */
/* Reassembly of IPv4 and IPv6 fragments addressed to the gateway (fragmented
 * ESP from a peer whose path MTU is smaller than its packets, RFC 4303 3.4.1:
 * ESP is reassembled before it is decrypted). One table serves both
 * families: only the key and the header differ (IPv4: source, destination,
 * protocol and 16-bit id, RFC 791; IPv6: source, destination and the 32-bit
 * id of the fragment header, RFC 8200 4.5). Memory is bounded: a small table of
 * datagrams with a few fragments each, 2 s to complete, and a datagram no
 * larger than one mbuf (the crypto worker wants contiguous packets). What
 * does not fit is dropped and counted (reassembly_overflow), what does not
 * complete in time too (reassembly_timeout).
 *
 * Every fragment comes from an unauthenticated sender, so a datagram is
 * whole only when its fragments cover [0, end of the last fragment) exactly:
 * no overlap (RFC 5722, for IPv4 too), nothing beyond the last fragment's
 * end, and since the byte counts then agree, no hole and an offset-0
 * fragment whose header (the only one used) starts the datagram. Whatever
 * breaks that drops the datagram (reassembly_invalid), so no byte that no
 * fragment supplied ever leaves in it. The size limit assumes the longest
 * header a first fragment may bring. Senders that are not tunnel peers hold
 * at most REASM_PER_SOURCE datagrams, and a fragment from a peer takes the
 * slot of the oldest datagram of a non-peer when the table is full, so
 * nobody without the peer's address can keep its fragmented ESP out. */
#include <stdlib.h>
#include <string.h>

#include "headers.h"
#include "router.h"

#define REASM_DATAGRAMS 16
#define REASM_FRAGMENTS 16 /* per datagram */
#define REASM_TIMEOUT_MS 2000
#define REASM_PER_SOURCE 4 /* datagrams of one sender that is not a tunnel peer */
#define IPV4_MAX_HEADER_LEN 60

/* What identifies a datagram (the family's fields, the rest zero) and where
 * a fragment's payload starts. */
struct fragment_key {
	uint8_t family; /* 4 or 6 */
	uint8_t proto;  /* IPv4 only: IPv6 keys on addresses and id alone */
	uint32_t id;
	uint8_t src[16], dst[16];
};

struct fragment {
	struct fragment_key key;
	uint32_t header_len;  /* bytes before the payload in the fragment */
	uint32_t offset, len; /* of the payload in the datagram */
	int more;
};

struct reassembly_datagram {
	uint8_t used;
	uint8_t nb;
	uint8_t peer; /* the source is a tunnel's remote: never evicted */
	struct fragment_key key;
	uint32_t total;    /* payload length once the last fragment came, else 0 */
	uint32_t received; /* payload bytes held */
	uint32_t max_end;  /* end of the furthest fragment held */
	uint64_t expires;  /* TSC */
	struct {
		struct rte_mbuf *m;
		uint32_t header_len;
		uint32_t offset, len; /* of the payload */
	} frags[REASM_FRAGMENTS];
};

struct reassembly_table {
	struct reassembly_datagram d[REASM_DATAGRAMS];
	uint32_t nb_used;
};

int reassembly_init(struct router *r)
{
	if (r->reasm == NULL)
		r->reasm = calloc(1, sizeof(struct reassembly_table));
	return r->reasm != NULL ? 0 : -1;
}

void reassembly_table_free(struct router *r)
{
	/* Held mbufs go back to the shared pool: other processes keep using it. */
	for (int i = 0; r->reasm != NULL && i < REASM_DATAGRAMS; i++)
		for (uint8_t k = 0; k < r->reasm->d[i].nb; k++)
			rte_pktmbuf_free(r->reasm->d[i].frags[k].m);
	free(r->reasm);
	r->reasm = NULL;
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

int reassembly_waiting(const struct router *r)
{
	return r->reasm != NULL && r->reasm->nb_used != 0;
}

unsigned int reassembly_mbufs_held(const struct router *r)
{
	unsigned int n = 0;

	for (int i = 0; r->reasm != NULL && i < REASM_DATAGRAMS; i++)
		n += r->reasm->d[i].nb;
	return n;
}

static int same_source(const struct fragment_key *a, const struct fragment_key *b)
{
	return a->family == b->family && memcmp(a->src, b->src, 16) == 0;
}

/* Whether the sender is the remote end of a configured tunnel. */
static int from_tunnel_peer(const struct router_tables *t, const struct fragment_key *key)
{
	for (uint32_t i = 0; i < t->nb_tunnels; i++) {
		const struct router_tunnel *tun = &t->tunnels[i];

		if (key->family == 6 ? tun->outer_ipv6 && memcmp(tun->remote6, key->src, 16) == 0
				     : !tun->outer_ipv6 && tun->remote == read_be32(key->src))
			return 1;
	}
	return 0;
}

static struct reassembly_datagram *datagram_find(struct router *r, const struct fragment_key *key)
{
	struct reassembly_datagram *free_slot = NULL, *victim = NULL;
	int peer = from_tunnel_peer(r->tables, key);
	unsigned int of_source = 0;

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
		if (memcmp(&d->key, key, sizeof(*key)) == 0)
			return d;
		of_source += same_source(&d->key, key);
		if (!d->peer && (victim == NULL || d->expires < victim->expires))
			victim = d;
	}
	if (!peer && of_source >= REASM_PER_SOURCE)
		return NULL;
	if (free_slot == NULL) {
		if (!peer || victim == NULL)
			return NULL;
		datagram_drop(r, victim, ESGW_DROP_REASSEMBLY_OVERFLOW);
		r->ctr.reassembly_evicted++;
		free_slot = victim;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = 1;
	free_slot->peer = (uint8_t)peer;
	free_slot->key = *key;
	free_slot->expires = r->now + r->hz * REASM_TIMEOUT_MS / 1000;
	r->reasm->nb_used++;
	return free_slot;
}

/* The datagram in one new mbuf: the first fragment's header (IPv6: without
 * its fragment header), then the payloads in offset order. NULL if the pool
 * is empty. */
static struct rte_mbuf *datagram_build(struct router *r, struct reassembly_datagram *d)
{
	struct rte_mbuf *first = NULL, *out;
	const uint8_t *ip;
	uint32_t hlen;
	uint8_t *p;

	for (uint8_t i = 0; i < d->nb; i++)
		if (d->frags[i].offset == 0)
			first = d->frags[i].m;
	if (first == NULL) /* fragment_add completes only a covered datagram */
		return NULL;
	ip = rte_pktmbuf_mtod(first, const uint8_t *);
	/* IPv6: only the fixed header goes before the fragment header (local.c
	 * hands no other extension headers here). */
	hlen = packet_ip_header_len(ip, d->key.family == 6);
	out = rte_pktmbuf_alloc(r->dp.pool);
	if (out == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(out, (uint16_t)(hlen + d->total));
	if (p == NULL) {
		rte_pktmbuf_free(out);
		return NULL;
	}
	memcpy(p, ip, hlen);
	for (uint8_t i = 0; i < d->nb; i++) {
		const struct rte_mbuf *f = d->frags[i].m;
		uint8_t *to = p + hlen + d->frags[i].offset;
		const void *from = rte_pktmbuf_read(f, d->frags[i].header_len, d->frags[i].len, to);

		if (from != to) /* it copies only from segmented mbufs */
			memcpy(to, from, d->frags[i].len);
	}
	if (d->key.family == 6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)p;

		ip6->proto =
			((const struct rte_ipv6_fragment_ext *)(ip + IPV6_HDR_LEN))->next_header;
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)d->total);
	} else {
		struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)p;

		ip4->total_length = rte_cpu_to_be_16((uint16_t)(hlen + d->total));
		ip4->fragment_offset = rte_cpu_to_be_16(
			(uint16_t)(rte_be_to_cpu_16(ip4->fragment_offset) & ~IPV4_FRAGMENT_BITS));
		ip4->hdr_checksum = 0;
		ip4->hdr_checksum = rte_cpu_to_be_16(checksum_inet(ip4, hlen));
	}
	*esgw_meta(out) = *esgw_meta(first);
	return out;
}

/* Drop fragment m and the datagram d it belongs to, both for reason. */
static struct rte_mbuf *refuse(struct router *r, struct rte_mbuf *m, struct reassembly_datagram *d,
			       enum esgw_drop reason)
{
	router_drop(r, m, reason);
	datagram_drop(r, d, reason);
	return NULL;
}

/* Why fragment f may not join datagram d (ESGW_DROP_MAX: it may): no room
 * for another fragment or beyond the size limit (overflow); an overlap with
 * one held, a second end, or something held beyond its end (invalid). */
static enum esgw_drop fragment_refusal(const struct reassembly_datagram *d,
				       const struct fragment *f, uint32_t max_payload)
{
	uint32_t end = f->offset + f->len;

	if (d->nb == REASM_FRAGMENTS || end > max_payload)
		return ESGW_DROP_REASSEMBLY_OVERFLOW;
	/* Overlaps are refused outright, the whole datagram with them (RFC
	 * 5722 for IPv6, and the same for IPv4): they only serve to confuse
	 * filters. A duplicate counts as one too. */
	for (uint8_t i = 0; i < d->nb; i++)
		if (f->offset < d->frags[i].offset + d->frags[i].len && d->frags[i].offset < end)
			return ESGW_DROP_REASSEMBLY_INVALID;
	if (!f->more ? (d->total != 0 || end < d->max_end) : (d->total != 0 && end >= d->total))
		return ESGW_DROP_REASSEMBLY_INVALID;
	return ESGW_DROP_MAX;
}

/* The whole datagram out of a complete d, whose fragments are freed and
 * slot emptied; NULL (dropped) if the pool is empty. */
static struct rte_mbuf *datagram_complete(struct router *r, struct reassembly_datagram *d)
{
	struct rte_mbuf *whole = datagram_build(r, d);

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

/* Hold fragment f (in m); the whole datagram when f completed it. */
static struct rte_mbuf *fragment_add(struct router *r, struct rte_mbuf *m, const struct fragment *f)
{
	/* Room behind the longest header the first fragment may have: the
	 * datagram is built behind the first fragment's header, whichever
	 * fragment announced the end. */
	uint32_t max_payload = rte_pktmbuf_data_room_size(r->dp.pool) - RTE_PKTMBUF_HEADROOM -
			       (f->key.family == 6 ? IPV6_HDR_LEN : IPV4_MAX_HEADER_LEN);
	uint32_t end = f->offset + f->len;
	struct reassembly_datagram *d;
	enum esgw_drop refusal;

	if (r->reasm == NULL || (f->more && f->len % 8 != 0) || f->len == 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED); /* inner fragments are 8-byte multiples */
		return NULL;
	}
	d = datagram_find(r, &f->key);
	if (d == NULL) {
		router_drop(r, m, ESGW_DROP_REASSEMBLY_OVERFLOW); /* table full */
		return NULL;
	}
	refusal = fragment_refusal(d, f, max_payload);
	if (refusal != ESGW_DROP_MAX)
		return refuse(r, m, d, refusal);
	if (!f->more)
		d->total = end;
	d->frags[d->nb].m = m;
	d->frags[d->nb].header_len = f->header_len;
	d->frags[d->nb].offset = f->offset;
	d->frags[d->nb++].len = f->len;
	d->received += f->len;
	if (end > d->max_end)
		d->max_end = end;
	/* Held until the sums agree: no overlaps and nothing beyond the end,
	 * so then [0, total) is covered, offset 0 included. */
	if (d->total == 0 || d->received != d->total)
		return NULL;
	return datagram_complete(r, d);
}

struct rte_mbuf *reassembly_input(struct router *r, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	uint16_t flags = rte_be_to_cpu_16(ip->fragment_offset);
	struct fragment f = {.key = {.family = 4,
				     .proto = ip->next_proto_id,
				     .id = rte_be_to_cpu_16(ip->packet_id)}};

	memcpy(f.key.src, &ip->src_addr, 4);
	memcpy(f.key.dst, &ip->dst_addr, 4);
	f.header_len = rte_ipv4_hdr_len(ip);
	f.offset = (flags & RTE_IPV4_HDR_OFFSET_MASK) * 8u;
	f.len = rte_pktmbuf_pkt_len(m) - f.header_len;
	f.more = (flags & RTE_IPV4_HDR_MF_FLAG) != 0;
	return fragment_add(r, m, &f);
}

struct rte_mbuf *reassembly6_input(struct router *r, struct rte_mbuf *m)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
	const struct rte_ipv6_fragment_ext *frag = (const struct rte_ipv6_fragment_ext *)(ip + 1);
	struct fragment f = {.key = {.family = 6}};
	uint16_t offset_flags;

	if (rte_pktmbuf_data_len(m) < IPV6_HDR_LEN + IPV6_FRAG_HDR_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return NULL;
	}
	offset_flags = rte_be_to_cpu_16(frag->frag_data);
	memcpy(f.key.src, ip->src_addr, 16);
	memcpy(f.key.dst, ip->dst_addr, 16);
	f.key.id = rte_be_to_cpu_32(frag->id);
	f.header_len = IPV6_HDR_LEN + IPV6_FRAG_HDR_LEN;
	/* The offset in 8-byte units, already shifted by 3: in bytes. */
	f.offset = offset_flags & RTE_IPV6_EHDR_FO_MASK;
	f.len = rte_pktmbuf_pkt_len(m) - f.header_len;
	f.more = (offset_flags & RTE_IPV6_EHDR_MF_MASK) != 0;
	/* An atomic fragment (offset 0, no more: RFC 6946) goes through the
	 * table too and comes out at once, without its fragment header. */
	return fragment_add(r, m, &f);
}
