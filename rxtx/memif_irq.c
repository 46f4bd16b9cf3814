/* SPDX-License-Identifier: BSD-3-Clause */
/* memif's interrupt mode, for a sleeping rxtx. Every memif ring carries a
 * flag, MEMIF_RING_FLAG_MASK_INT, that the receiving side clears to ask the
 * sender to write the ring's eventfd after each burst it enqueues; that is
 * the memif protocol, and VPP, libmemif and DPDK's net_memif all honour it.
 * DPDK 22.11's net_memif sets the flag on the rings it receives on (polling
 * mode) and has no Rx interrupt API, so a sleeping rxtx used to wake every
 * 10 ms to poll its memif ports: ~100 wake-ups a second at rest, most of an
 * idle gateway's CPU, and up to 10 ms for the first frame after a pause.
 *
 * Now rxtx clears the flag on its memif Rx rings just before it sleeps and
 * sets it again when it wakes. While it sleeps, a frame from the peer writes
 * the eventfd, which the sleeping rxtx waits on (port_watch.c) with the other
 * ports' sockets; while it runs the peer writes nothing. The one extra round
 * rxtx makes after clearing the flag lets the driver's own receive function
 * empty the eventfd and take any frame that came before the peer saw the flag.
 * What no order on this side can close: a peer that loads the flag before its
 * own store of the ring head is visible (no fence between them in DPDK's
 * transmit) may skip the write; that frame waits for rxtx's timed wake-up
 * (RXTX_WATCHED_TIMEOUT_US, loop.c), as every frame did before.
 *
 * The ring and the eventfd are in the driver's private structures. This file
 * mirrors the few fields it reads from DPDK 22.11's drivers/net/memif
 * (rte_eth_memif.h, memif.h) and lib/ethdev/ethdev_driver.h, and checks them
 * against what is known about the port (its name, the queue's port id and ring
 * type, the ring's cookie) before it writes anything. With another DPDK
 * release, or a port that does not check out, the port is polled on a timer
 * as before, and rxtx says so at start. */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_version.h>

#include "log.h"
#include "rxtx.h"

#if RTE_VERSION >= RTE_VERSION_NUM(22, 11, 0, 0) && RTE_VERSION < RTE_VERSION_NUM(22, 12, 0, 0)
#define MEMIF_IRQ_LAYOUT_KNOWN 1
#else
#define MEMIF_IRQ_LAYOUT_KNOWN 0
#endif

/* DPDK 22.11 (exported, declared only in the driver headers, not installed). */
void *rte_eth_dev_allocated(const char *name);

/* The leading fields of struct rte_eth_dev_data and struct rte_eth_dev. */
struct m_eth_dev_data {
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;
	void **tx_queues;
	uint16_t nb_rx_queues;
	uint16_t nb_tx_queues;
	struct rte_eth_dev_sriov sriov;
	void *dev_private;
};

struct m_eth_dev {
	void *burst_functions[6]; /* rx, tx, tx_prepare, rx_queue_count, rx/tx descriptor status */
	struct m_eth_dev_data *data;
	void *process_private;
};

/* net_memif's struct pmd_internals (leading fields), memif_region,
 * pmd_process_private, memif_queue (up to intr_handle) and memif_ring_t. */
enum { M_ROLE_SERVER, M_ROLE_CLIENT };
enum { M_RING_C2S, M_RING_S2C };
#define M_FLAG_CONNECTED (1u << 1)
#define M_MAX_REGIONS 256
#define M_RING_COOKIE 0x3E31F20u
#define M_RING_FLAG_MASK_INT 1u

struct m_pmd_internals {
	uint32_t id;
	int role;
	uint32_t flags;
};

struct m_region {
	void *addr;
	uint64_t size;
	int fd;
	uint32_t pkt_buffer_offset;
};

struct m_process_private {
	struct m_region *regions[M_MAX_REGIONS];
	uint16_t regions_num;
};

struct m_queue {
	void *mempool;
	void *pmd; /* never set by the driver */
	int type;
	uint16_t region;
	uint16_t in_port;
	uint32_t ring_offset;
	uint16_t last_head, last_tail;
	void *buffers;
	uint64_t n_pkts, n_bytes;
	struct rte_intr_handle *intr_handle;
};

struct m_ring {
	uint32_t cookie;
	uint16_t flags;
	uint16_t head;
};

/* The port's Rx queue, if the port is a net_memif port whose structures
 * look like DPDK 22.11's; else NULL, and why in *why. */
