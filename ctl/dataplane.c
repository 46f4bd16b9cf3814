/* SPDX-License-Identifier: BSD-3-Clause */
/* Live rates for `esgwctl show dataplane` and `esgwctl monitor`: a 1 s timer
 * asks every dataplane process for its DpStats and keeps the last two answers
 * per process, so a show answers at once with the rates of the last second
 * (packets and bits per second in and out, busy share, cycles per packet, per
 * SA rates) without waiting for a second sample. */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

#include "validate.h"

#define SAMPLE_PERIOD 1.0 /* seconds */

struct sample {
	Esgw__DpResponse *resp; /* resp->stats is the DpStats */
	double at;              /* ev_time() when it was answered */
};

static struct sample prev[CTLD_MAX_PROCS], last[CTLD_MAX_PROCS];
static ev_timer sampler;
static struct arena arena;

/* A crypto worker answers the sampler with the SAs changed since its last
 * answer only (dp_stats_changed), so an idle hub's thousands of SAs cost
 * nothing each second; what it said last of each SA is kept here, by slot.
 * Its first answer to this ctld, and the one after a failed sample (pages
 * lost), list every SA (dp_stats). */
struct sa_seen {
	uint32_t id;    /* the SA the rest is of; another in the slot starts over */
	int32_t worker; /* the worker that listed it last */
	uint64_t packets, bytes;
	double pps, bps; /* over the interval of the sample that listed it */
	uint64_t sample; /* that sample's number (sampled[worker's process]) */
};

static struct sa_seen *seen;              /* by slot, ctld.opt.max_sas */
static uint64_t sampled[CTLD_MAX_PROCS];  /* samples taken of each process */
static pid_t sa_view_pid[CTLD_MAX_PROCS]; /* seen holds all SAs of this process */

/* Counter differences; a counter that went backwards (reset) gives 0. */
static double delta(uint64_t now, uint64_t before)
{
	return now >= before ? (double)(now - before) : 0.0;
}

static void sample_clear(struct sample *s)
{
	dp_stats_free(s->resp);
	s->resp = NULL;
	s->at = 0;
}

/* Two samples belong together only if they come from one process instance. */
static bool same_instance(const Esgw__DpStats *a, const Esgw__DpStats *b)
{
	return a->pid == b->pid && a->worker == b->worker && strcmp(a->role, b->role) == 0 &&
	       a->tsc >= b->tsc;
}

/* Expiry events and sequence-number floors from a crypto worker's answer:
 * each SA looked up once for both. */
static void observe_sas(struct dp_proc *p, const Esgw__DpStats *st)
{
	Esgw__Sa **sas;

	if (st == NULL || strcmp(st->role, "crypto") != 0)
		return;
	sas = state_sas_of_stats(st);
	if (sas == NULL)
		return;
	sa_expiry_observe(st, sas);
	seq_floor_observe(p, st, sas);
	free(sas);
}

/* Seconds between two samples of one process instance by its own clock (ctld's
 * timer may run late under load); 0 if they are not of one instance. */
static double interval_of(const Esgw__DpStats *now, const Esgw__DpStats *before)
{
	if (before == NULL || now->tsc_hz == 0 || !same_instance(now, before))
		return 0;
	return delta(now->tsc, before->tsc) / (double)now->tsc_hz;
}

/* The SAs a crypto worker's sample lists, into seen with their rates. */
static void sas_seen(int i, const Esgw__DpStats *now, const Esgw__DpStats *before)
{
	double interval = interval_of(now, before);

	if (strcmp(now->role, "crypto") != 0)
		return;
	sampled[i]++;
	for (size_t k = 0; k < now->n_sas; k++) {
		const Esgw__DpSaStats *sa = now->sas[k];
		struct sa_seen *e;

		if (sa->slot >= ctld.opt.max_sas)
			continue;
		e = &CTLD_SLOTS(seen)[sa->slot];
		if (e->id != sa->id || e->sample == 0) /* new: its rate starts at the next */
			*e = (struct sa_seen){
				.id = sa->id, .packets = sa->packets, .bytes = sa->bytes};
		/* Listed now and not at some samples before: unchanged over
		 * those, so all of the difference is of this interval. */
		e->pps = interval > 0 ? delta(sa->packets, e->packets) / interval : 0;
		e->bps = interval > 0 ? 8 * delta(sa->bytes, e->bytes) / interval : 0;
		e->packets = sa->packets;
		e->bytes = sa->bytes;
		e->worker = now->worker;
		e->sample = sampled[i];
	}
	if (!now->sa_changed)
		sa_view_pid[i] = now->pid;
}

