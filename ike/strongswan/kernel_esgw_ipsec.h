/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strongSwan's kernel_ipsec_t over esgw-ctld's API: the SAs charon negotiates
 * become esgw SAs (owner "ike"), each CHILD_SA's reqid an esgw tunnel, and
 * the outbound policies esgw protect, bypass or discard policies. */
#ifndef KERNEL_ESGW_IPSEC_H_
#define KERNEL_ESGW_IPSEC_H_

#include <kernel/kernel_ipsec.h>

typedef struct kernel_esgw_ipsec_t kernel_esgw_ipsec_t;

struct kernel_esgw_ipsec_t {
	kernel_ipsec_t interface;
};

/* The constructor charon's kernel interface calls (kernel_ipsec_register). */
kernel_esgw_ipsec_t *kernel_esgw_ipsec_create(void);

#endif
