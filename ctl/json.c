/* SPDX-License-Identifier: BSD-3-Clause */
/* Streaming JSON writer used by esgwctl. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *j, FILE *out)
{
	*j = (struct json){.out = out};
}

/* Separator before a value or key at the current depth. */
static void before_item(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	j->need_comma[j->depth] = true;
}

static void open_container(struct json *j, char c)
{
	before_item(j);
	fputc(c, j->out);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_container(struct json *j, char c)
{
	fputc(c, j->out);
	if (j->depth > 0)
		j->depth--;
}

void json_object_begin(struct json *j)
{
	open_container(j, '{');
}

void json_object_end(struct json *j)
{
	close_container(j, '}');
}

void json_array_begin(struct json *j)
{
	open_container(j, '[');
}

void json_array_end(struct json *j)
{
	close_container(j, ']');
}

static void write_escaped(struct json *j, const char *s)
{
	fputc('"', j->out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(j->out, "\\u%04x", *p);
		else
			fputc(*p, j->out);
	}
	fputc('"', j->out);
}

void json_key(struct json *j, const char *key)
{
	before_item(j);
	write_escaped(j, key);
	fputc(':', j->out);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	before_item(j);
	if (s == NULL || s[0] == '\0')
		fputs("null", j->out);
	else
		write_escaped(j, s);
}

void json_u64(struct json *j, uint64_t v)
{
	before_item(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	before_item(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	before_item(j);
	fputs(v ? "true" : "false", j->out);
}

void json_kv_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void json_kv_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	before_item(j);
	fprintf(j->out, "%.3f", isfinite(v) ? v : 0.0);
}

void json_finish(struct json *j)
{
	fputc('\n', j->out);
}
