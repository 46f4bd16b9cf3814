/* SPDX-License-Identifier: BSD-3-Clause */
/* Standalone mode: start esgw-rxtx, then (once its socket answers) the router
 * and the crypto workers; restart what exits with a backoff; restart everything
 * when rxtx exits or the set of ports changes; stop it all in order on exit. */
#include "ctld.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define BACKOFF_FIRST 0.5
#define BACKOFF_MAX 5.0
#define UP_RESETS_BACKOFF 10.0 /* seconds running after which a crash starts over at 0.5 s */
#define STOP_GRACE 5.0         /* SIGTERM, then SIGKILL after this */
#define START_TIMEOUT 60.0     /* no control socket after this: kill and retry */

static struct dp_proc *rxtx(void)
{
	return &ctld.procs[0];
}

static bool secondaries_alive(void)
{
	for (int i = 1; i < ctld.nprocs; i++)
		if (ctld.procs[i].pid > 0)
			return true;
	return false;
}

static void terminate(struct dp_proc *p, bool ours)
{
	if (p->pid <= 0)
		return;
	if (ours)
		p->stop_requested = true;
	if (p->term_sent_at == 0) {
		kill(p->pid, SIGTERM);
		p->term_sent_at = ev_now(ctld.loop);
	}
}

/* Stop every secondary now; rxtx follows once they are gone (tick). */
static void stop_dataplane(void)
{
	for (int i = 1; i < ctld.nprocs; i++)
		terminate(&ctld.procs[i], true);
	if (rxtx()->pid > 0)
		rxtx()->stop_requested = true;
}

static void on_child_exit(struct ev_loop *loop, ev_child *w, int revents);

/* argv for one process, exactly as the team brief lists it. */
static int build_argv(const struct dp_proc *p, char **argv, int max, char *bin, size_t binlen,
		      char *lcores, char *worker)
{
	int n = 0;

	snprintf(bin, binlen, "%s/esgw-%s", ctld.opt.bindir, p->role);
	argv[n++] = bin;
	argv[n++] = "--file-prefix";
	argv[n++] = (char *)ctld.opt.file_prefix;
	argv[n++] = "--proc-type";
	argv[n++] = p->worker < 0 && strcmp(p->role, "rxtx") == 0 ? "primary" : "secondary";
	argv[n++] = "--lcores";
	/* Lcore ids stay fixed (unique per mbuf pool); only the CPU is chosen. */
	if (strcmp(p->role, "rxtx") == 0)
		snprintf(lcores, 16, "1@%d", ctld.opt.rxtx_cpu);
	else if (strcmp(p->role, "router") == 0)
		snprintf(lcores, 16, "2@%d", ctld.opt.router_cpu);
	else
		snprintf(lcores, 16, "%d@%d", ESGW_WORKER_LCORE(p->worker),
			 ctld.opt.worker_cpus[p->worker % ctld.opt.n_worker_cpus]);
	argv[n++] = lcores;
	argv[n++] = "--no-pci";
	if (strcmp(p->role, "rxtx") == 0) {
		static char mem[16];

		snprintf(mem, sizeof(mem), "%u", esgw_rxtx_mem_mb(ctld.opt.max_sas));
		argv[n++] = "-m";
		argv[n++] = mem;
		for (size_t i = 0; i < ctld.config->n_interfaces && n < max - 8; i++) {
			argv[n++] = "--vdev";
			argv[n++] = ctld.config->interfaces[i]->devargs;
		}
	}
	argv[n++] = "--";
	argv[n++] = "--rundir";
	argv[n++] = (char *)ctld.opt.rundir;
	if (ctld.opt.busy_poll)
		argv[n++] = "--busy-poll";
	if (ctld.opt.slice_us >= 0) {
		static char slice[16];

		snprintf(slice, sizeof(slice), "%d", ctld.opt.slice_us);
		argv[n++] = "--slice-us";
		argv[n++] = slice;
	}
	if (strcmp(p->role, "rxtx") == 0) { /* the shared table's size, the rings */
		static char max_sas[16], max_workers[16];

		snprintf(max_sas, sizeof(max_sas), "%u", ctld.opt.max_sas);
		argv[n++] = "--max-sas";
		argv[n++] = max_sas;
		snprintf(max_workers, sizeof(max_workers), "%u", ctld.opt.max_workers);
		argv[n++] = "--max-workers";
		argv[n++] = max_workers;
	}
	if (p->worker >= 0) {
		snprintf(worker, 16, "%d", p->worker);
		argv[n++] = "--worker";
		argv[n++] = worker;
	}
	argv[n] = NULL;
	return n;
}

