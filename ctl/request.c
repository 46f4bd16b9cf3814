/* SPDX-License-Identifier: BSD-3-Clause */
/* The control API: one handler per Request body, found in a table. Each handler
 * checks every field and reference before it changes anything; the dispatcher
 * then saves the new configuration and pushes it, or restores the old one.
 * A Batch is many changes under one save and push, all or none. */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>

#include "log.h"

#define OK ESGW__STATUS__STATUS_OK

static const struct handler {
	Esgw__Request__BodyCase body;
	request_handler *fn;
	bool changes;            /* saves and pushes on success */
	bool changes_interfaces; /* the dataplane restarts with the new port set */
	/* Changes objects in place: undone from a copy of the configuration.
	 * The others only add and remove whole objects (change.c's log). */
	bool in_place;
} handlers[] = {
	{ESGW__REQUEST__BODY_INTERFACE_ADD, interface_add_handle, true, true, true},
	{ESGW__REQUEST__BODY_INTERFACE_DEL, interface_del_handle, true, true, true},
	{ESGW__REQUEST__BODY_ADDRESS_ADD, interface_address_add_handle, true, false, true},
	{ESGW__REQUEST__BODY_ADDRESS_DEL, interface_address_del_handle, true, false, true},
	{ESGW__REQUEST__BODY_ROUTE_ADD, route_add_handle, true, false, false},
	{ESGW__REQUEST__BODY_ROUTE_DEL, route_del_handle, true, false, false},
	{ESGW__REQUEST__BODY_SA_ADD, sa_add_handle, true, false, false},
	{ESGW__REQUEST__BODY_SA_DEL, sa_del_handle, true, false, false},
	{ESGW__REQUEST__BODY_TUNNEL_ADD, tunnel_add_handle, true, false, false},
	{ESGW__REQUEST__BODY_TUNNEL_DEL, tunnel_del_handle, true, false, false},
	{ESGW__REQUEST__BODY_TUNNEL_SET, tunnel_set_handle, true, false, false},
	{ESGW__REQUEST__BODY_SHOW, show_handle, false, false, false},
	{ESGW__REQUEST__BODY_POLICY_ADD, policy_add_handle, true, false, true},
	{ESGW__REQUEST__BODY_POLICY_DEL, policy_del_handle, true, false, true},
	{ESGW__REQUEST__BODY_NEIGHBOR_ADD, neighbor_add_handle, true, false, false},
	{ESGW__REQUEST__BODY_NEIGHBOR_DEL, neighbor_del_handle, true, false, false},
	{ESGW__REQUEST__BODY_OWNER_RECONCILE, owner_reconcile_handle, true, false, true},
	{ESGW__REQUEST__BODY_SA_UPDATE, sa_update_handle, true, false, false},
	/* Its requests' handlers from this table, then one save and push. */
	{ESGW__REQUEST__BODY_BATCH, NULL, true, false, false},
	/* They save and push themselves: a move is several pushes in order. */
	{ESGW__REQUEST__BODY_SA_MOVE, sa_move_handle, false, false, false},
	{ESGW__REQUEST__BODY_WORKERS_SET, workers_set_handle, false, false, false},
	{ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE, events_handle_subscribe, false, false, false},
};

static const struct handler *handler_of(Esgw__Request__BodyCase body)
{
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].body == body)
			return &handlers[i];
	return NULL;
}

/* The changes of a Batch, in order, on ctld.config; the first refused stops
 * it (its number in resp->batch_failed). Sets *interfaces when one of them
 * changes the port set. */
