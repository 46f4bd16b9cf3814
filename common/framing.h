/* SPDX-License-Identifier: BSD-3-Clause */
/* Length-prefixed framing of protobuf messages on UNIX stream sockets: a 4-byte
 * big-endian length, then the message. The decoder is incremental and pure so
 * event loops and tests share it. */
#ifndef ESGW_FRAMING_H
#define ESGW_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* Largest message accepted, bytes: a 20,000-tunnel batch, configuration file
 * or show reply is some MB; a peer may make the receiver allocate this much. */
#define ESGW_FRAME_MAX (64u << 20)
#define ESGW_FRAME_HDR 4

struct esgw_frame_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

enum esgw_frame_result {
	ESGW_FRAME_NEED_MORE = 0,
	ESGW_FRAME_READY = 1,
	ESGW_FRAME_TOO_BIG = -1, /* declared length over ESGW_FRAME_MAX: close the peer */
	ESGW_FRAME_NOMEM = -2,
};

/* The buffer may hold key material (an SaAdd, a DpConfig): every byte it
 * gives up is wiped first, when it grows, consumes a frame, is reset or freed. */
/* Append received bytes. Returns 0, or ESGW_FRAME_NOMEM. */
int esgw_frame_feed(struct esgw_frame_buf *fb, const uint8_t *bytes, size_t n);
/* If a whole frame is buffered, point msg/len at its body and return READY;
 * call esgw_frame_consume() once done with it. */
int esgw_frame_next(const struct esgw_frame_buf *fb, const uint8_t **msg, size_t *len);
void esgw_frame_consume(struct esgw_frame_buf *fb);
/* Forget what is buffered (wiped), keeping the memory. */
void esgw_frame_reset(struct esgw_frame_buf *fb);
void esgw_frame_free(struct esgw_frame_buf *fb);

/* Blocking helpers with a timeout (ms, <0: forever). Return 0 or -1 with errno
 * (ETIMEDOUT, EMSGSIZE for a frame over ESGW_FRAME_MAX, ECONNRESET on EOF). */
int esgw_frame_write(int fd, const uint8_t *msg, size_t len, int timeout_ms);
int esgw_frame_read(int fd, uint8_t **msg, size_t *len, int timeout_ms);

/* Pack a protobuf message as one frame (length, then body) in a new buffer
 * for the caller to free(); NULL if out of memory or over ESGW_FRAME_MAX. */
uint8_t *esgw_frame_pack(const ProtobufCMessage *m, size_t *len);

/* Pack a protobuf message and write it as one frame. */
int esgw_msg_write(int fd, const ProtobufCMessage *m, int timeout_ms);

#endif
