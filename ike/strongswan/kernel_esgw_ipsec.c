/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel_ipsec_t on esgw. What charon installs is kept here (SAs by SPI and
 * destination, one tunnel per reqid, policies with a reference per CHILD_SA
 * using them, as the Linux backend counts them) and mirrored to esgw-ctld:
 *
 *   add_sa        -> sa_add (owner "ike"); the reqid's tunnel is created once it
 *                    has an outbound and an inbound SA, then its sa_out is the
 *                    newest outbound SA and its sa_in every inbound one
 *   out policies  -> policy_add: protect over the reqid's tunnel, bypass for
 *                    pass, discard for drop (and for protect until the tunnel
 *                    exists: never in clear)
 *   in/fwd        -> counted only: esgw checks decrypted packets against the
 *                    out policies reversed
 *
 * charon installs an outbound SA only once the peer can receive on it (this
 * backend does not announce KERNEL_POLICY_SPI), so switching the tunnel's
 * sa_out at add_sa is the moment the Linux kernel would start using it. */
#include "kernel_esgw_ipsec.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/time.h>

#include <daemon.h>
#include <collections/linked_list.h>
#include <threading/mutex.h>

#include "esgw_api.h"
#include "esgw_map.h"

#define ID_BASE 0x40000000u       /* esgw SA ids the plugin uses: [2^30, 2^31) */
#define SHOW_CACHE_MS 500         /* query_sa/query_policy share one show */
#define DEFAULT_SOCKET "/run/esgw/ctl.sock"
#define DEFAULT_TIMEOUT_MS 10000
#define REPLAY_WINDOW_MIN 64      /* esgw's smallest window (charon's default is 32) */

typedef struct private_kernel_esgw_ipsec_t private_kernel_esgw_ipsec_t;

/* An SA installed in esgw. */
typedef struct {
	uint32_t id;  /* esgw SA id */
	uint32_t spi; /* host order */
	uint32_t reqid;
	host_t *src, *dst;
	bool inbound;
	uint64_t order; /* install order: the newest outbound SA of a reqid sends */
	bool lost;      /* gone from esgw behind our back: charon was told */
} sa_entry_t;

/* The esgw tunnel of one reqid (a CHILD_SA and its rekeyed successors). */
typedef struct {
	uint32_t reqid;
	char name[32];
	int worker; /* where its SAs go: one worker per CHILD_SA */
	bool installed;
} tunnel_entry_t;

/* One CHILD_SA's reference to a policy. */
typedef struct {
	uint32_t reqid;
	policy_type_t type;
	uint32_t prio;
} policy_user_t;

typedef struct {
	policy_dir_t dir;
	traffic_selector_t *src_ts, *dst_ts;
	linked_list_t *users; /* policy_user_t, the last one in force */
	char name[32];        /* esgw policy name (out policies) */
	bool installed;
} policy_entry_t;

struct private_kernel_esgw_ipsec_t {
	kernel_esgw_ipsec_t public;
	esgw_api_t *api;
	mutex_t *lock; /* everything below */
	linked_list_t *sas;
	linked_list_t *tunnels;
	linked_list_t *policies;
	uint64_t order;
	uint32_t next_id;
	uint32_t next_policy;
	Esgw__Response *show_cache; /* a show sa, for queries */
	uint64_t show_cache_ms;
};

static uint64_t now_ms(void)
{
	timeval_t tv;

	time_monotonic(&tv);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

/* ------------------------------------------------------------- requests */

/* Send req; SUCCESS if ctld said OK, else logs what for and returns the
 * status (*status_out gets ctld's, when it answered). */
static status_t request(private_kernel_esgw_ipsec_t *this, Esgw__Request *req, const char *what,
			Esgw__Status *status_out)
{
	Esgw__Response *resp = this->api->call(this->api, req);
	status_t rc = SUCCESS;

	if (status_out)
		*status_out = resp ? resp->status : ESGW__STATUS__STATUS_UNAVAILABLE;
	if (resp == NULL || resp->status != ESGW__STATUS__STATUS_OK) {
		DBG1(DBG_KNL, "kernel-esgw: %s refused by esgw-ctld: %s", what, esgw_api_error(resp));
		rc = FAILED;
	}
	if (resp)
		esgw__response__free_unpacked(resp, NULL);
	return rc;
}

static Esgw__Response *show(private_kernel_esgw_ipsec_t *this, Esgw__ShowRequest__What what)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__ShowRequest sr = ESGW__SHOW_REQUEST__INIT;
	Esgw__Response *resp;

	sr.what = what;
	req.body_case = ESGW__REQUEST__BODY_SHOW;
	req.show = &sr;
	resp = this->api->call(this->api, &req);
	if (resp != NULL && (resp->status != ESGW__STATUS__STATUS_OK || resp->show == NULL)) {
		esgw__response__free_unpacked(resp, NULL);
		resp = NULL;
	}
	return resp;
}

