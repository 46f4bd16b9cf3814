/* SPDX-License-Identifier: BSD-3-Clause */
/* Tables by SA runtime slot, --max-sas entries each, in anonymous memory of
 * their own: zeroed, and costing memory only for the pages written, so a
 * large --max-sas costs address space, not resident memory (malloc would
 * take a large block freed earlier from its heap and clear all of it). */
#ifndef ESGW_SLOT_TABLE_H
#define ESGW_SLOT_TABLE_H

#include <stddef.h>

/* entries * size bytes of zeros; NULL if out of memory. */
void *esgw_slot_table_alloc(size_t entries, size_t size);
/* A table of esgw_slot_table_alloc, with the same entries and size; NULL is none. */
void esgw_slot_table_free(void *table, size_t entries, size_t size);

#endif
