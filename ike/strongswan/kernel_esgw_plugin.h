/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel-esgw plugin: charon installs the IPsec SAs and policies it
 * negotiates into esgw (esgw-ctld's API) instead of the Linux kernel. */
#ifndef KERNEL_ESGW_PLUGIN_H_
#define KERNEL_ESGW_PLUGIN_H_

#include <plugins/plugin.h>

typedef struct kernel_esgw_plugin_t kernel_esgw_plugin_t;

struct kernel_esgw_plugin_t {
	plugin_t plugin;
};

#endif