static void show_cache_drop(private_kernel_esgw_ipsec_t *this)
{
	if (this->show_cache)
		esgw__response__free_unpacked(this->show_cache, NULL);
	this->show_cache = NULL;
}

/* show sa, at most SHOW_CACHE_MS old. */
static Esgw__ShowReply *shown_sas(private_kernel_esgw_ipsec_t *this)
{
	uint64_t now = now_ms();

	if (this->show_cache == NULL || now - this->show_cache_ms > SHOW_CACHE_MS) {
		show_cache_drop(this);
		this->show_cache = show(this, ESGW__SHOW_REQUEST__WHAT__WHAT_SAS);
		this->show_cache_ms = now;
	}
	return this->show_cache ? this->show_cache->show : NULL;
}

static Esgw__SaInfo *shown_sa(Esgw__ShowReply *reply, uint32_t id)
{
	for (size_t i = 0; reply != NULL && i < reply->n_sas; i++)
		if (reply->sas[i]->config->id == id)
			return reply->sas[i];
	return NULL;
}

/* ------------------------------------------------------------- the model */

static sa_entry_t *sa_find(private_kernel_esgw_ipsec_t *this, uint32_t spi, host_t *dst)
{
	enumerator_t *e = this->sas->create_enumerator(this->sas);
	sa_entry_t *sa, *found = NULL;

	while (e->enumerate(e, &sa))
		if (sa->spi == spi && sa->dst->ip_equals(sa->dst, dst)) {
			found = sa;
			break;
		}
	e->destroy(e);
	return found;
}

static sa_entry_t *sa_find_id(private_kernel_esgw_ipsec_t *this, uint32_t id)
{
	enumerator_t *e = this->sas->create_enumerator(this->sas);
	sa_entry_t *sa, *found = NULL;

	while (e->enumerate(e, &sa))
		if (sa->id == id) {
			found = sa;
			break;
		}
	e->destroy(e);
	return found;
}

static bool spi_used(private_kernel_esgw_ipsec_t *this, uint32_t spi)
{
	enumerator_t *e = this->sas->create_enumerator(this->sas);
	sa_entry_t *sa;
	bool used = FALSE;

	while (!used && e->enumerate(e, &sa))
		used = sa->spi == spi;
	e->destroy(e);
	return used;
}

static void sa_entry_destroy(sa_entry_t *sa)
{
	sa->src->destroy(sa->src);
	sa->dst->destroy(sa->dst);
	free(sa);
}

static tunnel_entry_t *tunnel_find(private_kernel_esgw_ipsec_t *this, uint32_t reqid)
{
	enumerator_t *e = this->tunnels->create_enumerator(this->tunnels);
	tunnel_entry_t *t, *found = NULL;

	while (e->enumerate(e, &t))
		if (t->reqid == reqid) {
			found = t;
			break;
		}
	e->destroy(e);
	return found;
}

/* The worker with the fewest SAs, so CHILD_SAs spread over the workers while
 * the SAs of one stay together; -1 (ctld chooses) when unknown. */
static int least_loaded_worker(private_kernel_esgw_ipsec_t *this)
{
	Esgw__Response *resp = show(this, ESGW__SHOW_REQUEST__WHAT__WHAT_WORKERS);
	int best = -1;
	size_t best_sas = 0;

	for (size_t i = 0; resp != NULL && i < resp->show->n_workers; i++) {
		Esgw__WorkerInfo *w = resp->show->workers[i];

		if (best < 0 || w->n_sas < best_sas) {
			best = (int)w->id;
			best_sas = w->n_sas;
		}
	}
	if (resp)
		esgw__response__free_unpacked(resp, NULL);
	return best;
}

static tunnel_entry_t *tunnel_get(private_kernel_esgw_ipsec_t *this, uint32_t reqid)
{
	tunnel_entry_t *t = tunnel_find(this, reqid);

	if (t != NULL)
		return t;
	INIT(t, .reqid = reqid, .worker = least_loaded_worker(this));
	snprintf(t->name, sizeof(t->name), "ike-%u", reqid);
	this->tunnels->insert_last(this->tunnels, t);
	return t;
}

/* The newest outbound SA and every inbound SA of a reqid (ids into in[]). */
static sa_entry_t *reqid_sas(private_kernel_esgw_ipsec_t *this, uint32_t reqid, uint32_t **in,
			     size_t *n_in)
{
	enumerator_t *e = this->sas->create_enumerator(this->sas);
	sa_entry_t *sa, *out = NULL;

	*in = malloc((this->sas->get_count(this->sas) + 1) * sizeof(uint32_t));
	*n_in = 0;
	while (e->enumerate(e, &sa)) {
		if (sa->reqid != reqid || sa->lost)
			continue;
		if (sa->inbound)
			(*in)[(*n_in)++] = sa->id;
		else if (out == NULL || sa->order > out->order)
			out = sa;
	}
	e->destroy(e);
	return out;
}

