/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks of API values that both esgwctl (before sending) and esgw-ctld (before
 * changing state) apply, so a bad value gets the same message from either. */
#ifndef ESGW_CTL_VALIDATE_H
#define ESGW_CTL_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "esgw.pb-c.h"

#define ESGW_NAME_MAX 32
#define ESGW_GCM_KEY_LEN 16
#define ESGW_GCM_SALT_LEN 4
#define ESGW_CBC_KEY_LEN 16
#define ESGW_SHA1_KEY_LEN 20
#define ESGW_MIN_SPI 256 /* RFC 4303: SPIs 1..255 are reserved by IANA */
#define ESGW_MTU_MIN 576
#define ESGW_MTU_MAX 9000

/* Each returns 0, or -1 with a one-line message in err. what names the value
 * in the message ("interface name", "tunnel name"). */
int esgw_check_name(const char *name, const char *what, char *err, size_t errlen);
int esgw_check_address(const char *s, const char *what, char *err, size_t errlen);
int esgw_check_prefix(const char *s, const char *what, char *err, size_t errlen);
/* Algorithm, key, integrity key and salt lengths, SPI range, replay window. */
int esgw_check_sa(const Esgw__Sa *sa, char *err, size_t errlen);

/* A static neighbour: interface name, an IPv4 or IPv6 address, and (when
 * need_mac) a unicast MAC address other than 00:00:00:00:00:00. */
int esgw_check_neighbor(const Esgw__Neighbor *n, bool need_mac, char *err, size_t errlen);

/* policy_check.c: name, selector prefixes and port ranges, action and what
 * it needs (protect: tunnel and sa-out). */
int esgw_check_policy(const Esgw__Policy *p, char *err, size_t errlen);

/* "aes-gcm-128" <-> ALGORITHM_AES_GCM_128; NULL / UNSPECIFIED when unknown.
 * The table is common/esp_algorithms.h. */
const char *esgw_algorithm_name(Esgw__Algorithm alg);
Esgw__Algorithm esgw_algorithm_parse(const char *name);
/* "aes-gcm-128, aes-gcm-256, ...": every supported name, for messages. */
const char *esgw_algorithm_list(void);

/* The DPDK device name of devargs: the part before the first comma, in buf. */
char *esgw_devargs_device(const char *devargs, char *buf, size_t len);

#endif