static void spawn(struct dp_proc *p)
{
	char *argv[64], bin[4096], lcores[16], worker[16], log_path[4096], sock[4096];
	pid_t pid;

	build_argv(p, argv, 64, bin, sizeof(bin), lcores, worker);
	snprintf(log_path, sizeof(log_path), "%s/%s.log", ctld.opt.log_dir, p->name);
	/* A socket left by a killed instance must not pass for the new one's. */
	snprintf(sock, sizeof(sock), "%s/%s.sock", ctld.opt.rundir, p->name);
	unlink(sock);
	dp_conn_close(p);
	pid = fork();
	if (pid < 0) {
		ESGW_ERR("cannot start %s: fork: %s", p->name, strerror(errno));
		p->state = PROC_BACKOFF;
		p->restart_at = ev_now(ctld.loop) + BACKOFF_MAX;
		return;
	}
	if (pid == 0) {
		sigset_t none;
		int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0640), null;

		/* If ctld dies (even by SIGKILL) its dataplane stops too, so a new ctld
		 * never meets an orphaned primary holding the same file prefix. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		setpgid(0, 0); /* a Ctrl-C on ctld's terminal is ctld's to handle */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, argv);
		fprintf(stderr, "esgw-ctld: cannot execute %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	p->pid = pid;
	if (p->ever_started)
		ctld_event_process_restart(p);
	p->ever_started = true;
	p->state = PROC_STARTING;
	p->started_at = ev_now(ctld.loop);
	p->running_since = 0;
	p->term_sent_at = 0;
	p->stop_requested = false;
	ev_child_init(&p->child_watcher, on_child_exit, pid, 0);
	p->child_watcher.data = p;
	ev_child_start(ctld.loop, &p->child_watcher);
	ESGW_INFO("started %s (pid %d, log %s)", p->name, (int)pid, log_path);
}

static void on_child_exit(struct ev_loop *loop, ev_child *w, int revents)
{
	struct dp_proc *p = w->data;
	double now = ev_now(loop), up = now - p->started_at;
	int status = w->rstatus;

	(void)revents;
	ev_child_stop(loop, w);
	ctld_event_process_exit(p, p->pid, status);
	if (WIFSIGNALED(status))
		ESGW_INFO("%s (pid %d) killed by signal %d after %.1f s", p->name, (int)p->pid,
			  WTERMSIG(status), up);
	else
		ESGW_INFO("%s (pid %d) exited with status %d after %.1f s", p->name, (int)p->pid,
			  WEXITSTATUS(status), up);
	p->pid = 0;
	p->term_sent_at = 0;
	dp_conn_close(p);
	if (p == rxtx())
		for (int i = 1; i < ctld.nprocs; i++)
			terminate(&ctld.procs[i], true); /* they cannot outlive their primary */
	if (ctld.shutting_down || p->stop_requested) {
		p->stop_requested = false;
		p->state = PROC_STOPPED;
		return;
	}
	p->restarts++; /* an exit nobody asked for: planned restarts do not count */
	p->backoff = supervise_next_backoff(p);
	p->running_since = 0;
	p->state = PROC_BACKOFF;
	p->restart_at = now + p->backoff;
	ESGW_WARN("restarting %s in %.1f s", p->name, p->backoff);
	ev_feed_event(loop, &ctld.tick, EV_TIMER);
}

double supervise_next_backoff(const struct dp_proc *p)
{
	double healthy = p->running_since > 0 ? ev_now(ctld.loop) - p->running_since : 0;

	/* Healthy means running (its control socket answered), not merely
	 * forked: a process that crashes while starting keeps backing off. */
	if (healthy >= UP_RESETS_BACKOFF || p->backoff == 0)
		return BACKOFF_FIRST;
	return p->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : p->backoff * 2;
}

/* STARTING -> RUNNING once its control socket answers; then it gets its config. */
static void check_started(struct dp_proc *p, double now)
{
	if (p->state != PROC_STARTING || p->pid <= 0 || p->stop_requested)
		return;
	if (dp_conn_open(p) == 0) {
		p->state = PROC_RUNNING;
		p->running_since = now;
		ESGW_INFO("%s is ready", p->name);
		dp_push(p);
		return;
	}
	if (now - p->started_at > START_TIMEOUT) {
		ESGW_WARN("%s has no control socket after %.0f s: stopping it", p->name,
			  START_TIMEOUT);
		terminate(p, false);
	}
}

/* Workers above the configured count (`workers set` scaled down, after
 * moving their SAs away): stop them, and drop their records once stopped. */
