/* SPDX-License-Identifier: BSD-3-Clause */
/* The one list of reasons a packet is dropped: generates the enum, the counter
 * names shown by esgwctl, and their help text. */
#ifndef ESGW_DROPS_H
#define ESGW_DROPS_H

#define ESGW_FOREACH_DROP(X)                                                                       \
	X(MALFORMED, "malformed", "truncated or malformed packet")                                 \
	X(NOT_IP, "not_ip", "ethertype neither IPv4, IPv6 nor ARP")                                \
	X(NOT_FOR_US, "not_for_us", "frame or ARP addressed to another host (LAN chatter)")        \
	X(NO_INTERFACE, "no_interface", "frame from a port no configured interface uses")          \
	X(BAD_IP_CHECKSUM, "bad_ip_checksum", "IPv4 header checksum wrong")                        \
	X(NO_ROUTE, "no_route", "no route to the destination")                                     \
	X(TTL_EXPIRED, "ttl_expired", "TTL reached zero while forwarding")                         \
	X(ARP_UNRESOLVED, "arp_unresolved", "next hop's MAC address unknown")                      \
	X(UNSUPPORTED_PROTOCOL, "unsupported_protocol",                                            \
	  "packet to a gateway address with a protocol it does not serve")                         \
	X(NO_SA, "no_sa", "ESP packet for an unknown SPI, or tunnel without SA")                   \
	X(NO_WORKER, "no_worker", "the SA's crypto worker is not running")                         \
	X(RING_FULL, "ring_full", "the next stage's ring was full")                                \
	X(NO_MBUF, "no_mbuf", "mbuf pool exhausted")                                               \
	X(RX_MISSED, "rx_missed", "the port's receive ring was full: kernel or NIC dropped it")    \
	X(TX_FAILED, "tx_failed", "the port did not accept the packet")                            \
	X(REPLAY, "replay", "duplicate or too-old ESP sequence number")                            \
	X(AUTH_FAILED, "auth_failed", "ESP integrity check (ICV) failed")                          \
	X(BAD_PADDING, "bad_padding", "ESP padding or pad length invalid")                         \
	X(BAD_NEXT_HEADER, "bad_next_header", "ESP next header neither IPv4 nor IPv6")             \
	X(TFC_DUMMY, "tfc_dummy", "ESP dummy packet (next header 59)")                             \
	X(SEQ_OVERFLOW, "seq_overflow", "outbound sequence number space exhausted")                \
	X(SA_EXPIRED, "sa_expired", "the SA reached a hard lifetime (bytes, packets, seconds)")    \
	X(TOO_BIG, "too_big",                                                                      \
	  "packet over the MTU (after encapsulation) that may not be fragmented")                  \
	X(REASSEMBLY_TIMEOUT, "reassembly_timeout",                                                \
	  "fragment of a datagram not completed within 2 s")                                       \
	X(REASSEMBLY_OVERFLOW, "reassembly_overflow",                                              \
	  "fragment refused: reassembly table full, too many fragments or too large")              \
	X(CRYPTO_ERROR, "crypto_error", "intel-ipsec-mb reported an error")                        \
	X(HANDOVER_OVERFLOW, "handover_overflow",                                                  \
	  "an SA's packets waiting for its hand-over to this worker overflowed")                   \
	X(POLICY_DISCARD, "policy_discard", "matched a policy whose action is discard")            \
	X(POLICY_NO_SA, "policy_no_sa",                                                            \
	  "matched a protect policy whose SA or tunnel is missing: never sent in clear")           \
	X(POLICY_MISMATCH, "policy_mismatch",                                                      \
	  "decrypted packet matches no protect policy of the SA it arrived on")                    \
	X(PUNTED_NO_HOST, "punted_no_host",                                                        \
	  "for the host's stack (IKE, SSH...), but no TAP took it (none, or full)")                \
	X(PUNT_POLICED, "punt_policed",                                                            \
	  "for the host's stack, over the punt rate limit (a flood to the gateway)")               \
	X(SEQ_HOLD, "seq_hold",                                                                    \
	  "outbound SA at the sequence-number floor esgw-ctld made durable: held, not sent "       \
	  "(esgw-ctld down or cannot save a higher one)")

enum esgw_drop {
#define ESGW_DROP_ENUM(id, name, help) ESGW_DROP_##id,
	ESGW_FOREACH_DROP(ESGW_DROP_ENUM)
#undef ESGW_DROP_ENUM
		ESGW_DROP_MAX
};

/* Counter name ("auth_failed") and help text of a drop reason. */
const char *esgw_drop_name(enum esgw_drop reason);
const char *esgw_drop_help(enum esgw_drop reason);

#endif