static void sync_policy(private_kernel_esgw_ipsec_t *this, policy_entry_t *p);

static void sync_policies_of(private_kernel_esgw_ipsec_t *this, uint32_t reqid)
{
	enumerator_t *e = this->policies->create_enumerator(this->policies);
	policy_entry_t *p;
	policy_user_t *u;

	while (e->enumerate(e, &p))
		if (p->dir == POLICY_OUT && p->users->get_last(p->users, (void **)&u) == SUCCESS &&
		    u->reqid == reqid)
			sync_policy(this, p);
	e->destroy(e);
}

/* Bring esgw's tunnel of reqid in line with the SAs we hold: created once it
 * has both directions, switched on every change, removed (its policies
 * turned to discard first) when one direction is gone. */
static void sync_tunnel(private_kernel_esgw_ipsec_t *this, uint32_t reqid)
{
	tunnel_entry_t *t = tunnel_find(this, reqid);
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__Tunnel msg = ESGW__TUNNEL__INIT;
	char local[INET6_ADDRSTRLEN], remote[INET6_ADDRSTRLEN];
	uint32_t *in;
	size_t n_in;
	sa_entry_t *out;

	if (t == NULL)
		return;
	out = reqid_sas(this, reqid, &in, &n_in);
	msg.name = t->name;
	if (out != NULL && n_in > 0) {
		msg.sa_out = out->id;
		msg.sa_in = in;
		msg.n_sa_in = n_in;
		msg.owner = ESGW_IKE_OWNER;
		if (!t->installed) {
			msg.local = esgw_map_host(out->src, local, sizeof(local));
			msg.remote = esgw_map_host(out->dst, remote, sizeof(remote));
			req.body_case = ESGW__REQUEST__BODY_TUNNEL_ADD;
			req.tunnel_add = &msg;
			t->installed = request(this, &req, "tunnel add", NULL) == SUCCESS;
		} else {
			req.body_case = ESGW__REQUEST__BODY_TUNNEL_SET;
			req.tunnel_set = &msg;
			request(this, &req, "tunnel set", NULL);
		}
		sync_policies_of(this, reqid);
	} else if (t->installed) {
		Esgw__NameRef ref = ESGW__NAME_REF__INIT;

		t->installed = FALSE; /* policies see it gone: discard meanwhile */
		sync_policies_of(this, reqid);
		ref.name = t->name;
		req.body_case = ESGW__REQUEST__BODY_TUNNEL_DEL;
		req.tunnel_del = &ref;
		request(this, &req, "tunnel del", NULL);
	}
	free(in);
}

/* A tunnel entry no SA and no policy refers to any more. */
static void tunnel_forget_if_unused(private_kernel_esgw_ipsec_t *this, uint32_t reqid)
{
	enumerator_t *e;
	tunnel_entry_t *t = tunnel_find(this, reqid);
	sa_entry_t *sa;
	bool used = FALSE;

	if (t == NULL || t->installed)
		return;
	e = this->sas->create_enumerator(this->sas);
	while (!used && e->enumerate(e, &sa))
		used = sa->reqid == reqid;
	e->destroy(e);
	if (!used) {
		this->tunnels->remove(this->tunnels, t, NULL);
		free(t);
	}
}

/* esgw's copy of an out policy: protect over the reqid's tunnel (discard
 * until it exists), bypass, discard; removed with its last user. */
static void sync_policy(private_kernel_esgw_ipsec_t *this, policy_entry_t *p)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__Policy msg = ESGW__POLICY__INIT;
	char src[64], dst[64];
	const char *why = NULL;
	policy_user_t *u;
	tunnel_entry_t *t;
	sa_entry_t *out;
	uint32_t *in;
	size_t n_in;

	if (p->dir != POLICY_OUT)
		return;
	if (p->users->get_last(p->users, (void **)&u) != SUCCESS) {
		if (p->installed) {
			Esgw__NameRef ref = ESGW__NAME_REF__INIT;

			ref.name = p->name;
			req.body_case = ESGW__REQUEST__BODY_POLICY_DEL;
			req.policy_del = &ref;
			request(this, &req, "policy del", NULL);
			p->installed = FALSE;
		}
		return;
	}
	if (!esgw_map_selector(p->src_ts, p->dst_ts, &msg, src, dst, &why)) {
		DBG1(DBG_KNL, "kernel-esgw: policy %R === %R not installed: esgw has no %s",
		     p->src_ts, p->dst_ts, why);
		return;
	}
	msg.name = p->name;
	msg.owner = ESGW_IKE_OWNER;
	msg.priority = u->prio;
	switch (u->type) {
	case POLICY_PASS:
		msg.action = ESGW__POLICY__ACTION__ACTION_BYPASS;
		break;
	case POLICY_IPSEC:
		t = tunnel_find(this, u->reqid);
		out = t && t->installed ? reqid_sas(this, u->reqid, &in, &n_in) : NULL;
		if (t && t->installed)
			free(in);
		if (out != NULL) {
			msg.action = ESGW__POLICY__ACTION__ACTION_PROTECT;
			msg.tunnel = t->name;
			msg.sa_out = out->id;
			break;
		}
		/* no SA yet, so nothing may leave in clear */
		/* fall through */
	default:
		msg.action = ESGW__POLICY__ACTION__ACTION_DISCARD;
		break;
	}
	req.body_case = ESGW__REQUEST__BODY_POLICY_ADD;
	req.policy_add = &msg;
	p->installed = request(this, &req, "policy add", NULL) == SUCCESS;
}

