/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging with a role prefix, one line per call. */
#include "log.h"

#include <stdarg.h>
#include <unistd.h>

static const char *log_role = "esgw";

void esgw_log_init(const char *role)
{
	log_role = role;
}

void esgw_log(int level, const char *fmt, ...)
{
	static const char *const level_names[8] = {"",        "", "",     "error",
						   "warning", "", "info", "debug"};
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s[%d]: %s: ", log_role, (int)getpid(),
		     level_names[level & 7]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}
