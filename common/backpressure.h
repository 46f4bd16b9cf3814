/* SPDX-License-Identifier: BSD-3-Clause */
/* Backpressure between dataplane processes: a producer whose output ring is
 * full stops taking work (a port's frames, an input ring) instead of doing it
 * only to drop the result at the full ring, so under overload the CPU goes to
 * the packets that can be forwarded and the excess waits, or is dropped, at
 * the source (a port's own ring, at no CPU cost). Without it a gateway whose
 * processes share a CPU livelocks: rxtx and the router keep their share of
 * the CPU receiving and routing packets the crypto worker has no time for.
 *
 * A blocked producer raises its ring's room flag and goes idle (it sleeps on
 * its doorbell like any idle process); the ring's consumer, once it has
 * drained the ring down to ESGW_RING_LOW, clears the flag and rings the
 * producer's doorbell. Hysteresis (HIGH to LOW) makes each wake-up worth
 * hundreds of packets. */
#ifndef ESGW_BACKPRESSURE_H
#define ESGW_BACKPRESSURE_H

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_ring.h>

#include "dp.h"

/* Between the processes a producer stops feeding a ring that holds
 * ESGW_RING_HIGH packets (half of ESGW_RING_SIZE) and is woken at
 * ESGW_RING_LOW. The mark sets how many packets a stage handles per wake-up
 * where the stages share a CPU, so how many context switches a packet pays
 * for: half a ring, not a quarter, measured (bench/run.sh, GCM, the builds
 * interleaved, 2-3 rounds each): the chain (setting B) at full load 64 B
 * 1.874 and 1.862 -> 2.665 and 2.512 Mpps, 13.0-15.0 -> 6.4-6.6 context
 * switches per 1,000 packets, 1400 B 0.925 and 0.708 -> 1.059 and 1.033
 * Mpps; one CPU (setting A) 1400 B 1,452-2,128 -> 1,189-1,408 cycles of CPU
 * per packet encrypting, 64 B unchanged within the host's noise (the packets
 * waiting between the stages no longer fit the caches as well). The pool
 * (ESGW_POOL_SIZE) holds router_in, one worker's three rings and two ports'
 * TX rings at their marks together (14,080 mbufs with ESGW_BURST 64); with
 * more of them full at once a port's receive finds no mbuf and the frames
 * stay in, or are dropped from, its own ring (counted by the port).
 * rxtx fills router_in up to ESGW_RING_IN_HIGH, nearly all of it, as it did
 * before it ever paused: a router busy for a while with a configuration push
 * then still finds what arrived meanwhile there, not lost in a port's
 * smaller ring (af_packet's kernel ring); it is woken at ESGW_RING_HIGH.
 * A build may set either mark (meson setup -Dc_args="-DESGW_RING_IN_HIGH=512
 * -DESGW_RING_HIGH=256") to weigh what the packets in flight between the
 * stages cost in cache misses against what smaller batches cost in context
 * switches (bench/run.sh --setting A --build DIR). */
#ifndef ESGW_RING_HIGH
#define ESGW_RING_HIGH (ESGW_RING_SIZE / 2)
#endif
#define ESGW_RING_LOW (ESGW_RING_HIGH / 4)
#ifndef ESGW_RING_IN_HIGH
#define ESGW_RING_IN_HIGH (ESGW_RING_SIZE - 4 * ESGW_BURST)
#endif
#define ESGW_RING_IN_LOW ESGW_RING_HIGH

/* Producer: whether ring r has room for another burst below high. If not,
 * the room flag asks the consumer for a wake-up; the producer's idle sleep
 * re-checks the ring (with esgw_ring_has_room) after announcing itself
 * asleep, so no wake-up is lost. */
static inline int esgw_ring_has_room(const struct rte_ring *r, unsigned int high,
				     struct esgw_room *room)
{
	if (likely(rte_ring_count(r) < high))
		return 1;
	room->wanted = 1;
	return 0;
}

/* Consumer, after a dequeue from r: if its producer is waiting for room and
 * the ring is down to low, wake it (its doorbell db, at the end of the
 * round). The barrier orders our dequeue before the read of the flag: with
 * the producer's own (doorbell wait) either it sees the room or we see the
 * flag. Only when the ring is low, so a full-speed consumer pays nothing. */
static inline void esgw_ring_room_made(struct esgw_dp *dp, const struct rte_ring *r,
				       unsigned int low, struct esgw_room *room,
				       struct esgw_doorbell *db)
{
	if (rte_ring_count(r) > low)
		return;
	rte_smp_mb();
	if (unlikely(room->wanted)) {
		room->wanted = 0;
		dp->cycles.room_wakes++;
		esgw_dp_wake(dp, db);
	}
}

#endif