static struct m_queue *memif_queue(uint16_t port, const struct m_eth_dev **devp, const char **why)
{
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN];
	const struct m_eth_dev *dev;
	const struct m_pmd_internals *pmd;
	struct m_queue *mq;

	*why = NULL;
	if (rte_eth_dev_info_get(port, &info) != 0 || strcmp(info.driver_name, "net_memif") != 0)
		return NULL; /* not memif: nothing to say */
	if (!MEMIF_IRQ_LAYOUT_KNOWN) {
		*why = "built for a DPDK other than 22.11";
		return NULL;
	}
	if (rte_eth_dev_get_name_by_port(port, name) != 0 ||
	    (dev = rte_eth_dev_allocated(name)) == NULL || dev->data == NULL ||
	    strncmp(dev->data->name, name, sizeof(name)) != 0 || dev->data->rx_queues == NULL) {
		*why = "the device does not look like DPDK 22.11's";
		return NULL;
	}
	pmd = dev->data->dev_private;
	mq = dev->data->nb_rx_queues >= 1 ? dev->data->rx_queues[0] : NULL;
	if (mq == NULL || mq->in_port != port || pmd == NULL ||
	    mq->type != (pmd->role == M_ROLE_SERVER ? M_RING_C2S : M_RING_S2C) ||
	    (pmd->role != M_ROLE_SERVER && pmd->role != M_ROLE_CLIENT)) {
		*why = "its queue does not look like DPDK 22.11's";
		return NULL;
	}
	*devp = dev;
	return mq;
}

void rxtx_memif_irq_find(struct rxtx *rx)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];
		struct rxtx_memif_irq *irq = &rx->memif_irq[port];
		const struct m_eth_dev *dev = NULL;
		const char *why;

		irq->queue = memif_queue(port, &dev, &why);
		irq->dev = dev;
		irq->flags = NULL;
		irq->fd = -1;
		if (irq->queue != NULL)
			ESGW_INFO("port %u: memif, woken by the peer while rxtx sleeps (interrupt "
				  "mode)",
				  port);
		else if (why != NULL)
			ESGW_WARN("port %u: memif, but %s: polled on a timer while rxtx sleeps "
				  "(up to %u ms for the first frame)",
				  port, why, RXTX_DEEP_IDLE_TIMEOUT_US / 1000);
	}
}

static bool connected(const struct m_eth_dev *dev)
{
	const struct m_pmd_internals *pmd = dev->data->dev_private;

	return (__atomic_load_n(&pmd->flags, __ATOMIC_ACQUIRE) & M_FLAG_CONNECTED) != 0;
}

/* The flags word of the ring the queue receives on, if connected and sound. */
static uint16_t *rx_ring_flags(const struct m_eth_dev *dev, const struct m_queue *mq)
{
	const struct m_process_private *pp = dev->process_private;
	const struct m_pmd_internals *pmd = dev->data->dev_private;
	struct m_ring *ring;

	if (!connected(dev) || pp == NULL || mq->region >= pp->regions_num ||
	    pp->regions[mq->region] == NULL ||
	    mq->type != (pmd->role == M_ROLE_SERVER ? M_RING_C2S : M_RING_S2C))
		return NULL;
	ring = (struct m_ring *)((char *)pp->regions[mq->region]->addr + mq->ring_offset);
	return ring->cookie == M_RING_COOKIE ? &ring->flags : NULL;
}

unsigned int rxtx_memif_irq_unmask(struct rxtx *rx)
{
	unsigned int n = 0;

	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		struct rxtx_memif_irq *irq = &rx->memif_irq[rx->ports[i]];
		const struct m_queue *mq = irq->queue;

		irq->flags = NULL;
		irq->fd = -1;
		if (mq == NULL)
			continue;
		/* Nothing arrives before a peer connects; a peer that does is
		 * seen at rxtx's next timed wake-up (the driver masks the new
		 * ring: the peer does not write its eventfd before then). */
		irq->down = !connected(irq->dev);
		if (irq->down)
			continue;
		irq->fd = rte_intr_fd_get(mq->intr_handle);
		irq->flags = irq->fd >= 0 ? rx_ring_flags(irq->dev, mq) : NULL;
		if (irq->flags == NULL) {
			irq->fd = -1; /* not connected (yet): polled on the timer */
			continue;
		}
		__atomic_fetch_and(irq->flags, (uint16_t)~M_RING_FLAG_MASK_INT, __ATOMIC_RELAXED);
		n++;
	}
	/* The flag is visible before the round that follows reads the rings. */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	rx->memif_unmasked = true;
	return n;
}

void rxtx_memif_irq_mask(struct rxtx *rx)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		struct rxtx_memif_irq *irq = &rx->memif_irq[rx->ports[i]];

		/* Looked up again: the peer may have gone while we slept, and
		 * with it the ring (the driver re-masks a new one itself). */
		if (irq->flags != NULL && rx_ring_flags(irq->dev, irq->queue) == irq->flags)
			__atomic_fetch_or(irq->flags, (uint16_t)M_RING_FLAG_MASK_INT,
					  __ATOMIC_RELAXED);
		irq->flags = NULL;
	}
	rx->memif_unmasked = false;
}
