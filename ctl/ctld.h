/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's shared state: options, the desired configuration, and one record
 * per dataplane process; and the functions the daemon's files offer each other. */
#ifndef ESGW_CTLD_H
#define ESGW_CTLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "dataplane.pb-c.h"
#include "esgw_limits.h"

#define CTLD_MAX_PROCS (2 + ESGW_MAX_WORKERS)
#define CTLD_DP_TIMEOUT_MS 2000

enum proc_state { PROC_STOPPED, PROC_STARTING, PROC_RUNNING, PROC_BACKOFF };

/* One dataplane process: rxtx, router or crypto-N. In standalone mode ctld
 * forks it; in systemd mode it only talks to it. */
struct dp_proc {
	char name[16];    /* "rxtx", "router", "crypto-0": socket <rundir>/<name>.sock */
	const char *role; /* "rxtx", "router", "crypto" */
	int worker;       /* crypto worker id, -1 otherwise */
	pid_t pid;        /* forked child, or the peer of the control connection */
	enum proc_state state;
	unsigned int restarts;
	/* control connection */
	int fd;
	ev_io eof_watcher;         /* notices the process closing (exit, restart) */
	uint64_t acked_generation; /* last DpConfig it accepted; 0: none */
	bool unreachable_logged;
	/* The last DpStats it answered, packed: shown again (counters never go
	 * back) when one query times out on a busy machine. */
	uint8_t *stats_cache;
	size_t stats_cache_len;
	pid_t stats_cache_pid;
	/* supervision (standalone) */
	ev_child child_watcher;
	double started_at;    /* ev_now() at fork */
	double running_since; /* ev_now() when its control socket answered; 0: not yet */
	double backoff;       /* seconds before the next restart */
	double restart_at;    /* BACKOFF: when to start again */
	double term_sent_at;  /* a SIGTERM is out: SIGKILL after 5 s */
	bool stop_requested;  /* its exit is ours: restart without backoff */
	bool ever_started;
};

struct ctld_options {
	const char *socket_path;
	const char *config_path;
	const char *rundir;
	const char *file_prefix;
	const char *bindir;
	const char *log_dir;
	bool standalone;
	bool busy_poll; /* --busy-poll: passed on to every dataplane process */
	int slice_us;   /* --slice-us: passed on to every dataplane process; -1: not given */
	/* --seq-reserve: outbound sequence numbers reserved ahead per SA
	 * (seq_floor.c); several seconds at the worker's line rate. */
	uint64_t seq_reserve;
	double idle_timeout; /* --idle-timeout: a control client silent this long is closed */
	uint32_t max_sas;    /* --max-sas: SA runtime slots handed out, <= ESGW_MAX_SAS_CAP */
	int workers;         /* -1: from the saved config, else 1 */
	/* --max-workers: crypto workers esgw-rxtx makes rings for, so the most
	 * `workers set` accepts; <= ESGW_MAX_WORKERS */
	uint32_t max_workers;
	/* CPUs of the dataplane (standalone): crypto worker N runs on
	 * worker_cpus[N % n_worker_cpus], a pure function of N because workers
	 * come and go at run time (`esgwctl workers set`). */
	int rxtx_cpu;
	int router_cpu;
	const int *worker_cpus;
	int n_worker_cpus;
};

struct ctld {
	struct ctld_options opt;
	struct ev_loop *loop;
	Esgw__Config *config; /* desired state; keys included */
	uint64_t generation;  /* of config, bumped on every change */
	struct dp_proc procs[CTLD_MAX_PROCS];
	int nprocs;
	bool shutting_down;
	ev_timer tick; /* reconcile pushes, supervise */
};

extern struct ctld ctld;

/* ctld_options.c: the command line into ctld.opt; exits 2 with a message
 * on a bad option, 0 after --help. */
void ctld_options_parse(int argc, char **argv);
/* A zeroed table of ctld.opt.max_sas entries of size bytes (by SA runtime
 * slot); exits naming --max-sas if memory is short. CTLD_SLOTS(t): t,
 * allocated at its first use. */
