/* SPDX-License-Identifier: BSD-3-Clause */
/* Listening UNIX sockets made safely: in a directory only root or our own
 * user can change (checked when it already exists), and with their final
 * mode from the moment they exist, never reachable with a wider one. */
#include "listen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int esgw_listen_dir_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory%s", dir,
			 S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
		return -1;
	}
	/* Whoever can write the directory can replace our sockets with theirs. */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to uid %u, neither root nor us (uid %u): refused",
			 dir, (unsigned int)st.st_uid, (unsigned int)geteuid());
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "%s is writable by %s (mode %04o): refused (chmod go-w %s)", dir,
			 st.st_mode & S_IWOTH ? "every user" : "its group",
			 (unsigned int)(st.st_mode & 07777), dir);
		return -1;
	}
	return 0;
}

int esgw_listen_open(const char *path, mode_t mode, int backlog, int type_flags, char *err,
		     size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | type_flags, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* Linux creates the socket file with the socket's own mode (less the
	 * umask): set it first, so the file never exists with a wider mode;
	 * the chmod after bind only gives back what the umask took. */
	unlink(path);
	if (fchmod(fd, mode) < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(path, mode) < 0 || listen(fd, backlog) < 0) {
		snprintf(err, errlen, "socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
