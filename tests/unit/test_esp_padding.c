/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP padding (RFC 4303 2.4) for every inner length from 0 past 255 and at
 * the MTU, for both block sizes (GCM 4, CBC 16): pad length and pad bytes,
 * aligned payload, outer header, and the round trip through decap. */
#include "test_common.h"

static void check_length(IMB_MGR *mgr, struct test_sa *t, uint16_t len)
{
	struct esp_sa *sa = t->sa;
	static struct test_pkt p;
	uint8_t inner[1600];
	unsigned int block = sa->block_len, want_pad, payload_len, head, pad;
	const char *alg = esp_alg_name((enum esp_alg)sa->alg);
	uint8_t *payload;

	memset(inner, 0x5a, sizeof(inner));
	if (len >= 20)
		test_inner_ipv4(inner, len, (uint8_t)len);
	test_pkt_set(&p, inner, len);
	if (len < 20) {
		CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 &&
			      p.buf.drop == ESGW_DROP_MALFORMED,
		      "%s len %u: short inner packet not dropped as malformed", alg, len);
		return;
	}
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 1, "%s len %u: encap dropped (%s)", alg, len,
	      esgw_drop_name(p.buf.drop));
	want_pad = (block - (len + 2u) % block) % block;
	head = IPV4_HDR_LEN + ESP_HDR_LEN + sa->iv_len;
	payload_len = len + want_pad + 2u;
	CHECK(payload_len % block == 0 && (payload_len + sa->iv_len) % 4 == 0,
	      "%s len %u: payload %u not aligned", alg, len, payload_len);
	CHECK(p.buf.len == head + payload_len + sa->icv_len, "%s len %u: outer length %u, want %u",
	      alg, len, p.buf.len, head + payload_len + sa->icv_len);
	CHECK(read_be16(p.buf.data + 2) == p.buf.len, "%s len %u: IP total length", alg, len);
	CHECK(checksum_inet(p.buf.data, 20) == 0, "%s len %u: outer checksum", alg, len);
	CHECK(p.buf.data[9] == 50 && p.buf.data[8] == 64, "%s len %u: outer proto/ttl", alg, len);

	/* Decap decrypts in place, so the plaintext trailer stays readable. */
	payload = p.buf.data + head;
	CHECK(esp_decap_burst(mgr, &sa, &p.buf, 1) == 1, "%s len %u: decap dropped (%s)", alg, len,
	      esgw_drop_name(p.buf.drop));
	CHECK(p.buf.len == len && memcmp(p.buf.data, inner, len) == 0,
	      "%s len %u: round trip changed the packet", alg, len);
	pad = payload[payload_len - 2];
	CHECK(pad == want_pad, "%s len %u: pad length %u, want %u", alg, len, pad, want_pad);
	CHECK(payload[payload_len - 1] == ESP_NEXT_HEADER_IPV4, "%s len %u: next header %u", alg,
	      len, payload[payload_len - 1]);
	for (unsigned int i = 0; i < want_pad && pad == want_pad; i++)
		CHECK(payload[len + i] == i + 1, "%s len %u: pad byte %u is %u", alg, len, i,
		      payload[len + i]);
}

int main(void)
{
	IMB_MGR *mgr = test_mgr();

	for (size_t a = 0; a < ESP_ALG_COUNT; a++) {
		struct test_sa *t = test_sa_new(mgr, esp_algorithms[a].alg, 0x2000, 4096, false);

		for (uint16_t len = 0; len <= 300; len++)
			check_length(mgr, t, len);
		for (uint16_t len = 1400; len <= 1500; len++)
			check_length(mgr, t, len);
		test_sa_free(t);
	}
	free_mb_mgr(mgr);
	return check_report("test_esp_padding");
}
