/* SPDX-License-Identifier: BSD-3-Clause */
/* `esgwctl -f FILE` (`-` for standard input): one command per line, the
 * command line's grammar, sent as one Batch that esgw-ctld applies all or
 * none with one durable write. Blank lines and lines starting with '#' are
 * skipped. Keys may be written in the file (it is not a command line that
 * every user sees), as long as only its owner can read it; `-` for a key
 * is refused there, since the lines themselves may come from standard input. */
#include "esgwctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BATCH_WORDS_MAX 64 /* words of one line: the longest sa add has ~30 */

/* The parsed file: every line's text stays (the requests point into it)
 * until the batch has been sent, then it is wiped: it may hold keys. */
struct batch {
	const char *path;
	char **lines;
	size_t *len; /* of each line's text */
	int *lineno; /* of each request */
	Esgw__Request **requests;
	size_t n, cap;
};

const char *esgwctl_where;
bool esgwctl_batch_keys_private;

static void *batch_grow(void *p, size_t size)
{
	p = realloc(p, size);
	if (p == NULL)
		die(1, "out of memory");
	return p;
}

/* Whether keys may stand in the file: standard input (nobody else sees a
 * pipe), or a regular file only its owner (the caller or root) can read. */
static bool file_private(FILE *f)
{
	struct stat st;

	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		return true; /* a pipe or a terminal */
	return (st.st_mode & 077) == 0 && (st.st_uid == getuid() || st.st_uid == 0);
}

/* The words of line (changed in place: a NUL after each); their count. */
static int split_words(char *line, char **words)
{
	int n = 0;

	for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == BATCH_WORDS_MAX)
			usage_error("more than %d words on one line", BATCH_WORDS_MAX);
		words[n++] = tok;
	}
	return n;
}

/* Only changes go in a batch: what esgw-ctld applies as one. */
static void check_change(const Esgw__Request *req, const char *first)
{
	switch (req->body_case) {
	case ESGW__REQUEST__BODY_SHOW:
	case ESGW__REQUEST__BODY_SA_MOVE:
	case ESGW__REQUEST__BODY_WORKERS_SET:
		usage_error("'%s ...' is not a configuration change: not in a file (give it on "
			    "the command line)",
			    first);
	default:
		break;
	}
}

static void batch_add_line(struct batch *b, char *text, int lineno)
{
	char *words[BATCH_WORDS_MAX], where[512];
	size_t len = strlen(text);
	Esgw__Request *req;
	int n;

	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->lines = batch_grow(b->lines, b->cap * sizeof(*b->lines));
		b->len = batch_grow(b->len, b->cap * sizeof(*b->len));
		b->lineno = batch_grow(b->lineno, b->cap * sizeof(*b->lineno));
		b->requests = batch_grow(b->requests, b->cap * sizeof(*b->requests));
	}
	snprintf(where, sizeof(where), "%s line %d", b->path, lineno);
	esgwctl_where = where;
	n = split_words(text, words);
	if (n == 0 || words[0][0] == '#')
		goto skip;
	if (strcmp(words[0], "help") == 0 || strcmp(words[0], "monitor") == 0 ||
	    strcmp(words[0], "events") == 0)
		usage_error("'%s' is not a configuration change", words[0]);
	req = batch_grow(NULL, sizeof(*req));
	command_parse(n, words, req);
	check_change(req, words[0]);
	b->lines[b->n] = text;
	b->len[b->n] = len;
	b->lineno[b->n] = lineno;
	b->requests[b->n++] = req;
	esgwctl_where = NULL;
	return;
skip:
	esgwctl_where = NULL;
	explicit_bzero(text, len);
	free(text);
}

static void batch_read(struct batch *b, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0;

	esgwctl_batch_keys_private = file_private(f);
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *text = strdup(line);

		if (text == NULL)
			die(1, "out of memory");
		explicit_bzero(line, (size_t)len);
		batch_add_line(b, text, ++lineno);
	}
	if (ferror(f))
		die(1, "%s: %s", b->path, strerror(errno));
	free(line);
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		/* The key buffers were wiped when the batch was sent; the text of
		 * a line may still hold a key's hex. */
		explicit_bzero(b->lines[i], b->len[i]);
		free(b->lines[i]);
		free(b->requests[i]);
	}
	free(b->lines);
	free(b->len);
	free(b->lineno);
	free(b->requests);
}

void batch_command(const char *path, const char *socket_path, bool json)
{
	struct batch b = {.path = strcmp(path, "-") == 0 ? "standard input" : path};
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__Batch batch = ESGW__BATCH__INIT;
	Esgw__Response *resp;

	if (f == NULL)
		usage_error("%s: %s", path, strerror(errno));
	batch_read(&b, f);
	if (f != stdin)
		fclose(f);
	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__REQUEST__BODY_BATCH;
	req.batch = &batch;
	batch.requests = b.requests;
	batch.n_requests = b.n;
	resp = esgwctl_exchange(socket_path, &req);
	if (resp->status != ESGW__STATUS__STATUS_OK) {
		uint32_t k = resp->batch_failed;

		if (k >= 1 && k <= b.n)
			die(1, "%s line %d: %s (nothing applied)", b.path, b.lineno[k - 1],
			    resp->error);
		die(1, "%s: %s (nothing applied)", b.path,
		    resp->error[0] ? resp->error : "refused");
	}
	if (json)
		printf("{\"status\":\"ok\",\"requests\":%zu}\n", b.n);
	esgw__response__free_unpacked(resp, NULL);
	batch_free(&b);
}
