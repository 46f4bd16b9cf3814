/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the router's whole input path: sequences of frames
 * into forward_input() on the LAN and WAN ports of a configured router (two
 * interfaces with IPv4 and IPv6 addresses, routes, four tunnels over IPv4
 * and IPv6 outer headers, one UDP-encapsulated, a protect, a bypass and a
 * discard policy, static neighbours), with the crypto worker's real code
 * (crypto_worker_process: decap of the ESP that reaches it, encap of what
 * the router sends into a tunnel) and its decrypted packets fed back to the
 * router, as esgw-router and esgw-crypto do over their rings. A real DPDK
 * EAL (in memory, no hugepages, two net_null ports) and real rings; the
 * mbuf pool is special: every mbuf is its own heap allocation, poisoned for
 * AddressSanitizer while it is free, so a write past an mbuf's buffer or a
 * use after free is reported at once instead of landing in a neighbour.
 *
 * Input: frames one after the other, each [control byte][length, 2 bytes
 * big endian, 11 bits][frame]; control bit 0 picks the port (0 LAN, 1 WAN),
 * bit 1 advances the clock by 1.5 s first (reassembly timeout, ARP and ND
 * retries), bit 2 by 301 s (neighbour expiry). A fragment series or an ARP
 * exchange is one input. The keys are those of gen_router_corpus.py, so its
 * ESP seeds decrypt and reach the inner checks.
 *
 * Besides the sanitizers' checks it asserts that every frame the router
 * and the worker hand to rxtx is a frame for a configured port, and that
 * after every input, once the router's tables are emptied, every mbuf is
 * back in the pool: nothing leaks, nothing is freed twice. */
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_memzone.h>

#include "addr.h"
#include "headers.h"
#include "router.h"
#include "worker.h"

#define POOL_MBUFS 4096
#define FRAMES_MAX 64
#define CLOCK_START (1000ull * 1000 * 1000 * 1000)
#define HZ (1000ull * 1000 * 1000)

static struct router router;
static struct crypto_worker worker;
static struct rte_ring *tx_ring[2], *punt_ring;
/* The fuzzed configuration's few SAs: a small shared table, copied per input. */
#define FUZZ_MAX_SAS 16
static struct esgw_sa_runtime sa_snapshot[FUZZ_MAX_SAS];
static Esgw__DpConfig config = ESGW__DP_CONFIG__INIT;
static int poisoning; /* on once the pool is built: free mbufs are poisoned */

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_router: invariant broken: %s\n", what);
		abort();
	}
}

/* ---------------------------------------------------------------- the pool */

struct fuzz_stack {
	unsigned int n;
	void *objs[];
};

/* Also held here, where LeakSanitizer looks (it does not scan DPDK's memory). */
static struct fuzz_stack *the_stack;
static void *chunks[POOL_MBUFS];

static int stack_alloc(struct rte_mempool *mp)
{
	struct fuzz_stack *s = calloc(1, sizeof(*s) + mp->size * sizeof(void *));

	if (s == NULL)
		return -ENOMEM;
	mp->pool_data = the_stack = s;
	return 0;
}

static void stack_free(struct rte_mempool *mp)
{
	free(mp->pool_data);
}

static int stack_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	struct fuzz_stack *s = mp->pool_data;

	require(s->n + n <= mp->size, "more mbufs freed than the pool has (a double free)");
	for (unsigned int i = 0; i < n; i++) {
		if (poisoning)
			ASAN_POISON_MEMORY_REGION(objs[i], mp->elt_size);
		s->objs[s->n++] = objs[i];
	}
	return 0;
}

static int stack_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	struct fuzz_stack *s = mp->pool_data;

	if (s->n < n)
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++) {
		objs[i] = s->objs[--s->n];
		ASAN_UNPOISON_MEMORY_REGION(objs[i], mp->elt_size);
	}
	return 0;
}

