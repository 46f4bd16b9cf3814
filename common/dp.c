/* SPDX-License-Identifier: BSD-3-Clause */
/* Dataplane process framework: EAL start, attach, control socket, idle sleep. */
#include "dp.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>

#ifdef ESGW_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "addr.h"
#include "listen.h"
#include "log.h"

volatile int esgw_dp_quit;

static void on_signal(int sig)
{
	(void)sig;
	esgw_dp_quit = 1;
}

int esgw_dp_eal_init(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	int n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		ESGW_ERR("DPDK EAL init failed: %s", rte_strerror(rte_errno));
		exit(1);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return n;
}

static void usage(const struct esgw_dp *dp, int want_worker, FILE *out)
{
	fprintf(out,
		"usage: esgw-%s EAL-ARGS... -- %s[--rundir DIR] [--busy-poll]\n"
		"  --rundir DIR  where the control socket is created (default %s)\n"
		"  --busy-poll   never sleep when idle: poll at full speed (uses a whole CPU;\n"
		"                for comparison with the adaptive default)\n",
		dp->role, want_worker ? "--worker N " : "", ESGW_RUNDIR_DEFAULT);
	if (want_worker)
		fprintf(out, "  --worker N    worker id, 0..%d: serves ring esgw.crypto.N\n",
			ESGW_MAX_WORKERS - 1);
}

int esgw_dp_parse_args(struct esgw_dp *dp, int argc, char **argv, int want_worker)
{
	static const struct option options[] = {
		{"rundir", required_argument, NULL, 'r'},
		{"worker", required_argument, NULL, 'w'},
		{"busy-poll", no_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint32_t worker;
	int opt;

	dp->worker = -1;
	optind = 1; /* the EAL used getopt before us */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if ((size_t)snprintf(dp->rundir, sizeof(dp->rundir), "%s", optarg) >=
			    sizeof(dp->rundir)) {
				ESGW_ERR("--rundir too long: %s", optarg);
				return -1;
			}
			break;
		case 'w':
			if (!want_worker ||
			    esgw_parse_u32(optarg, ESGW_MAX_WORKERS - 1, &worker) < 0) {
				ESGW_ERR("--worker must be a number from 0 to %d, not '%s'",
					 ESGW_MAX_WORKERS - 1, optarg);
				return -1;
			}
			dp->worker = (int)worker;
			break;
		case 'b':
			dp->busy_poll = true;
			break;
		case 'h':
			usage(dp, want_worker, stdout);
			exit(0);
		default:
			usage(dp, want_worker, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		ESGW_ERR("unexpected argument: %s", argv[optind]);
		return -1;
	}
	if (want_worker && dp->worker < 0) {
		ESGW_ERR("--worker N is required");
		return -1;
	}
	return 0;
}

int esgw_dp_attach(struct esgw_dp *dp, int timeout_ms)
{
	const struct rte_memzone *mz = NULL;
	int waited = 0;

	for (;;) {
		mz = rte_memzone_lookup(ESGW_SHARED_NAME);
		dp->pool = rte_mempool_lookup(ESGW_POOL_NAME);
		if (mz != NULL && dp->pool != NULL)
			break;
		if (waited >= timeout_ms || esgw_dp_quit) {
			ESGW_ERR("shared objects %s/%s not found: is esgw-rxtx running with the "
				 "same --file-prefix?",
				 ESGW_SHARED_NAME, ESGW_POOL_NAME);
			return -1;
		}
		usleep(10000);
		waited += 10;
	}
	dp->shared = mz->addr;
	if (dp->shared->magic != ESGW_SHARED_MAGIC) {
		ESGW_ERR("shared table has a bad magic number: version mismatch with esgw-rxtx?");
		return -1;
	}
	return 0;
}

/* Waits (blocking, off the data path) for the control socket to become
 * readable, then hands it to the data thread and waits until served. This
 * lets an idle data thread sleep long yet answer esgw-ctld at once. */
static void *ctl_watch(void *arg)
{
	struct esgw_dp *dp = arg;

	while (!esgw_dp_quit) {
		struct pollfd pfd[2] = {{.fd = dp->listen_fd, .events = POLLIN},
					{.fd = dp->conn_fd, .events = POLLIN}};
		int n = poll(pfd, dp->conn_fd >= 0 ? 2 : 1, 200);
		struct timespec until;
		struct esgw_doorbell *db;

		if (n <= 0)
			continue;
		pthread_mutex_lock(&dp->ctl_lock);
		dp->ctl_pending = 1;
		db = dp->db;
		if (db != NULL)
			esgw_doorbell_ring(db);
		while (dp->ctl_pending && !esgw_dp_quit) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 200 * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&dp->ctl_served, &dp->ctl_lock, &until);
		}
		pthread_mutex_unlock(&dp->ctl_lock);
	}
	return NULL;
}

