/* SPDX-License-Identifier: BSD-3-Clause */
/* Atomic persistence of the desired configuration, the snapshot: write
 * <file>.tmp, fsync, keep the previous good file as <file>.prev, rename, fsync
 * the directory; then a new journal (config_journal.c) for the changes after
 * it. A file that does not parse is kept aside as <file>.bad and never used. */
#include "ctld.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "framing.h"
#include "log.h"

void make_parent_dirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
}

/* Keys inside: only the owner reads it. */
static void restrict_mode(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0 &&
	    chmod(path, 0600) < 0)
		ESGW_WARN("cannot make %s mode 0600: %s", path, strerror(errno));
}

uint8_t *config_read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size > ESGW_FRAME_MAX) {
		if (errno == 0 || st.st_size > ESGW_FRAME_MAX)
			errno = EFBIG;
		close(fd);
		return NULL;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	while (buf != NULL && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return buf;
}

/* References and values a saved config must satisfy to be used. */
static int config_consistent(const Esgw__Config *c, char *why, size_t whylen)
{
	if (c->version != ESGW__API_VERSION__API_VERSION_CURRENT) {
		snprintf(why, whylen, "version %u, expected %u", c->version,
			 ESGW__API_VERSION__API_VERSION_CURRENT);
		return -1;
	}
	/* workers is the last field written and never 0: a file cut between two
	 * fields still parses, but lacks it. */
	if (c->workers == 0 || c->workers > ESGW_MAX_WORKERS) {
		snprintf(why, whylen, "truncated (workers missing or out of range)");
		return -1;
	}
	for (size_t i = 0; i < c->n_sas; i++) {
		/* A slot above --max-sas is the operator's choice, not damage:
		 * ctld_main.c refuses to start with it (config_restore). */
		if (c->sas[i]->slot >= ESGW_MAX_SAS_CAP) {
			snprintf(why, whylen, "SA %u has slot %u", c->sas[i]->id, c->sas[i]->slot);
			return -1;
		}
	}
	return 0;
}

/* Parse and check one file. NULL with a reason in why; else its length and
 * CRC-32 (the journal names the snapshot it follows by them). */
static Esgw__Config *config_parse_file(const char *path, char *why, size_t whylen,
				       size_t *file_len, uint32_t *crc)
{
	size_t len = 0;
	uint8_t *buf = config_read_file(path, &len);
	Esgw__Config *c;

	if (buf == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		return NULL;
	}
	c = esgw__config__unpack(NULL, len, buf);
	*file_len = len;
	*crc = config_crc32(buf, len);
	explicit_bzero(buf, len);
	free(buf);
	if (c == NULL) {
		snprintf(why, whylen, "not a valid configuration (truncated or corrupt)");
		return NULL;
	}
	if (config_consistent(c, why, whylen) < 0) {
		config_free(c);
		return NULL;
	}
	return c;
}

Esgw__Config *config_load(const char *path)
{
	char prev[PATH_MAX], bad[PATH_MAX], why[256], why_prev[256];
	Esgw__Config *c;
	size_t len;
	uint32_t crc;

	snprintf(prev, sizeof(prev), "%s.prev", path);
	snprintf(bad, sizeof(bad), "%s.bad", path);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		ESGW_INFO("no configuration at %s: starting empty", path);
		return config_new();
	}
	restrict_mode(path);
	restrict_mode(prev);
	c = config_parse_file(path, why, sizeof(why), &len, &crc);
	if (c != NULL) {
		ESGW_INFO("configuration loaded from %s", path);
		/* The changes since, then compacted: the next start reads one file. */
		if (config_journal_replay(c, path, len, crc) != 0 &&
		    config_save(c, path, why, sizeof(why)) < 0)
			ESGW_ERR("%s", why);
		return c;
	}
	if (rename(path, bad) < 0)
		ESGW_ERR("cannot move %s aside to %s: %s", path, bad, strerror(errno));
	restrict_mode(bad);
	/* The journal follows the unusable file, not .prev: not replayed (the
	 * save below starts a new one). */
	c = config_parse_file(prev, why_prev, sizeof(why_prev), &len, &crc);
	if (c != NULL) {
		ESGW_ERR(
			"configuration %s is unusable (%s): kept as %s, starting from the previous "
			"good copy %s",
			path, why, bad, prev);
		seq_floor_skip_ahead(c); /* the lost file may have saved higher floors */
	} else {
		ESGW_ERR("configuration %s is unusable (%s): kept as %s; previous copy %s unusable "
			 "too (%s): starting empty",
			 path, why, bad, prev, why_prev);
		c = config_new();
	}
	/* Put a good file back in place now, not at the next change. */
	if (config_save(c, path, why, sizeof(why)) < 0)
		ESGW_ERR("%s", why);
	return c;
}

int config_fsync_dir_of(const char *path)
{
	char buf[PATH_MAX];
	int fd, rc;

	snprintf(buf, sizeof(buf), "%s", path);
	fd = open(dirname(buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int config_save(const Esgw__Config *c, const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX], prev[PATH_MAX];
	size_t len = esgw__config__get_packed_size(c), done = 0;
	uint8_t *buf = malloc(len ? len : 1);
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(prev, sizeof(prev), "%s.prev", path);
	if (buf == NULL)
		goto fail;
	esgw__config__pack(c, buf);
	make_parent_dirs(path);
	/* 0600: the file holds keys. A new file of our own, never one someone
	 * put there or a symbolic link: a stale one (a crash mid-save) goes. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		done += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* A hard link keeps <file> in place the whole time: a crash leaves either
	 * the old or the new file, never none. */
	if (access(path, F_OK) == 0) {
		unlink(prev);
		if (link(path, prev) < 0)
			ESGW_WARN("cannot keep the previous configuration as %s: %s", prev,
				  strerror(errno));
		else
			restrict_mode(prev); /* a file from before may have had a wider mode */
	}
	if (rename(tmp, path) < 0 || config_fsync_dir_of(path) < 0)
		goto fail;
	/* The snapshot holds everything now: a new journal after it. Should
	 * that fail, the old one names the old snapshot and is ignored. */
	if (config_journal_start(path, buf, len) < 0)
		ESGW_WARN("cannot start a new configuration journal after %s: %s (changes save "
			  "the whole file until one starts)",
			  path, strerror(errno));
	explicit_bzero(buf, len);
	free(buf);
	return 0;
fail:
	snprintf(err, errlen, "cannot save the configuration to %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	if (buf != NULL) {
		explicit_bzero(buf, len);
		free(buf);
	}
	return -1;
}