void dataplane_sample(void)
{
	for (int i = 0; i < CTLD_MAX_PROCS; i++) {
		Esgw__DpResponse *r = NULL;
		struct dp_proc *p = &ctld.procs[i];

		/* A late timer fires again at once (libev catches up): samples
		 * that close together would make rates out of noise. */
		if (i < ctld.nprocs && last[i].resp != NULL &&
		    ev_time() - last[i].at < SAMPLE_PERIOD / 2)
			continue;
		if (i < ctld.nprocs)
			r = p->worker >= 0 && p->pid > 0 && sa_view_pid[i] == p->pid
				    ? dp_stats_changed(p)
				    : dp_stats(p);

		if (r == NULL) {
			sample_clear(&prev[i]);
			sample_clear(&last[i]);
			sa_view_pid[i] = 0; /* pages of changes may be lost */
			continue;
		}
		sample_clear(&prev[i]);
		prev[i] = last[i];
		/* The time of this very answer: the requests before it may have
		 * taken a while, so the loop's cached ev_now() would be stale. */
		last[i] = (struct sample){r, ev_time()};
		observe_sas(p, r->stats);
		sa_usage_observe(r->stats);
		acquire_observe(r->stats);
		if (prev[i].resp != NULL && !same_instance(r->stats, prev[i].resp->stats))
			sample_clear(&prev[i]); /* restarted: its counters started over */
		sas_seen(i, r->stats, prev[i].resp ? prev[i].resp->stats : NULL);
	}
}

static void on_sample(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	dataplane_sample();
}

void dataplane_sampler_start(void)
{
	ev_timer_init(&sampler, on_sample, SAMPLE_PERIOD, SAMPLE_PERIOD);
	ev_timer_start(ctld.loop, &sampler);
}

void dataplane_sampler_stop(void)
{
	ev_timer_stop(ctld.loop, &sampler);
	for (int i = 0; i < CTLD_MAX_PROCS; i++) {
		sample_clear(&prev[i]);
		sample_clear(&last[i]);
		sa_view_pid[i] = 0;
	}
}

static void *alloc(size_t size)
{
	return arena_alloc(&arena, size);
}

static double ratio(double num, double den)
{
	return den > 0 ? num / den : 0.0;
}

struct traffic {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
};

/* rxtx counts at its ports; the others count what they take and hand on. */
static struct traffic traffic_of(const Esgw__DpStats *st)
{
	struct traffic t = {0};

	if (strcmp(st->role, "rxtx") == 0) {
		for (size_t k = 0; k < st->n_ports; k++) {
			t.rx_packets += st->ports[k]->rx_packets;
			t.rx_bytes += st->ports[k]->rx_bytes;
			t.tx_packets += st->ports[k]->tx_packets;
			t.tx_bytes += st->ports[k]->tx_bytes;
		}
	} else if (st->traffic != NULL) {
		t.rx_packets = st->traffic->rx_packets;
		t.rx_bytes = st->traffic->rx_bytes;
		t.tx_packets = st->traffic->tx_packets;
		t.tx_bytes = st->traffic->tx_bytes;
	}
	return t;
}

/* The SAs worker process i listed last, from seen: rates of those its last
 * sample listed, 0 for those unchanged since. */
static void sa_rates(Esgw__DataplaneInfo *info, int i)
{
	const struct dp_proc *p = &ctld.procs[i];

	if (seen == NULL || p->worker < 0)
		return;
	info->sas = alloc(ctld.config->n_sas * sizeof(*info->sas));
	for (size_t k = 0; k < ctld.config->n_sas; k++) {
		const Esgw__Sa *sa = ctld.config->sas[k];
		const struct sa_seen *e = sa->slot < ctld.opt.max_sas ? &seen[sa->slot] : NULL;
		Esgw__SaRate *r;
		Esgw__Tunnel *t;

		if (e == NULL || e->id != sa->id || e->sample == 0 || e->worker != p->worker)
			continue;
		r = alloc(sizeof(*r));
		esgw__sa_rate__init(r);
		t = state_tunnel_out(sa->id);
		if (t == NULL)
			t = state_tunnel_in(sa->id);
		r->id = sa->id;
		r->tunnel = t ? t->name : "";
		r->packets = e->packets;
		r->bytes = e->bytes;
		if (e->sample == sampled[i]) {
			r->packets_per_second = e->pps;
			r->bits_per_second = e->bps;
		}
		info->sas[info->n_sas++] = r;
	}
}

