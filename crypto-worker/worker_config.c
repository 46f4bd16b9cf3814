/* SPDX-License-Identifier: BSD-3-Clause */
/* The crypto worker's side of the control protocol: apply the SAs esgw-ctld
 * places on this worker (keys into private key schedules, outer endpoints
 * from the push's binary addresses, runtime state in shared memory kept
 * across restarts), and report worker and SA counters. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "slot_table.h"
#include "worker.h"

/* The outer endpoints of s into p: none (both empty) for an SA used inbound
 * only, else both IPv4 or both IPv6 (esp_ip.c writes that outer header).
 * local and remote keep the IPv6 addresses p points to. 0, or -1. */
static int endpoints_from(const Esgw__DpSa *s, struct esp_sa_params *p, struct esgw_addr *local,
			  struct esgw_addr *remote)
{
	if (s->local.len == 0 && s->remote.len == 0)
		return 0; /* p->outer_src and outer_dst stay 0 */
	if (esgw_addr_from_bytes(local, s->local.data, s->local.len, 0) < 0 ||
	    esgw_addr_from_bytes(remote, s->remote.data, s->remote.len, 0) < 0 ||
	    local->family != remote->family)
		return -1;
	if (local->family == 6) {
		p->outer6_src = local->bytes;
		p->outer6_dst = remote->bytes;
	} else {
		memcpy(&p->outer_src, local->bytes, 4); /* network byte order, as they come */
		memcpy(&p->outer_dst, remote->bytes, 4);
	}
	return 0;
}

static void lifetime_from(struct esp_lifetime *l, const Esgw__Lifetime *m)
{
	l->packets = m ? m->packets : 0;
	l->bytes = m ? m->bytes : 0;
	l->seconds = m ? m->seconds : 0;
}

static int sa_build(struct crypto_worker *w, const Esgw__DpSa *s, struct esp_sa **out, char *err,
		    size_t errlen)
{
	struct esp_sa_params p = {
		.spi = s->spi,
		.alg = (enum esp_alg)s->algorithm,
		.crypto_key = s->crypto_key.data,
		.crypto_key_len = s->crypto_key.len,
		.integ_key = s->integ_key.data,
		.integ_key_len = s->integ_key.len,
		.salt = s->salt.data,
		.salt_len = s->salt.len,
		.esn = s->esn,
		/* RFC 3948; esgw-ctld fills in 4500 for ports left unset. */
		.udp_sport = s->udp_encap ? (uint16_t)(s->udp_sport ? s->udp_sport : 4500) : 0,
		.udp_dport = s->udp_encap ? (uint16_t)(s->udp_dport ? s->udp_dport : 4500) : 0,
		.iv_mask = s->iv_mask,
	};
	struct esgw_addr local, remote;
	char why[160];
	struct esp_sa *sa;

	if (s->slot >= w->dp.max_sas) {
		snprintf(err, errlen,
			 "SA %u: runtime slot %u out of range: the shared table has %u (esgw-rxtx "
			 "--max-sas)",
			 s->id, s->slot, w->dp.max_sas);
		return -1;
	}
	if (endpoints_from(s, &p, &local, &remote) < 0) {
		snprintf(err, errlen,
			 "SA %u: bad tunnel endpoints (%zu and %zu bytes: both 4 or both 16)",
			 s->id, s->local.len, s->remote.len);
		return -1;
	}
	p.rt = &w->dp.shared->sa[s->slot];
	lifetime_from(&p.soft, s->lifetime_soft);
	lifetime_from(&p.hard, s->lifetime_hard);
	sa = esp_sa_alloc();
	if (sa == NULL) {
		snprintf(err, errlen, "SA %u: out of memory", s->id);
		return -1;
	}
	if (esp_sa_init(w->mgr, sa, &p, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "SA %u: %s", s->id, why);
		esp_sa_free(sa);
		return -1;
	}
	*out = sa;
	return 0;
}

/* A new SA in the slot starts from scratch; the same SPI keeps its sequence
 * number and replay window, which is how they survive a worker restart or a
 * move (RFC 4303 3.3.3: an outbound sequence number is never reused). Returns
 * 1 if the slot is ours now, 0 if another worker still owns it and is handing
 * it over (handover.c): then the SA waits in standby. */