void *ctld_slots_calloc(size_t size);
#define CTLD_SLOTS(t) ((t) != NULL ? (t) : ((t) = ctld_slots_calloc(sizeof(*(t)))))
/* One line at start-up saying where each process will run (standalone). */
void ctld_options_log_placement(void);

/* state_index.c: hash indexes of ctld.config's arrays (state.c's lookups). */
struct state_index {
	uint64_t epoch;       /* of state_changed() when built */
	const void *config;   /* ctld.config when built */
	size_t n;             /* items[0..n) are in */
	size_t cap, used;     /* slots (a power of two), of them taken */
	uint32_t *pos;        /* position + 1 in the array; 0: free slot */
	uint64_t *hash;       /* of the key at that slot */
	const void *field;    /* the array it indexes: the address of its field */
};
struct state_index_kind {
	size_t (*nkeys)(const void *item); /* keys it is found by (a tunnel: its SAs) */
	uint64_t (*key_hash)(const void *item, size_t k);
	bool (*match)(const void *item, const void *key);
};
/* The item of items[0..n) with key (of hash h), or NULL; field: the address
 * of the field holding items (it names the array). */
void *state_index_find(struct state_index *ix, const struct state_index_kind *kind,
		       const void *field, void *const *items, size_t n, uint64_t h,
		       const void *key);
/* An array was reordered or shrunk, or an indexed key changed in place. */
void state_changed(void);
/* The object at index of the n in the array in field is being taken out and
 * the last one moved into its place (config_remove): the indexes over it
 * follow, in O(1). Called before the array changes. */
void state_index_removed(const void *field, size_t n, size_t index);
/* The position of item in the array in field (of n), from an index over it
 * when there is one, else by state_position. */
size_t state_index_position(const void *field, size_t n, const void *item);
/* state.c: the map of SA slots in use follows sa's removal (before it). */
void state_sa_removed(const Esgw__Sa *sa);
/* Bumped by state_changed(): whether an array may have shrunk or reordered. */
uint64_t state_epoch_now(void);
uint64_t state_hash_u32(uint32_t v);
uint64_t state_hash_str(const char *s);

/* state.c: lookups and derived facts on ctld.config. */
Esgw__Interface *state_interface(const char *name);
Esgw__Sa *state_sa(uint32_t id);
Esgw__Sa *state_sa_by_spi(uint32_t spi);
/* The SA of each of st's SA statistics by id (NULL where there is none), one
 * lookup each, for the sampler's observers to share: a malloc'd array of
 * st->n_sas, or NULL out of memory (logged). */
Esgw__Sa **state_sas_of_stats(const Esgw__DpStats *st);
Esgw__Tunnel *state_tunnel(const char *name);
Esgw__Route *state_route(const char *prefix);
/* A route into tunnel, or NULL. */
Esgw__Route *state_route_into(const char *tunnel);
/* The position of item in items[0..n) (a scan of pointers, no object read). */
size_t state_position(void *const *items, size_t n, const void *item);
/* The tunnel using SA id as its outbound / an inbound SA, or NULL. */
Esgw__Tunnel *state_tunnel_out(uint32_t id);
Esgw__Tunnel *state_tunnel_in(uint32_t id);
int state_free_slot(void);
int state_least_loaded_worker(void);
/* The same from counts kept between changes (sa add): state_sa_load as
 * change.c adds and removes SAs, state_loads_follow when its change makes
 * generation to from from, state_loads_forget when it is undone. */
int state_least_loaded_worker_followed(void);
void state_sa_load(const Esgw__Sa *sa, int delta);
void state_loads_follow(uint64_t from, uint64_t to);
void state_loads_forget(void);
/* A deep copy of a message (pack + unpack), owned by the caller. */
void *msg_clone(const void *msg);
void config_free(Esgw__Config *c);
Esgw__Config *config_new(void);
/* Append to a repeated field of pointers: (void ***)&arr, &n. Aborts on OOM. */
void array_append(void *arr_ptr, size_t *n, void *item);
void array_remove(void *arr_ptr, size_t *n, size_t index);
/* Replace a string field with a malloc'ed copy of s. */
void str_set(char **field, const char *s);