static void retire_workers(void)
{
	int keep = 2 + (int)ctld.config->workers;

	for (int i = keep; i < ctld.nprocs; i++) {
		struct dp_proc *p = &ctld.procs[i];

		if (p->pid > 0 && !p->stop_requested) {
			ESGW_INFO("stopping %s: %u crypto worker(s) configured", p->name,
				  ctld.config->workers);
			terminate(p, true);
		}
	}
	while (ctld.nprocs > keep && ctld.procs[ctld.nprocs - 1].pid <= 0) {
		dp_conn_close(&ctld.procs[ctld.nprocs - 1]);
		ctld.nprocs--;
	}
}

void supervise_tick(void)
{
	double now = ev_now(ctld.loop);
	bool want = ctld.config->n_interfaces > 0 && !ctld.shutting_down;
	struct dp_proc *r = rxtx();

	retire_workers();
	for (int i = 0; i < ctld.nprocs; i++) {
		struct dp_proc *p = &ctld.procs[i];

		if (p->pid > 0 && p->term_sent_at > 0 && now - p->term_sent_at > STOP_GRACE) {
			ESGW_WARN("%s (pid %d) ignored SIGTERM for %.0f s: killing it", p->name,
				  (int)p->pid, STOP_GRACE);
			kill(p->pid, SIGKILL);
		}
		if (p->state == PROC_BACKOFF && now >= p->restart_at)
			p->state = PROC_STOPPED;
	}
	if (!want) {
		if (r->pid > 0 && !r->stop_requested) {
			ESGW_INFO("no interface configured: stopping the dataplane");
			stop_dataplane();
		}
	}
	/* The primary goes last, once no secondary is attached to it. */
	if (r->pid > 0 && r->stop_requested && !secondaries_alive())
		terminate(r, true);
	if (!want)
		return;
	if (r->state == PROC_STOPPED && r->pid <= 0 && !secondaries_alive())
		spawn(r);
	check_started(r, now);
	if (r->state != PROC_RUNNING || r->stop_requested)
		return;
	for (int i = 1; i < ctld.nprocs; i++) {
		struct dp_proc *p = &ctld.procs[i];

		if (p->state == PROC_STOPPED && p->pid <= 0)
			spawn(p);
		check_started(p, now);
	}
}

bool supervise_busy(void)
{
	for (int i = 0; i < ctld.nprocs; i++) {
		const struct dp_proc *p = &ctld.procs[i];

		if (p->state == PROC_STARTING || p->state == PROC_BACKOFF || p->term_sent_at > 0 ||
		    p->stop_requested)
			return true;
	}
	return false;
}

void supervise_interfaces_changed(void)
{
	if (rxtx()->pid > 0) {
		ESGW_INFO("the set of interfaces changed: restarting the dataplane");
		stop_dataplane();
	}
}

/* Blocking: wait up to STOP_GRACE for the given processes, then SIGKILL. */
static void stop_and_wait(int first, int last)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	int waited_ms = 0;

	for (int i = first; i <= last; i++)
		if (ctld.procs[i].pid > 0)
			kill(ctld.procs[i].pid, SIGTERM);
	for (;;) {
		bool alive = false;

		for (int i = first; i <= last; i++) {
			struct dp_proc *p = &ctld.procs[i];

			if (p->pid <= 0)
				continue;
			if (waitpid(p->pid, NULL, WNOHANG) == p->pid ||
			    (kill(p->pid, 0) < 0 && errno == ESRCH)) {
				ESGW_INFO("%s (pid %d) stopped", p->name, (int)p->pid);
				p->pid = 0;
				p->state = PROC_STOPPED;
				continue;
			}
			alive = true;
			if (waited_ms >= STOP_GRACE * 1000) {
				ESGW_WARN("%s (pid %d) ignored SIGTERM: killing it", p->name,
					  (int)p->pid);
				kill(p->pid, SIGKILL);
			}
		}
		if (!alive)
			return;
		nanosleep(&pause, NULL);
		waited_ms += 50;
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void supervise_shutdown(void)
{
	char pattern[4096], path[4096];
	glob_t g;

	ctld.shutting_down = true;
	stop_and_wait(2, ctld.nprocs - 1); /* workers */
	stop_and_wait(1, 1);               /* router */
	stop_and_wait(0, 0);               /* rxtx, the primary, last */
	/* What a killed primary leaves behind would block the next start. */
	snprintf(pattern, sizeof(pattern), "/dev/hugepages/%smap_*", ctld.opt.file_prefix);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	snprintf(path, sizeof(path), "/var/run/dpdk/%s", ctld.opt.file_prefix);
	nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	for (int i = 0; i < ctld.nprocs; i++) {
		snprintf(path, sizeof(path), "%s/%s.sock", ctld.opt.rundir, ctld.procs[i].name);
		unlink(path);
	}
}