static policy_entry_t *policy_find(private_kernel_esgw_ipsec_t *this, kernel_ipsec_policy_id_t *id)
{
	enumerator_t *e = this->policies->create_enumerator(this->policies);
	policy_entry_t *p, *found = NULL;

	while (e->enumerate(e, &p))
		if (p->dir == id->dir && p->src_ts->equals(p->src_ts, id->src_ts) &&
		    p->dst_ts->equals(p->dst_ts, id->dst_ts)) {
			found = p;
			break;
		}
	e->destroy(e);
	return found;
}

static void policy_entry_destroy(policy_entry_t *p)
{
	p->src_ts->destroy(p->src_ts);
	p->dst_ts->destroy(p->dst_ts);
	p->users->destroy_function(p->users, free);
	free(p);
}

/* ------------------------------------------------------------- kernel_ipsec_t */

METHOD(kernel_ipsec_t, get_features, kernel_feature_t, private_kernel_esgw_ipsec_t *this)
{
	return 0;
}

METHOD(kernel_ipsec_t, get_spi, status_t, private_kernel_esgw_ipsec_t *this, host_t *src,
       host_t *dst, uint8_t protocol, uint32_t *spi)
{
	rng_t *rng;
	Esgw__ShowReply *shown;
	status_t rc = FAILED;

	if (protocol != IPPROTO_ESP)
		return NOT_SUPPORTED;
	rng = lib->crypto->create_rng(lib->crypto, RNG_WEAK);
	if (rng == NULL)
		return FAILED;
	this->lock->lock(this->lock);
	shown = shown_sas(this);
	for (int attempt = 0; attempt < 32; attempt++) {
		uint32_t v;
		bool taken = FALSE;

		if (!rng->get_bytes(rng, sizeof(v), (uint8_t *)&v))
			break;
		v = KERNEL_SPI_MIN + v % (KERNEL_SPI_MAX - KERNEL_SPI_MIN + 1);
		/* Unique on the gateway: esgw finds inbound SAs by SPI alone. */
		for (size_t i = 0; shown && i < shown->n_sas; i++)
			taken |= shown->sas[i]->config->spi == v;
		if (taken || spi_used(this, v))
			continue;
		*spi = htonl(v);
		rc = SUCCESS;
		break;
	}
	this->lock->unlock(this->lock);
	rng->destroy(rng);
	return rc;
}

METHOD(kernel_ipsec_t, get_cpi, status_t, private_kernel_esgw_ipsec_t *this, host_t *src,
       host_t *dst, uint16_t *cpi)
{
	return NOT_SUPPORTED; /* no IPComp in esgw */
}

/* What esgw cannot do of an add_sa, or NULL. */
static const char *add_sa_unsupported(kernel_ipsec_sa_id_t *id, kernel_ipsec_add_sa_t *data)
{
	if (id->proto != IPPROTO_ESP)
		return "AH (esgw does ESP only)";
	if (data->mode != MODE_TUNNEL)
		return "a mode other than tunnel";
	if (data->ipcomp != IPCOMP_NONE)
		return "IPComp";
	if (id->mark.value || id->mark.mask || data->mark.value || data->mark.mask || id->if_id)
		return "marks and interface IDs";
	if (data->label)
		return "security labels";
	if (data->tfc)
		return "TFC padding of outbound packets";
	if (data->hw_offload == HW_OFFLOAD_YES)
		return "hardware offload";
	if (data->inbound && data->replay_window == 0)
		return "an inbound SA without replay protection";
	return NULL;
}

