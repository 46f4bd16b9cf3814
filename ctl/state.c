/* SPDX-License-Identifier: BSD-3-Clause */
/* Lookups on the desired configuration, slot and worker assignment, and the
 * memory handling of protobuf-c messages that ctld keeps and edits. */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

Esgw__Interface *state_interface(const char *name)
{
	for (size_t i = 0; i < ctld.config->n_interfaces; i++)
		if (strcmp(ctld.config->interfaces[i]->name, name) == 0)
			return ctld.config->interfaces[i];
	return NULL;
}

/* The kinds of index (state_index.c): each key's hash and a match on it. */
static size_t one_key(const void *item)
{
	(void)item;
	return 1;
}

static uint64_t sa_id_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_u32(((const Esgw__Sa *)item)->id);
}

static bool sa_id_match(const void *item, const void *key)
{
	return ((const Esgw__Sa *)item)->id == *(const uint32_t *)key;
}

static uint64_t sa_spi_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_u32(((const Esgw__Sa *)item)->spi);
}

static bool sa_spi_match(const void *item, const void *key)
{
	return ((const Esgw__Sa *)item)->spi == *(const uint32_t *)key;
}

static uint64_t tunnel_name_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_str(((const Esgw__Tunnel *)item)->name);
}

static bool tunnel_name_match(const void *item, const void *key)
{
	return strcmp(((const Esgw__Tunnel *)item)->name, key) == 0;
}

static uint64_t tunnel_out_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_u32(((const Esgw__Tunnel *)item)->sa_out);
}

static bool tunnel_out_match(const void *item, const void *key)
{
	return ((const Esgw__Tunnel *)item)->sa_out == *(const uint32_t *)key;
}

static size_t tunnel_in_keys(const void *item)
{
	return ((const Esgw__Tunnel *)item)->n_sa_in;
}

static uint64_t tunnel_in_hash(const void *item, size_t k)
{
	return state_hash_u32(((const Esgw__Tunnel *)item)->sa_in[k]);
}

static bool tunnel_in_match(const void *item, const void *key)
{
	const Esgw__Tunnel *t = item;

	for (size_t j = 0; j < t->n_sa_in; j++)
		if (t->sa_in[j] == *(const uint32_t *)key)
			return true;
	return false;
}

static uint64_t route_prefix_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_str(((const Esgw__Route *)item)->prefix);
}

static bool route_prefix_match(const void *item, const void *key)
{
	return strcmp(((const Esgw__Route *)item)->prefix, key) == 0;
}

/* A route into a tunnel is found by its tunnel's name; one by next hop is
 * in no entry of that index. */
static size_t route_tunnel_keys(const void *item)
{
	return ((const Esgw__Route *)item)->tunnel[0] != '\0';
}

static uint64_t route_tunnel_hash(const void *item, size_t k)
{
	(void)k;
	return state_hash_str(((const Esgw__Route *)item)->tunnel);
}

static bool route_tunnel_match(const void *item, const void *key)
{
	return strcmp(((const Esgw__Route *)item)->tunnel, key) == 0;
}

#define FIND(kind_keys, kind_hash, kind_match, arr, n, h, key)                                    \
	({                                                                                         \
		static struct state_index ix;                                                      \
		static const struct state_index_kind kind = {kind_keys, kind_hash, kind_match};    \
		state_index_find(&ix, &kind, &(arr), (void *const *)(arr), (n), (h), (key));       \
	})

size_t state_position(void *const *items, size_t n, const void *item)
{
	size_t i = 0;

	while (i < n && items[i] != item)
		i++;
	return i;
}

Esgw__Sa *state_sa(uint32_t id)
{
	return FIND(one_key, sa_id_hash, sa_id_match, ctld.config->sas, ctld.config->n_sas,
		    state_hash_u32(id), &id);
}

Esgw__Sa **state_sas_of_stats(const Esgw__DpStats *st)
{
	Esgw__Sa **sas = malloc((st->n_sas + 1) * sizeof(*sas));

	for (size_t i = 0; sas != NULL && i < st->n_sas; i++)
		sas[i] = state_sa(st->sas[i]->id);
	if (sas == NULL)
		ESGW_ERR("out of memory for the SAs of %zu statistics", st->n_sas);
	return sas;
}

Esgw__Sa *state_sa_by_spi(uint32_t spi)
{
	return FIND(one_key, sa_spi_hash, sa_spi_match, ctld.config->sas, ctld.config->n_sas,
		    state_hash_u32(spi), &spi);
}

Esgw__Tunnel *state_tunnel(const char *name)
{
	return FIND(one_key, tunnel_name_hash, tunnel_name_match, ctld.config->tunnels,
		    ctld.config->n_tunnels, state_hash_str(name), name);
}

Esgw__Route *state_route(const char *prefix)
{
	return FIND(one_key, route_prefix_hash, route_prefix_match, ctld.config->routes,
		    ctld.config->n_routes, state_hash_str(prefix), prefix);
}

Esgw__Route *state_route_into(const char *tunnel)
{
	return FIND(route_tunnel_keys, route_tunnel_hash, route_tunnel_match, ctld.config->routes,
		    ctld.config->n_routes, state_hash_str(tunnel), tunnel);
}

Esgw__Tunnel *state_tunnel_out(uint32_t id)
{
	return FIND(one_key, tunnel_out_hash, tunnel_out_match, ctld.config->tunnels,
		    ctld.config->n_tunnels, state_hash_u32(id), &id);
}