static int runtime_adopt(struct crypto_worker *w, struct esgw_sa_runtime *rt, const Esgw__DpSa *s)
{
	uint64_t generation = rt->generation;

	if (rt->spi != s->spi || rt->instance != s->instance || generation == 0) {
		memset(rt, 0, sizeof(*rt));
		replay_init(&rt->replay,
			    s->replay_window ? s->replay_window : REPLAY_WINDOW_DEFAULT);
		rt->spi = s->spi;
		rt->instance = s->instance;
		/* Above every number used before a dataplane restart: at most
		 * the durable floor was ever reached (ctld keeps it); 0 only for
		 * an SA instance no worker ever had. Nothing may be sent until a
		 * floor above it is pushed (seq_out_max is 0). */
		rt->seq_out = s->seq_out_start;
		rt->generation = generation + 1;
		rt->installed_at = esp_clock_seconds(); /* lifetimes in seconds count from here */
	} else if (__atomic_load_n(&rt->owner, __ATOMIC_ACQUIRE) != w->id && !s->adopt) {
		return 0;
	}
	rt->handover_from = UINT32_MAX; /* taken, not handed over: nothing to wait for */
	__atomic_store_n(&rt->owner, w->id, __ATOMIC_RELEASE);
	return 1;
}

/* The SA in slot is this very SA (same id and SPI) already. */
static bool sa_held(const struct crypto_worker *w, uint32_t slot, const Esgw__DpSa *s)
{
	return slot < w->dp.max_sas && w->sa[slot] != NULL && w->sa_id[slot] == s->id &&
	       w->sa[slot]->spi == s->spi;
}

/* What an SA's key schedule and fixed state (esp_sa_init) are built from: s
 * packed without the fields a push changes for an SA that stays the same. */
static struct sa_built built_of(const Esgw__DpSa *s)
{
	Esgw__DpSa c = *s;
	struct sa_built b;

	c.leaving = false;
	c.adopt = false;
	c.seq_limit = 0;
	c.seq_out_start = 0; /* a fresh runtime slot's start (runtime_adopt) */
	c.worker = 0;        /* leaving: the same SA, moving away */
	b.len = esgw__dp_sa__get_packed_size(&c);
	b.bytes = malloc(b.len ? b.len : 1);
	if (b.bytes != NULL)
		esgw__dp_sa__pack(&c, b.bytes);
	return b;
}

static void built_free(struct sa_built *b)
{
	if (b->bytes != NULL)
		explicit_bzero(b->bytes, b->len);
	free(b->bytes);
	b->bytes = NULL;
	b->len = 0;
}

void crypto_worker_sa_built_free(struct crypto_worker *w, uint32_t slot)
{
	built_free(&w->sa_built[slot]);
}

/* The SA held in slot was built from exactly this configuration. */
static bool sa_unchanged(const struct crypto_worker *w, uint32_t slot, const struct sa_built *b)
{
	const struct sa_built *old = &w->sa_built[slot];

	return b->bytes != NULL && old->bytes != NULL && old->len == b->len &&
	       memcmp(old->bytes, b->bytes, b->len) == 0;
}

/* The unpacked request is freed right after this call; do not leave key
 * bytes behind in freed heap memory. */
static void wipe_request_keys(const Esgw__DpConfig *cfg)
{
	for (size_t i = 0; i < cfg->n_sas; i++) {
		Esgw__DpSa *s = cfg->sas[i];

		if (s->crypto_key.data != NULL)
			explicit_bzero(s->crypto_key.data, s->crypto_key.len);
		if (s->integ_key.data != NULL)
			explicit_bzero(s->integ_key.data, s->integ_key.len);
		if (s->salt.data != NULL)
			explicit_bzero(s->salt.data, s->salt.len);
	}
}

/* The SAs of cfg this worker keeps, built into fresh[slot] (their
 * configuration in fresh_cfg[slot], its bytes in bytes[slot]) before
 * anything changes: a refused configuration changes nothing. An SA held
 * already and pushed unchanged is not built again: fresh[slot] stays NULL,
 * its key schedule stays (a push of 20,000 SAs rebuilds only the new ones).
 * Their count, or -1 with err. */
