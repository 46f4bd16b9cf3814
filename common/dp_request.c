/* SPDX-License-Identifier: BSD-3-Clause */
/* Answering one request from esgw-ctld: a configuration to apply, raised
 * sequence-number limits, or a stats query, each handed to the process's
 * callback; anything else is refused with an error. */
#include "dp.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

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
