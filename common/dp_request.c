/* SPDX-License-Identifier: BSD-3-Clause */
/* Answering one request from esgw-ctld: a configuration to apply, raised
 * sequence-number limits, or a stats query, each handed to the process's
 * callback; anything else is refused with an error. */
#include "dp.h"

#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* A change against the configuration applied last, or refused so that ctld
 * pushes the whole one: from another base, or one the process does not apply
 * in place. */
static void config_delta(struct esgw_dp *dp, const Esgw__DpConfigDelta *d, Esgw__DpResponse *resp,
			 char *err, size_t errlen)
{
	int rc;

	bool empty = d->n_routes == 0 && d->n_tunnels == 0 && d->n_sas == 0 &&
		     d->n_routes_deleted == 0 && d->n_tunnels_deleted == 0 && d->n_sas_deleted == 0;

	if ((dp->on_config_delta == NULL && !empty) || d->base_generation != dp->generation ||
	    dp->generation == 0) {
		resp->status = ESGW__STATUS__STATUS_UNAVAILABLE;
		snprintf(err, errlen, "a change from configuration %" PRIu64 ", this has %" PRIu64,
			 d->base_generation, dp->generation);
		resp->error = err;
		return;
	}
	/* Nothing of this process's changed (rxtx's interfaces never do in one). */
	rc = dp->on_config_delta != NULL ? dp->on_config_delta(dp, d, err, errlen) : 0;
	if (rc == 0) {
		dp->generation = d->generation;
		return;
	}
	resp->status = rc > 0 ? ESGW__STATUS__STATUS_UNSUPPORTED
			      : ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	if (rc > 0 && err[0] == '\0')
		snprintf(err, errlen, "change not applied in place");
	resp->error = err;
	if (rc < 0)
		ESGW_WARN("configuration change %" PRIu64 " refused: %s", d->generation, err);
}

void esgw_dp_request_answer(struct esgw_dp *dp, const Esgw__DpRequest *req)
{
	Esgw__DpResponse resp = ESGW__DP_RESPONSE__INIT;
	Esgw__DpStats stats = ESGW__DP_STATS__INIT;
	Esgw__DpTraffic traffic = ESGW__DP_TRAFFIC__INIT;
	char err[256] = "";

	if (req == NULL) {
		resp.status = ESGW__STATUS__STATUS_MALFORMED;
		resp.error = "malformed DpRequest";
	} else if (req->version != ESGW__DP_VERSION__DP_VERSION_CURRENT) {
		resp.status = ESGW__STATUS__STATUS_VERSION_MISMATCH;
		resp.error = "unsupported API version";
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_CONFIG) {
		if (dp->on_config(dp, req->config, err, sizeof(err)) < 0) {
			resp.status = ESGW__STATUS__STATUS_INVALID_ARGUMENT;
			resp.error = err;
			ESGW_WARN("configuration %" PRIu64 " refused: %s", req->config->generation,
				  err);
		} else {
			dp->generation = req->config->generation;
		}
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_CONFIG_DELTA) {
		config_delta(dp, req->config_delta, &resp, err, sizeof(err));
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_SEQ_LIMITS && dp->on_seq_limits) {
		dp->on_seq_limits(dp, req->seq_limits);
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_STATS) {
		stats.role = (char *)dp->role;
		stats.worker = dp->worker;
		stats.pid = getpid();
		stats.generation = dp->generation;
		esgw_dp_stats_stages(dp, &stats, &traffic);
		dp->stats_query = req->stats;
		if (dp->on_stats != NULL)
			dp->on_stats(dp, &stats);
		esgw_dp_stats_handoffs(dp, &stats);
		dp->stats_query = NULL;
		resp.stats = &stats;
	} else {
		resp.status = ESGW__STATUS__STATUS_INVALID_ARGUMENT;
		resp.error = "unknown DpRequest type";
	}
	if (esgw_msg_write(dp->conn_fd, &resp.base, 1000) < 0) {
		ESGW_WARN("control reply failed: %s", strerror(errno));
		close(dp->conn_fd);
		dp->conn_fd = -1;
		esgw_frame_reset(&dp->rx);
	}
	esgw_dp_stats_release(dp);
}
