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
	  "for the host's stack, over its class's punt budget (a flood to the gateway)")           \
	X(SEQ_HOLD, "seq_hold",                                                                    \
	  "outbound SA at the sequence-number floor esgw-ctld made durable: held, not sent "       \
	  "(esgw-ctld down or cannot save a higher one)")                                          \
	X(REASSEMBLY_INVALID, "reassembly_invalid",                                                \
	  "fragment overlapping another or beyond its datagram's end: the datagram dropped")       \
	X(BAD_ICMP_CHECKSUM, "bad_icmp_checksum", "ICMP echo request with a wrong checksum")       \
	X(POLICY_CLEARTEXT, "policy_cleartext",                                                    \
	  "arrived in clear, but a protect policy or a tunnel route covers it (RFC 4301 5.2)")     \
	X(TUNNEL_SOURCE_MISMATCH, "tunnel_source_mismatch",                                        \
	  "decrypted packet whose source does not route back into its tunnel, or bound for one")   \
	X(MARTIAN_SOURCE, "martian_source",                                                        \
	  "source no host can have: 0/8, 127/8, multicast, broadcast, the gateway's own")

enum esgw_drop {
#define ESGW_DROP_ENUM(id, name, help) ESGW_DROP_##id,
	ESGW_FOREACH_DROP(ESGW_DROP_ENUM)
#undef ESGW_DROP_ENUM
		ESGW_DROP_MAX
};

/* Counter name ("auth_failed") and help text of a drop reason. */
const char *esgw_drop_name(enum esgw_drop reason);
const char *esgw_drop_help(enum esgw_drop reason);

/* The reasons an SA can hit: what the crypto worker drops once it knows a
 * packet's SA (esp_encap.c, esp_decap.c, worker_loop.c). The counters of
 * each SA in shared memory (struct esgw_sa_counters, shm.h) have these and
 * no others; a drop for another reason is the worker's alone. */
#define ESGW_FOREACH_SA_DROP(X)                                                                    \
	X(MALFORMED)                                                                               \
	X(NO_SA)                                                                                   \
	X(RING_FULL)                                                                               \
	X(TX_FAILED)                                                                               \
	X(REPLAY)                                                                                  \
	X(AUTH_FAILED)                                                                             \
	X(BAD_PADDING)                                                                             \
	X(BAD_NEXT_HEADER)                                                                         \
	X(TFC_DUMMY)                                                                               \
	X(SEQ_OVERFLOW)                                                                            \
	X(SA_EXPIRED)                                                                              \
	X(TOO_BIG)                                                                                 \
	X(CRYPTO_ERROR)                                                                            \
	X(SEQ_HOLD)

/* An SA's counter index of each of those reasons. */
enum esgw_sa_drop {
#define ESGW_SA_DROP_ENUM(id) ESGW_SA_DROP_##id,
	ESGW_FOREACH_SA_DROP(ESGW_SA_DROP_ENUM)
#undef ESGW_SA_DROP_ENUM
		ESGW_SA_DROP_MAX
};

/* The SA counter index of reason; ESGW_SA_DROP_MAX for a reason no SA can
 * hit. A switch, so a constant reason costs nothing. */
static inline unsigned int esgw_sa_drop_index(enum esgw_drop reason)
{
	switch (reason) {
#define ESGW_SA_DROP_CASE(id)                                                                      \
	case ESGW_DROP_##id:                                                                       \
		return ESGW_SA_DROP_##id;
		ESGW_FOREACH_SA_DROP(ESGW_SA_DROP_CASE)
#undef ESGW_SA_DROP_CASE
	default:
		return ESGW_SA_DROP_MAX;
	}
}

/* The drop reason of SA counter index i (i < ESGW_SA_DROP_MAX). */
enum esgw_drop esgw_sa_drop_reason(unsigned int i);

#endif
