/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel-esgw plugin's connections to esgw-ctld's API socket: one for
 * requests (a Request, then its Response, one at a time) and one subscribed
 * to ctld's events, watched by charon's watcher. Both reconnect by
 * themselves after ctld restarts; on_connect runs after each reconnect so the
 * plugin can reconcile what ctld holds with what charon knows. */
#ifndef ESGW_API_H_
#define ESGW_API_H_

#include <library.h>

#include "esgw.pb-c.h"

typedef struct esgw_api_t esgw_api_t;

/* Called from a charon thread, never with the API's lock held. */
typedef void (*esgw_api_event_cb_t)(void *data, const Esgw__Event *event);
typedef void (*esgw_api_connect_cb_t)(void *data);

struct esgw_api_t {
	/* Send req (its version is set here) and wait for the response. Returns
	 * the Response, to free with esgw__response__free_unpacked(), or NULL when
	 * ctld cannot be reached (logged). */
	Esgw__Response *(*call)(esgw_api_t *this, Esgw__Request *req);
	/* Whether the event subscription is up (ctld reachable). */
	bool (*is_connected)(esgw_api_t *this);
	void (*destroy)(esgw_api_t *this);
};

/* Connects to socket_path (retrying every second in the background until it
 * answers) and subscribes to events. */
esgw_api_t *esgw_api_create(const char *socket_path, int timeout_ms, esgw_api_event_cb_t on_event,
			    esgw_api_connect_cb_t on_connect, void *data);

/* A response's status as text, for logs: "ok" or ctld's error message. */
const char *esgw_api_error(const Esgw__Response *resp);

#endif
