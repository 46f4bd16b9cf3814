/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Conversions from charon's IPsec parameters to esgw's API messages. */
#include "esgw_map.h"

#include <arpa/inet.h>
#include <stdio.h>

#include <crypto/crypters/crypter.h>
#include <crypto/signers/signer.h>

#define AEAD_SALT 4 /* RFC 4106 / RFC 7634: keying material is key || 4-byte salt */
#define IKE_PRIORITY_BASE 1000

Esgw__Algorithm esgw_map_algorithm(uint16_t enc_alg, size_t enc_key_len, uint16_t int_alg,
				   size_t *salt_len)
{
	*salt_len = 0;
	switch (enc_alg) {
	case ENCR_AES_GCM_ICV16:
		if (int_alg != AUTH_UNDEFINED)
			break;
		*salt_len = AEAD_SALT;
		if (enc_key_len == 16 + AEAD_SALT)
			return ESGW__ALGORITHM__ALGORITHM_AES_GCM_128;
		if (enc_key_len == 32 + AEAD_SALT)
			return ESGW__ALGORITHM__ALGORITHM_AES_GCM_256;
		break;
	case ENCR_CHACHA20_POLY1305:
		*salt_len = AEAD_SALT;
		if (int_alg == AUTH_UNDEFINED && enc_key_len == 32 + AEAD_SALT)
			return ESGW__ALGORITHM__ALGORITHM_CHACHA20_POLY1305;
		break;
	case ENCR_AES_CBC:
		if (enc_key_len != 16 && enc_key_len != 32)
			break;
		switch (int_alg) {
		case AUTH_HMAC_SHA1_96:
			return enc_key_len == 16 ? ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA1_96
						 : ESGW__ALGORITHM__ALGORITHM_AES_CBC_256_HMAC_SHA1_96;
		case AUTH_HMAC_SHA2_256_128:
			return enc_key_len == 16
				       ? ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA256_128
				       : ESGW__ALGORITHM__ALGORITHM_AES_CBC_256_HMAC_SHA256_128;
		case AUTH_HMAC_SHA2_512_256:
			return enc_key_len == 16
				       ? ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA512_256
				       : ESGW__ALGORITHM__ALGORITHM_AES_CBC_256_HMAC_SHA512_256;
		default:
			break;
		}
		break;
	case ENCR_NULL:
		switch (int_alg) {
		case AUTH_HMAC_SHA1_96:
			return ESGW__ALGORITHM__ALGORITHM_NULL_HMAC_SHA1_96;
		case AUTH_HMAC_SHA2_256_128:
			return ESGW__ALGORITHM__ALGORITHM_NULL_HMAC_SHA256_128;
		case AUTH_HMAC_SHA2_512_256:
			return ESGW__ALGORITHM__ALGORITHM_NULL_HMAC_SHA512_256;
		default:
			break;
		}
		break;
	default:
		break;
	}
	return ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED;
}

void esgw_map_lifetimes(const lifetime_cfg_t *cfg, Esgw__Lifetime *soft, Esgw__Lifetime *hard)
{
	soft->bytes = cfg->bytes.rekey;
	soft->packets = cfg->packets.rekey;
	soft->seconds = cfg->time.rekey;
	hard->bytes = cfg->bytes.life;
	hard->packets = cfg->packets.life;
	hard->seconds = cfg->time.life;
}

char *esgw_map_host(host_t *host, char *buf, size_t len)
{
	chunk_t a = host->get_address(host);

	if (inet_ntop(host->get_family(host), a.ptr, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

static bool ts_prefix(traffic_selector_t *ts, char *buf, uint8_t *plen)
{
	host_t *net = NULL;
	char a[INET6_ADDRSTRLEN];
	bool exact = ts->to_subnet(ts, &net, plen);

	if (net == NULL)
		return FALSE;
	snprintf(buf, 64, "%s/%u", esgw_map_host(net, a, sizeof(a)), *plen);
	net->destroy(net);
	return exact;
}

/* Port range of a selector into lo/hi (0/0: any); FALSE for ICMP types. */
static bool ts_ports(traffic_selector_t *ts, uint8_t proto, uint32_t *lo, uint32_t *hi)
{
	uint16_t from = ts->get_from_port(ts), to = ts->get_to_port(ts);

	*lo = *hi = 0;
	if (from == 0 && to == 0xffff)
		return TRUE;
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP && proto != IPPROTO_SCTP)
		return FALSE;
	*lo = from;
	*hi = to;
	return TRUE;
}

bool esgw_map_selector(traffic_selector_t *src_ts, traffic_selector_t *dst_ts, Esgw__Policy *p,
		       char *src_buf, char *dst_buf, const char **why)
{
	uint8_t proto = src_ts->get_protocol(src_ts), slen, dlen;

	if (src_ts->get_type(src_ts) != dst_ts->get_type(dst_ts)) {
		*why = "selectors of two address families";
		return FALSE;
	}
	if (proto != dst_ts->get_protocol(dst_ts)) {
		*why = "selectors with two protocols";
		return FALSE;
	}
	if (!ts_prefix(src_ts, src_buf, &slen) || !ts_prefix(dst_ts, dst_buf, &dlen)) {
		*why = "an address range that is not one prefix";
		return FALSE;
	}
	if (!ts_ports(src_ts, proto, &p->sport_lo, &p->sport_hi) ||
	    !ts_ports(dst_ts, proto, &p->dport_lo, &p->dport_hi)) {
		*why = "ICMP type/code selectors";
		return FALSE;
	}
	p->src = src_buf;
	p->dst = dst_buf;
	p->protocol = proto;
	return TRUE;
}

uint32_t esgw_map_priority(traffic_selector_t *src_ts, traffic_selector_t *dst_ts,
			   uint32_t manual_prio)
{
	host_t *net = NULL;
	uint8_t slen = 0, dlen = 0;
	uint32_t prio = IKE_PRIORITY_BASE;

	if (manual_prio)
		return manual_prio;
	src_ts->to_subnet(src_ts, &net, &slen);
	DESTROY_IF(net);
	net = NULL;
	dst_ts->to_subnet(dst_ts, &net, &dlen);
	DESTROY_IF(net);
	/* Longer prefixes, then a protocol, then ports make a policy win. */
	prio += (uint32_t)(256 - slen - dlen) * 4;
	if (src_ts->get_protocol(src_ts) == 0)
		prio += 2;
	if (src_ts->get_from_port(src_ts) == 0 && src_ts->get_to_port(src_ts) == 0xffff &&
	    dst_ts->get_from_port(dst_ts) == 0 && dst_ts->get_to_port(dst_ts) == 0xffff)
		prio += 1;
	return prio;
}
