/* SPDX-License-Identifier: BSD-3-Clause */
/* systemd mode (esgw-ctld without --standalone): the dataplane processes are
 * the units in deploy/systemd/, so instead of forking, ctld writes the port
 * list esgw-rxtx.service reads (<rundir>/rxtx.env, ESGW_VDEVS) and asks
 * systemd over D-Bus (libsystemd's sd-bus) to restart esgw-rxtx.service when
 * the interfaces change and to start or stop esgw-crypto@N.service when the
 * number of workers changes. The router and the workers are PartOf= and
 * BindsTo= esgw-rxtx.service: a restart of rxtx asked for (RestartUnit,
 * systemctl restart) restarts them too, and when rxtx dies systemd stops
 * them; but rxtx's automatic restart (Restart=always) does not start them
 * again, so ctld does once the new rxtx answers (units_rxtx_restarted).
 *
 * tests/integration/test_systemd_boot.py runs all of it under systemd as PID 1
 * in a systemd-nspawn container. */
#include "ctld.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef ESGW_HAVE_LIBSYSTEMD
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#endif

#include "log.h"

#define RXTX_UNIT "esgw-rxtx.service"
#define ROUTER_UNIT "esgw-router.service"
#define CRYPTO_UNIT_FMT "esgw-crypto@%u.service"

#ifdef ESGW_HAVE_LIBSYSTEMD
/* Manager.<method>(unit, "replace"): StartUnit, StopUnit, RestartUnit. */
static int unit_call(const char *method, const char *unit)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		ESGW_ERR("%s %s: cannot reach systemd on the system bus: %s", method, unit,
			 strerror(-r));
		return -1;
	}
	r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", method, &error, &reply, "ss",
			       unit, "replace");
	if (r < 0)
		ESGW_ERR("%s %s: %s", method, unit, error.message ? error.message : strerror(-r));
	else
		ESGW_INFO("systemd: %s %s", method, unit);
	sd_bus_error_free(&error);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? -1 : 0;
}
#else
static int unit_call(const char *method, const char *unit)
{
	ESGW_WARN("built without libsystemd: %s %s yourself (systemctl)", method, unit);
	return -1;
}
#endif

/* <rundir>/rxtx.env: ESGW_VDEVS="--vdev D1 --vdev D2" and ESGW_RXTX_ARGS=
 * "--max-sas N --max-workers M" (esgw-ctld's: the shared table, the rings),
 * ESGW_RXTX_MEM=MiB (EAL -m: hugepage memory for that table). Devargs
 * never hold spaces or quotes (interface.c refuses them), so systemd's word
 * splitting of $ESGW_VDEVS gives rxtx exactly these arguments. Returns 1 if
 * the file changed, 0 if it already said this, -1 on error. */
static int rxtx_env_write(void)
{
	char path[4096], tmp[4200], old[8192] = "", text[8192];
	size_t n = (size_t)snprintf(text, sizeof(text), "ESGW_VDEVS=\"");
	FILE *f;

	for (size_t i = 0; i < ctld.config->n_interfaces && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s--vdev %s", i ? " " : "",
				      ctld.config->interfaces[i]->devargs);
	if (n + 128 >= sizeof(text)) {
		ESGW_ERR("rxtx.env: too many interfaces");
		return -1;
	}
	snprintf(text + n, sizeof(text) - n,
		 "\"\nESGW_RXTX_ARGS=\"--max-sas %u --max-workers %u\"\nESGW_RXTX_MEM=%u\n",
		 ctld.opt.max_sas, ctld.opt.max_workers, esgw_rxtx_mem_mb(ctld.opt.max_sas));
	snprintf(path, sizeof(path), "%s/rxtx.env", ctld.opt.rundir);
	f = fopen(path, "r");
	if (f != NULL) {
		size_t len = fread(old, 1, sizeof(old) - 1, f);

		old[len] = '\0';
		fclose(f);
		if (strcmp(old, text) == 0)
			return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
		ESGW_ERR("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 1;
}

/* Start worker w's unit, its lcore id first in <rundir>/crypto-N.env
 * (ESGW_CRYPTO_LCORE): the unit's own default, "1%i", holds for 0..9 only. */
static void worker_start(uint32_t w)
{
	char path[4096], unit[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/crypto-%u.env", ctld.opt.rundir, w);
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "ESGW_CRYPTO_LCORE=%u\n", ESGW_WORKER_LCORE(w)) < 0 ||
	    fclose(f) != 0)
		ESGW_ERR("cannot write %s: %s", path, strerror(errno));
	snprintf(unit, sizeof(unit), CRYPTO_UNIT_FMT, w);
	unit_call("StartUnit", unit);
}

/* The secondaries of the configuration: the router and workers 0..N-1
 * (starting an active unit does nothing). */
static void secondaries_start(void)
{
	unit_call("StartUnit", ROUTER_UNIT);
	for (uint32_t w = 0; w < ctld.config->workers; w++)
		worker_start(w);
}

void units_start(void)
{
	if (ctld.opt.standalone)
		return;
	if (rxtx_env_write() > 0)
		unit_call("RestartUnit", RXTX_UNIT);
	secondaries_start();
#ifdef ESGW_HAVE_LIBSYSTEMD
	/* esgw-ctld.service is Type=notify: rxtx (ordered after it) starts once
	 * the API is up and rxtx.env names the ports. */
	sd_notify(0, "READY=1");
#endif
}

void units_interfaces_changed(void)
{
	if (ctld.opt.standalone)
		return;
	if (rxtx_env_write() >= 0)
		unit_call("RestartUnit", RXTX_UNIT);
}

void units_workers_changed(uint32_t from_workers, uint32_t workers)
{
	char unit[64];

	if (ctld.opt.standalone)
		return;
	for (uint32_t w = workers; w < from_workers; w++) {
		snprintf(unit, sizeof(unit), CRYPTO_UNIT_FMT, w);
		unit_call("StopUnit", unit);
	}
	/* show stats and the pushes forget them (in standalone mode the
	 * supervisor does that once it reaped them). */
	dp_procs_shrink((int)workers);
	for (uint32_t w = from_workers; w < workers; w++)
		worker_start(w);
}

void units_rxtx_restarted(void)
{
	if (ctld.opt.standalone)
		return;
	ESGW_INFO("a new esgw-rxtx answers: starting the router and %u worker(s) again",
		  ctld.config->workers);
	secondaries_start();
}
