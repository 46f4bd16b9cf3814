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

Esgw__Sa *state_sa(uint32_t id)
{
	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->id == id)
			return ctld.config->sas[i];
	return NULL;
}

Esgw__Sa *state_sa_by_spi(uint32_t spi)
{
	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->spi == spi)
			return ctld.config->sas[i];
	return NULL;
}

Esgw__Tunnel *state_tunnel(const char *name)
{
	for (size_t i = 0; i < ctld.config->n_tunnels; i++)
		if (strcmp(ctld.config->tunnels[i]->name, name) == 0)
			return ctld.config->tunnels[i];
	return NULL;
}

Esgw__Route *state_route(const char *prefix)
{
	for (size_t i = 0; i < ctld.config->n_routes; i++)
		if (strcmp(ctld.config->routes[i]->prefix, prefix) == 0)
			return ctld.config->routes[i];
	return NULL;
}

Esgw__Tunnel *state_tunnel_out(uint32_t id)
{
	for (size_t i = 0; i < ctld.config->n_tunnels; i++)
		if (ctld.config->tunnels[i]->sa_out == id)
			return ctld.config->tunnels[i];
	return NULL;
}

Esgw__Tunnel *state_tunnel_in(uint32_t id)
{
	for (size_t i = 0; i < ctld.config->n_tunnels; i++) {
		Esgw__Tunnel *t = ctld.config->tunnels[i];

		for (size_t j = 0; j < t->n_sa_in; j++)
			if (t->sa_in[j] == id)
				return t;
	}
	return NULL;
}

int state_free_slot(void)
{
	static bool used[ESGW_MAX_SA];

	memset(used, 0, sizeof(used));
	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->slot < ESGW_MAX_SA)
			used[ctld.config->sas[i]->slot] = true;
	for (int s = 0; s < ESGW_MAX_SA; s++)
		if (!used[s])
			return s;
	return -1;
}

int state_least_loaded_worker(void)
{
	unsigned int load[ESGW_MAX_WORKERS] = {0};
	int best = 0;

	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		int w = ctld.config->sas[i]->worker;

		if (w >= 0 && w < ESGW_MAX_WORKERS)
			load[w]++;
	}
	for (int w = 1; w < (int)ctld.config->workers; w++)
		if (load[w] < load[best])
			best = w;
	return best;
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
