/* SPDX-License-Identifier: BSD-3-Clause */
/* Length-prefixed framing: incremental decoder and blocking helpers. */
#include "framing.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint32_t frame_len(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Requests may carry SA keys: no byte of them is left behind in memory that
 * is given back to the allocator (realloc could move the block and free the
 * old one unwiped), nor behind the end of what is buffered. */
int esgw_frame_feed(struct esgw_frame_buf *fb, const uint8_t *bytes, size_t n)
{
	if (fb->len + n > fb->cap) {
		size_t cap = fb->cap ? fb->cap : 4096;
		uint8_t *p;

		while (cap < fb->len + n)
			cap *= 2;
		p = malloc(cap);
		if (p == NULL)
			return ESGW_FRAME_NOMEM;
		if (fb->data != NULL) {
			memcpy(p, fb->data, fb->len);
			explicit_bzero(fb->data, fb->cap);
			free(fb->data);
		}
		fb->data = p;
		fb->cap = cap;
	}
	memcpy(fb->data + fb->len, bytes, n);
	fb->len += n;
	return 0;
}

int esgw_frame_next(const struct esgw_frame_buf *fb, const uint8_t **msg, size_t *len)
{
	uint32_t body;

	if (fb->len < ESGW_FRAME_HDR)
		return ESGW_FRAME_NEED_MORE;
	body = frame_len(fb->data);
	if (body > ESGW_FRAME_MAX)
		return ESGW_FRAME_TOO_BIG;
	if (fb->len - ESGW_FRAME_HDR < body)
		return ESGW_FRAME_NEED_MORE;
	*msg = fb->data + ESGW_FRAME_HDR;
	*len = body;
	return ESGW_FRAME_READY;
}

void esgw_frame_consume(struct esgw_frame_buf *fb)
{
	size_t used;

	if (fb->len < ESGW_FRAME_HDR)
		return;
	used = ESGW_FRAME_HDR + frame_len(fb->data);
	if (used > fb->len)
		return;
	memmove(fb->data, fb->data + used, fb->len - used);
	explicit_bzero(fb->data + fb->len - used, used); /* what moved, behind it */
	fb->len -= used;
}

void esgw_frame_reset(struct esgw_frame_buf *fb)
{
	if (fb->data != NULL)
		explicit_bzero(fb->data, fb->len);
	fb->len = 0;
}

void esgw_frame_free(struct esgw_frame_buf *fb)
{
	if (fb->data != NULL)
		explicit_bzero(fb->data, fb->cap);
	free(fb->data);
	memset(fb, 0, sizeof(*fb));
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for events or the deadline passes. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int left = -1, rc;

	if (deadline >= 0) {
		int64_t d = deadline - now_ms();
		left = d > 0 ? (int)d : 0;
	}
	do {
		rc = poll(&pfd, 1, left);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	return rc < 0 ? -1 : 0;
}

static int write_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || wait_fd(fd, POLLOUT, deadline) < 0)
				return -1;
			continue;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, uint8_t *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t r;

		if (wait_fd(fd, POLLIN, deadline) < 0)
			return -1;
		r = read(fd, p, n);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int esgw_frame_write(int fd, const uint8_t *msg, size_t len, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t hdr[ESGW_FRAME_HDR] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16),
				       (uint8_t)(len >> 8), (uint8_t)len};

	if (len > ESGW_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (write_all(fd, hdr, sizeof(hdr), deadline) < 0)
		return -1;
	return write_all(fd, msg, len, deadline);
}

int esgw_frame_read(int fd, uint8_t **msg, size_t *len, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t hdr[ESGW_FRAME_HDR];
	uint32_t body;
	uint8_t *p;

	if (read_all(fd, hdr, sizeof(hdr), deadline) < 0)
		return -1;
	body = frame_len(hdr);
	if (body > ESGW_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	p = malloc(body ? body : 1);
	if (p == NULL)
		return -1;
	if (read_all(fd, p, body, deadline) < 0) {
		free(p);
		return -1;
	}
	*msg = p;
	*len = body;
	return 0;
}

uint8_t *esgw_frame_pack(const ProtobufCMessage *m, size_t *len)
{
	size_t body = protobuf_c_message_get_packed_size(m);
	uint8_t *buf;

	if (body > ESGW_FRAME_MAX || (buf = malloc(ESGW_FRAME_HDR + body)) == NULL)
		return NULL;
	buf[0] = (uint8_t)(body >> 24);
	buf[1] = (uint8_t)(body >> 16);
	buf[2] = (uint8_t)(body >> 8);
	buf[3] = (uint8_t)body;
	protobuf_c_message_pack(m, buf + ESGW_FRAME_HDR);
	*len = ESGW_FRAME_HDR + body;
	return buf;
}

int esgw_msg_write(int fd, const ProtobufCMessage *m, int timeout_ms)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	if (buf == NULL)
		return -1;
	protobuf_c_message_pack(m, buf);
	rc = esgw_frame_write(fd, buf, len, timeout_ms);
	explicit_bzero(buf, len); /* a DpConfig carries SA keys */
	free(buf);
	return rc;
}
