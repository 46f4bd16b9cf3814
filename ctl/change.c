/* SPDX-License-Identifier: BSD-3-Clause */
/* One change on ctld.config kept as a log of the objects it added and
 * removed, so that a refused change is undone and its events found and its
 * journal record written in proportion to the change, not to the
 * configuration: no copy of the whole configuration per change. Handlers
 * that add and remove whole routes, SAs, tunnels and neighbours use
 * config_add and config_remove; the others change objects in place and
 * request.c copies the configuration for them (change_whole). */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

enum change_op { CHANGE_ADDED, CHANGE_REMOVED };

struct change_entry {
	enum change_op op;
	enum config_kind kind;
	void *item;
	size_t index; /* where it was removed from */
	bool both;    /* added and removed again by the change: neither before nor after */
};

/* The open change, or the last one committed, which is kept (what it removed
 * too) until the next begins: the dataplane gets it as a delta. */
static struct {
	bool open;
	bool kept; /* the last committed change: entries [0, n) */
	uint64_t base;
	struct change_entry *e;
	size_t n, cap;
} change;

/* The array of c that holds objects of kind. */
static void kind_array(Esgw__Config *c, enum config_kind kind, void ****arr, size_t **n)
{
	switch (kind) {
	case CONFIG_ROUTE:
		*arr = (void ***)&c->routes, *n = &c->n_routes;
		break;
	case CONFIG_SA:
		*arr = (void ***)&c->sas, *n = &c->n_sas;
		break;
	case CONFIG_TUNNEL:
		*arr = (void ***)&c->tunnels, *n = &c->n_tunnels;
		break;
	default: /* CONFIG_NEIGHBOR */
		*arr = (void ***)&c->neighbors, *n = &c->n_neighbors;
		break;
	}
}

static void item_free(enum config_kind kind, void *item)
{
	if (kind == CONFIG_SA)
		sa_free(item); /* keys wiped first */
	else
		protobuf_c_message_free_unpacked(item, NULL);
}

static void record(enum change_op op, enum config_kind kind, void *item, size_t index)
{
	if (!change.open)
		return;
	if (change.n == change.cap) {
		size_t cap = change.cap ? 2 * change.cap : 16;
		struct change_entry *e = realloc(change.e, cap * sizeof(*e));

		if (e == NULL)
			abort();
		change.e = e;
		change.cap = cap;
	}
	change.e[change.n++] = (struct change_entry){op, kind, item, index, false};
}

void config_add(enum config_kind kind, void *item)
{
	void ***arr;
	size_t *n;

	kind_array(ctld.config, kind, &arr, &n);
	array_append(arr, n, item);
	if (kind == CONFIG_SA)
		state_sa_load(item, +1);
	record(CHANGE_ADDED, kind, item, *n - 1);
}

void config_remove(enum config_kind kind, size_t index)
{
	void ***arr;
	size_t *n;
	void *item;

	kind_array(ctld.config, kind, &arr, &n);
	item = (*arr)[index];
	/* Not array_remove: the last object takes its place, and the indexes
	 * follow this one removal in place, both in O(1). */
	state_index_removed(arr, *n, index);
	if (kind == CONFIG_SA) {
		state_sa_removed(item);
		state_sa_load(item, -1);
	}
	(*arr)[index] = (*arr)[*n - 1];
	(*n)--;
	if (change.open)
		record(CHANGE_REMOVED, kind, item, index);
	else
		item_free(kind, item);
}

void config_remove_item(enum config_kind kind, const void *item)
{
	void ***arr;
	size_t *n;

	kind_array(ctld.config, kind, &arr, &n);
	config_remove(kind, state_index_position(arr, *n, item));
}

void config_replace(enum config_kind kind, const void *old, void *next)
{
	config_remove_item(kind, old);
	config_add(kind, next);
}

static void removed_free(void)
{
	for (size_t i = 0; i < change.n; i++)
		if (change.e[i].op == CHANGE_REMOVED)
			item_free(change.e[i].kind, change.e[i].item);
	change.n = 0;
	change.kept = false;
}

void change_begin(void)
{
	removed_free(); /* of the change kept */
	change.open = true;
}

static int entry_item_cmp(const void *a, const void *b)
{
	const void *x = change.e[*(const size_t *)a].item, *y = change.e[*(const size_t *)b].item;

	return x < y ? -1 : x > y;
}

static void part_append(Esgw__Config *part, enum config_kind kind, void *item)
{
	void ***arr;
	size_t *n;

	kind_array(part, kind, &arr, &n);
	array_append(arr, n, item);
}

static void part_free(Esgw__Config *part)
{
	free(part->routes);
	free(part->sas);
	free(part->tunnels);
	free(part->neighbors);
}

/* The change's events: events_config_diff on what it touched. */
static void change_events(void)
{
	Esgw__Config before = ESGW__CONFIG__INIT, after = ESGW__CONFIG__INIT;
	size_t *by_item = malloc((change.n + 1) * sizeof(*by_item));
	bool *both = calloc(change.n + 1, sizeof(*both));

	if (by_item == NULL || both == NULL)
		abort();
	/* The objects this change removed that were there before it, and those
	 * it added that are still there: events_config_diff on these two
	 * partial configurations finds what it would on the whole ones. An
	 * object is in the log at most once added (handlers add new copies)
	 * and at most once removed (then it is out of the configuration):
	 * sorted by object, the two entries of one added and removed again sit
	 * side by side. */
	for (size_t i = 0; i < change.n; i++)
		by_item[i] = i;
	qsort(by_item, change.n, sizeof(*by_item), entry_item_cmp);
	for (size_t i = 0; i + 1 < change.n; i++)
		if (change.e[by_item[i]].item == change.e[by_item[i + 1]].item)
			both[by_item[i]] = both[by_item[i + 1]] = true;
	for (size_t i = 0; i < change.n; i++)
		change.e[i].both = both[i];
	for (size_t i = 0; i < change.n; i++)
		if (!both[i])
			part_append(change.e[i].op == CHANGE_REMOVED ? &before : &after,
				    change.e[i].kind, change.e[i].item);
	free(by_item);
	free(both);
	before.workers = after.workers = ctld.config->workers;
	events_config_diff(&before, &after);
	part_free(&before);
	part_free(&after);
}

void change_commit(bool events)
{
	change.open = false;
	if (!events) {
		removed_free();
		return;
	}
	change_events();
	change.kept = true;
	change.base = ctld.generation; /* ctld_config_changed bumps it next */
}

void change_abort(void)
{
	/* Backwards: each step finds the arrays as it left them. */
	for (size_t i = change.n; i-- > 0;) {
		const struct change_entry *e = &change.e[i];
		void ***arr;
		size_t *n;

		kind_array(ctld.config, e->kind, &arr, &n);
		if (e->op == CHANGE_ADDED) {
			(*n)--; /* the last one: nothing was appended after it */
			item_free(e->kind, e->item);
		} else if (e->index < *n) {
			/* The object moved into its place goes back to the end. */
			array_append(arr, n, (*arr)[e->index]);
			(*arr)[e->index] = e->item;
		} else {
			array_append(arr, n, e->item); /* it was the last */
		}
	}
	change.open = false;
	change.n = 0;
	change.kept = false;
	state_changed();
	state_loads_forget();
}

size_t change_count(void)
{
	return change.n;
}

struct change_item change_entry(size_t i)
{
	const struct change_entry *e = &change.e[i];

	return (struct change_item){e->kind, e->item, e->op == CHANGE_ADDED, !e->both};
}

bool change_kept(uint64_t *base)
{
	*base = change.base;
	return change.kept && !change.open;
}