static int build_all(struct crypto_worker *w, const Esgw__DpConfig *cfg, struct esp_sa **fresh,
		     const Esgw__DpSa **fresh_cfg, struct sa_built *bytes, char *err,
		     size_t errlen)
{
	int count = 0;

	for (size_t i = 0; i < cfg->n_sas; i++) {
		const Esgw__DpSa *s = cfg->sas[i];

		/* An SA moving away stays until the router's marker, if we still
		 * have it; otherwise it is another worker's business. */
		if (s->worker != w->id && !(s->leaving && sa_held(w, s->slot, s)))
			continue;
		if (s->slot < w->dp.max_sas && fresh_cfg[s->slot] != NULL) {
			snprintf(err, errlen, "SA %u: runtime slot %u given twice", s->id, s->slot);
			return -1;
		}
		if (s->slot < w->dp.max_sas && sa_held(w, s->slot, s)) {
			bytes[s->slot] = built_of(s);
			if (sa_unchanged(w, s->slot, &bytes[s->slot])) {
				built_free(&bytes[s->slot]);
				fresh_cfg[s->slot] = s;
				count++;
				continue;
			}
		}
		if (sa_build(w, s, &fresh[s->slot < w->dp.max_sas ? s->slot : 0], err, errlen) < 0)
			return -1;
		if (bytes[s->slot].bytes == NULL)
			bytes[s->slot] = built_of(s);
		fresh_cfg[s->slot] = s;
		count++;
	}
	return count;
}

/* Slot takes what was built for it (s, fresh, bytes; s NULL for none): its
 * runtime adopted or kept, or held in standby for a hand-over, and its key
 * schedule replaced (kept when fresh is NULL for an SA unchanged). 0, or -1
 * with err (out of memory). */
static int install(struct crypto_worker *w, unsigned int slot, const Esgw__DpSa *s,
		   struct esp_sa **fresh, struct sa_built *bytes, char *err, size_t errlen)
{
	if (s == NULL) {
		/* Gone: what it parked has nowhere to go. */
		if (w->parking[slot] != NULL)
			handover_forget(w, slot, ESGW_DROP_NO_SA);
	} else if (sa_held(w, slot, s) && w->parking[slot] == NULL) {
		/* Active already (leaving or not): the slot stays ours. */
	} else if (s->worker != w->id) {
		/* Leaving while still in standby: it parks the marker too and
		 * passes the SA on once it has been active. */
	} else if (runtime_adopt(w, &w->dp.shared->sa[slot], s)) {
		/* New here with nobody handing it over, or told to adopt it. */
		if (w->parking[slot] != NULL)
			ESGW_INFO("SA %u: slot %u adopted without hand-over", s->id, slot);
	} else if (handover_standby(w, slot) < 0) {
		snprintf(err, errlen, "SA %u: out of memory", s->id);
		return -1;
	}
	if (s == NULL || *fresh != NULL) {
		esp_sa_keep_endpoints(*fresh, w->sa[slot]);
		/* Replacing the key schedule is safe here: the data path runs in
		 * this thread and no job is in flight between bursts. */
		esp_sa_free(w->sa[slot]); /* wipes a removed or replaced SA's keys */
		w->sa[slot] = *fresh;
		built_free(&w->sa_built[slot]);
		w->sa_built[slot] = *bytes;
		*bytes = (struct sa_built){0};
	}
	w->sa_id[slot] = s ? s->id : 0;
	crypto_worker_slot_set(w->sa_timed, slot,
			       w->sa[slot] != NULL && (w->sa[slot]->soft.seconds != 0 ||
						       w->sa[slot]->hard.seconds != 0));
	crypto_worker_sa_changed(w, slot); /* listed at the next sample, gone or not */
	*fresh = NULL;
	if (s == NULL || w->sa_instance[slot] != s->instance)
		w->seq_limit[slot] = 0;
	w->sa_instance[slot] = s ? s->instance : 0;
	if (s != NULL && s->seq_limit > w->seq_limit[slot])
		w->seq_limit[slot] = s->seq_limit;
	crypto_worker_seq_limit_apply(w, slot);
	return 0;
}

/* What a push builds, by slot (all NULL between pushes), dp.max_sas each. */
static struct esp_sa **fresh;
static const Esgw__DpSa **fresh_cfg;
static struct sa_built *bytes;