static int ctl_thread_start(struct esgw_dp *dp)
{
	sigset_t all, old;
	int rc;

	pthread_mutex_init(&dp->ctl_lock, NULL);
	pthread_cond_init(&dp->ctl_served, NULL);
	/* Signals go to the data thread, which checks esgw_dp_quit. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&dp->ctl_thread, NULL, ctl_watch, dp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ESGW_ERR("control thread: %s", strerror(rc));
		return -1;
	}
	pthread_setname_np(dp->ctl_thread, "esgw-ctl");
	dp->ctl_thread_running = true;
	return 0;
}

int esgw_dp_ctl_open(struct esgw_dp *dp, const char *name)
{
	char err[512] = "";
	int fd, rc;

	dp->conn_fd = -1;
	if (dp->rundir[0] == '\0')
		snprintf(dp->rundir, sizeof(dp->rundir), "%s", ESGW_RUNDIR_DEFAULT);
	rc = esgw_listen_dir_check(dp->rundir, err, sizeof(err));
	if (rc == 1 && mkdir(dp->rundir, 0750) == 0)
		rc = esgw_listen_dir_check(dp->rundir, err, sizeof(err));
	if (rc != 0) {
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s: %s", dp->rundir, strerror(errno));
		ESGW_ERR("run directory %s", err);
		return -1;
	}
	snprintf(dp->sock_path, sizeof(dp->sock_path), "%s/%s.sock", dp->rundir, name);
	/* 0600: ctld pushes keys through it (and checks who listens). */
	fd = esgw_listen_open(dp->sock_path, 0600, 4, SOCK_NONBLOCK, err, sizeof(err));
	if (fd < 0) {
		ESGW_ERR("control %s", err);
		return -1;
	}
	dp->listen_fd = fd;
	if (ctl_thread_start(dp) < 0) {
		close(fd);
		unlink(dp->sock_path);
		dp->listen_fd = -1;
		return -1;
	}
	/* The main loop starts right after: loop cycles count from here. */
	esgw_stage_start(&dp->cycles);
#ifdef ESGW_HAVE_LIBSYSTEMD
	/* The units are Type=notify: esgw-rxtx.service is active only from here
	 * on, so the secondaries ordered after it find the primary's memory
	 * (without it they start with the primary's exec and fail in EAL init).
	 * Outside systemd NOTIFY_SOCKET is unset and this does nothing. */
	sd_notify(0, "READY=1");
#endif
	return 0;
}

void esgw_dp_ctl_close(struct esgw_dp *dp)
{
	if (dp->ctl_thread_running) {
		esgw_dp_quit = 1;
		pthread_mutex_lock(&dp->ctl_lock);
		dp->ctl_pending = 0;
		pthread_cond_signal(&dp->ctl_served);
		pthread_mutex_unlock(&dp->ctl_lock);
		pthread_join(dp->ctl_thread, NULL);
		dp->ctl_thread_running = false;
	}
	if (dp->conn_fd >= 0)
		close(dp->conn_fd);
	if (dp->listen_fd >= 0) {
		close(dp->listen_fd);
		unlink(dp->sock_path);
	}
	dp->conn_fd = dp->listen_fd = -1;
	esgw_frame_free(&dp->rx);
}

