/* SPDX-License-Identifier: BSD-3-Clause */
/* The configuration journal: the changes made since the snapshot
 * (config_store.c), appended to <file>.journal and fsync'ed before the
 * response, so that a change's durable write is proportional to the change.
 *
 * Format: records of a 4-byte big-endian payload length, the payload's CRC-32
 * (IEEE, as zlib's crc32), 4 bytes big-endian, and the payload. The first
 * record names the snapshot the journal follows (its length and CRC-32, 8 and
 * 4 bytes big-endian): a journal left beside a newer snapshot (a crash
 * between the two renames of a compaction) is stale and ignored. Every other
 * record is one change, an esgw.Batch of the requests that redo it with the
 * objects as stored (sa_add with its slot, worker and floor; route_del with
 * the prefix; ...): on load each add replaces the object of its key or is
 * appended, each delete removes it if it is there (the last object moved into
 * its place, as config_remove does, so that a replay restores the order that
 * live changes left), so a record applied twice
 * leaves what it left once. The journal is compacted into the snapshot (a
 * whole save, which starts a new journal) when it grows past a quarter of
 * the snapshot, and at start. */
#include "ctld.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define RECORD_HEADER 8
#define SNAPSHOT_ID 12
#define COMPACT_SLACK (64u << 10)

static size_t journal_bytes = SIZE_MAX; /* of the journal now; SIZE_MAX: none to append to */
static size_t snapshot_bytes;           /* of the snapshot it follows */