Esgw__Tunnel *state_tunnel_in(uint32_t id)
{
	return FIND(tunnel_in_keys, tunnel_in_hash, tunnel_in_match, ctld.config->tunnels,
		    ctld.config->n_tunnels, state_hash_u32(id), &id);
}

/* The slots in use, followed like an index (state_index.c): appended SAs
 * are marked as they come, anything else rebuilds the map. */
static struct {
	uint64_t epoch;
	const void *config;
	size_t n;      /* sas[0..n) are marked */
	uint32_t next; /* no free slot below */
	bool *used; /* ctld.opt.max_sas */
} slots;

static bool slots_current(void)
{
	return slots.epoch == state_epoch_now() && slots.config == ctld.config &&
	       slots.n <= ctld.config->n_sas;
}

/* The SAs appended since the last look marked. */
static void slots_catch_up(void)
{
	for (; slots.n < ctld.config->n_sas; slots.n++)
		if (ctld.config->sas[slots.n]->slot < ctld.opt.max_sas)
			slots.used[ctld.config->sas[slots.n]->slot] = true;
}

int state_free_slot(void)
{
	if (!slots_current()) {
		memset(CTLD_SLOTS(slots.used), 0, ctld.opt.max_sas * sizeof(*slots.used));
		slots.epoch = state_epoch_now();
		slots.config = ctld.config;
		slots.n = 0;
		slots.next = 0;
	}
	slots_catch_up();
	while (slots.next < ctld.opt.max_sas && slots.used[slots.next])
		slots.next++;
	return slots.next < ctld.opt.max_sas ? (int)slots.next : -1;
}

void state_sa_removed(const Esgw__Sa *sa)
{
	if (!slots_current())
		return; /* rebuilt at the next look anyway */
	/* All marked, then one fewer: the last SA takes sa's place (config_remove). */
	slots_catch_up();
	slots.n--;
	if (sa->slot < ctld.opt.max_sas) {
		slots.used[sa->slot] = false;
		if (sa->slot < slots.next)
			slots.next = sa->slot;
	}
}

static int least_of(const unsigned int *load)
{
	int best = 0;

	for (int w = 1; w < (int)ctld.config->workers; w++)
		if (load[w] < load[best])
			best = w;
	return best;
}

int state_least_loaded_worker(void)
{
	unsigned int load[ESGW_MAX_WORKERS] = {0};

	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		int w = ctld.config->sas[i]->worker;

		if (w >= 0 && w < ESGW_MAX_WORKERS)
			load[w]++;
	}
	return least_of(load);
}

/* The SAs per worker, counted once and followed through the changes of
 * change.c (config_add and config_remove of SAs, in the generation they
 * make); anything else that places SAs (a move, a change from a copy) makes
 * another generation, and the next look counts again. */
static struct {
	uint64_t generation;
	const void *config;
	unsigned int load[ESGW_MAX_WORKERS];
	bool valid;
} loads;

static bool loads_current(void)
{
	return loads.valid && loads.generation == ctld.generation && loads.config == ctld.config;
}

int state_least_loaded_worker_followed(void)
{
	if (!loads_current()) {
		memset(loads.load, 0, sizeof(loads.load));
		for (size_t i = 0; i < ctld.config->n_sas; i++) {
			int w = ctld.config->sas[i]->worker;

			if (w >= 0 && w < ESGW_MAX_WORKERS)
				loads.load[w]++;
		}
		loads.generation = ctld.generation;
		loads.config = ctld.config;
		loads.valid = true;
	}
	return least_of(loads.load);
}

void state_sa_load(const Esgw__Sa *sa, int delta)
{
	if (loads_current() && sa->worker >= 0 && sa->worker < ESGW_MAX_WORKERS)
		loads.load[sa->worker] += (unsigned int)delta;
}

void state_loads_follow(uint64_t from, uint64_t to)
{
	if (loads_current() && loads.generation == from)
		loads.generation = to;
}

void state_loads_forget(void)
{
	loads.valid = false;
}

void *msg_clone(const void *msg)
{
	const ProtobufCMessage *m = msg;
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	void *copy;

	if (buf == NULL)
		abort();
	protobuf_c_message_pack(m, buf);
	copy = protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
	explicit_bzero(buf, len); /* may hold keys */
	free(buf);
	if (copy == NULL)
		abort(); /* a message we packed ourselves always unpacks, unless out of memory */
	return copy;
}

Esgw__Config *config_new(void)
{
	Esgw__Config *c = calloc(1, sizeof(*c));

	if (c == NULL)
		abort();
	esgw__config__init(c);
	c->version = ESGW__API_VERSION__API_VERSION_CURRENT;
	c->workers = 1;
	return c;
}

void config_free(Esgw__Config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_sas; i++)
		sa_wipe_keys(c->sas[i]);
	esgw__config__free_unpacked(c, NULL);
}

void array_append(void *arr_ptr, size_t *n, void *item)
{
	void ***arr = arr_ptr;
	void **a = realloc(*arr, (*n + 1) * sizeof(*a));

	if (a == NULL)
		abort();
	a[(*n)++] = item;
	*arr = a;
}

void array_remove(void *arr_ptr, size_t *n, size_t index)
{
	void ***arr = arr_ptr;

	memmove(&(*arr)[index], &(*arr)[index + 1], (*n - index - 1) * sizeof(**arr));
	(*n)--;
	state_changed(); /* positions moved: the indexes rebuild */
}

void str_set(char **field, const char *s)
{
	char *copy = strdup(s);

	if (copy == NULL)
		abort();
	if (*field != NULL && *field != protobuf_c_empty_string)
		free(*field);
	*field = copy;
}
