/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the protobuf framing: whole, split, truncated, oversized and
 * garbage frames, over the incremental decoder and a real socketpair. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "esgw.pb-c.h"
#include "framing.h"

/* free() of this executable (the framing code is linked into it) so that a
 * test can look at a block as it is given back: glibc's own calls go to
 * __libc_free directly. */
void __libc_free(void *p);
static const uint8_t *watched_block;
static size_t watched_len;
static int watched_freed_clean = -1; /* -1: not freed yet, 0: dirty, 1: all zero */

void free(void *p)
{
	if (p != NULL && p == watched_block) {
		watched_freed_clean = 1;
		for (size_t i = 0; i < watched_len; i++)
			if (watched_block[i] != 0)
				watched_freed_clean = 0;
		watched_block = NULL;
	}
	__libc_free(p);
}

static void watch(const uint8_t *block, size_t len)
{
	watched_block = block;
	watched_len = len;
	watched_freed_clean = -1;
}

static void put_len(uint8_t *p, uint32_t n)
{
	p[0] = (uint8_t)(n >> 24);
	p[1] = (uint8_t)(n >> 16);
	p[2] = (uint8_t)(n >> 8);
	p[3] = (uint8_t)n;
}

static void test_decoder_split(void)
{
	struct esgw_frame_buf fb = {0};
	uint8_t wire[4 + 5 + 4 + 0];
	const uint8_t *msg;
	size_t len;

	put_len(wire, 5);
	memcpy(wire + 4, "hello", 5);
	put_len(wire + 9, 0);
	/* Feed byte by byte: nothing is ready until the last byte of frame one. */
	for (size_t i = 0; i < 8; i++) {
		esgw_frame_feed(&fb, wire + i, 1);
		CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_NEED_MORE, "byte %zu", i);
	}
	esgw_frame_feed(&fb, wire + 8, sizeof(wire) - 8);
	CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_READY, "first frame ready");
	CHECK(len == 5 && memcmp(msg, "hello", 5) == 0, "first frame body");
	esgw_frame_consume(&fb);
	CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_READY, "empty frame ready");
	CHECK(len == 0, "empty frame length %zu", len);
	esgw_frame_consume(&fb);
	CHECK(fb.len == 0, "buffer drained");
	CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_NEED_MORE, "nothing left");
	esgw_frame_free(&fb);
}

static void test_decoder_oversized(void)
{
	struct esgw_frame_buf fb = {0};
	uint8_t hdr[4];
	const uint8_t *msg;
	size_t len;
	static const uint32_t sizes[] = {ESGW_FRAME_MAX + 1, 0x7fffffffu, 0xffffffffu};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fb.len = 0;
		put_len(hdr, sizes[i]);
		esgw_frame_feed(&fb, hdr, sizeof(hdr));
		CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_TOO_BIG, "size %u", sizes[i]);
	}
	/* Exactly the limit is fine (only the header so far). */
	fb.len = 0;
	put_len(hdr, ESGW_FRAME_MAX);
	esgw_frame_feed(&fb, hdr, sizeof(hdr));
	CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_NEED_MORE, "limit accepted");
	esgw_frame_free(&fb);
}