uint32_t config_crc32(const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = 0xffffffffu;

	if (table[1] == 0)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void journal_path(char *buf, size_t len, const char *config_path, const char *suffix)
{
	snprintf(buf, len, "%s.journal%s", config_path, suffix);
}

/* A record of payload into a new buffer of *len bytes. */
static uint8_t *record_frame(const uint8_t *payload, size_t n, size_t *len)
{
	uint8_t *r = malloc(RECORD_HEADER + n);

	if (r == NULL)
		return NULL;
	put32(r, (uint32_t)n);
	put32(r + 4, config_crc32(payload, n));
	memcpy(r + RECORD_HEADER, payload, n);
	*len = RECORD_HEADER + n;
	return r;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int config_journal_start(const char *config_path, const uint8_t *snapshot, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	uint8_t id[SNAPSHOT_ID], *rec;
	size_t rec_len = 0;
	int fd, rc = -1;

	journal_path(path, sizeof(path), config_path, "");
	journal_path(tmp, sizeof(tmp), config_path, ".tmp");
	put32(id, (uint32_t)((uint64_t)len >> 32));
	put32(id + 4, (uint32_t)len);
	put32(id + 8, config_crc32(snapshot, len));
	rec = record_frame(id, sizeof(id), &rec_len);
	if (rec == NULL)
		return -1;
	/* As the snapshot's: a new file of our own, never through a link. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && write_all(fd, rec, rec_len) == 0 && fsync(fd) == 0) {
		close(fd);
		fd = -1;
		if (rename(tmp, path) == 0 && config_fsync_dir_of(path) == 0)
			rc = 0;
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(rec);
	journal_bytes = rc == 0 ? rec_len : SIZE_MAX; /* none: the next change saves whole */
	snapshot_bytes = len;
	return rc;
}

/* The change in change.c's log as a Batch, packed into a new buffer. */
static uint8_t *change_pack(size_t *len)
{
	struct arena a = {0};
	Esgw__Batch batch = ESGW__BATCH__INIT;
	size_t n = change_count();
	uint8_t *buf;

	batch.requests = arena_alloc(&a, (n + 1) * sizeof(*batch.requests));
	for (size_t i = 0; i < n; i++) {
		Esgw__Request *r = arena_alloc(&a, sizeof(*r));
		struct change_item e = change_entry(i);

		esgw__request__init(r);
		r->version = ESGW__API_VERSION__API_VERSION_CURRENT;
		if (e.kind == CONFIG_SA && e.added) {
			r->body_case = ESGW__REQUEST__BODY_SA_ADD;
			r->sa_add = e.item;
		} else if (e.kind == CONFIG_SA) {
			r->body_case = ESGW__REQUEST__BODY_SA_DEL;
			r->sa_del = arena_alloc(&a, sizeof(*r->sa_del));
			esgw__id_ref__init(r->sa_del);
			r->sa_del->id = ((Esgw__Sa *)e.item)->id;
		} else if (e.kind == CONFIG_ROUTE) {
			r->body_case = e.added ? ESGW__REQUEST__BODY_ROUTE_ADD
					       : ESGW__REQUEST__BODY_ROUTE_DEL;
			*(e.added ? &r->route_add : &r->route_del) = e.item;
		} else if (e.kind == CONFIG_TUNNEL && e.added) {
			r->body_case = ESGW__REQUEST__BODY_TUNNEL_ADD;
			r->tunnel_add = e.item;
		} else if (e.kind == CONFIG_TUNNEL) {
			r->body_case = ESGW__REQUEST__BODY_TUNNEL_DEL;
			r->tunnel_del = arena_alloc(&a, sizeof(*r->tunnel_del));
			esgw__name_ref__init(r->tunnel_del);
			r->tunnel_del->name = ((Esgw__Tunnel *)e.item)->name;
		} else {
			r->body_case = e.added ? ESGW__REQUEST__BODY_NEIGHBOR_ADD
					       : ESGW__REQUEST__BODY_NEIGHBOR_DEL;
			*(e.added ? &r->neighbor_add : &r->neighbor_del) = e.item;
		}
		batch.requests[batch.n_requests++] = r;
	}
	*len = esgw__batch__get_packed_size(&batch);
	buf = malloc(*len ? *len : 1);
	if (buf != NULL)
		esgw__batch__pack(&batch, buf);
	arena_free(&a);
	return buf;
}

int config_journal_append(const Esgw__Config *c, const char *config_path, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t len = 0, rec_len = 0;
	uint8_t *payload, *rec = NULL;
	int fd = -1;
	off_t end = -1;

	payload = change_pack(&len);
	if (payload != NULL)
		rec = record_frame(payload, len, &rec_len);
	if (payload != NULL) {
		explicit_bzero(payload, len); /* keys */
		free(payload);
	}
	if (rec == NULL) {
		snprintf(err, errlen, "out of memory saving the configuration");
		return -1;
	}
	/* Past the bound (or no journal to append to): compact, which holds this
	 * change too. Amortised, each change costs its record and a share of
	 * one snapshot per quarter snapshot of records. */
	if (journal_bytes == SIZE_MAX ||
	    journal_bytes + rec_len > snapshot_bytes / 4 + COMPACT_SLACK) {
		explicit_bzero(rec, rec_len);
		free(rec);
		return config_save(c, config_path, err, errlen);
	}
	journal_path(path, sizeof(path), config_path, "");
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		end = lseek(fd, 0, SEEK_END);
	if (fd < 0 || end < 0 || write_all(fd, rec, rec_len) < 0 || fdatasync(fd) < 0) {
		snprintf(err, errlen, "cannot save the configuration to %s: %s", path,
			 strerror(errno));
		/* A torn record would hide every later one: cut it off. */
		if (end >= 0 && ftruncate(fd, end) == 0)
			fdatasync(fd);
		if (fd >= 0)
			close(fd);
		explicit_bzero(rec, rec_len);
		free(rec);
		return -1;
	}
	close(fd);
	explicit_bzero(rec, rec_len);
	free(rec);
	journal_bytes = (size_t)end + rec_len;
	return 0;
}

/* Where in array (of n) the object matching key sits, or -1. */
typedef bool key_match(const void *item, const void *key);

static bool sa_match(const void *item, const void *key)
{
	return ((const Esgw__Sa *)item)->id == *(const uint32_t *)key;
}

static bool route_match(const void *item, const void *key)
{
	return strcmp(((const Esgw__Route *)item)->prefix, key) == 0;
}

static bool tunnel_match(const void *item, const void *key)
{
	return strcmp(((const Esgw__Tunnel *)item)->name, key) == 0;
}

static bool neighbor_match(const void *item, const void *key)
{
	const Esgw__Neighbor *a = item, *b = key;

	return strcmp(a->interface, b->interface) == 0 && strcmp(a->address, b->address) == 0;
}

static bool journaled(const Esgw__Request *r)
{
	switch (r->body_case) {
	case ESGW__REQUEST__BODY_SA_ADD:
		return r->sa_add != NULL;
	case ESGW__REQUEST__BODY_SA_DEL:
		return r->sa_del != NULL;
	case ESGW__REQUEST__BODY_ROUTE_ADD:
		return r->route_add != NULL;
	case ESGW__REQUEST__BODY_ROUTE_DEL:
		return r->route_del != NULL;
	case ESGW__REQUEST__BODY_TUNNEL_ADD:
		return r->tunnel_add != NULL;
	case ESGW__REQUEST__BODY_TUNNEL_DEL:
		return r->tunnel_del != NULL;
	case ESGW__REQUEST__BODY_NEIGHBOR_ADD:
		return r->neighbor_add != NULL;
	case ESGW__REQUEST__BODY_NEIGHBOR_DEL:
		return r->neighbor_del != NULL;
	default:
		return false;
	}
}

/* Replay one request of a record on c: an add replaces or appends (it takes
 * the object out of the record), a delete removes if there. */
static int replay_one(Esgw__Config *c, Esgw__Request *r)
{
	void ***arr;
	size_t *n;
	key_match *match;
	const void *key;
	void *add = NULL;
	void (*free_item)(void *);

	switch (r->body_case) {
	case ESGW__REQUEST__BODY_SA_ADD:
	case ESGW__REQUEST__BODY_SA_DEL:
		arr = (void ***)&c->sas, n = &c->n_sas, match = sa_match;
		if (r->body_case == ESGW__REQUEST__BODY_SA_ADD)
			add = r->sa_add, r->sa_add = NULL, key = &((Esgw__Sa *)add)->id;
		else
			key = &r->sa_del->id;
		free_item = (void (*)(void *))sa_free;
		break;
	case ESGW__REQUEST__BODY_ROUTE_ADD:
	case ESGW__REQUEST__BODY_ROUTE_DEL:
		arr = (void ***)&c->routes, n = &c->n_routes, match = route_match;
		if (r->body_case == ESGW__REQUEST__BODY_ROUTE_ADD)
			add = r->route_add, r->route_add = NULL, key = ((Esgw__Route *)add)->prefix;
		else
			key = r->route_del->prefix;
		free_item = NULL;
		break;
	case ESGW__REQUEST__BODY_TUNNEL_ADD:
	case ESGW__REQUEST__BODY_TUNNEL_DEL:
		arr = (void ***)&c->tunnels, n = &c->n_tunnels, match = tunnel_match;
		if (r->body_case == ESGW__REQUEST__BODY_TUNNEL_ADD)
			add = r->tunnel_add, r->tunnel_add = NULL,
			key = ((Esgw__Tunnel *)add)->name;
		else
			key = r->tunnel_del->name;
		free_item = NULL;
		break;
	case ESGW__REQUEST__BODY_NEIGHBOR_ADD:
	case ESGW__REQUEST__BODY_NEIGHBOR_DEL:
		arr = (void ***)&c->neighbors, n = &c->n_neighbors, match = neighbor_match;
		if (r->body_case == ESGW__REQUEST__BODY_NEIGHBOR_ADD)
			add = r->neighbor_add, r->neighbor_add = NULL, key = add;
		else
			key = r->neighbor_del;
		free_item = NULL;
		break;
	default:
		return -1;
	}
	/* From the end: a replayed change mostly touches what was added last. */
	for (size_t i = *n; i-- > 0;) {
		if (!match((*arr)[i], key))
			continue;
		if (free_item != NULL)
			free_item((*arr)[i]);
		else
			protobuf_c_message_free_unpacked((*arr)[i], NULL);
		if (add != NULL) {
			(*arr)[i] = add;
			return 0;
		}
		(*arr)[i] = (*arr)[*n - 1]; /* as config_remove: the last takes its place */
		(*n)--;
		return 0;
	}
	if (add != NULL)
		array_append(arr, n, add);
	return 0;
}

int config_journal_replay(Esgw__Config *c, const char *config_path, size_t snapshot_len,
			  uint32_t snapshot_crc)
{
	char path[PATH_MAX], bad[PATH_MAX];
	size_t len = 0, off = 0;
	long records = 0;
	uint8_t *buf;
	const char *why = NULL;

	journal_path(path, sizeof(path), config_path, "");
	journal_path(bad, sizeof(bad), config_path, ".bad");
	buf = config_read_file(path, &len);
	if (buf == NULL) {
		if (errno != ENOENT)
			ESGW_ERR("configuration journal %s unreadable (%s): the snapshot %s alone "
				 "is used",
				 path, strerror(errno), config_path);
		return 0;
	}
	while (off < len) {
		uint32_t n, crc;
		Esgw__Batch *b;

		if (len - off < RECORD_HEADER) {
			why = "torn (a record header cut short)";
			break;
		}
		n = get32(buf + off);
		crc = get32(buf + off + 4);
		if (n > len - off - RECORD_HEADER) {
			why = "torn (a record cut short)";
			break;
		}
		if (config_crc32(buf + off + RECORD_HEADER, n) != crc) {
			why = "corrupt (CRC mismatch)";
			break;
		}
		if (off == 0) {
			const uint8_t *id = buf + RECORD_HEADER;

			if (n != SNAPSHOT_ID ||
			    ((uint64_t)get32(id) << 32 | get32(id + 4)) != snapshot_len ||
			    get32(id + 8) != snapshot_crc) {
				ESGW_INFO(
					"configuration journal %s follows another snapshot than %s "
					"(saved since): ignored",
					path, config_path);
				records = -1;
				break;
			}
			off += RECORD_HEADER + n;
			continue;
		}
		b = esgw__batch__unpack(NULL, n, buf + off + RECORD_HEADER);
		if (b == NULL) {
			why = "corrupt (not a change record)";
			break;
		}
		for (size_t i = 0; i < b->n_requests; i++)
			if (!journaled(b->requests[i]))
				why = "corrupt (a request that is not a journaled change)";
		for (size_t i = 0; i < b->n_requests && why == NULL; i++)
			replay_one(c, b->requests[i]);
		esgw__batch__free_unpacked(b, NULL);
		if (why != NULL)
			break;
		off += RECORD_HEADER + n;
		records++;
	}
	if (why != NULL) {
		ESGW_ERR(
			"configuration journal %s: record at offset %zu is %s: refused with "
			"everything after it; the state of the last good record (%ld changes after "
			"the snapshot) restored, the journal kept as %s",
			path, off, why, records, bad);
		if (rename(path, bad) < 0)
			ESGW_ERR("cannot move %s aside to %s: %s", path, bad, strerror(errno));
	} else if (records > 0) {
		ESGW_INFO("configuration journal %s: %ld changes after the snapshot replayed", path,
			  records);
	}
	if (why == NULL && records >= 0) {
		/* Appended to as it is: nothing to compact. */
		journal_bytes = len;
		snapshot_bytes = snapshot_len;
	}
	explicit_bzero(buf, len);
	free(buf);
	return why != NULL ? -1 : (int)records;
}