static Esgw__Status batch_apply(const Esgw__Batch *batch, Esgw__Response *resp, bool *interfaces,
			       char *err, size_t errlen)
{
	for (size_t i = 0; i < batch->n_requests; i++) {
		const Esgw__Request *r = batch->requests[i];
		const struct handler *h = handler_of(r->body_case);
		Esgw__Status status;
		char why[512];

		if (h == NULL || !h->changes) {
			resp->batch_failed = (uint32_t)i + 1;
			snprintf(err, errlen, "request %zu of the batch: not a configuration change",
				 i + 1);
			return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
		}
		why[0] = '\0';
		status = h->fn(r, resp, why, sizeof(why));
		if (status != OK) {
			resp->batch_failed = (uint32_t)i + 1;
			snprintf(err, errlen, "request %zu of the batch: %s", i + 1, why);
			return status;
		}
		*interfaces = *interfaces || h->changes_interfaces;
	}
	return OK;
}

/* Whether the change changes objects in place (a batch: one of its requests). */
static bool change_in_place(const struct handler *h, const Esgw__Request *req)
{
	if (h->body != ESGW__REQUEST__BODY_BATCH)
		return h->in_place;
	for (size_t i = 0; i < req->batch->n_requests; i++) {
		const struct handler *r = handler_of(req->batch->requests[i]->body_case);

		if (r != NULL && r->in_place)
			return true;
	}
	return false;
}

/* A change (one request or a batch) on ctld.config, checked against the
 * limits and saved, or undone: from change.c's log of the objects it added
 * and removed, or, for one that changes objects in place, from a copy. A
 * refused change leaves memory and disk as they were. */
static void change_apply(const struct handler *h, const Esgw__Request *req, Esgw__Response *resp,
			 char *err, size_t errlen)
{
	bool interfaces = h->changes_interfaces;
	Esgw__Config *before = change_in_place(h, req) ? msg_clone(ctld.config) : NULL;

	change_begin();
	if (h->body == ESGW__REQUEST__BODY_BATCH)
		resp->status = batch_apply(req->batch, resp, &interfaces, err, errlen);
	else
		resp->status = h->fn(req, resp, err, errlen);
	if (resp->status == OK)
		resp->status = before == NULL
				       ? config_check_change_limits(ctld.config, err, errlen)
				       : config_check_limits(ctld.config, err, errlen);
	/* One from the log appended to the journal; one in place saved whole. */
	if (resp->status == OK &&
	    (before == NULL ? config_journal_append(ctld.config, ctld.opt.config_path, err, errlen)
			    : config_save(ctld.config, ctld.opt.config_path, err, errlen)) < 0) {
		ESGW_ERR("%s", err);
		resp->status = ESGW__STATUS__STATUS_INTERNAL;
	}
	if (resp->status != OK && before == NULL) {
		change_abort();
		return;
	}
	if (resp->status != OK) {
		state_loads_forget();
		change_commit(false); /* frees what the log kept: the copy replaces it all */
		config_free(ctld.config);
		ctld.config = before;
		state_changed();
		return;
	}
	change_commit(before == NULL);
	if (before != NULL) {
		events_config_diff(before, ctld.config);
		config_free(before);
	} else {
		state_loads_follow(ctld.generation, ctld.generation + 1);
	}
	ctld_config_changed(interfaces);
}

void request_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	const struct handler *h;

	err[0] = '\0';
	if (req->version != ESGW__API_VERSION__API_VERSION_CURRENT) {
		resp->status = ESGW__STATUS__STATUS_VERSION_MISMATCH;
		snprintf(err, errlen, "API version %u is not supported (this esgw-ctld speaks %u)",
			 req->version, ESGW__API_VERSION__API_VERSION_CURRENT);
		goto out;
	}
	h = handler_of(req->body_case);
	if (h == NULL) {
		resp->status = ESGW__STATUS__STATUS_UNSUPPORTED;
		snprintf(err, errlen, "unknown or empty request (body %d)", req->body_case);
		goto out;
	}
	if (h->changes)
		change_apply(h, req, resp, err, errlen);
	else
		resp->status = h->fn(req, resp, err, errlen);
out:
	if (resp->status != OK)
		resp->error = err;
}

void request_response_free(Esgw__Response *resp)
{
	if (resp->show != NULL) {
		show_free(resp->show);
		free(resp->show);
		resp->show = NULL;
	}
}
