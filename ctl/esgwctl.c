/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl: the command line client of esgw-ctld. Global options may come
 * before the command or after it; the command becomes one Request, the
 * Response is printed as a table or as JSON. Exit 0 ok, 1 refused, 2 usage. */
#include "esgwctl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "framing.h"

#define DEFAULT_SOCKET "/run/esgw/ctl.sock"
#define REPLY_TIMEOUT_MS 60000 /* a show asks every dataplane process, ~2 s each at worst */

int connect_ctld(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		usage_error("socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die(1, "cannot connect to %s: %s (is esgw-ctld running?)", path, strerror(errno));
	return fd;
}

/* Global options anywhere: `esgwctl --json show sa` and `esgwctl show sa
 * --json`; -f FILE. The other words, in order, into words; their count. */
static int global_options(int argc, char **argv, char **words, const char **socket_path, bool *json,
			  const char **file)
{
	int nwords = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0) {
			*json = true;
		} else if (strcmp(argv[i], "--socket") == 0 || strcmp(argv[i], "-s") == 0) {
			if (++i >= argc)
				usage_error("--socket needs a path");
			*socket_path = argv[i];
		} else if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--file") == 0) {
			if (++i >= argc)
				usage_error("-f needs a file (- for standard input)");
			*file = argv[i];
		} else if (strncmp(argv[i], "--socket=", 9) == 0) {
			*socket_path = argv[i] + 9;
		} else {
			words[nwords++] = argv[i];
		}
	}
	if (*socket_path == NULL || (*socket_path)[0] == '\0')
		*socket_path = DEFAULT_SOCKET;
	return nwords;
}

Esgw__Response *esgwctl_exchange(const char *socket_path, Esgw__Request *req)
{
	int fd, sent, sent_errno;
	Esgw__Response *resp;
	uint8_t *buf;
	size_t len;

	fd = connect_ctld(socket_path);
	signal(SIGPIPE, SIG_IGN); /* a peer that closed is an error message, not a kill */
	sent = esgw_msg_write(fd, &req->base, 5000);
	sent_errno = errno;
	command_wipe(req);
	if (sent < 0) {
		/* ctld closes a peer it refuses at once, maybe before the request
		 * was sent: its answer, saying why, may be waiting all the same. */
		if ((sent_errno != EPIPE && sent_errno != ECONNRESET) ||
		    esgw_frame_read(fd, &buf, &len, 1000) < 0)
			die(1, "cannot send to %s: %s", socket_path, strerror(sent_errno));
	} else if (esgw_frame_read(fd, &buf, &len, REPLY_TIMEOUT_MS) < 0) {
		die(1, "no answer from esgw-ctld at %s: %s", socket_path,
		    errno == ECONNRESET ? "connection closed" : strerror(errno));
	}
	close(fd);
	resp = esgw__response__unpack(NULL, len, buf);
	free(buf);
	if (resp == NULL)
		die(1, "esgw-ctld sent a malformed response");
	return resp;
}

int main(int argc, char **argv)
{
	const char *socket_path = getenv("ESGW_SOCKET");
	char **words = calloc((size_t)argc + 1, sizeof(*words));
	const char *file = NULL;
	bool json = false;
	Esgw__Request req;
	Esgw__Response *resp;
	int nwords;

	if (words == NULL)
		die(1, "out of memory");
	nwords = global_options(argc, argv, words, &socket_path, &json, &file);
	if (file != NULL) {
		if (nwords > 0)
			usage_error("-f %s: unexpected '%s' (the commands are in the file)", file,
				    words[0]);
		batch_command(file, socket_path, json);
		return 0;
	}
	if (stream_command(nwords, words, socket_path, json))
		return 0;
	if (!command_parse(nwords, words, &req)) {
		command_help();
		return 0;
	}
	resp = esgwctl_exchange(socket_path, &req);
	if (resp->status != ESGW__STATUS__STATUS_OK)
		die(1, "%s", resp->error[0] ? resp->error : "request refused");
	if (req.body_case == ESGW__REQUEST__BODY_SHOW)
		print_show(req.show->what, resp->show, json);
	else if (json)
		printf("{\"status\":\"ok\"}\n");
	esgw__response__free_unpacked(resp, NULL);
	return 0;
}
