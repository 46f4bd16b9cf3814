/* SPDX-License-Identifier: BSD-3-Clause */
#include "slot_table.h"

#include <stdint.h>
#include <sys/mman.h>

/* Under AddressSanitizer (the fuzz targets) the tables are leak-check roots:
 * what they point to is reachable, as it was from a static array. */
#if defined(__SANITIZE_ADDRESS__)
#define SLOT_TABLE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLOT_TABLE_LSAN 1
#endif
#endif
#ifdef SLOT_TABLE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

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
	if (t == MAP_FAILED)
		return NULL;
#ifdef SLOT_TABLE_LSAN
	__lsan_register_root_region(t, len);
#endif
	return t;
}

void esgw_slot_table_free(void *table, size_t entries, size_t size)
{
	if (table == NULL)
		return;
#ifdef SLOT_TABLE_LSAN
	__lsan_unregister_root_region(table, table_bytes(entries, size));
#endif
	munmap(table, table_bytes(entries, size));
}