int crypto_worker_tables_alloc(struct crypto_worker *w)
{
	size_t n = w->dp.max_sas;

	/* Pages of slots never used stay untouched: no memory. */
	w->sa = esgw_slot_table_alloc(n, sizeof(*w->sa));
	w->sa_id = esgw_slot_table_alloc(n, sizeof(*w->sa_id));
	w->sa_instance = esgw_slot_table_alloc(n, sizeof(*w->sa_instance));
	w->sa_built = esgw_slot_table_alloc(n, sizeof(*w->sa_built));
	w->seq_limit = esgw_slot_table_alloc(n, sizeof(*w->seq_limit));
	w->parking = esgw_slot_table_alloc(n, sizeof(*w->parking));
	w->standby = esgw_slot_table_alloc(n, sizeof(*w->standby));
	w->egress = esgw_slot_table_alloc(n, sizeof(*w->egress));
	w->sa_changed = esgw_slot_table_alloc((n + 63) / 64, sizeof(*w->sa_changed));
	w->sa_timed = esgw_slot_table_alloc((n + 63) / 64, sizeof(*w->sa_timed));
	fresh = esgw_slot_table_alloc(n, sizeof(*fresh));
	fresh_cfg = esgw_slot_table_alloc(n, sizeof(*fresh_cfg));
	bytes = esgw_slot_table_alloc(n, sizeof(*bytes));
	if (w->sa == NULL || w->sa_id == NULL || w->sa_instance == NULL || w->sa_built == NULL ||
	    w->seq_limit == NULL || w->parking == NULL || w->standby == NULL || w->egress == NULL ||
	    w->sa_changed == NULL || w->sa_timed == NULL || fresh == NULL || fresh_cfg == NULL ||
	    bytes == NULL) {
		ESGW_ERR("out of memory for the tables of %zu SA slots (--max-sas)", n);
		return -1;
	}
	return 0;
}

/* Anything in the slot that a push without its SA would clear (install). */
static bool slot_has_state(const struct crypto_worker *w, unsigned int slot)
{
	return fresh_cfg[slot] != NULL || w->sa[slot] != NULL || w->parking[slot] != NULL ||
	       w->sa_instance[slot] != 0 || w->seq_limit[slot] != 0 ||
	       w->sa_built[slot].bytes != NULL || w->sa_id[slot] != 0;
}

/* What a push built for its SAs and did not install: freed, keys wiped. */
static void built_discard(const struct crypto_worker *w, Esgw__DpSa *const *sas, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t slot = sas[i]->slot < w->dp.max_sas ? sas[i]->slot : 0;

		esp_sa_free(fresh[slot]);
		fresh[slot] = NULL;
		fresh_cfg[slot] = NULL;
		built_free(&bytes[slot]);
	}
}

int crypto_worker_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	struct crypto_worker *w = (struct crypto_worker *)dp;
	int count, rc = -1;

	count = build_all(w, cfg, fresh, fresh_cfg, bytes, err, errlen);
	if (count < 0)
		goto out;
	/* Slots with nothing in them, before or after, are only read: their
	 * pages stay untouched (a large --max-sas costs no memory). */
	for (unsigned int slot = 0; slot < w->dp.max_sas; slot++)
		if (slot_has_state(w, slot) &&
		    install(w, slot, fresh_cfg[slot], &fresh[slot], &bytes[slot], err, errlen) < 0)
			goto out; /* applied up to here; ctld pushes again */
	ESGW_INFO("configuration %lu: %d SAs", (unsigned long)cfg->generation, count);
	rc = 0;
out:
	built_discard(w, cfg->sas, cfg->n_sas);
	wipe_request_keys(cfg);
	return rc;
}

/* A change: its SAs built first (a refused one changes nothing), then the
 * deleted ones removed and the new ones installed, each slot as a whole push
 * would leave it; the slots it does not name are not looked at. */