/* change.c: a change on ctld.config as a log of the whole objects it added
 * and removed (routes, SAs, tunnels, neighbours): undone, its events found and
 * its journal record written in proportion to it. Between change_begin and
 * change_commit or change_abort, config_remove keeps what it removes. */
enum config_kind { CONFIG_ROUTE, CONFIG_SA, CONFIG_TUNNEL, CONFIG_NEIGHBOR };
void config_add(enum config_kind kind, void *item); /* appended; owned by ctld.config */
/* Out of its array, the last object of the array moved into its place (O(1);
 * the order objects are listed and saved in is not the order they were
 * added in). */
void config_remove(enum config_kind kind, size_t index);
void config_remove_item(enum config_kind kind, const void *item); /* found in its array */
/* An object changed as a new copy (next, its index keys already set) in the
 * old one's place, not in place: one removal and one addition of the log, so
 * the change is undone, journaled and pushed in proportion to itself (the
 * router replaces a tunnel where it is; a worker keeps an SA's slot runtime:
 * same id, slot and instance), and the indexes follow it in O(1). */
void config_replace(enum config_kind kind, const void *old, void *next);
void change_begin(void);
/* Emits the change's events (events_config_diff on what it touched) and keeps
 * the change (what it removed too) for the dataplane's delta until the next
 * begins; without events, frees what it removed (the change is undone or
 * pushed from a copy). */
void change_commit(bool events);
/* Puts back what it removed, frees what it added. */
void change_abort(void);
/* Entry i of the log (in order, i < change_count()): the object, whether it
 * was added (else removed), and whether it is part of the net change (not an
 * object added and removed again). */
struct change_item {
	enum config_kind kind;
	void *item;
	bool added;
	bool net;
};
size_t change_count(void);
struct change_item change_entry(size_t i);
/* Whether the last committed change is kept, and the generation it changed. */
bool change_kept(uint64_t *base);

/* config_store.c: persistence. mkdir -p of the directory holding path (of path
 * itself when it ends in a slash). */
void make_parent_dirs(const char *path);
/* The snapshot at path and the changes of its journal after it. */
Esgw__Config *config_load(const char *path);
/* A snapshot of c (and a new, empty journal after it). */
int config_save(const Esgw__Config *c, const char *path, char *err, size_t errlen);
/* Whole file into memory; NULL with errno set (ENOENT: no file). */
uint8_t *config_read_file(const char *path, size_t *len);
int config_fsync_dir_of(const char *path);

/* config_journal.c: the changes since the snapshot, <path>.journal. */
uint32_t config_crc32(const uint8_t *p, size_t len); /* IEEE, as zlib's */
/* A new journal naming the snapshot just written (its bytes). */
int config_journal_start(const char *config_path, const uint8_t *snapshot, size_t len);
/* change.c's log appended and fsync'ed, or c saved whole (compacted) when
 * the journal is past its bound or there is none. 0, or -1 (err set). */
int config_journal_append(const Esgw__Config *c, const char *config_path, char *err,
			  size_t errlen);
/* The journal's changes after the snapshot (of that length and CRC) onto c:
 * their count, 0 if none (or the journal follows another snapshot), -1 if a
 * torn or corrupt record stopped it (logged; c holds the changes before). */
int config_journal_replay(Esgw__Config *c, const char *config_path, size_t snapshot_len,
			  uint32_t snapshot_crc);

/* limits.c: refuses (INVALID_ARGUMENT, the limit in err) a configuration
 * the dataplane cannot hold or apply. */
Esgw__Status config_check_limits(const Esgw__Config *c, char *err, size_t errlen);
/* The same for a change in change.c's log, from what it added. */
Esgw__Status config_check_change_limits(const Esgw__Config *c, char *err, size_t errlen);

/* request.c: the control API, a handler per Request body in a table. Fills
 * resp; frees nothing of req. */
void request_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen);
void request_response_free(Esgw__Response *resp);
/* The handler of one Request body, in the files of its object: it checks
 * every field and reference before it changes ctld.config, fills resp, and
 * err when it refuses. */