METHOD(kernel_ipsec_t, add_sa, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_sa_id_t *id, kernel_ipsec_add_sa_t *data)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__Sa msg = ESGW__SA__INIT;
	Esgw__Lifetime soft = ESGW__LIFETIME__INIT, hard = ESGW__LIFETIME__INIT;
	const char *unsupported = add_sa_unsupported(id, data);
	Esgw__Status status = ESGW__STATUS__STATUS_OK;
	size_t salt_len;
	tunnel_entry_t *t;
	sa_entry_t *sa;
	status_t rc = FAILED;

	if (unsupported == NULL) {
		msg.algorithm = esgw_map_algorithm(data->enc_alg, data->enc_key.len, data->int_alg,
						   &salt_len);
		if (msg.algorithm == ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED)
			unsupported = "this algorithm";
	}
	if (unsupported != NULL) {
		DBG1(DBG_KNL, "kernel-esgw: SA %.8x (%N/%N) refused: esgw does not support %s",
		     ntohl(id->spi), encryption_algorithm_names, data->enc_alg,
		     integrity_algorithm_names, data->int_alg, unsupported);
		return NOT_SUPPORTED;
	}
	msg.spi = ntohl(id->spi);
	msg.crypto_key.data = data->enc_key.ptr;
	msg.crypto_key.len = data->enc_key.len - salt_len;
	msg.salt.data = data->enc_key.ptr + msg.crypto_key.len;
	msg.salt.len = salt_len;
	msg.integ_key.data = data->int_key.ptr;
	msg.integ_key.len = data->int_alg == AUTH_UNDEFINED ? 0 : data->int_key.len;
	msg.esn = data->esn;
	if (data->inbound)
		msg.replay_window = max(data->replay_window, REPLAY_WINDOW_MIN);
	esgw_map_lifetimes(data->lifetime, &soft, &hard);
	msg.lifetime_soft = &soft;
	msg.lifetime_hard = &hard;
	if (data->encap) {
		/* udp_sport is the gateway's port: the destination of inbound SAs. */
		host_t *local = data->inbound ? id->dst : id->src;
		host_t *peer = data->inbound ? id->src : id->dst;

		msg.udp_encap = TRUE;
		msg.udp_sport = local->get_port(local);
		msg.udp_dport = peer->get_port(peer);
	}
	msg.owner = ESGW_IKE_OWNER;
	req.body_case = ESGW__REQUEST__BODY_SA_ADD;
	req.sa_add = &msg;

	this->lock->lock(this->lock);
	t = tunnel_get(this, data->reqid);
	msg.worker = t->worker;
	for (int attempt = 0; attempt < 16; attempt++) {
		msg.id = this->next_id++;
		if (this->next_id < ID_BASE)
			this->next_id = ID_BASE;
		rc = request(this, &req, "sa add", &status);
		if (rc == SUCCESS || status != ESGW__STATUS__STATUS_ALREADY_EXISTS ||
		    shown_sa(shown_sas(this), msg.id) == NULL)
			break;
		show_cache_drop(this); /* the id was someone else's: take the next */
	}
	if (rc != SUCCESS && status == ESGW__STATUS__STATUS_INVALID_ARGUMENT && msg.worker >= 0) {
		msg.worker = t->worker = -1; /* the worker went away (workers set) */
		rc = request(this, &req, "sa add", &status);
	}
	if (rc == SUCCESS) {
		INIT(sa, .id = msg.id, .spi = msg.spi, .reqid = data->reqid,
		     .src = id->src->clone(id->src), .dst = id->dst->clone(id->dst),
		     .inbound = data->inbound, .order = ++this->order);
		this->sas->insert_last(this->sas, sa);
		DBG2(DBG_KNL, "kernel-esgw: SA %.8x installed as esgw SA %u (%s)", msg.spi,
		     msg.id, data->inbound ? "in" : "out");
		show_cache_drop(this);
		sync_tunnel(this, data->reqid);
	} else {
		tunnel_forget_if_unused(this, data->reqid);
	}
	this->lock->unlock(this->lock);
	return rc;
}

METHOD(kernel_ipsec_t, update_sa, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_sa_id_t *id, kernel_ipsec_update_sa_t *data)
{
	/* esgw's SA and tunnel endpoints are fixed while the SA lives (its
	 * runtime state is keyed to them); charon answers NOT_SUPPORTED by
	 * rekeying the CHILD_SA over the new addresses. */
	DBG1(DBG_KNL, "kernel-esgw: SA %.8x: moving to other addresses or ports is not supported: "
		      "charon rekeys instead", ntohl(id->spi));
	return NOT_SUPPORTED;
}

METHOD(kernel_ipsec_t, query_sa, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_sa_id_t *id, kernel_ipsec_query_sa_t *data, uint64_t *bytes,
       uint64_t *packets, time_t *time)
{
	sa_entry_t *sa;
	Esgw__SaInfo *info;
	status_t rc = NOT_FOUND;

	this->lock->lock(this->lock);
	sa = sa_find(this, ntohl(id->spi), id->dst);
	info = sa && !sa->lost ? shown_sa(shown_sas(this), sa->id) : NULL;
	if (info != NULL) {
		struct timeval wall;

		gettimeofday(&wall, NULL);
		if (bytes)
			*bytes = info->bytes;
		if (packets)
			*packets = info->packets;
		if (time) { /* charon wants its monotonic clock */
			double ago = wall.tv_sec + wall.tv_usec / 1e6 - info->last_used;

			*time = info->last_used > 0 && ago >= 0 ? time_monotonic(NULL) - (time_t)ago : 0;
		}
		rc = SUCCESS;
	}
	this->lock->unlock(this->lock);
	return rc;
}