void *esgw_dp_alloc(struct esgw_dp *dp, size_t size)
{
	void *p;

	if (dp->arena_len == dp->arena_cap) {
		size_t cap = dp->arena_cap ? dp->arena_cap * 2 : 64;
		void **a = realloc(dp->arena, cap * sizeof(*a));

		if (a == NULL)
			abort(); /* out of memory answering a stats query: nothing sane to do */
		dp->arena = a;
		dp->arena_cap = cap;
	}
	p = calloc(1, size ? size : 1);
	if (p == NULL)
		abort();
	dp->arena[dp->arena_len++] = p;
	return p;
}

char *esgw_dp_strdup(struct esgw_dp *dp, const char *s)
{
	char *p = esgw_dp_alloc(dp, strlen(s) + 1);

	strcpy(p, s);
	return p;
}

static void arena_release(struct esgw_dp *dp)
{
	for (size_t i = 0; i < dp->arena_len; i++)
		free(dp->arena[i]);
	dp->arena_len = 0;
}

Esgw__Counter *esgw_dp_counter(struct esgw_dp *dp, const char *name, uint64_t value)
{
	Esgw__Counter *c = esgw_dp_alloc(dp, sizeof(*c));

	esgw__counter__init(c);
	c->name = (char *)name;
	c->value = value;
	return c;
}

Esgw__Counter **esgw_dp_drop_counters(struct esgw_dp *dp, const uint64_t drops[ESGW_DROP_MAX],
				      size_t *n)
{
	Esgw__Counter **list = esgw_dp_alloc(dp, ESGW_DROP_MAX * sizeof(*list));

	for (int i = 0; i < ESGW_DROP_MAX; i++)
		list[i] = esgw_dp_counter(dp, esgw_drop_name(i), drops[i]);
	*n = ESGW_DROP_MAX;
	return list;
}

/* The per-stage cost counters every process keeps (stage_cycles.h). */
static void stage_stats(const struct esgw_dp *dp, Esgw__DpStats *stats, Esgw__DpTraffic *traffic)
{
	const struct esgw_stage_cycles *c = &dp->cycles;

	stats->tsc_hz = rte_get_tsc_hz();
	stats->tsc = rte_rdtsc();
	stats->loop_cycles = c->start_tsc ? stats->tsc - c->start_tsc : 0;
	stats->busy_cycles = c->busy_cycles;
	stats->busy_packets = c->busy_packets;
	stats->encrypt_cycles = c->encrypt_cycles;
	stats->encrypt_packets = c->encrypt_packets;
	stats->decrypt_cycles = c->decrypt_cycles;
	stats->decrypt_packets = c->decrypt_packets;
	stats->driver_cycles = c->driver_cycles;
	stats->esp_cycles = c->esp_cycles;
	traffic->rx_packets = c->rx_packets;
	traffic->rx_bytes = c->rx_bytes;
	traffic->tx_packets = c->tx_packets;
	traffic->tx_bytes = c->tx_bytes;
	stats->traffic = traffic;
}

static void answer(struct esgw_dp *dp, const Esgw__DpRequest *req)
{
	Esgw__DpResponse resp = ESGW__DP_RESPONSE__INIT;
	Esgw__DpStats stats = ESGW__DP_STATS__INIT;
	Esgw__DpTraffic traffic = ESGW__DP_TRAFFIC__INIT;
	char err[256] = "";

	if (req == NULL) {
		resp.status = ESGW__STATUS__STATUS_MALFORMED;
		resp.error = "malformed DpRequest";
	} else if (req->version != ESGW__DP_VERSION__DP_VERSION_CURRENT) {
		resp.status = ESGW__STATUS__STATUS_VERSION_MISMATCH;
		resp.error = "unsupported API version";
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_CONFIG) {
		if (dp->on_config(dp, req->config, err, sizeof(err)) < 0) {
			resp.status = ESGW__STATUS__STATUS_INVALID_ARGUMENT;
			resp.error = err;
			ESGW_WARN("configuration %" PRIu64 " refused: %s", req->config->generation,
				  err);
		} else {
			dp->generation = req->config->generation;
		}
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_SEQ_LIMITS && dp->on_seq_limits) {
		dp->on_seq_limits(dp, req->seq_limits);
	} else if (req->body_case == ESGW__DP_REQUEST__BODY_STATS) {
		stats.role = (char *)dp->role;
		stats.worker = dp->worker;
		stats.pid = getpid();
		stats.generation = dp->generation;
		stage_stats(dp, &stats, &traffic);
		dp->stats_query = req->stats;
		if (dp->on_stats != NULL)
			dp->on_stats(dp, &stats);
		dp->stats_query = NULL;
		resp.stats = &stats;
	} else {
		resp.status = ESGW__STATUS__STATUS_INVALID_ARGUMENT;
		resp.error = "unknown DpRequest type";
	}
	if (esgw_msg_write(dp->conn_fd, &resp.base, 1000) < 0) {
		ESGW_WARN("control reply failed: %s", strerror(errno));
		close(dp->conn_fd);
		dp->conn_fd = -1;
		esgw_frame_reset(&dp->rx);
	}
	arena_release(dp);
}

