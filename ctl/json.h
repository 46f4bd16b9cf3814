/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal streaming JSON writer for esgwctl --json: objects, arrays, keys
 * and scalar values, with commas and string escaping handled here. */
#ifndef ESGW_JSON_H
#define ESGW_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *out;
	int depth;
	bool after_key;
	bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *out);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s); /* NULL or "" -> null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/* Shorthands for a key and its value. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_i64(struct json *j, const char *key, int64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
/* A rate or a share: three decimals; NaN and infinities print as 0. */
void json_kv_double(struct json *j, const char *key, double v);
/* End of the document: a newline. */
void json_finish(struct json *j);

#endif