typedef Esgw__Status request_handler(const Esgw__Request *req, Esgw__Response *resp, char *err,
				     size_t errlen);
/* interface.c */
request_handler interface_add_handle;
request_handler interface_del_handle;
request_handler interface_address_add_handle;
request_handler interface_address_del_handle;
/* route.c */
request_handler route_add_handle;
request_handler route_del_handle;
/* sa.c */
request_handler sa_add_handle;
request_handler sa_del_handle;
/* Zero the key bytes of an SA (before freeing it). */
void sa_wipe_keys(Esgw__Sa *sa);
/* Free an unpacked message after zeroing any key bytes it holds. */
void sa_free(Esgw__Sa *sa);
/* A copy of sa, on worker, in its place in the configuration, to change
 * (sa_update.c, workers.c): the change is a removal and an addition of
 * change.c's log. */
Esgw__Sa *sa_replace(Esgw__Sa *sa, int32_t worker);
/* tunnel.c */
request_handler tunnel_add_handle;
request_handler tunnel_del_handle;
request_handler tunnel_set_handle;
/* show.c */
request_handler show_handle;
void show_build(Esgw__ShowRequest__What what, Esgw__ShowReply *reply);
void show_free(Esgw__ShowReply *reply);

/* server.c: the UNIX socket API. */
int server_open(const char *path);
void server_close(void);

/* dp_proc.c: the records of the dataplane processes. */
void dp_procs_init(int workers);
/* Records for workers 0..workers-1; records of workers above stay until the
 * supervisor has stopped them (supervise_tick drops them then). */
void dp_procs_resize(int workers);
/* Drop the records of workers workers.. (systemd mode: systemd stops them). */
void dp_procs_shrink(int workers);
struct dp_proc *dp_proc_by_name(const char *name);
const char *dp_proc_state_name(enum proc_state s);

/* dp_conn.c: the control connection to one process. */
void dp_conn_init(struct dp_proc *p); /* not connected */
/* Open the control connection if it is not open; 0 or -1 (not ready). */
int dp_conn_open(struct dp_proc *p);
void dp_conn_close(struct dp_proc *p);
/* Send req and wait for the DpResponse (~2 s); NULL if none came (logged).
 * The packed request is wiped (a crypto worker's holds keys). */
Esgw__DpResponse *dp_conn_exchange(struct dp_proc *p, const Esgw__DpRequest *req);

/* dp_stats.c */
/* DpStats of one process, or NULL (not reachable). Free with dp_stats_free. */
Esgw__DpResponse *dp_stats(struct dp_proc *p);
/* The same, a crypto worker listing only the SAs changed since its last
 * such answer (DpStatsQuery.sa_changed): esgw-ctld's sampler's alone. No
 * cached answer stands in for a late one. */
Esgw__DpResponse *dp_stats_changed(struct dp_proc *p);
/* The same with the router's neighbour table in stats->neighbors; not cached. */
Esgw__DpResponse *dp_stats_neighbors(struct dp_proc *p);
/* A crypto worker's DpStats listing only its first SA at slot or above (so
 * whether it holds the SA of slot), or NULL; not cached. */
Esgw__DpResponse *dp_stats_slot(struct dp_proc *p, uint32_t slot);
void dp_stats_free(Esgw__DpResponse *r);
/* SA id at slot in st, or NULL: by bisection on the slot, as workers list
 * their SAs. */
const Esgw__DpSaStats *dp_stats_find_sa(const Esgw__DpStats *st, uint32_t id, uint32_t slot);
/* The value of the counter called name among c[0..n), 0 if absent. */
uint64_t dp_stats_counter(Esgw__Counter **c, size_t n, const char *name);

/* arena.c: memory freed all at once (a push, a show reply). */
struct arena {
	void **mem;
	size_t n_mem;
};
void *arena_alloc(struct arena *a, size_t size); /* zeroed; aborts when out of memory */
void arena_free(struct arena *a);

/* dp_object.c: one object of ctld.config in its dataplane.proto form
 * (addresses in binary), in the arena of one push; strings and lists are
 * borrowed from ctld.config, valid while it is unchanged. */
