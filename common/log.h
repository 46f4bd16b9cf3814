/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging to stderr (journald or the supervisor's log file) with the process
 * role as prefix. Never log key material; per-packet events only through
 * ESGW_LOG_RATELIMITED. */
#ifndef ESGW_LOG_H
#define ESGW_LOG_H

#include <stdio.h>
#include <time.h>

void esgw_log_init(const char *role);
void esgw_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { ESGW_LOG_ERR = 3, ESGW_LOG_WARN = 4, ESGW_LOG_INFO = 6, ESGW_LOG_DEBUG = 7 };

#define ESGW_ERR(...) esgw_log(ESGW_LOG_ERR, __VA_ARGS__)
#define ESGW_WARN(...) esgw_log(ESGW_LOG_WARN, __VA_ARGS__)
#define ESGW_INFO(...) esgw_log(ESGW_LOG_INFO, __VA_ARGS__)

/* At most one line per second from one call site. */
#define ESGW_LOG_RATELIMITED(level, ...)                                                           \
	do {                                                                                       \
		static time_t last_;                                                               \
		time_t now_ = time(NULL);                                                          \
		if (now_ != last_) {                                                               \
			last_ = now_;                                                              \
			esgw_log(level, __VA_ARGS__);                                              \
		}                                                                                  \
	} while (0)

#endif