static unsigned int stack_count(const struct rte_mempool *mp)
{
	return ((const struct fuzz_stack *)mp->pool_data)->n;
}

static const struct rte_mempool_ops fuzz_ops = {
	.name = "esgw_fuzz",
	.alloc = stack_alloc,
	.free = stack_free,
	.enqueue = stack_enqueue,
	.dequeue = stack_dequeue,
	.get_count = stack_count,
};
RTE_MEMPOOL_REGISTER_OPS(fuzz_ops);

/* Each mbuf in its own allocation that ends where its data room ends, the
 * mbuf itself cache-line aligned as DPDK lays it out. */
static struct rte_mempool *pool_create(void)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE,
		.mbuf_priv_size = ESGW_MBUF_PRIV_SIZE,
	};
	struct rte_mempool *mp = rte_mempool_create_empty(
		"fuzz.pool", POOL_MBUFS,
		sizeof(struct rte_mbuf) + ESGW_MBUF_PRIV_SIZE + RTE_MBUF_DEFAULT_BUF_SIZE, 0,
		sizeof(priv), SOCKET_ID_ANY,
		RTE_MEMPOOL_F_NO_CACHE_ALIGN | RTE_MEMPOOL_F_NO_SPREAD |
			RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	size_t total, pad;

	require(mp != NULL, "mempool created");
	require(rte_mempool_set_ops_byname(mp, "esgw_fuzz", NULL) == 0, "mempool ops");
	rte_pktmbuf_pool_init(mp, &priv);
	total = mp->header_size + mp->elt_size + mp->trailer_size;
	pad = (RTE_CACHE_LINE_SIZE - mp->header_size % RTE_CACHE_LINE_SIZE) % RTE_CACHE_LINE_SIZE;
	for (unsigned int i = 0; i < POOL_MBUFS; i++) {
		void *chunk;
		int rc;

		require(posix_memalign(&chunk, RTE_CACHE_LINE_SIZE, pad + total) == 0, "memory");
		chunks[i] = chunk;
		rc = rte_mempool_populate_iova(mp, (char *)chunk + pad, RTE_BAD_IOVA, total, NULL,
					       NULL);

		require(rc == 1, "one mbuf per allocation");
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	poisoning = 1;
	for (unsigned int i = 0; i < POOL_MBUFS; i++) { /* poison what is free now */
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		rte_pktmbuf_free(m);
	}
	return mp;
}

/* ---------------------------------------------------------- configuration */

static char *str(const char *s)
{
	return strdup(s);
}

/* Append item to the repeated field (*arr, *n) of the configuration. */
static void append(void *arr, size_t *n, void *item)
{
	void ***list = arr;

	*list = realloc(*list, (*n + 1) * sizeof(void *));
	require(*list != NULL, "memory");
	(*list)[(*n)++] = item;
}

static ProtobufCBinaryData bytes(size_t len, uint8_t value)
{
	ProtobufCBinaryData b = {.len = len, .data = malloc(len ? len : 1)};

	memset(b.data, value, len);
	return b;
}

/* The binary forms ctld sends (proto/dataplane.proto) of an address and a
 * prefix written as text here. */
static ProtobufCBinaryData address(const char *text)
{
	struct esgw_addr a;
	ProtobufCBinaryData b;

	require(esgw_addr_parse(text, &a) == 0, text);
	b = bytes(esgw_addr_size(&a), 0);
	memcpy(b.data, a.bytes, b.len);
	return b;
}

static Esgw__DpPrefix *prefix(const char *text)
{
	Esgw__DpPrefix *p = calloc(1, sizeof(*p));
	struct esgw_addr a;

	esgw__dp_prefix__init(p);
	require(esgw_addr_parse(text, &a) == 0, text);
	p->address = address(text);
	p->length = a.len;
	return p;
}

static void add_interface(const char *name, const char *device, uint32_t mtu, size_t n,
			  const char *const *addrs)
{
	Esgw__DpInterface *ifc = calloc(1, sizeof(*ifc));

	esgw__dp_interface__init(ifc);
	ifc->name = str(name);
	ifc->device = str(device);
	ifc->mtu = mtu;
	for (size_t i = 0; i < n; i++)
		append(&ifc->addresses, &ifc->n_addresses, prefix(addrs[i]));
	append(&config.interfaces, &config.n_interfaces, ifc);
}

static void add_route(const char *to, const char *via, const char *tunnel)
{
	Esgw__DpRoute *rt = calloc(1, sizeof(*rt));

	esgw__dp_route__init(rt);
	rt->prefix = prefix(to);
	if (via)
		rt->via = address(via);
	if (tunnel)
		rt->tunnel = str(tunnel);
	append(&config.routes, &config.n_routes, rt);
}

/* The SA pairs of gen_router_corpus.py: key bytes are (id / 10) * 16 + 1,
 * integrity key or salt bytes one more. */
static void add_tunnel(const char *name, const char *local, const char *remote, uint32_t out_id,
		       uint32_t in_id, Esgw__Algorithm alg, int natt)
{
	Esgw__DpTunnel *t = calloc(1, sizeof(*t));
	const struct esp_alg_info *info = esp_alg_lookup((unsigned int)alg);
	uint32_t ids[2] = {out_id, in_id};

	esgw__dp_tunnel__init(t);
	t->name = str(name);
	t->local = address(local);
	t->remote = address(remote);
	t->sa_out = out_id;
	t->n_sa_in = 1;
	t->sa_in = malloc(sizeof(uint32_t));
	t->sa_in[0] = in_id;
	append(&config.tunnels, &config.n_tunnels, t);
	for (int k = 0; k < 2; k++) {
		Esgw__DpSa *sa = calloc(1, sizeof(*sa));
		uint8_t key = (uint8_t)(ids[k] / 10 * 16 + 1);

		esgw__dp_sa__init(sa);
		sa->id = ids[k];
		sa->slot = (uint32_t)config.n_sas;
		sa->spi = ids[k] * 100;
		sa->algorithm = alg;
		sa->crypto_key = bytes(info->key_len, key);
		if (info->integ_key_len)
			sa->integ_key = bytes(info->integ_key_len, (uint8_t)(key + 1));
		if (info->salt_len)
			sa->salt = bytes(info->salt_len, (uint8_t)(key + 1));
		sa->replay_window = 64;
		sa->worker = 0;
		sa->adopt = 1;
		sa->instance = ids[k];
		sa->tunnel = str(name);
		if (k == 0) {
			sa->local = address(local);
			sa->remote = address(remote);
		}
		sa->udp_encap = natt;
		sa->udp_sport = natt ? 4500 : 0;
		sa->udp_dport = natt ? 4500 : 0;
		append(&config.sas, &config.n_sas, sa);
	}
}

static void add_policy(const char *name, const char *dst, Esgw__Policy__Action action,
		       const char *tunnel, uint32_t sa_out, uint32_t priority)
{
	Esgw__DpPolicy *p = calloc(1, sizeof(*p));

	esgw__dp_policy__init(p);
	p->name = str(name);
	p->src = prefix("192.168.1.0/24");
	p->dst = prefix(dst);
	p->action = action;
	p->priority = priority;
	if (tunnel) {
		p->tunnel = str(tunnel);
		p->sa_out = sa_out;
	}
	append(&config.policies, &config.n_policies, p);
}

static void add_neighbor(const char *interface, const char *ip, const char *mac)
{
	Esgw__DpNeighbor *n = calloc(1, sizeof(*n));

	esgw__dp_neighbor__init(n);
	n->interface = str(interface);
	n->address = address(ip);
	n->mac = bytes(6, 0);
	require(esgw_parse_mac(mac, n->mac.data) == 0, mac);
	append(&config.neighbors, &config.n_neighbors, n);
}

static void build_config(void)
{
	static const char *const lan[] = {"192.168.1.2/24", "2001:db8:1::2/64"};
	static const char *const wan[] = {"192.168.3.1/24", "10.99.0.1/16", "2001:db8:3::1/64"};

	config.generation = 1;
	config.workers = 1;
	add_interface("lan", "net_null0", 1500, 2, lan);
	add_interface("wan", "net_null1", 1400, 3, wan);
	add_tunnel("t4", "192.168.3.1", "192.168.3.2", 10, 20,
		   ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA1_96, 0);
	add_tunnel("t6", "2001:db8:3::1", "2001:db8:3::2", 30, 40,
		   ESGW__ALGORITHM__ALGORITHM_AES_GCM_128, 0);
	add_tunnel("t7", "192.168.3.1", "192.168.3.2", 70, 80,
		   ESGW__ALGORITHM__ALGORITHM_AES_GCM_256, 0);
	add_tunnel("t8", "192.168.3.1", "192.168.3.9", 50, 60,
		   ESGW__ALGORITHM__ALGORITHM_CHACHA20_POLY1305, 1);
	add_route("192.168.2.0/24", NULL, "t4");
	add_route("2001:db8:2::/64", NULL, "t4");
	add_route("192.168.4.0/24", NULL, "t6");
	add_route("2001:db8:4::/64", NULL, "t6");
	add_route("192.168.8.0/24", NULL, "t8");
	add_route("192.168.5.0/24", "192.168.3.2", NULL);
	add_route("0.0.0.0/0", "192.168.3.254", NULL);
	add_route("::/0", "2001:db8:3::fe", NULL);
	add_policy("p5", "192.168.5.0/24", ESGW__POLICY__ACTION__ACTION_PROTECT, "t7", 70, 10);
	add_policy("open", "192.168.2.50/32", ESGW__POLICY__ACTION__ACTION_BYPASS, NULL, 0, 5);
	add_policy("closed", "192.168.2.99/32", ESGW__POLICY__ACTION__ACTION_DISCARD, NULL, 0, 5);
	add_neighbor("wan", "192.168.3.254", "02:00:00:00:03:fe");
	add_neighbor("wan", "2001:db8:3::fe", "02:00:00:00:06:fe");
}

/* -------------------------------------------------------------- the rings */

static struct rte_ring *ring(const char *name)
{
	struct rte_ring *r =
		rte_ring_create(name, ESGW_RING_SIZE, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);

	require(r != NULL, name);
	return r;
}

/* What rxtx would send: frames for a configured port. */
static unsigned int drain_tx(struct rte_ring *r)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int n = rte_ring_dequeue_burst(r, (void **)pkts, ESGW_BURST, NULL);

	for (unsigned int i = 0; i < n; i++) {
		const struct esgw_meta *meta = esgw_meta(pkts[i]);

		require(meta->kind == ESGW_PKT_TX || r == punt_ring, "a frame for rxtx");
		require(rte_pktmbuf_pkt_len(pkts[i]) >= RTE_ETHER_HDR_LEN, "a whole frame");
		require((r == punt_ring ? meta->in_port : meta->out_port) < 2, "a configured port");
		rte_pktmbuf_free(pkts[i]);
	}
	return n;
}