METHOD(kernel_ipsec_t, del_sa, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_sa_id_t *id, kernel_ipsec_del_sa_t *data)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__IdRef ref = ESGW__ID_REF__INIT;
	sa_entry_t *sa;
	status_t rc = SUCCESS;
	uint32_t reqid;

	this->lock->lock(this->lock);
	sa = sa_find(this, ntohl(id->spi), id->dst);
	if (sa == NULL) {
		this->lock->unlock(this->lock);
		return NOT_FOUND;
	}
	this->sas->remove(this->sas, sa, NULL);
	reqid = sa->reqid;
	sync_tunnel(this, reqid); /* off the tunnel first: esgw refuses to delete a used SA */
	if (!sa->lost) {
		ref.id = sa->id;
		req.body_case = ESGW__REQUEST__BODY_SA_DEL;
		req.sa_del = &ref;
		rc = request(this, &req, "sa del", NULL);
		/* charon forgets it either way; a reconcile removes what is left. */
	}
	show_cache_drop(this);
	tunnel_forget_if_unused(this, reqid);
	this->lock->unlock(this->lock);
	sa_entry_destroy(sa);
	return rc;
}

/* Send OwnerReconcile keeping what the model holds (nothing: flush). */
static status_t reconcile(private_kernel_esgw_ipsec_t *this, bool keep_sas, bool keep_policies)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__OwnerReconcile msg = ESGW__OWNER_RECONCILE__INIT;
	int n_sas = this->sas->get_count(this->sas), n_t = this->tunnels->get_count(this->tunnels),
	    n_p = this->policies->get_count(this->policies);
	uint32_t sas[n_sas + 1];
	char *tunnels[n_t + 1], *policies[n_p + 1];
	enumerator_t *e;
	sa_entry_t *sa;
	tunnel_entry_t *t;
	policy_entry_t *p;

	msg.owner = ESGW_IKE_OWNER;
	msg.keep_sas = sas;
	msg.keep_tunnels = tunnels;
	msg.keep_policies = policies;
	if (keep_sas) {
		e = this->sas->create_enumerator(this->sas);
		while (e->enumerate(e, &sa))
			sas[msg.n_keep_sas++] = sa->id;
		e->destroy(e);
		e = this->tunnels->create_enumerator(this->tunnels);
		while (e->enumerate(e, &t))
			tunnels[msg.n_keep_tunnels++] = t->name;
		e->destroy(e);
	}
	if (keep_policies) {
		e = this->policies->create_enumerator(this->policies);
		while (e->enumerate(e, &p))
			if (p->dir == POLICY_OUT)
				policies[msg.n_keep_policies++] = p->name;
		e->destroy(e);
	}
	req.body_case = ESGW__REQUEST__BODY_OWNER_RECONCILE;
	req.owner_reconcile = &msg;
	show_cache_drop(this);
	return request(this, &req, "owner reconcile", NULL);
}

METHOD(kernel_ipsec_t, flush_sas, status_t, private_kernel_esgw_ipsec_t *this)
{
	enumerator_t *e;
	tunnel_entry_t *t;
	status_t rc;

	this->lock->lock(this->lock);
	e = this->tunnels->create_enumerator(this->tunnels);
	while (e->enumerate(e, &t)) {
		t->installed = FALSE;
		sync_policies_of(this, t->reqid); /* protect -> discard: no SA left */
	}
	e->destroy(e);
	this->sas->destroy_function(this->sas, (void *)sa_entry_destroy);
	this->sas = linked_list_create();
	this->tunnels->destroy_function(this->tunnels, free);
	this->tunnels = linked_list_create();
	rc = reconcile(this, FALSE, TRUE);
	this->lock->unlock(this->lock);
	return rc;
}

METHOD(kernel_ipsec_t, add_policy, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_policy_id_t *id, kernel_ipsec_manage_policy_t *data)
{
	policy_entry_t *p;
	policy_user_t *u;

	if (id->mark.value || id->mark.mask || id->if_id || id->label ||
	    (id->interface && id->interface[0])) {
		DBG1(DBG_KNL, "kernel-esgw: policy %R === %R refused: esgw has no marks, interface "
			      "IDs, interfaces or labels on policies", id->src_ts, id->dst_ts);
		return NOT_SUPPORTED;
	}
	if (data->type == POLICY_IPSEC && data->sa->mode != MODE_TUNNEL) {
		DBG1(DBG_KNL, "kernel-esgw: policy %R === %R refused: tunnel mode only", id->src_ts,
		     id->dst_ts);
		return NOT_SUPPORTED;
	}
	this->lock->lock(this->lock);
	p = policy_find(this, id);
	if (p == NULL) {
		INIT(p, .dir = id->dir, .src_ts = id->src_ts->clone(id->src_ts),
		     .dst_ts = id->dst_ts->clone(id->dst_ts), .users = linked_list_create());
		snprintf(p->name, sizeof(p->name), "ike-p%u", ++this->next_policy);
		this->policies->insert_last(this->policies, p);
	}
	INIT(u, .reqid = data->sa ? data->sa->reqid : 0, .type = data->type,
	     .prio = esgw_map_priority(id->src_ts, id->dst_ts, data->manual_prio));
	p->users->insert_last(p->users, u);
	sync_policy(this, p);
	this->lock->unlock(this->lock);
	return SUCCESS;
}

