/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plugin entry point: refuses a charon of another strongSwan version than
 * the source it was built against (a plugin reads charon's structures
 * directly, so their layout must match), then registers kernel-esgw as
 * charon's IPsec backend. kernel-netlink stays loaded for addresses and
 * routes; loaded after this plugin, its IPsec part finds the place taken. */
#include "kernel_esgw_plugin.h"

#include <stdio.h>
#include <string.h>

#include <daemon.h>

#include "kernel_esgw_ipsec.h"

#define DPKG_STATUS "/var/lib/dpkg/status"
#define CHARON_PACKAGE "libstrongswan"

typedef struct {
	kernel_esgw_plugin_t public;
} private_kernel_esgw_plugin_t;

/* The upstream version ("5.9.8" of "5.9.8-5+deb12u6") of the installed
 * libstrongswan, from dpkg's database; FALSE if dpkg does not know it. */
static bool installed_version(char *buf, size_t len)
{
	/* A setting so that the refusal can be tested without another charon. */
	const char *status = lib->settings->get_str(
		lib->settings, "%s.plugins.kernel-esgw.dpkg_status", DPKG_STATUS, lib->ns);
	FILE *f = fopen(status, "r");
	char line[512];
	bool in_package = FALSE, found = FALSE;

	if (f == NULL)
		return FALSE;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Package: ", 9) == 0)
			in_package = strcmp(line + 9, CHARON_PACKAGE "\n") == 0;
		else if (in_package && strncmp(line, "Version: ", 9) == 0) {
			char *v = line + 9, *colon = strchr(v, ':');

			if (colon)
				v = colon + 1; /* an epoch */
			v[strcspn(v, "-~+\n")] = '\0';
			snprintf(buf, len, "%.63s", v);
			found = TRUE;
		}
	}
	fclose(f);
	return found;
}

METHOD(plugin_t, get_name, char *, private_kernel_esgw_plugin_t *this)
{
	return "kernel-esgw";
}

METHOD(plugin_t, get_features, int, private_kernel_esgw_plugin_t *this,
       plugin_feature_t *features[])
{
	static plugin_feature_t f[] = {
		PLUGIN_CALLBACK(kernel_ipsec_register, kernel_esgw_ipsec_create),
		PLUGIN_PROVIDE(CUSTOM, "kernel-ipsec"),
	};
	*features = f;
	return countof(f);
}

METHOD(plugin_t, destroy, void, private_kernel_esgw_plugin_t *this)
{
	free(this);
}

plugin_t *kernel_esgw_plugin_create(void)
{
	private_kernel_esgw_plugin_t *this;
	char running[64];

	if (installed_version(running, sizeof(running)) && strcmp(running, VERSION) != 0) {
		DBG1(DBG_KNL,
		     "kernel-esgw: built for strongSwan %s but this charon is strongSwan %s: "
		     "not loading (rebuild it: deploy/setup-host.sh --ike)",
		     VERSION, running);
		return NULL;
	}
	INIT(this,
		.public = {
			.plugin = {
				.get_name = _get_name,
				.get_features = _get_features,
				.destroy = _destroy,
			},
		},
	);
	return &this->public.plugin;
}