static void test_socket_roundtrip(void)
{
	Esgw__Request req = ESGW__REQUEST__INIT, *back;
	Esgw__NameRef ref = ESGW__NAME_REF__INIT;
	uint8_t *msg;
	size_t len;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__REQUEST__BODY_TUNNEL_DEL;
	ref.name = "t0";
	req.tunnel_del = &ref;
	CHECK(esgw_msg_write(sv[0], &req.base, 1000) == 0, "write");
	CHECK(esgw_frame_read(sv[1], &msg, &len, 1000) == 0, "read");
	back = esgw__request__unpack(NULL, len, msg);
	CHECK(back != NULL && back->body_case == ESGW__REQUEST__BODY_TUNNEL_DEL &&
		      strcmp(back->tunnel_del->name, "t0") == 0,
	      "round trip");
	if (back)
		esgw__request__free_unpacked(back, NULL);
	free(msg);

	/* Truncated: header promises 10 bytes, 3 arrive, then EOF. */
	{
		uint8_t wire[7] = {0, 0, 0, 10, 1, 2, 3};

		CHECK(write(sv[0], wire, sizeof(wire)) == (ssize_t)sizeof(wire), "write truncated");
		close(sv[0]);
		errno = 0;
		CHECK(esgw_frame_read(sv[1], &msg, &len, 1000) < 0 && errno == ECONNRESET,
		      "truncated frame reported as ECONNRESET, errno %d", errno);
	}
	close(sv[1]);

	/* Oversized: refused before reading the body. */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	{
		uint8_t hdr[4];

		put_len(hdr, ESGW_FRAME_MAX + 1);
		CHECK(write(sv[0], hdr, 4) == 4, "write header");
		errno = 0;
		CHECK(esgw_frame_read(sv[1], &msg, &len, 1000) < 0 && errno == EMSGSIZE,
		      "oversized frame refused, errno %d", errno);
	}
	/* Timeout: nothing arrives. */
	errno = 0;
	CHECK(esgw_frame_read(sv[1], &msg, &len, 50) < 0 && errno == ETIMEDOUT, "timeout");
	close(sv[0]);
	close(sv[1]);
}

static void test_garbage_unpack(void)
{
	/* Bytes that are not a valid Request must unpack to NULL, not crash. */
	static const uint8_t garbage[][6] = {
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, /* endless varint */
		{0x52, 0x7f, 0x00, 0x00, 0x00, 0x00}, /* field 10 length 127, 4 bytes left */
		{0x07, 0x00, 0x00, 0x00, 0x00, 0x00}, /* wire type 7 does not exist */
	};

	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		Esgw__Request *r = esgw__request__unpack(NULL, sizeof(garbage[i]), garbage[i]);

		CHECK(r == NULL, "garbage %zu unpacked", i);
		if (r)
			esgw__request__free_unpacked(r, NULL);
	}
}

/* Key bytes never stay behind: not in a block the buffer outgrew, not behind
 * the frames left after a consume, not in a reset or freed buffer. */
static void test_wiped_behind(void)
{
	struct esgw_frame_buf fb = {0};
	uint8_t wire[4 + 3000], big[6000];
	const uint8_t *msg;
	size_t len, old_len;

	put_len(wire, 3000);
	memset(wire + 4, 0xaa, 3000);
	memset(big, 0xbb, sizeof(big));
	esgw_frame_feed(&fb, wire, sizeof(wire)); /* 4096 bytes of buffer */
	watch(fb.data, fb.cap);
	esgw_frame_feed(&fb, big, sizeof(big)); /* grows: the old block goes back */
	CHECK(watched_freed_clean == 1, "outgrown block freed unwiped (%d)", watched_freed_clean);
	CHECK(esgw_frame_next(&fb, &msg, &len) == ESGW_FRAME_READY && len == 3000, "frame");
	old_len = fb.len;
	esgw_frame_consume(&fb);
	CHECK(fb.len == old_len - 3004, "consumed %zu", fb.len);
	for (size_t i = fb.len; i < old_len; i++) {
		if (fb.data[i] != 0) {
			CHECK(fb.data[i] == 0, "byte %zu behind the buffered data not wiped", i);
			break;
		}
	}
	esgw_frame_reset(&fb);
	CHECK(fb.len == 0, "reset");
	for (size_t i = 0; i < old_len; i++) {
		if (fb.data[i] != 0) {
			CHECK(fb.data[i] == 0, "byte %zu not wiped by reset", i);
			break;
		}
	}
	esgw_frame_feed(&fb, big, 100);
	watch(fb.data, fb.cap);
	esgw_frame_free(&fb);
	CHECK(watched_freed_clean == 1, "freed buffer not wiped (%d)", watched_freed_clean);
}

int main(void)
{
	test_wiped_behind();
	test_decoder_split();
	test_decoder_oversized();
	test_socket_roundtrip();
	test_garbage_unpack();
	return check_report("test_framing");
}
