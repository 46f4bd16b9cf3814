/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's key input for `sa add`. A key on the command line is seen by
 * every user of the machine (ps, /proc/PID/cmdline) and kept by shells, so
 * keys come in other ways: `crypto-key -` (and `integ-key -`, `salt -`) reads
 * one line of standard input each, in the order they appear; `key-file PATH`
 * reads "crypto-key HEX", "integ-key HEX" and "salt HEX" lines from a file
 * that only its owner, the caller or root, can read. A key given as an
 * argument still works, with a warning, and is wiped from the process's
 * argument memory at once. Key bytes are wiped from every buffer they pass. */
#include "esgwctl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "addr.h"

#define KEY_TEXT_MAX 256  /* a line: the hex of a key, a name, blanks */
#define KEY_FILE_MAX 4096 /* a key file is a few lines */

/* Hex text (surrounding blanks ignored) into a new ESGWCTL_KEY_MAX buffer. */
static ProtobufCBinaryData parse_key(char *text, const char *what, const char *where)
{
	ProtobufCBinaryData b = {0};
	size_t len = strlen(text);
	char *s = text;

	while (*s && isspace((unsigned char)*s))
		s++;
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	b.data = calloc(1, ESGWCTL_KEY_MAX);
	if (b.data == NULL)
		die(1, "out of memory");
	if (esgw_parse_hex(s, b.data, ESGWCTL_KEY_MAX, &b.len) < 0)
		usage_error("%s%s is not an even number of hex digits (at most %d bytes)", what, where,
			    ESGWCTL_KEY_MAX);
	return b;
}

/* One line of standard input, without its newline. Read a byte at a time, so
 * that the next line stays for the next key and nothing sits in stdio's
 * buffers; echo is off when it is a terminal. */
static void read_stdin_line(const char *what, char *line, size_t cap)
{
	struct termios saved, quiet;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	size_t n = 0;
	bool got = false;

	if (tty) {
		fprintf(stderr, "%s (hex, not echoed): ", what);
		quiet = saved;
		quiet.c_lflag &= (tcflag_t)~ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	for (;;) {
		char c;
		ssize_t r = read(STDIN_FILENO, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || c == '\n')
			break;
		got = true;
		if (n + 1 < cap)
			line[n++] = c;
	}
	line[n] = '\0';
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
		fputc('\n', stderr);
	}
	if (!got)
		usage_error("%s -: no line on standard input for it", what);
}

ProtobufCBinaryData esgwctl_key_word(char *word, const char *what)
{
	char line[KEY_TEXT_MAX];
	ProtobufCBinaryData b;

	if (esgwctl_where != NULL) { /* a line of esgwctl -f: nobody sees it in ps */
		if (strcmp(word, "-") == 0)
			usage_error("%s -: not in a file: write the key itself, or key-file PATH",
				    what);
		if (!esgwctl_batch_keys_private)
			usage_error("a %s in a file other users can read: refused (chmod 600 it)",
				    what);
		return parse_key(word, what, ""); /* the line is wiped once sent */
	}
	if (strcmp(word, "-") == 0) {
		read_stdin_line(what, line, sizeof(line));
		b = parse_key(line, what, " from standard input");
		explicit_bzero(line, sizeof(line));
		return b;
	}
	fprintf(stderr,
		"esgwctl: warning: a %s on the command line is visible to every user (ps, "
		"/proc/PID/cmdline) and may stay in shell history: give '%s -' and the key on "
		"standard input, or use key-file PATH\n",
		what, what);
	b = parse_key(word, what, "");
	explicit_bzero(word, strlen(word)); /* gone from /proc/PID/cmdline from here on */
	return b;
}

/* The file, only if nobody but its owner (the caller or root) can read or
 * change it; opened without following a symbolic link. */
static int open_key_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		usage_error("key-file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		usage_error("key-file %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		usage_error("key-file %s: not a regular file", path);
	if (st.st_mode & 077)
		usage_error("key-file %s: mode %04o lets other users at the keys: refused (chmod "
			    "600 %s)",
			    path, (unsigned int)(st.st_mode & 07777), path);
	if (st.st_uid != getuid() && st.st_uid != 0)
		usage_error("key-file %s: owned by uid %u, neither you (uid %u) nor root: refused",
			    path, (unsigned int)st.st_uid, (unsigned int)getuid());
	if (st.st_size > KEY_FILE_MAX)
		usage_error("key-file %s: larger than %d bytes: not a key file", path,
			    KEY_FILE_MAX);
	return fd;
}

void esgwctl_key_file(const char *path, ProtobufCBinaryData *crypto_key,
		      ProtobufCBinaryData *integ_key, ProtobufCBinaryData *salt)
{
	char text[KEY_FILE_MAX + 1], *save = NULL;
	int fd = open_key_file(path), lineno = 0;
	size_t len = 0;

	for (;;) {
		ssize_t r = read(fd, text + len, KEY_FILE_MAX - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			usage_error("key-file %s: %s", path, strerror(errno));
		if (r == 0 || (len += (size_t)r) == KEY_FILE_MAX)
			break;
	}
	close(fd);
	text[len] = '\0';
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ProtobufCBinaryData *dst = NULL;
		char *name = line, *value;

		lineno++;
		while (*name && isspace((unsigned char)*name))
			name++;
		if (*name == '\0' || *name == '#')
			continue;
		value = name + strcspn(name, " \t");
		if (*value != '\0')
			*value++ = '\0';
		if (strcmp(name, "crypto-key") == 0)
			dst = crypto_key;
		else if (strcmp(name, "integ-key") == 0)
			dst = integ_key;
		else if (strcmp(name, "salt") == 0)
			dst = salt;
		/* Never the line itself in a message: it may be a key. */
		if (dst == NULL)
			usage_error("key-file %s line %d: expected crypto-key HEX, integ-key HEX or "
				    "salt HEX",
				    path, lineno);
		if (dst->data != NULL)
			usage_error("key-file %s line %d: %s given twice", path, lineno, name);
		*dst = parse_key(value, name, " in the key file");
	}
	explicit_bzero(text, sizeof(text));
}
