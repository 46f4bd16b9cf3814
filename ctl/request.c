/* SPDX-License-Identifier: BSD-3-Clause */
/* The control API: one handler per Request body, found in a table. Each handler
 * checks every field and reference before it changes anything; the dispatcher
 * then saves the new configuration and pushes it, or restores the old one. */
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
} handlers[] = {
	{ESGW__REQUEST__BODY_INTERFACE_ADD, interface_add_handle, true, true},
	{ESGW__REQUEST__BODY_INTERFACE_DEL, interface_del_handle, true, true},
	{ESGW__REQUEST__BODY_ADDRESS_ADD, interface_address_add_handle, true, false},
	{ESGW__REQUEST__BODY_ADDRESS_DEL, interface_address_del_handle, true, false},
	{ESGW__REQUEST__BODY_ROUTE_ADD, route_add_handle, true, false},
	{ESGW__REQUEST__BODY_ROUTE_DEL, route_del_handle, true, false},
	{ESGW__REQUEST__BODY_SA_ADD, sa_add_handle, true, false},
	{ESGW__REQUEST__BODY_SA_DEL, sa_del_handle, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_ADD, tunnel_add_handle, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_DEL, tunnel_del_handle, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_SET, tunnel_set_handle, true, false},
	{ESGW__REQUEST__BODY_SHOW, show_handle, false, false},
	{ESGW__REQUEST__BODY_POLICY_ADD, policy_add_handle, true, false},
	{ESGW__REQUEST__BODY_POLICY_DEL, policy_del_handle, true, false},
	{ESGW__REQUEST__BODY_NEIGHBOR_ADD, neighbor_add_handle, true, false},
	{ESGW__REQUEST__BODY_NEIGHBOR_DEL, neighbor_del_handle, true, false},
	{ESGW__REQUEST__BODY_OWNER_RECONCILE, owner_reconcile_handle, true, false},
	{ESGW__REQUEST__BODY_SA_UPDATE, sa_update_handle, true, false},
	/* They save and push themselves: a move is several pushes in order. */
	{ESGW__REQUEST__BODY_SA_MOVE, sa_move_handle, false, false},
	{ESGW__REQUEST__BODY_WORKERS_SET, workers_set_handle, false, false},
	{ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE, events_handle_subscribe, false, false},
};

void request_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	const struct handler *h = NULL;
	Esgw__Config *before;

	err[0] = '\0';
	if (req->version != ESGW__API_VERSION__API_VERSION_CURRENT) {
		resp->status = ESGW__STATUS__STATUS_VERSION_MISMATCH;
		snprintf(err, errlen, "API version %u is not supported (this esgw-ctld speaks %u)",
			 req->version, ESGW__API_VERSION__API_VERSION_CURRENT);
		goto out;
	}
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].body == req->body_case)
			h = &handlers[i];
	if (h == NULL) {
		resp->status = ESGW__STATUS__STATUS_UNSUPPORTED;
		snprintf(err, errlen, "unknown or empty request (body %d)", req->body_case);
		goto out;
	}
	if (!h->changes) {
		resp->status = h->fn(req, resp, err, errlen);
		goto out;
	}
	/* Handlers check before they change, but a copy costs little and makes a
	 * failed save leave memory and disk in agreement. */
	before = msg_clone(ctld.config);
	resp->status = h->fn(req, resp, err, errlen);
	if (resp->status == OK)
		resp->status = config_check_limits(ctld.config, err, errlen);
	if (resp->status == OK && config_save(ctld.config, ctld.opt.config_path, err, errlen) < 0) {
		ESGW_ERR("%s", err);
		resp->status = ESGW__STATUS__STATUS_INTERNAL;
	}
	if (resp->status != OK) {
		config_free(ctld.config);
		ctld.config = before;
		goto out;
	}
	events_config_diff(before, ctld.config);
	config_free(before);
	ctld_config_changed(h->changes_interfaces);
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
