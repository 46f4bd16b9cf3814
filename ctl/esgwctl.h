/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's parts: the command grammar (words -> Request) and the output of
 * replies (human tables or one JSON document). */
#ifndef ESGW_ESGWCTL_H
#define ESGW_ESGWCTL_H

#include <stdbool.h>

#include "esgw.pb-c.h"

/* Exit status of a usage error (bad command line). */
#define ESGWCTL_EXIT_USAGE 2

/* Print "esgwctl: <message>" on stderr and exit with status. */
void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
#define usage_error(...) die(ESGWCTL_EXIT_USAGE, __VA_ARGS__)

/* Build the Request for the command words; exits on a usage error. Returns
 * false for `help` (nothing to send). */
bool command_parse(int argc, char **argv, Esgw__Request *req);
void command_help(void);
/* Zero key material held by a Request built by command_parse. */
void command_wipe(Esgw__Request *req);

#define ESGWCTL_KEY_MAX 64 /* bytes of one key buffer: the longest key, HMAC-SHA-512's */

/* esgwctl_keys.c: a key word of `sa add` ("-": a line of standard input;
 * HEX: with a warning, then wiped from argv), and `key-file PATH`, refused
 * unless only its owner (the caller or root) can read it. Exit on errors. */
ProtobufCBinaryData esgwctl_key_word(char *word, const char *what);
void esgwctl_key_file(const char *path, ProtobufCBinaryData *crypto_key,
		      ProtobufCBinaryData *integ_key, ProtobufCBinaryData *salt);

void print_show(Esgw__ShowRequest__What what, const Esgw__ShowReply *reply, bool json);

/* esgwctl_policy.c: `policy add|del` (the words after "policy"), `show
 * policies`, and policies in `show config`. */
struct json;
void policy_cmd_parse(int argc, char **argv, Esgw__Request *req);
void print_policies(const Esgw__ShowReply *reply, struct json *j);
void print_policy_commands(const Esgw__Config *c);
void json_policies(struct json *j, Esgw__Policy *const *policies, size_t n);

/* esgwctl_neighbor.c: `neighbor add|del` (the words after "neighbor"), `show
 * neighbors`, and static neighbours in `show config`. */
void neighbor_cmd_parse(int argc, char **argv, Esgw__Request *req);
void print_neighbors(const Esgw__ShowReply *reply, struct json *j);
void print_neighbor_commands(const Esgw__Config *c);
void json_static_neighbors(struct json *j, const Esgw__Config *c);

/* esgwctl.c: connect to esgw-ctld's socket or die with a message. */
int connect_ctld(const char *path);
/* Send req (its keys wiped once sent) and read the answer; exits with a
 * message when there is none. */
Esgw__Response *esgwctl_exchange(const char *socket_path, Esgw__Request *req);

/* esgwctl_batch.c: `esgwctl -f FILE` (`-`: standard input), every line a
 * command, sent as one Batch; exits 1 (naming the line) if it is refused. */
void batch_command(const char *path, const char *socket_path, bool json);
/* While a file's line is parsed: "FILE line N", the prefix of die()'s
 * messages; NULL on the command line. */
extern const char *esgwctl_where;
/* Keys may stand in the file being read (esgwctl_key_word): standard input
 * or a file only its owner can read. */
extern bool esgwctl_batch_keys_private;

/* esgwctl_monitor.c: `show dataplane` output; `monitor` and `events`, which
 * run until Ctrl-C (exit 0). stream_command returns false for other commands. */
void print_dataplane(const Esgw__ShowReply *reply, bool json);
bool stream_command(int argc, char **argv, const char *socket_path, bool json);

#endif
