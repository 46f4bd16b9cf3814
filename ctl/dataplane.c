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

void dataplane_sample(void)
{
	for (int i = 0; i < CTLD_MAX_PROCS; i++) {
		Esgw__DpResponse *r;

		/* A late timer fires again at once (libev catches up): samples
		 * that close together would make rates out of noise. */
		if (i < ctld.nprocs && last[i].resp != NULL &&
		    ev_time() - last[i].at < SAMPLE_PERIOD / 2)
			continue;
		r = i < ctld.nprocs ? dp_stats(&ctld.procs[i]) : NULL;

		if (r == NULL) {
			sample_clear(&prev[i]);
			sample_clear(&last[i]);
			continue;
		}
		sample_clear(&prev[i]);
		prev[i] = last[i];
		/* The time of this very answer: the requests before it may have
		 * taken a while, so the loop's cached ev_now() would be stale. */
		last[i] = (struct sample){r, ev_time()};
		observe_sas(&ctld.procs[i], r->stats);
		sa_usage_observe(r->stats);
		acquire_observe(r->stats);
		if (prev[i].resp != NULL && !same_instance(r->stats, prev[i].resp->stats))
			sample_clear(&prev[i]); /* restarted: its counters started over */
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
	}
}

static void *alloc(size_t size)
{
	return arena_alloc(&arena, size);
}

/* Counter differences; a counter that went backwards (reset) gives 0. */
static double delta(uint64_t now, uint64_t before)
{
	return now >= before ? (double)(now - before) : 0.0;
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

static void sa_rates(Esgw__DataplaneInfo *info, const Esgw__DpStats *now,
		     const Esgw__DpStats *before, double interval)
{
	info->sas = alloc(now->n_sas * sizeof(*info->sas));
	for (size_t k = 0; k < now->n_sas; k++) {
		const Esgw__DpSaStats *sa = now->sas[k];
		/* k: where it was if no SA came or went; an SA new since is not
		 * looked for by a scan, which would make a bulk load quadratic. */
		const Esgw__DpSaStats *old = dp_stats_find_sa(before, sa->id, sa->slot, k);
		Esgw__SaRate *r = alloc(sizeof(*r));
		Esgw__Tunnel *t = state_tunnel_out(sa->id);

		esgw__sa_rate__init(r);
		if (t == NULL)
			t = state_tunnel_in(sa->id);
		r->id = sa->id;
		r->tunnel = t ? t->name : "";
		r->packets = sa->packets;
		r->bytes = sa->bytes;
		if (old != NULL && interval > 0) {
			r->packets_per_second = delta(sa->packets, old->packets) / interval;
			r->bits_per_second = 8 * delta(sa->bytes, old->bytes) / interval;
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

static void fill_rates(Esgw__DataplaneInfo *info, const Esgw__DpStats *now,
		       const Esgw__DpStats *before)
{
	struct traffic t1 = traffic_of(now), t0;
	double cycles, interval;

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
	if (before == NULL || now->tsc_hz == 0) {
		sa_rates(info, now, NULL, 0);
		return;
	}
	/* The processes' own clock: ctld's timer may run late under load. */
	cycles = delta(now->tsc, before->tsc);
	interval = cycles / (double)now->tsc_hz;
	if (interval <= 0) {
		sa_rates(info, now, NULL, 0);
		return;
	}
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
	sa_rates(info, now, before, interval);
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
			fill_rates(info, now, before);
		reply->dataplane[reply->n_dataplane++] = info;
	}
}

void dataplane_show_free(void)
{
	arena_free(&arena);
}