/* The last time an SA behind a policy carried a packet, charon's clock. */
static time_t policy_use_time(private_kernel_esgw_ipsec_t *this, policy_entry_t *p)
{
	Esgw__ShowReply *shown = shown_sas(this);
	enumerator_t *e;
	policy_user_t *u;
	sa_entry_t *sa;
	struct timeval wall;
	double last = 0;

	if (p->users->get_last(p->users, (void **)&u) != SUCCESS || shown == NULL)
		return 0;
	e = this->sas->create_enumerator(this->sas);
	while (e->enumerate(e, &sa)) {
		Esgw__SaInfo *info;

		if (sa->reqid != u->reqid || sa->inbound != (p->dir != POLICY_OUT))
			continue;
		info = shown_sa(shown, sa->id);
		if (info && info->last_used > last)
			last = info->last_used;
	}
	e->destroy(e);
	if (last <= 0)
		return 0;
	gettimeofday(&wall, NULL);
	return time_monotonic(NULL) - (time_t)(wall.tv_sec + wall.tv_usec / 1e6 - last);
}

METHOD(kernel_ipsec_t, query_policy, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_policy_id_t *id, kernel_ipsec_query_policy_t *data, time_t *use_time)
{
	policy_entry_t *p;
	time_t t = 0;

	this->lock->lock(this->lock);
	p = policy_find(this, id);
	if (p != NULL)
		t = policy_use_time(this, p);
	this->lock->unlock(this->lock);
	if (t == 0)
		return NOT_FOUND;
	*use_time = t;
	return SUCCESS;
}

METHOD(kernel_ipsec_t, del_policy, status_t, private_kernel_esgw_ipsec_t *this,
       kernel_ipsec_policy_id_t *id, kernel_ipsec_manage_policy_t *data)
{
	policy_entry_t *p;
	policy_user_t *u, *victim = NULL;
	enumerator_t *e;
	uint32_t reqid = data->sa ? data->sa->reqid : 0;

	this->lock->lock(this->lock);
	p = policy_find(this, id);
	if (p == NULL) {
		this->lock->unlock(this->lock);
		return NOT_FOUND;
	}
	/* The newest reference of that CHILD_SA (the Linux backend's order). */
	e = p->users->create_enumerator(p->users);
	while (e->enumerate(e, &u))
		if (u->reqid == reqid && u->type == data->type)
			victim = u;
	e->destroy(e);
	if (victim == NULL)
		p->users->get_last(p->users, (void **)&victim);
	p->users->remove(p->users, victim, NULL);
	free(victim);
	sync_policy(this, p);
	if (p->users->get_count(p->users) == 0) {
		this->policies->remove(this->policies, p, NULL);
		policy_entry_destroy(p);
	}
	this->lock->unlock(this->lock);
	return SUCCESS;
}

METHOD(kernel_ipsec_t, flush_policies, status_t, private_kernel_esgw_ipsec_t *this)
{
	status_t rc;

	this->lock->lock(this->lock);
	this->policies->destroy_function(this->policies, (void *)policy_entry_destroy);
	this->policies = linked_list_create();
	rc = reconcile(this, TRUE, FALSE);
	this->lock->unlock(this->lock);
	return rc;
}

METHOD(kernel_ipsec_t, bypass_socket, bool, private_kernel_esgw_ipsec_t *this, int fd,
       int family)
{
	return TRUE; /* the host's own packets leave through esgw's punt path, no SPD */
}

METHOD(kernel_ipsec_t, enable_udp_decap, bool, private_kernel_esgw_ipsec_t *this, int fd,
       int family, uint16_t port)
{
	return TRUE; /* esgw's router takes ESP-in-UDP off the NAT-T port itself */
}

/* ------------------------------------------------------------- from esgw-ctld */

/* Expiry events go to charon: soft rekeys, hard deletes the CHILD_SA. An SA
 * removed from esgw behind our back is a hard expiry too. */
