/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw's ESP against scapy, for every algorithm, with and without ESN: every
 * scapy-made packet decaps to its inner packet (or is dropped for the expected
 * reason), and esgw's encap of the inner packet equals scapy's encryption byte
 * for byte (same seq, IV and IP id). */
#include "test_common.h"

static struct test_sa *vector_sa(IMB_MGR *mgr, const struct esp_vector *v)
{
	struct test_sa *t = test_sa_new(mgr, v->alg, v->spi, 64, v->esn);

	t->sa->ip_id = v->ip_id;
	return t;
}

/* The window as the vector wants it before decap: top seen, nothing else. */
static void preset_window(struct test_sa *t, const struct esp_vector *v)
{
	if (v->top != 0)
		replay_update(&t->rt.replay, v->top);
}

static void dump_diff(const char *name, const uint8_t *got, const uint8_t *want, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		if (got[i] != want[i]) {
			fprintf(stderr, "  %s: first difference at byte %u: 0x%02x, want 0x%02x\n",
				name, i, got[i], want[i]);
			return;
		}
}

static void test_decap(IMB_MGR *mgr, const struct esp_vector *v)
{
	struct test_sa *t = vector_sa(mgr, v);
	static struct test_pkt p;
	uint16_t passed;

	preset_window(t, v);
	test_pkt_set(&p, v->packet, v->packet_len);
	passed = esp_decap_burst(mgr, &t->sa, &p.buf, 1);
	if (v->drop < 0) {
		CHECK(passed == 1, "%s: decap dropped it (%s)", v->name,
		      esgw_drop_name(p.buf.drop));
		CHECK(p.buf.len == v->inner_len && memcmp(p.buf.data, v->inner, v->inner_len) == 0,
		      "%s: decap gave %u bytes, not the inner packet", v->name, p.buf.len);
		CHECK(t->rt.replay.top == (v->seq > v->top ? v->seq : v->top), "%s: window top %lx",
		      v->name, (unsigned long)t->rt.replay.top);
		CHECK(!replay_check(&t->rt.replay, v->seq), "%s: seq %lx not recorded", v->name,
		      (unsigned long)v->seq);
		CHECK(t->rt.ctr.packets == 1 && t->rt.ctr.bytes == v->inner_len,
		      "%s: counters %lu/%lu", v->name, (unsigned long)t->rt.ctr.packets,
		      (unsigned long)t->rt.ctr.bytes);
		CHECK(p.buf.headroom + p.buf.len + p.buf.tailroom == TEST_BUF_SIZE &&
			      p.buf.data == p.mem + p.buf.headroom,
		      "%s: buffer accounting off", v->name);
	} else {
		CHECK(passed == 0 && p.buf.drop == v->drop, "%s: drop %s, want %s", v->name,
		      passed ? "none" : esgw_drop_name(p.buf.drop), esgw_drop_name(v->drop));
		CHECK(esgw_sa_drops(&t->rt, v->drop) == 1, "%s: SA drop counter not bumped",
		      v->name);
		/* Only a forged packet must leave the window alone; an authentic
		 * one with bad contents still counts as seen. */
		if (v->drop == ESGW_DROP_AUTH_FAILED)
			CHECK(t->rt.replay.top == v->top, "%s: forged packet moved the window",
			      v->name);
		else
			CHECK(t->rt.replay.top == v->seq, "%s: authentic packet not recorded",
			      v->name);
	}
	test_sa_free(t);
}

static void test_encap(IMB_MGR *mgr, const struct esp_vector *v)
{
	struct test_sa *t = vector_sa(mgr, v);
	static struct test_pkt p;
	uint16_t passed;

	t->rt.seq_out = v->seq - 1;
	test_pkt_set(&p, v->inner, v->inner_len);
	passed = esp_encap_burst(mgr, &t->sa, &p.buf, 1);
	CHECK(passed == 1, "%s: encap dropped it (%s)", v->name, esgw_drop_name(p.buf.drop));
	CHECK(p.buf.len == v->packet_len, "%s: encap made %u bytes, scapy %u", v->name, p.buf.len,
	      v->packet_len);
	if (p.buf.len == v->packet_len && memcmp(p.buf.data, v->packet, v->packet_len) != 0) {
		CHECK(0, "%s: encap differs from scapy", v->name);
		dump_diff(v->name, p.buf.data, v->packet, v->packet_len);
	}
	CHECK(t->rt.seq_out == v->seq, "%s: seq_out %lx", v->name, (unsigned long)t->rt.seq_out);
	CHECK(p.buf.headroom + p.buf.len + p.buf.tailroom == TEST_BUF_SIZE &&
		      p.buf.data == p.mem + p.buf.headroom,
	      "%s: buffer accounting off", v->name);
	test_sa_free(t);
}

/* The inner packet with Ethernet minimum-frame padding behind it (a short
 * frame as a NIC delivers it) must encrypt exactly as without. */
static void test_encap_ignores_l2_padding(IMB_MGR *mgr, const struct esp_vector *v)
{
	struct test_sa *t = vector_sa(mgr, v);
	static struct test_pkt p;
	uint8_t padded[64] = {0};

	if (v->inner_len > 46) {
		test_sa_free(t);
		return;
	}
	memcpy(padded, v->inner, v->inner_len);
	t->rt.seq_out = v->seq - 1;
	test_pkt_set(&p, padded, 46);
	CHECK(esp_encap_burst(mgr, &t->sa, &p.buf, 1) == 1, "%s: padded encap dropped", v->name);
	CHECK(p.buf.len == v->packet_len && memcmp(p.buf.data, v->packet, v->packet_len) == 0,
	      "%s: L2 padding leaked into the ESP payload", v->name);
	test_sa_free(t);
}

int main(void)
{
	IMB_MGR *mgr = test_mgr();

	for (size_t i = 0; i < sizeof(esp_vectors) / sizeof(esp_vectors[0]); i++) {
		const struct esp_vector *v = &esp_vectors[i];

		test_decap(mgr, v);
		if (v->exact) {
			test_encap(mgr, v);
			test_encap_ignores_l2_padding(mgr, v);
		}
	}
	free_mb_mgr(mgr);
	return check_report("test_esp_vectors");
}
