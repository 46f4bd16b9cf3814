/* SPDX-License-Identifier: BSD-3-Clause */
/* The drop reasons' tables (drops.h): every reason named, and the per-SA
 * subset mapping both ways, each SA counter to one reason and back. */
#include <string.h>

#include "check.h"
#include "drops.h"

int main(void)
{
	unsigned int mapped = 0;

	for (int d = 0; d < ESGW_DROP_MAX; d++) {
		unsigned int i = esgw_sa_drop_index((enum esgw_drop)d);

		CHECK(esgw_drop_name(d) != NULL && esgw_drop_name(d)[0] != '\0', "reason %d named",
		      d);
		CHECK(esgw_drop_help(d) != NULL && esgw_drop_help(d)[0] != '\0',
		      "reason %d has help", d);
		for (int e = 0; e < d; e++)
			CHECK(strcmp(esgw_drop_name(d), esgw_drop_name(e)) != 0, "%s named twice",
			      esgw_drop_name(d));
		if (i == ESGW_SA_DROP_MAX)
			continue;
		mapped++;
		CHECK(i < ESGW_SA_DROP_MAX && esgw_sa_drop_reason(i) == (enum esgw_drop)d,
		      "%s: SA counter %u maps back to %d", esgw_drop_name(d), i,
		      (int)esgw_sa_drop_reason(i));
	}
	CHECK(mapped == ESGW_SA_DROP_MAX, "%u reasons have an SA counter, %d SA counters", mapped,
	      ESGW_SA_DROP_MAX);
	for (unsigned int i = 0; i < ESGW_SA_DROP_MAX; i++)
		CHECK(esgw_sa_drop_index(esgw_sa_drop_reason(i)) == i, "SA counter %u round trip",
		      i);
	/* Reasons of the router and rxtx alone: no SA counter. */
	CHECK(esgw_sa_drop_index(ESGW_DROP_NO_ROUTE) == ESGW_SA_DROP_MAX, "no_route per SA");
	CHECK(esgw_sa_drop_index(ESGW_DROP_MARTIAN_SOURCE) == ESGW_SA_DROP_MAX,
	      "martian_source per SA");
	CHECK(esgw_sa_drop_reason(ESGW_SA_DROP_MAX) == ESGW_DROP_MAX, "past the end");
	return check_report("test_drops");
}