Esgw__DpInterface *dp_object_interface(struct arena *o, const Esgw__Interface *in);
Esgw__DpRoute *dp_object_route(struct arena *o, const Esgw__Route *r);
Esgw__DpTunnel *dp_object_tunnel(struct arena *o, const Esgw__Tunnel *t);
/* The router's SAs go without keys; a worker's with them, and with the
 * sequence number a fresh runtime slot starts at. */
Esgw__DpSa *dp_object_sa(struct arena *o, const Esgw__Sa *sa, bool with_keys);
Esgw__DpPolicy *dp_object_policy(struct arena *o, const Esgw__Policy *p);
Esgw__DpNeighbor *dp_object_neighbor(struct arena *o, const Esgw__Neighbor *n);

/* dp_config.c: the DpConfig of one process, in memory of its own; or the
 * DpConfigDelta of change.c's kept change. */
struct dp_config {
	Esgw__DpConfig cfg;
	Esgw__DpConfigDelta delta;
	struct arena objects;
};
void dp_config_build(struct dp_config *b, const struct dp_proc *p);
/* Whether the current generation is the kept change applied to the one
 * before, and a change the dataplane applies in place (routes, SAs, tunnels
 * no policy names). */
bool dp_config_delta_possible(void);
void dp_config_delta_build(struct dp_config *b, const struct dp_proc *p);
void dp_config_free(struct dp_config *b);

/* dp_push.c */
/* Push the current generation to every process that has not acked it. */
void dp_push_all(void);
void dp_push(struct dp_proc *p);
/* Send a crypto worker sequence-number limits (seq_floor.c). */
void dp_push_seq_limits(struct dp_proc *p, const Esgw__DpSeqLimits *limits);

/* supervise.c: standalone mode. */
void supervise_tick(void);
/* The set of interfaces changed: restart the whole dataplane. */
void supervise_interfaces_changed(void);
void supervise_shutdown(void);
bool supervise_busy(void); /* something is starting or waiting: tick faster */
/* Seconds a restart after an unplanned exit of p would wait now. */
double supervise_next_backoff(const struct dp_proc *p);

/* Called by handlers after a successful change. */
void ctld_config_changed(bool interfaces_changed);

/* workers.c: `sa move` (a hand-over without loss or reordering) and
 * `workers set`. Both answer once the moves are complete. */
request_handler sa_move_handle;
request_handler workers_set_handle;
/* The worker an SA is being handed over from, or -1 (no hand-over in flight). */
int handover_from(const Esgw__Sa *sa);

/* neighbor.c: static neighbours (`neighbor add|del`). */
request_handler neighbor_add_handle;
request_handler neighbor_del_handle;
/* A static neighbour on interface, or NULL. */
Esgw__Neighbor *neighbor_of_interface(const char *interface);

/* policy.c: policies (SPD), kept in evaluation order in ctld.config. */
request_handler policy_add_handle;
request_handler policy_del_handle;
/* A policy naming tunnel, or NULL. */
Esgw__Policy *policy_of_tunnel(const char *tunnel);
/* The tunnel of the first protect policy sending with SA sa_id, or NULL. */
Esgw__Tunnel *policy_tunnel_out(uint32_t sa_id);

/* events.c: events streamed to the clients that sent EventsSubscribe
 * (`esgwctl events`). Emitting never blocks: each subscriber has a bounded
 * queue that drops its oldest event when full (counted in Event.events_dropped).
 *
 * To emit an event from new code, fill an Esgw__Event (esgw__event__init, set
 * kind and the fields its EventKind comment in proto/esgw.proto lists; worker
 * and from_worker are -1 when not applicable) and call ctld_event_emit(), or
 * use a shorthand below. Examples:
 *   ctld_event_sa_moved(sa->id, old_worker, new_worker);   after a hand-over
 *   ctld_event_sa(ESGW__EVENT_KIND__EVENT_KIND_SA_SOFT_EXPIRED, sa->id, -1, sa->worker);
 * Added/removed interfaces, routes, tunnels and SAs and a changed worker count
 * are found by events_config_diff() after every successful change request;
 * SA moves are not (the move code emits them), nor a worker count changed
 * outside handle_request() (call ctld_event_workers_changed() there). */
