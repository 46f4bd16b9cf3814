/* SPDX-License-Identifier: BSD-3-Clause */
#include "slot_table.h"

#include <stdint.h>
#include <sys/mman.h>

static size_t table_bytes(size_t entries, size_t size)
{
	if (size != 0 && entries > SIZE_MAX / size)
		return 0;
	return entries * size != 0 ? entries * size : 1;
}

void *esgw_slot_table_alloc(size_t entries, size_t size)
{
	size_t len = table_bytes(entries, size);
	void *t;

	if (len == 0)
		return NULL;
	t = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	return t == MAP_FAILED ? NULL : t;
}

void esgw_slot_table_free(void *table, size_t entries, size_t size)
{
	if (table != NULL)
		munmap(table, table_bytes(entries, size));
}