int crypto_worker_on_config_delta(struct esgw_dp *dp, const Esgw__DpConfigDelta *d, char *err,
				  size_t errlen)
{
	struct crypto_worker *w = (struct crypto_worker *)dp;
	Esgw__DpConfig part = ESGW__DP_CONFIG__INIT;
	int count, rc = -1;

	part.generation = d->generation;
	part.sas = d->sas;
	part.n_sas = d->n_sas;
	count = build_all(w, &part, fresh, fresh_cfg, bytes, err, errlen);
	if (count < 0)
		goto out;
	for (size_t i = 0; i < d->n_sas_deleted; i++) {
		const Esgw__DpSaRef *ref = d->sas_deleted[i];

		/* Not ours, or replaced by an SA of this change in the same slot. */
		if (ref->slot >= w->dp.max_sas || w->sa[ref->slot] == NULL ||
		    w->sa_id[ref->slot] != ref->id || fresh_cfg[ref->slot] != NULL)
			continue;
		if (install(w, ref->slot, NULL, &fresh[ref->slot], &bytes[ref->slot], err, errlen) <
		    0)
			goto out;
	}
	for (size_t i = 0; i < d->n_sas; i++) {
		uint32_t slot = d->sas[i]->slot;

		if (slot < w->dp.max_sas && fresh_cfg[slot] == d->sas[i] &&
		    install(w, slot, fresh_cfg[slot], &fresh[slot], &bytes[slot], err, errlen) < 0)
			goto out; /* applied up to here; ctld pushes whole */
	}
	ESGW_INFO("configuration %lu: %d SAs added, %zu deleted", (unsigned long)d->generation,
		  count, d->n_sas_deleted);
	rc = 0;
out:
	built_discard(w, d->sas, d->n_sas);
	wipe_request_keys(&part);
	return rc;
}

void crypto_worker_seq_limit_apply(struct crypto_worker *w, uint32_t slot)
{
	struct esp_sa *sa = w->sa[slot];

	if (sa == NULL || w->parking[slot] != NULL ||
	    __atomic_load_n(&sa->rt->owner, __ATOMIC_ACQUIRE) != w->id)
		return;
	esp_seq_limit_raise(sa, w->seq_limit[slot]);
	crypto_worker_sa_changed(w, slot); /* its limit, or its owner (handover_poll) */
}

void crypto_worker_on_seq_limits(struct esgw_dp *dp, const Esgw__DpSeqLimits *limits)
{
	struct crypto_worker *w = (struct crypto_worker *)dp;

	for (size_t i = 0; i < limits->n_limits; i++) {
		const Esgw__DpSeqLimit *l = limits->limits[i];

		/* Another SA (or instance) in the slot: not its floor. */
		if (l->slot >= w->dp.max_sas || w->sa[l->slot] == NULL ||
		    w->sa[l->slot]->spi != l->spi || w->sa_instance[l->slot] != l->instance)
			continue;
		if (l->seq_limit > w->seq_limit[l->slot])
			w->seq_limit[l->slot] = l->seq_limit;
		crypto_worker_seq_limit_apply(w, l->slot);
	}
}

void crypto_worker_sas_wipe(struct crypto_worker *w)
{
	for (unsigned int slot = 0; slot < w->dp.max_sas; slot++) {
		handover_forget(w, slot, ESGW_DROP_NO_WORKER);
		if (w->sa[slot] == NULL && w->sa_built[slot].bytes == NULL)
			continue; /* nothing to wipe: its page stays untouched */
		esp_sa_free(w->sa[slot]);
		w->sa[slot] = NULL;
		built_free(&w->sa_built[slot]);
	}
}

/* Whether the SA in slot goes into a stats answer: any SA, or with
 * changed_only those changed since the last such answer. Time limits of an
 * SA that sends nothing are noticed here (esgw-ctld asks every second);
 * only the owner writes the runtime (not an SA in hand-over standby). */
static bool sa_listed(struct crypto_worker *w, uint32_t slot, bool changed_only)
{
	struct esp_sa *sa = w->sa[slot];

	if (sa == NULL)
		return false;
	if (crypto_worker_slot_bit(w->sa_timed, slot) &&
	    __atomic_load_n(&sa->rt->owner, __ATOMIC_ACQUIRE) == w->id) {
		uint32_t expired = sa->rt->expired;

		esp_lifetime_check(sa, esp_clock_seconds());
		if (sa->rt->expired != expired)
			crypto_worker_sa_changed(w, slot);
	}
	return !changed_only || crypto_worker_slot_bit(w->sa_changed, slot);
}