void ctld_event_emit(Esgw__Event *ev); /* sets seq and time */
void ctld_event_sa(Esgw__EventKind kind, uint32_t sa, int from_worker, int worker);
void ctld_event_sa_moved(uint32_t sa, int from_worker, int to_worker);
void ctld_event_workers_changed(uint32_t from_workers, uint32_t workers);
/* wait_status from waitpid(), or -1 when unknown (systemd mode). */
void ctld_event_process_exit(const struct dp_proc *p, pid_t pid, int wait_status);
void ctld_event_process_restart(const struct dp_proc *p); /* p->pid: the new one */
void events_config_diff(const Esgw__Config *before, const Esgw__Config *after);
/* The control socket's side: a subscription, replies on a subscribed
 * connection (queued behind its events, never interleaved), and its end. */
request_handler events_handle_subscribe;
void events_subscriber_add(int fd);
void events_subscriber_remove(int fd);
bool events_is_subscriber(int fd);
int events_queue_response(int fd, const Esgw__Response *resp);
uint64_t events_dropped(void); /* over all subscribers since start */

/* dataplane.c: DpStats of every process sampled each second, for the rates of
 * `show dataplane`. */
void dataplane_sampler_start(void);
void dataplane_sampler_stop(void);
void dataplane_sample(void);
void dataplane_show(Esgw__ShowReply *reply);
void dataplane_show_free(void);

/* sa_expiry.c: one sa_soft_expired / sa_hard_expired event per SA from a
 * crypto worker's DpStats (called by the sampler). */
void sa_expiry_observe(const Esgw__DpStats *st, Esgw__Sa *const *sas); /* state_sas_of_stats */
/* seq_floor.c: outbound sequence numbers as a durable reservation. Keeps
 * Sa.seq_out_floor (on disk first) ahead of what the workers report and
 * pushes the workers their limit below it, so no number is ever sent twice
 * whatever restarts; and gives every new SA an instance number of its own. */
#define SEQ_RESERVE_DEFAULT (1ull << 24) /* 16.7 M: ~6 s at 3 Mpps, saved at half */
#define SEQ_RESERVE_MIN 16u
#define SEQ_RESERVE_MAX (1u << 30)     /* without ESN the space is 2^32 */
void seq_floor_sa_added(Esgw__Sa *sa); /* the first floor, saved with the add */
/* DpSa.seq_out_start for the SA's worker: 0 for an SA's first runtime, else
 * its floor (above every number any earlier runtime used). */
uint64_t seq_floor_start(const Esgw__Sa *sa);
/* A crypto worker's DpStats and its SAs (state_sas_of_stats): raise and save
 * floors, push limits to p. */
void seq_floor_observe(struct dp_proc *p, const Esgw__DpStats *st, Esgw__Sa *const *sas);
/* The same from a fresh stats query of p (a process that just connected). */
void seq_floor_check(struct dp_proc *p);
/* A configuration read from .prev stands in for a newer one whose floors may
 * be up to one reserve higher: move them that far ahead. */
void seq_floor_skip_ahead(Esgw__Config *c);
uint64_t seq_floor_new_instance(void);
/* sa_usage.c: when each SA last carried a packet (SaInfo.last_used). */
void sa_usage_observe(const Esgw__DpStats *st);
double sa_usage_last_used(const Esgw__Sa *sa);
/* owner.c: OwnerReconcile (the strongSwan plugin's objects after a reconnect). */
request_handler owner_reconcile_handle;
/* sa_update.c: SaUpdate, an SA moved to other addresses or UDP ports in place. */
request_handler sa_update_handle;
/* acquire.c: acquire events from the router's per-policy policy_no_sa counts. */
void acquire_observe(const Esgw__DpStats *st);

/* systemd_units.c: systemd mode (not --standalone) starts, stops and restarts
 * the dataplane units over D-Bus; each is a no-op in standalone mode. */
void units_start(void);
void units_interfaces_changed(void);
void units_workers_changed(uint32_t from_workers, uint32_t workers);
void units_rxtx_restarted(void);

#endif
