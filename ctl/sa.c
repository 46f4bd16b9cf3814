/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's SAs: `sa add` (placement on a worker, a runtime slot, the
 * values only ctld sets: instance, sequence-number floor, IV mask) and
 * `sa del`; and the wiping of their keys. */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "esp_algorithms.h"
#include "log.h"
#include "replay.h"
#include "validate.h"

#define OK ESGW__STATUS__STATUS_OK
#define INVALID ESGW__STATUS__STATUS_INVALID_ARGUMENT
#define NOT_FOUND ESGW__STATUS__STATUS_NOT_FOUND
#define EXISTS ESGW__STATUS__STATUS_ALREADY_EXISTS

/* A new SA's values, its id and SPI unused, its worker one that exists. */
static Esgw__Status check_new_sa(const Esgw__Sa *sa, char *err, size_t errlen)
{
	Esgw__Sa *other;

	if (esgw_check_sa(sa, err, errlen) < 0)
		return INVALID;
	if (state_sa(sa->id) != NULL) {
		snprintf(err, errlen, "SA %u already exists", sa->id);
		return EXISTS;
	}
	other = state_sa_by_spi(sa->spi);
	if (other != NULL) {
		snprintf(err, errlen, "SPI %u (0x%08x) is already used by SA %u", sa->spi, sa->spi,
			 other->id);
		return EXISTS;
	}
	if (sa->worker >= (int32_t)ctld.config->workers) {
		snprintf(err, errlen, "worker %d does not exist (workers 0..%u)", sa->worker,
			 ctld.config->workers - 1);
		return INVALID;
	}
	return OK;
}

/* AEAD key || salt (RFC 4106 8.1, RFC 7634 2 keying material): store them apart. */
static void split_salt(Esgw__Sa *sa)
{
	const struct esp_alg_info *info = esp_alg_lookup((unsigned int)sa->algorithm);

	if (info->salt_len == 0 || sa->salt.len != 0)
		return;
	sa->salt.data = malloc(info->salt_len);
	if (sa->salt.data == NULL)
		abort();
	memcpy(sa->salt.data, sa->crypto_key.data + info->key_len, info->salt_len);
	sa->salt.len = info->salt_len;
	explicit_bzero(sa->crypto_key.data + info->key_len, info->salt_len);
	sa->crypto_key.len = info->key_len;
}

/* What is stored of a checked new SA: its placement, the values only ctld
 * sets, and the defaults filled in. NULL (err set) if no IV mask could be
 * drawn. */
static Esgw__Sa *sa_copy(const Esgw__Sa *sa, int worker, int slot, char *err, size_t errlen)
{
	Esgw__Sa *copy = msg_clone(sa);

	split_salt(copy);
	copy->direction = ESGW__DIRECTION__DIRECTION_UNSPECIFIED; /* follows from the tunnels */
	copy->worker = worker;
	copy->slot = (uint32_t)slot;
	copy->instance = seq_floor_new_instance();
	/* ctld's to set, never the client's: the floor (seq_floor.c) and the
	 * AEAD IV mask, drawn once for the SA's whole life (esp_encap.c). */
	seq_floor_sa_added(copy);
	if (getrandom(&copy->iv_mask, sizeof(copy->iv_mask), 0) != sizeof(copy->iv_mask)) {
		sa_free(copy);
		snprintf(err, errlen, "getrandom failed: cannot draw the SA's IV mask");
		return NULL;
	}
	if (copy->replay_window == 0)
		copy->replay_window = REPLAY_WINDOW_DEFAULT;
	if (copy->udp_encap) { /* RFC 3948: 4500 both ways unless told otherwise */
		copy->udp_sport = copy->udp_sport ? copy->udp_sport : 4500;
		copy->udp_dport = copy->udp_dport ? copy->udp_dport : 4500;
	}
	return copy;
}

Esgw__Status sa_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	const Esgw__Sa *sa = req->sa_add;
	Esgw__Status status = check_new_sa(sa, err, errlen);
	Esgw__Sa *copy;
	int slot, worker;

	(void)resp;
	if (status != OK)
		return status;
	worker = sa->worker >= 0 ? sa->worker : state_least_loaded_worker_followed();
	slot = state_free_slot();
	if (slot < 0) {
		snprintf(err, errlen,
			 "all %u SA slots are in use: at most %u SAs (esgw-ctld --max-sas N raises "
			 "it, up to %u)",
			 ctld.opt.max_sas, ctld.opt.max_sas, ESGW_MAX_SAS_CAP);
		return INVALID;
	}
	copy = sa_copy(sa, worker, slot, err, errlen);
	if (copy == NULL)
		return ESGW__STATUS__STATUS_INTERNAL;
	config_add(CONFIG_SA, copy);
	ESGW_INFO("SA %u added: spi 0x%08x, %s, worker %d, slot %d", copy->id, copy->spi,
		  esgw_algorithm_name(copy->algorithm), worker, slot);
	return OK;
}

Esgw__Status sa_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	uint32_t id = req->sa_del->id;
	Esgw__Tunnel *t = state_tunnel_out(id);
	Esgw__Sa *sa;

	(void)resp;
	if (t == NULL)
		t = state_tunnel_in(id);
	if (t != NULL) {
		snprintf(err, errlen, "SA %u is used by tunnel %s: delete the tunnel first", id,
			 t->name);
		return INVALID;
	}
	sa = state_sa(id);
	if (sa == NULL) {
		snprintf(err, errlen, "SA %u does not exist", id);
		return NOT_FOUND;
	}
	config_remove_item(CONFIG_SA, sa);
	ESGW_INFO("SA %u deleted", id);
	return OK;
}

void sa_wipe_keys(Esgw__Sa *sa)
{
	if (sa->crypto_key.data)
		explicit_bzero(sa->crypto_key.data, sa->crypto_key.len);
	if (sa->integ_key.data)
		explicit_bzero(sa->integ_key.data, sa->integ_key.len);
	if (sa->salt.data)
		explicit_bzero(sa->salt.data, sa->salt.len);
}

Esgw__Sa *sa_replace(Esgw__Sa *sa, int32_t worker)
{
	Esgw__Sa *next = msg_clone(sa);

	next->worker = worker;               /* before it is added: the loads per worker follow */
	config_replace(CONFIG_SA, sa, next); /* sa freed, keys wiped, with the change */
	return next;
}

void sa_free(Esgw__Sa *sa)
{
	if (sa == NULL)
		return;
	sa_wipe_keys(sa);
	esgw__sa__free_unpacked(sa, NULL);
}
