/* SPDX-License-Identifier: BSD-3-Clause */
/* Names and help text of the drop reasons, and the reasons of the per-SA
 * counters, generated from drops.h. */
#include "drops.h"

static const char *const drop_names[ESGW_DROP_MAX] = {
#define ESGW_DROP_NAME(id, name, help) [ESGW_DROP_##id] = name,
	ESGW_FOREACH_DROP(ESGW_DROP_NAME)
#undef ESGW_DROP_NAME
};

static const char *const drop_helps[ESGW_DROP_MAX] = {
#define ESGW_DROP_HELP(id, name, help) [ESGW_DROP_##id] = help,
	ESGW_FOREACH_DROP(ESGW_DROP_HELP)
#undef ESGW_DROP_HELP
};

const char *esgw_drop_name(enum esgw_drop reason)
{
	return (unsigned)reason < ESGW_DROP_MAX ? drop_names[reason] : "unknown";
}

const char *esgw_drop_help(enum esgw_drop reason)
{
	return (unsigned)reason < ESGW_DROP_MAX ? drop_helps[reason] : "unknown";
}

static const enum esgw_drop sa_drop_reasons[ESGW_SA_DROP_MAX] = {
#define ESGW_SA_DROP_REASON(id) [ESGW_SA_DROP_##id] = ESGW_DROP_##id,
	ESGW_FOREACH_SA_DROP(ESGW_SA_DROP_REASON)
#undef ESGW_SA_DROP_REASON
};

enum esgw_drop esgw_sa_drop_reason(unsigned int i)
{
	return i < ESGW_SA_DROP_MAX ? sa_drop_reasons[i] : ESGW_DROP_MAX;
}