static void on_event(private_kernel_esgw_ipsec_t *this, const Esgw__Event *ev)
{
	bool hard;
	sa_entry_t *sa;
	host_t *dst = NULL;
	uint32_t spi = 0;

	switch (ev->kind) {
	case ESGW__EVENT_KIND__EVENT_KIND_SA_SOFT_EXPIRED:
		hard = FALSE;
		break;
	case ESGW__EVENT_KIND__EVENT_KIND_SA_HARD_EXPIRED:
	case ESGW__EVENT_KIND__EVENT_KIND_SA_REMOVED:
		hard = TRUE;
		break;
	default:
		return;
	}
	this->lock->lock(this->lock);
	sa = sa_find_id(this, ev->sa);
	if (sa != NULL && !sa->lost) {
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_SA_REMOVED)
			sa->lost = TRUE;
		spi = sa->spi;
		dst = sa->dst->clone(sa->dst);
	}
	this->lock->unlock(this->lock);
	if (dst == NULL)
		return;
	DBG1(DBG_KNL, "kernel-esgw: esgw SA %u (SPI %.8x) %s", ev->sa, spi,
	     ev->kind == ESGW__EVENT_KIND__EVENT_KIND_SA_REMOVED ? "removed from esgw"
	     : hard ? "reached its hard lifetime" : "reached its soft lifetime");
	charon->kernel->expire(charon->kernel, IPPROTO_ESP, htonl(spi), dst, hard);
	dst->destroy(dst);
}

/* After every (re)connect: esgw drops the IKE-owned objects charon no longer
 * has; SAs charon has but esgw lost (its configuration was replaced) are
 * reported to charon as expired, so it negotiates new ones. */
static void on_connect(private_kernel_esgw_ipsec_t *this)
{
	linked_list_t *lost = linked_list_create();
	Esgw__ShowReply *shown;
	enumerator_t *e;
	sa_entry_t *sa;
	host_t *dst;

	this->lock->lock(this->lock);
	if (reconcile(this, TRUE, TRUE) == SUCCESS && (shown = shown_sas(this)) != NULL) {
		e = this->sas->create_enumerator(this->sas);
		while (e->enumerate(e, &sa)) {
			if (sa->lost || shown_sa(shown, sa->id) != NULL)
				continue;
			sa->lost = TRUE;
			lost->insert_last(lost, sa->dst->clone(sa->dst));
			lost->insert_last(lost, (void *)(uintptr_t)sa->spi);
		}
		e->destroy(e);
	}
	this->lock->unlock(this->lock);
	while (lost->remove_first(lost, (void **)&dst) == SUCCESS) {
		uintptr_t spi;

		lost->remove_first(lost, (void **)&spi);
		DBG1(DBG_KNL, "kernel-esgw: SPI %.8x is gone from esgw: expiring it",
		     (uint32_t)spi);
		charon->kernel->expire(charon->kernel, IPPROTO_ESP, htonl((uint32_t)spi), dst, TRUE);
		dst->destroy(dst);
	}
	lost->destroy(lost);
}

METHOD(kernel_ipsec_t, destroy, void, private_kernel_esgw_ipsec_t *this)
{
	DESTROY_IF(this->api);
	show_cache_drop(this);
	this->sas->destroy_function(this->sas, (void *)sa_entry_destroy);
	this->tunnels->destroy_function(this->tunnels, free);
	this->policies->destroy_function(this->policies, (void *)policy_entry_destroy);
	this->lock->destroy(this->lock);
	free(this);
}

kernel_esgw_ipsec_t *kernel_esgw_ipsec_create(void)
{
	private_kernel_esgw_ipsec_t *this;
	const char *path = lib->settings->get_str(lib->settings, "%s.plugins.kernel-esgw.socket",
						  DEFAULT_SOCKET, lib->ns);
	int timeout = lib->settings->get_int(lib->settings, "%s.plugins.kernel-esgw.timeout",
					     DEFAULT_TIMEOUT_MS, lib->ns);
	rng_t *rng = lib->crypto->create_rng(lib->crypto, RNG_WEAK);
	uint32_t start = 0;

	/* ids start anywhere in the range, so two runs rarely meet */
	if (rng) {
		if (!rng->get_bytes(rng, sizeof(start), (uint8_t *)&start))
			start = 0;
		rng->destroy(rng);
	}
	INIT(this,
		.public = {
			.interface = {
				.get_features = _get_features,
				.get_spi = _get_spi,
				.get_cpi = _get_cpi,
				.add_sa = _add_sa,
				.update_sa = _update_sa,
				.query_sa = _query_sa,
				.del_sa = _del_sa,
				.flush_sas = _flush_sas,
				.add_policy = _add_policy,
				.query_policy = _query_policy,
				.del_policy = _del_policy,
				.flush_policies = _flush_policies,
				.bypass_socket = _bypass_socket,
				.enable_udp_decap = _enable_udp_decap,
				.destroy = _destroy,
			},
		},
		.lock = mutex_create(MUTEX_TYPE_RECURSIVE),
		.sas = linked_list_create(),
		.tunnels = linked_list_create(),
		.policies = linked_list_create(),
		.next_id = ID_BASE + (start % (ID_BASE / 2)),
	);
	this->api = esgw_api_create(path, timeout, (esgw_api_event_cb_t)on_event,
				    (esgw_api_connect_cb_t)on_connect, this);
	if (this->api == NULL) {
		destroy(this);
		return NULL;
	}
	DBG1(DBG_KNL, "kernel-esgw: installing SAs into esgw through %s", path);
	return &this->public;
}
