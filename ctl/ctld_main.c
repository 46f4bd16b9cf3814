/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld: loading the saved configuration, and the libev loop that
 * serves the control socket, reconciles the dataplane every second and, with
 * --standalone, supervises the dataplane processes. */
#include "ctld.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "listen.h"
#include "log.h"

struct ctld ctld;

#define TICK_IDLE 1.0 /* reconcile period */
#define TICK_BUSY 0.1 /* while processes start, back off or stop */

/* --workers wins over the saved count; SAs on workers that no longer exist
 * move to the least loaded one. */
static void apply_worker_count(void)
{
	Esgw__Config *c = ctld.config;
	bool moved = false;
	char err[512];

	if (ctld.opt.workers > 0)
		c->workers = (uint32_t)ctld.opt.workers;
	if (c->workers > ctld.opt.max_workers) {
		ESGW_WARN("%u workers saved, --max-workers is %u: running %u", c->workers,
			  ctld.opt.max_workers, ctld.opt.max_workers);
		c->workers = ctld.opt.max_workers;
	}
	for (size_t i = 0; i < c->n_sas; i++) {
		if (c->sas[i]->worker < 0 || c->sas[i]->worker >= (int32_t)c->workers) {
			c->sas[i]->worker = -1;
			c->sas[i]->worker = state_least_loaded_worker();
			ESGW_WARN("SA %u moved to worker %d (%u workers now)", c->sas[i]->id,
				  c->sas[i]->worker, c->workers);
			moved = true;
		}
	}
	if (moved && config_save(c, ctld.opt.config_path, err, sizeof(err)) < 0)
		ESGW_ERR("%s", err);
}

void ctld_config_changed(bool interfaces_changed)
{
	ctld.generation++;
	if (ctld.opt.standalone && interfaces_changed)
		supervise_interfaces_changed();
	else if (interfaces_changed)
		units_interfaces_changed();
	dp_push_all();
	ev_feed_event(ctld.loop, &ctld.tick, EV_TIMER);
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	if (ctld.opt.standalone)
		supervise_tick();
	dp_push_all();
	w->repeat = ctld.opt.standalone && supervise_busy() ? TICK_BUSY : TICK_IDLE;
	ev_timer_again(loop, w);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	ESGW_INFO("signal %d: shutting down", w->signum);
	ev_break(loop, EVBREAK_ALL);
}

/* Exit 2 if the saved configuration uses an SA runtime slot at or above
 * --max-sas (started before with a larger one): the file is kept as it is. */
static void slots_fit(void)
{
	uint32_t need = 0, id = 0;

	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->slot >= need) {
			need = ctld.config->sas[i]->slot + 1;
			id = ctld.config->sas[i]->id;
		}
	if (need <= ctld.opt.max_sas)
		return;
	fprintf(stderr,
		"esgw-ctld: %s has SA %u in runtime slot %u: --max-sas %u is too small for it "
		"(start with --max-sas %u or more)\n",
		ctld.opt.config_path, id, need - 1, ctld.opt.max_sas, need);
	exit(2);
}

/* The saved configuration, with the worker count of the command line. */
static void config_restore(void)
{
	char err[256];

	ctld.config = config_load(ctld.opt.config_path);
	slots_fit();
	state_changed();
	/* A file from before the limits were checked at the API: say so, the
	 * router will refuse it until it is fixed with esgwctl. */
	if (config_check_limits(ctld.config, err, sizeof(err)) != ESGW__STATUS__STATUS_OK)
		ESGW_WARN("%s: %s: the dataplane cannot apply it; change it with esgwctl",
			  ctld.opt.config_path, err);
	apply_worker_count();
	ctld.generation = 1;
}

/* The run directory, where the dataplane sockets (keys go through them) are
 * created, and in standalone mode the log directory. 0, or -1 (logged). */
static int prepare_dirs(void)
{
	char dir[PATH_MAX], err[512];

	if (ctld.opt.standalone) {
		snprintf(dir, sizeof(dir), "%s/", ctld.opt.rundir);
		make_parent_dirs(dir);
		snprintf(dir, sizeof(dir), "%s/", ctld.opt.log_dir);
		make_parent_dirs(dir);
	}
	if (esgw_listen_dir_check(ctld.opt.rundir, err, sizeof(err)) < 0) {
		ESGW_ERR("run directory %s", err);
		return -1;
	}
	return 0;
}

static void shutdown_all(void)
{
	dataplane_sampler_stop();
	server_close();
	if (ctld.opt.standalone)
		supervise_shutdown();
	for (int i = 0; i < ctld.nprocs; i++)
		dp_conn_close(&ctld.procs[i]);
	config_free(ctld.config);
	ESGW_INFO("stopped");
}

int main(int argc, char **argv)
{
	ev_signal sigterm, sigint;

	esgw_log_init("esgw-ctld");
	ctld_options_parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	ctld.loop = EV_DEFAULT;
	config_restore();
	dp_procs_init((int)ctld.config->workers);
	if (prepare_dirs() < 0)
		return 1;
	/* Handlers before the socket: a client that sees the socket may stop us. */
	ev_signal_init(&sigterm, on_signal, SIGTERM);
	ev_signal_init(&sigint, on_signal, SIGINT);
	ev_signal_start(ctld.loop, &sigterm);
	ev_signal_start(ctld.loop, &sigint);
	if (server_open(ctld.opt.socket_path) < 0)
		return 1;
	ev_init(&ctld.tick, on_tick);
	ctld.tick.repeat = TICK_BUSY;
	ev_timer_again(ctld.loop, &ctld.tick);
	dataplane_sampler_start();
	units_start(); /* systemd mode only */
	ESGW_INFO("%s mode, %u crypto worker(s), %zu interface(s), %zu SA(s)",
		  ctld.opt.standalone ? "standalone" : "systemd", ctld.config->workers,
		  ctld.config->n_interfaces, ctld.config->n_sas);
	if (ctld.opt.standalone)
		ctld_options_log_placement();
	ev_run(ctld.loop, 0);
	shutdown_all();
	return 0;
}
