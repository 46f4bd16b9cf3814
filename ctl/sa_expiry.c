/* SPDX-License-Identifier: BSD-3-Clause */
/* Turns the expiry flags crypto workers report per SA (soft and hard
 * lifetimes, sequence numbers exhausted) into one event each, for an IKE
 * daemon to rekey on. Fed by the 1 s DpStats sampler (dataplane.c). */
#include "ctld.h"

#include <string.h>

struct reported {
	uint32_t id; /* the SA the bits below belong to; a new SA in the slot resets */
	bool soft, hard, seq_exhausted;
};

static struct reported *reported; /* by slot, ctld.opt.max_sas */

static void emit(Esgw__EventKind kind, const Esgw__DpSaStats *sa, int worker, const char *detail)
{
	Esgw__Event ev = ESGW__EVENT__INIT;

	ev.kind = kind;
	ev.sa = sa->id;
	ev.worker = worker;
	ev.from_worker = -1;
	ev.detail = (char *)detail;
	ctld_event_emit(&ev);
}

void sa_expiry_observe(const Esgw__DpStats *st, Esgw__Sa *const *sas)
{
	if (st == NULL || sas == NULL || strcmp(st->role, "crypto") != 0)
		return;
	for (size_t i = 0; i < st->n_sas; i++) {
		const Esgw__DpSaStats *sa = st->sas[i];
		struct reported *r;

		if (sa->slot >= ctld.opt.max_sas || sas[i] == NULL)
			continue;
		r = &CTLD_SLOTS(reported)[sa->slot];
		if (r->id != sa->id)
			*r = (struct reported){.id = sa->id};
		if (sa->soft_expired && !r->soft && !sa->hard_expired)
			emit(ESGW__EVENT_KIND__EVENT_KIND_SA_SOFT_EXPIRED, sa, st->worker,
			     "soft lifetime reached: rekey");
		if (sa->hard_expired && !r->hard)
			emit(ESGW__EVENT_KIND__EVENT_KIND_SA_HARD_EXPIRED, sa, st->worker,
			     "hard lifetime reached: the SA stopped");
		/* Not a lifetime, but the same for a peer: this SA can send no more. */
		if (sa->seq_exhausted && !r->seq_exhausted)
			emit(ESGW__EVENT_KIND__EVENT_KIND_SA_HARD_EXPIRED, sa, st->worker,
			     "seq_exhausted: sequence numbers used up without ESN");
		r->soft |= sa->soft_expired;
		r->hard |= sa->hard_expired;
		r->seq_exhausted |= sa->seq_exhausted;
	}
}
