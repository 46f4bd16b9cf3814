/* SPDX-License-Identifier: BSD-3-Clause */
/* Listening UNIX sockets made safely (esgw-ctld's API socket, each dataplane
 * process's control socket) and the check of the directory they live in. */
#ifndef ESGW_LISTEN_H
#define ESGW_LISTEN_H

#include <stddef.h>
#include <sys/types.h>

/* dir may hold our sockets: 0 if it is a directory (not a symbolic link)
 * owned by root or our user and writable by nobody else, 1 if it does not
 * exist (the caller creates it), -1 with a message in err otherwise. */
int esgw_listen_dir_check(const char *dir, char *err, size_t errlen);
/* A stream socket listening on path with mode (e.g. 0600) from the moment it
 * exists; a stale socket file is replaced. type_flags: SOCK_NONBLOCK or 0
 * (SOCK_CLOEXEC always). Returns the fd, or -1 with a message in err. */
int esgw_listen_open(const char *path, mode_t mode, int backlog, int type_flags, char *err,
		     size_t errlen);

#endif
