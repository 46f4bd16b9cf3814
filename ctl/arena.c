/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory freed all at once: the messages ctld builds for one push to a
 * dataplane process (dp_object.c) or for one show reply (show.c,
 * dataplane.c). */
#include "ctld.h"

#include <stdlib.h>

void *arena_alloc(struct arena *a, size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
	array_append(&a->mem, &a->n_mem, p);
	return p;
}

void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n_mem; i++)
		free(a->mem[i]);
	free(a->mem);
	a->mem = NULL;
	a->n_mem = 0;
}
