/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's neighbour commands: `neighbor add IFACE ADDR MAC` and `neighbor
 * del IFACE ADDR` into a Request, and the output of `show neighbors` (the
 * router's table: static and learnt entries) and of the static neighbours
 * in `show config`. */
#include "esgwctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "validate.h"

void neighbor_cmd_parse(int argc, char **argv, Esgw__Request *req)
{
	Esgw__Neighbor *n = calloc(1, sizeof(*n));
	const char *verb = argc > 0 ? argv[0] : "";
	int add = strcmp(verb, "add") == 0;
	char err[200];

	if (n == NULL)
		usage_error("out of memory");
	if (!add && strcmp(verb, "del") != 0)
		usage_error("neighbor: unknown operation '%s' (add or del)", verb);
	if (argc != (add ? 4 : 3))
		usage_error(add ? "usage: neighbor add IFACE ADDR MAC"
				: "usage: neighbor del IFACE ADDR");
	esgw__neighbor__init(n);
	n->interface = argv[1];
	n->address = argv[2];
	if (add)
		n->mac = argv[3];
	if (esgw_check_neighbor(n, add, err, sizeof(err)) < 0)
		usage_error("%s", err);
	if (add) {
		req->body_case = ESGW__REQUEST__BODY_NEIGHBOR_ADD;
		req->neighbor_add = n;
	} else {
		req->body_case = ESGW__REQUEST__BODY_NEIGHBOR_DEL;
		req->neighbor_del = n;
	}
}

static void json_neighbor(struct json *j, const char *interface, const char *address,
			  const char *mac)
{
	json_kv_string(j, "interface", interface);
	json_kv_string(j, "address", address);
	json_kv_string(j, "mac", mac);
}

void json_static_neighbors(struct json *j, const Esgw__Config *c)
{
	json_key(j, "neighbors");
	json_array_begin(j);
	for (size_t i = 0; i < c->n_neighbors; i++) {
		json_object_begin(j);
		json_neighbor(j, c->neighbors[i]->interface, c->neighbors[i]->address,
			      c->neighbors[i]->mac);
		json_object_end(j);
	}
	json_array_end(j);
}

void print_neighbor_commands(const Esgw__Config *c)
{
	for (size_t i = 0; i < c->n_neighbors; i++)
		printf("neighbor add %s %s %s\n", c->neighbors[i]->interface,
		       c->neighbors[i]->address, c->neighbors[i]->mac);
}

void print_neighbors(const Esgw__ShowReply *reply, struct json *j)
{
	if (j) {
		json_object_begin(j);
		json_key(j, "neighbors");
		json_array_begin(j);
		for (size_t i = 0; i < reply->n_neighbors; i++) {
			const Esgw__NeighborInfo *n = reply->neighbors[i];

			json_object_begin(j);
			json_neighbor(j, n->interface, n->address, n->mac);
			json_kv_string(j, "state", n->state);
			json_kv_u64(j, "held", n->held);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
		return;
	}
	printf("%-10s %-39s %-17s %-10s %s\n", "INTERFACE", "ADDRESS", "MAC", "STATE", "HELD");
	for (size_t i = 0; i < reply->n_neighbors; i++) {
		const Esgw__NeighborInfo *n = reply->neighbors[i];

		printf("%-10s %-39s %-17s %-10s %u\n", n->interface, n->address,
		       n->mac[0] ? n->mac : "-", n->state, n->held);
	}
}