static void ctl_serve(struct esgw_dp *dp);

void esgw_dp_ctl_poll(struct esgw_dp *dp)
{
	if (!dp->ctl_pending)
		return;
	ctl_serve(dp);
	pthread_mutex_lock(&dp->ctl_lock);
	dp->ctl_pending = 0;
	pthread_cond_signal(&dp->ctl_served);
	pthread_mutex_unlock(&dp->ctl_lock);
}

/* Only root or our own user may configure us (the socket is 0600 too). */
static bool peer_is_controller(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       (cred.uid == 0 || cred.uid == geteuid());
}

static void ctl_serve(struct esgw_dp *dp)
{
	uint8_t buf[16384];
	const uint8_t *msg;
	size_t len;
	ssize_t r;
	int fd, rc;

	fd = accept4(dp->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0 && !peer_is_controller(fd)) {
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "control connection from a process that is "
						    "neither root nor our user: closed");
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		/* One controller at a time: a new connection replaces the old one. */
		if (dp->conn_fd >= 0)
			close(dp->conn_fd);
		dp->conn_fd = fd;
		esgw_frame_reset(&dp->rx);
	}
	if (dp->conn_fd < 0)
		return;
	for (;;) {
		r = read(dp->conn_fd, buf, sizeof(buf));
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0 || esgw_frame_feed(&dp->rx, buf, (size_t)r) < 0) {
			close(dp->conn_fd);
			dp->conn_fd = -1;
			esgw_frame_reset(&dp->rx);
			return;
		}
	}
	explicit_bzero(buf, sizeof(buf)); /* may hold SA keys */
	while ((rc = esgw_frame_next(&dp->rx, &msg, &len)) == ESGW_FRAME_READY) {
		Esgw__DpRequest *req = esgw__dp_request__unpack(NULL, len, msg);

		answer(dp, req);
		if (req != NULL)
			esgw__dp_request__free_unpacked(req, NULL);
		/* A DpConfig carries SA keys: leave none in the receive buffer. */
		explicit_bzero((uint8_t *)msg, len);
		if (dp->conn_fd < 0)
			return;
		esgw_frame_consume(&dp->rx);
	}
	if (rc == ESGW_FRAME_TOO_BIG) {
		ESGW_WARN("control message over %u bytes: closing the connection", ESGW_FRAME_MAX);
		close(dp->conn_fd);
		dp->conn_fd = -1;
		esgw_frame_reset(&dp->rx);
	}
}

/* What the doorbell re-checks after announcing a sleep: control work, or the
 * process's own rings. */
static int idle_has_work(void *arg)
{
	struct esgw_dp *dp = arg;

	return dp->ctl_pending || esgw_dp_quit ||
	       (dp->idle_has_work != NULL && dp->idle_has_work(dp->idle_arg));
}

void esgw_dp_idle(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		  int (*has_work)(void *arg), void *arg)
{
	esgw_doorbells_ring(&dp->bells); /* owed by anything outside a round */
	esgw_dp_ctl_poll(dp);
	esgw_doorbells_ring(&dp->bells);
	if (dp->busy_poll) {
		rte_pause();
		return;
	}
	dp->db = db;
	dp->idle_has_work = has_work;
	dp->idle_arg = arg;
	esgw_doorbell_wait(db, timeout_us, idle_has_work, dp);
}