/* Wake-ups (one per idle sleep) and the packets each one brought. */
static void wake_rates(Esgw__DataplaneInfo *info, const Esgw__DpStats *now,
		       const Esgw__DpStats *before, double interval)
{
	double sleeps = delta(info->sleeps,
			      dp_stats_counter(before->counters, before->n_counters, "sleeps"));

	info->wakes_per_second = sleeps / interval;
	info->packets_per_wake = ratio(delta(now->busy_packets, before->busy_packets), sleeps);
}

static void fill_rates(Esgw__DataplaneInfo *info, int i, const Esgw__DpStats *now,
		       const Esgw__DpStats *before)
{
	struct traffic t1 = traffic_of(now), t0;
	double cycles, interval = interval_of(now, before);

	info->tsc_hz = now->tsc_hz;
	info->loop_cycles = now->loop_cycles;
	info->busy_cycles = now->busy_cycles;
	info->busy_packets = now->busy_packets;
	info->encrypt_cycles = now->encrypt_cycles;
	info->encrypt_packets = now->encrypt_packets;
	info->decrypt_cycles = now->decrypt_cycles;
	info->decrypt_packets = now->decrypt_packets;
	info->driver_cycles = now->driver_cycles;
	info->esp_cycles = now->esp_cycles;
	info->esp_sample_cycles = now->esp_sample_cycles;
	info->esp_sample_packets = now->esp_sample_packets;
	info->esp_sample_switched = now->esp_sample_switched;
	info->sleeps = dp_stats_counter(now->counters, now->n_counters, "sleeps");
	info->room_wakes = dp_stats_counter(now->counters, now->n_counters, "room_wakes");
	sa_rates(info, i);
	if (interval <= 0)
		return;
	cycles = delta(now->tsc, before->tsc);
	t0 = traffic_of(before);
	info->interval = interval;
	info->rx_packets_per_second = delta(t1.rx_packets, t0.rx_packets) / interval;
	info->rx_bits_per_second = 8 * delta(t1.rx_bytes, t0.rx_bytes) / interval;
	info->tx_packets_per_second = delta(t1.tx_packets, t0.tx_packets) / interval;
	info->tx_bits_per_second = 8 * delta(t1.tx_bytes, t0.tx_bytes) / interval;
	info->busy = ratio(delta(now->busy_cycles, before->busy_cycles), cycles);
	if (info->busy > 1)
		info->busy = 1;
	info->cycles_per_packet = ratio(delta(now->busy_cycles, before->busy_cycles),
					delta(now->busy_packets, before->busy_packets));
	info->encrypt_cycles_per_packet =
		ratio(delta(now->encrypt_cycles, before->encrypt_cycles),
		      delta(now->encrypt_packets, before->encrypt_packets));
	info->decrypt_cycles_per_packet =
		ratio(delta(now->decrypt_cycles, before->decrypt_cycles),
		      delta(now->decrypt_packets, before->decrypt_packets));
	info->encrypt_packets_per_second =
		delta(now->encrypt_packets, before->encrypt_packets) / interval;
	info->decrypt_packets_per_second =
		delta(now->decrypt_packets, before->decrypt_packets) / interval;
	wake_rates(info, now, before, interval);
}

void dataplane_show(Esgw__ShowReply *reply)
{
	reply->dataplane = alloc((size_t)ctld.nprocs * sizeof(*reply->dataplane));
	for (int i = 0; i < ctld.nprocs; i++) {
		const struct dp_proc *p = &ctld.procs[i];
		Esgw__DataplaneInfo *info = alloc(sizeof(*info));
		const Esgw__DpStats *now = last[i].resp ? last[i].resp->stats : NULL;
		const Esgw__DpStats *before = prev[i].resp ? prev[i].resp->stats : NULL;

		esgw__dataplane_info__init(info);
		info->name = (char *)p->name;
		info->role = (char *)p->role;
		info->worker = p->worker;
		info->pid = p->pid;
		info->state = (char *)dp_proc_state_name(p->state);
		/* A sample of an instance that has since gone says nothing of this one. */
		if (now != NULL && (p->pid <= 0 || now->pid == p->pid))
			fill_rates(info, i, now, before);
		reply->dataplane[reply->n_dataplane++] = info;
	}
}

void dataplane_show_free(void)
{
	arena_free(&arena);
}