/* Run the router's output and the worker until every ring is empty. */
static void pump(void)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int moved;

	do {
		moved = 0;
		router_flush(&router);
		if (router.nb_egress_notes) /* as router_poll: the worker may go direct next */
			egress_publish(&router);
		router.dp.bells.n = 0;
		worker.dp.bells.n = 0;
		unsigned int n =
			rte_ring_dequeue_burst(worker.ring_in, (void **)pkts, ESGW_BURST, NULL);
		if (n)
			crypto_worker_process(&worker, pkts, n);
		moved += n;
		n = rte_ring_dequeue_burst(worker.ring_dec, (void **)pkts, ESGW_BURST, NULL);
		router.egress_from = worker.id + 1;
		for (unsigned int i = 0; i < n; i++) {
			struct router_ahead a;

			prefetch_lookups(&router, pkts[i], &a);
			prefetch_routes(&router, &a);
			prefetch_targets(&router, &a);
			forward_input(&router, pkts[i]);
		}
		router.egress_from = 0;
		moved += n;
		moved += drain_tx(tx_ring[0]) + drain_tx(tx_ring[1]) + drain_tx(worker.ring_wtx) +
			 drain_tx(punt_ring);
	} while (moved);
}

/* ------------------------------------------------------------------ setup */

/* Without shared config the EAL still makes /var/run/dpdk/<prefix>/. */
static void remove_runtime_dir(void)
{
	rmdir(rte_eal_get_runtime_dir());
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char prefix[32], *eal[] = {"fuzz_router",
				   "--no-huge",
				   "-m",
				   "256",
				   "--no-pci",
				   "--no-shconf",
				   "--no-telemetry",
				   "-l",
				   "0",
				   "--vdev=net_null0",
				   "--vdev=net_null1",
				   "--log-level=3",
				   "--file-prefix",
				   prefix,
				   NULL};
	struct rte_ether_addr mac[2] = {{{2, 0, 0, 0, 0, 1}}, {{2, 0, 0, 0, 0, 2}}};
	const struct rte_memzone *mz;
	cpu_set_t all;
	char err[256];

	(void)argc;
	(void)argv;
	/* A prefix of our own: other gateways and fuzzing jobs run beside us. */
	snprintf(prefix, sizeof(prefix), "esgw-fuzz-%d", (int)getpid());
	require(rte_eal_init(sizeof(eal) / sizeof(eal[0]) - 1, eal) >= 0, "EAL init");
	atexit(remove_runtime_dir);
	/* -l 0 pinned us to CPU 0: give the fuzzer (and -jobs) every CPU again. */
	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
	for (uint16_t p = 0; p < 2; p++)
		require(rte_eth_dev_default_mac_addr_set(p, &mac[p]) == 0, "port MAC");
	mz = rte_memzone_reserve(ESGW_SHARED_NAME, esgw_shared_size(FUZZ_MAX_SAS, 1),
				 SOCKET_ID_ANY, 0);
	require(mz != NULL, "shared memzone");
	memset(mz->addr, 0, esgw_shared_size(FUZZ_MAX_SAS, 1));
	((struct esgw_shared *)mz->addr)->max_sas = FUZZ_MAX_SAS;
	((struct esgw_shared *)mz->addr)->max_workers = 1;
	((struct esgw_shared *)mz->addr)->magic = ESGW_SHARED_MAGIC;

	tx_ring[0] = ring("esgw.tx.0");
	tx_ring[1] = ring("esgw.tx.1");
	punt_ring = ring(ESGW_RING_PUNT);
	router.crypto_ring[0] = worker.ring_in = ring("esgw.crypto.0");
	router.decrypted_ring[0] = worker.ring_dec = ring("esgw.dec.0");
	worker.ring_wtx = ring("esgw.wtx.0");

	router.dp.pool = worker.dp.pool = pool_create();
	router.dp.shared = worker.dp.shared = mz->addr;
	router.dp.max_sas = worker.dp.max_sas = FUZZ_MAX_SAS;
	router.dp.max_workers = worker.dp.max_workers = 1;
	router.dp.role = "router";
	router.hz = HZ;
	router.now = CLOCK_START;
	router.tables = router_tables_new(FUZZ_MAX_SAS);
	worker.dp.role = "crypto";
	worker.id = 0;
	worker.mgr = alloc_mb_mgr(0);
	require(router.tables != NULL && router_handover_init(&router) == 0 &&
		crypto_worker_tables_alloc(&worker) == 0 && worker.mgr != NULL,
		"memory");
	init_mb_mgr_auto(worker.mgr, NULL);
	require(neighbor_table_init(&router) == 0, "neighbour table");

	build_config();
	if (router_config_apply(&router.dp, &config, err, sizeof(err)) < 0 ||
	    crypto_worker_on_config(&worker.dp, &config, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_router: configuration refused: %s\n", err);
		abort();
	}
	memcpy(sa_snapshot, worker.dp.shared->sa, sizeof(sa_snapshot));
	return 0;
}

/* Every input starts from the same state: no neighbour learnt, no fragment
 * held, the SAs' windows as configured, the clock at its start. */
static void reset(void)
{
	neighbor_table_free(&router);
	require(neighbor_table_init(&router) == 0, "neighbour table");
	reassembly_table_free(&router);
	require(reassembly_init(&router) == 0, "reassembly table");
	router.now = CLOCK_START;
	router.icmp_window = router.punt_window = 0;
	egress_invalidate(&router); /* nothing the last input's packets wrote down */
	neighbor_static_apply(&router, &config);
	pump();
	memcpy(worker.dp.shared->sa, sa_snapshot, sizeof(sa_snapshot));
}

static void advance(uint64_t ns)
{
	router.now += ns;
	neighbor_timer(&router, router.now);
	reassembly_timer(&router, router.now);
	pump();
}

/* With ESGW_FUZZ_STATS set: what each input did (for writing seeds). */
static void print_stats(void)
{
	static const char *const names[] = {
#define NAME(name) #name,
		FOREACH_ROUTER_COUNTER(NAME)
#undef NAME
	};
	const uint64_t values[] = {
#define VALUE(name) router.ctr.name,
		FOREACH_ROUTER_COUNTER(VALUE)
#undef VALUE
	};

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (values[i])
			fprintf(stderr, " %s %lu", names[i], (unsigned long)values[i]);
	for (int d = 0; d < ESGW_DROP_MAX; d++)
		if (router.ctr.drops[d] || worker.drops[d])
			fprintf(stderr, " %s %lu", esgw_drop_name(d),
				(unsigned long)(router.ctr.drops[d] + worker.drops[d]));
	fprintf(stderr, " decrypted %lu encrypted %lu\n", (unsigned long)worker.packets_decrypted,
		(unsigned long)worker.packets_encrypted);
	memset(&router.ctr, 0, sizeof(router.ctr));
	memset(worker.drops, 0, sizeof(worker.drops));
	worker.packets_decrypted = worker.packets_encrypted = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int frames = 0;

	while (size >= 3 && frames++ < FRAMES_MAX) {
		uint8_t control = data[0];
		size_t len = (size_t)(data[1] << 8 | data[2]) & 0x7ff;
		struct rte_mbuf *m;
		struct esgw_meta *meta;
		struct router_ahead ahead;
		char *p;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		if (control & 4)
			advance(301 * HZ);
		else if (control & 2)
			advance(HZ * 3 / 2);
		m = rte_pktmbuf_alloc(router.dp.pool);
		require(m != NULL, "an mbuf for the frame");
		p = rte_pktmbuf_append(m, (uint16_t)len);
		require(p != NULL || len == 0, "room for the frame");
		if (len)
			memcpy(p, data, len);
		meta = esgw_meta(m);
		memset(meta, 0, sizeof(*meta));
		meta->kind = ESGW_PKT_RX;
		meta->in_port = control & 1;
		prefetch_lookups(&router, m, &ahead); /* what the burst reads ahead too */
		prefetch_routes(&router, &ahead);
		prefetch_targets(&router, &ahead);
		forward_input(&router, m);
		pump();
		data += len;
		size -= len;
	}
	if (getenv("ESGW_FUZZ_STATS") != NULL)
		print_stats();
	reset();
	require(rte_mempool_in_use_count(router.dp.pool) == 0,
		"every mbuf back in the pool once the tables are emptied");
	return 0;
}