/* The next slot from slot on that may be listed: with changed_only, whole
 * words of SAs unchanged and without time limits are skipped (an idle hub's
 * thousands of SAs cost a few hundred word reads). */
static uint32_t sa_next_candidate(const struct crypto_worker *w, uint32_t slot, bool changed_only)
{
	while (changed_only && slot < w->dp.max_sas && (slot & 63) == 0 &&
	       (w->sa_changed[slot >> 6] | w->sa_timed[slot >> 6]) == 0)
		slot += 64;
	return slot;
}

void crypto_worker_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats)
{
	struct crypto_worker *w = (struct crypto_worker *)dp;
	Esgw__Counter **drops, **counters;
	const Esgw__DpStatsQuery *q = dp->stats_query;
	uint32_t from = q != NULL ? q->sa_from : 0, max = q != NULL ? q->sa_max : 0, slot, end;
	bool changed_only = q != NULL && q->sa_changed;
	Esgw__DpSaStats *sa_stats;
	size_t n_drops, n_sas = 0;

	drops = esgw_dp_stats_drops(dp, w->drops, &n_drops);
	counters = esgw_dp_stats_alloc(dp, (4 + n_drops) * sizeof(*counters));
	counters[0] = esgw_dp_stats_counter(dp, "packets_encrypted", w->packets_encrypted);
	counters[1] = esgw_dp_stats_counter(dp, "packets_decrypted", w->packets_decrypted);
	counters[2] = esgw_dp_stats_counter(dp, "bytes", w->bytes);
	counters[3] = esgw_dp_stats_counter(dp, "decrypted_direct", w->decrypted_direct);
	memcpy(counters + 4, drops, n_drops * sizeof(*drops));
	stats->counters = counters;
	stats->n_counters = 4 + n_drops;
	stats->sa_changed = changed_only;

	for (slot = from; (slot = sa_next_candidate(w, slot, changed_only)) < w->dp.max_sas &&
			  (max == 0 || n_sas < max);
	     slot++)
		n_sas += sa_listed(w, slot, changed_only);
	end = slot < w->dp.max_sas ? slot : w->dp.max_sas;
	/* A page: where the next one starts, if any SA is left there. */
	while (slot < w->dp.max_sas && w->sa[slot] == NULL)
		slot++;
	stats->sa_next = slot < w->dp.max_sas ? slot : 0;
	/* Two allocations for the page's SAs (this runs on the data thread,
	 * every second, page after page of thousands of SAs): the list and the
	 * messages. In slot order: esgw-ctld finds an SA in the list by
	 * bisection (dp_stats_find_sa). */
	stats->sas = esgw_dp_stats_alloc(dp, n_sas * sizeof(*stats->sas));
	sa_stats = esgw_dp_stats_alloc(dp, n_sas * sizeof(*sa_stats));
	stats->n_sas = 0;
	for (slot = from;
	     (slot = sa_next_candidate(w, slot, changed_only)) < end && stats->n_sas < n_sas;
	     slot++) {
		const struct esgw_sa_runtime *rt;
		Esgw__DpSaStats *s;

		if (w->sa[slot] == NULL ||
		    (changed_only && !crypto_worker_slot_bit(w->sa_changed, slot)))
			continue;
		if (changed_only)
			crypto_worker_slot_set(w->sa_changed, slot, false);
		rt = w->sa[slot]->rt;
		s = &sa_stats[stats->n_sas];
		esgw__dp_sa_stats__init(s);
		s->id = w->sa_id[slot];
		s->slot = slot;
		s->packets = rt->ctr.packets;
		s->bytes = rt->ctr.bytes;
		s->drops = esgw_dp_stats_sa_drops(dp, rt->drops, &s->n_drops);
		s->seq_out = rt->seq_out;
		s->seq_out_max = rt->seq_out_max;
		s->replay_top = rt->replay.top;
		s->soft_expired = (rt->expired & ESGW_SA_SOFT_EXPIRED) != 0;
		s->hard_expired = (rt->expired & ESGW_SA_HARD_EXPIRED) != 0;
		s->seq_exhausted = (rt->expired & ESGW_SA_SEQ_EXHAUSTED) != 0;
		stats->sas[stats->n_sas++] = s;
	}
}
