/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's live views: `show dataplane` (rates per process, worker and SA),
 * `monitor` (the same every second until Ctrl-C) and `events` (the event
 * stream of esgw-ctld until Ctrl-C). Human tables or JSON, one document per
 * line, so `esgwctl monitor --json | jq` works as a live feed. */
#include "esgwctl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "framing.h"
#include "json.h"

#define MONITOR_PERIOD_MS 1000
#define MONITOR_REPLY_TIMEOUT_MS 10000

/* Ctrl-C ends a monitor or an event stream: a normal end, exit status 0.
 * Every line is flushed as it is printed, so nothing is lost by _exit. */
static void on_interrupt(int sig)
{
	(void)sig;
	_exit(0);
}

static void catch_interrupt(void)
{
	struct sigaction sa = {.sa_handler = on_interrupt};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL); /* `esgwctl monitor | head` */
}

/* One Response from fd; dies on a broken connection or a refusal. */
static Esgw__Response *read_response(int fd, const char *path, int timeout_ms)
{
	Esgw__Response *resp;
	uint8_t *buf;
	size_t len;

	if (esgw_frame_read(fd, &buf, &len, timeout_ms) < 0)
		die(1, "esgw-ctld at %s: %s", path,
		    errno == ECONNRESET ? "connection closed" : strerror(errno));
	resp = esgw__response__unpack(NULL, len, buf);
	free(buf);
	if (resp == NULL)
		die(1, "esgw-ctld sent a malformed response");
	if (resp->status != ESGW__STATUS__STATUS_OK)
		die(1, "%s", resp->error[0] ? resp->error : "request refused");
	return resp;
}

static double now_seconds(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* ---------------------------------------------------------------- rates */

/* 1234567 -> "1.23M": rates read at a glance. */
static const char *si(double v, char *buf, size_t len)
{
	static const char units[] = " kMGT";
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%c", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
	return buf;
}

static const char *cycles_text(double v, char *buf, size_t len)
{
	if (v <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static void print_dataplane_table(const Esgw__ShowReply *reply)
{
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16], h[16], busy[16], per_wake[16];
	size_t nsas = 0;

	printf("%-10s %7s %-8s %9s %9s %9s %9s %6s %8s %8s %8s %7s %8s\n", "PROCESS", "PID",
	       "STATE", "RX pkt/s", "RX bit/s", "TX pkt/s", "TX bit/s", "BUSY", "CYC/PKT",
	       "ENC C/P", "DEC C/P", "WAKE/s", "PKT/WAKE");
	for (size_t i = 0; i < reply->n_dataplane; i++) {
		const Esgw__DataplaneInfo *p = reply->dataplane[i];

		if (p->interval > 0)
			snprintf(busy, sizeof(busy), "%.1f%%", 100 * p->busy);
		else
			snprintf(busy, sizeof(busy), "-");
		if (p->packets_per_wake > 0)
			snprintf(per_wake, sizeof(per_wake), "%.1f", p->packets_per_wake);
		else
			snprintf(per_wake, sizeof(per_wake), "-");
		printf("%-10s %7d %-8s %9s %9s %9s %9s %6s %8s %8s %8s %7s %8s\n", p->name, p->pid,
		       p->state, si(p->rx_packets_per_second, a, sizeof(a)),
		       si(p->rx_bits_per_second, b, sizeof(b)),
		       si(p->tx_packets_per_second, c, sizeof(c)),
		       si(p->tx_bits_per_second, d, sizeof(d)), busy,
		       cycles_text(p->cycles_per_packet, e, sizeof(e)),
		       cycles_text(p->encrypt_cycles_per_packet, f, sizeof(f)),
		       cycles_text(p->decrypt_cycles_per_packet, g, sizeof(g)),
		       si(p->wakes_per_second, h, sizeof(h)), per_wake);
		nsas += p->n_sas;
	}
	if (nsas == 0)
		return;
	printf("\n%-10s %-12s %6s %9s %9s %12s %14s\n", "SA", "TUNNEL", "WORKER", "pkt/s", "bit/s",
	       "PACKETS", "BYTES");
	for (size_t i = 0; i < reply->n_dataplane; i++) {
		const Esgw__DataplaneInfo *p = reply->dataplane[i];

		for (size_t k = 0; k < p->n_sas; k++) {
			const Esgw__SaRate *s = p->sas[k];

			printf("%-10u %-12s %6d %9s %9s %12llu %14llu\n", s->id,
			       s->tunnel[0] ? s->tunnel : "-", p->worker,
			       si(s->packets_per_second, a, sizeof(a)),
			       si(s->bits_per_second, b, sizeof(b)), (unsigned long long)s->packets,
			       (unsigned long long)s->bytes);
		}
	}
}

/* One process of `monitor --json`: its rates, its totals and its SAs'. */
static void json_dataplane_process(struct json *j, const Esgw__DataplaneInfo *p)
{
	json_object_begin(j);
	json_kv_string(j, "name", p->name);
	json_kv_string(j, "role", p->role);
	json_kv_i64(j, "worker", p->worker);
	json_kv_i64(j, "pid", p->pid);
	json_kv_string(j, "state", p->state);
	json_kv_double(j, "interval", p->interval);
	json_kv_double(j, "rx_pps", p->rx_packets_per_second);
	json_kv_double(j, "rx_bps", p->rx_bits_per_second);
	json_kv_double(j, "tx_pps", p->tx_packets_per_second);
	json_kv_double(j, "tx_bps", p->tx_bits_per_second);
	json_kv_double(j, "busy", p->busy);
	json_kv_double(j, "idle", p->interval > 0 ? 1 - p->busy : 0);
	json_kv_double(j, "cycles_per_packet", p->cycles_per_packet);
	json_kv_double(j, "encrypt_cycles_per_packet", p->encrypt_cycles_per_packet);
	json_kv_double(j, "decrypt_cycles_per_packet", p->decrypt_cycles_per_packet);
	json_kv_double(j, "encrypt_pps", p->encrypt_packets_per_second);
	json_kv_double(j, "decrypt_pps", p->decrypt_packets_per_second);
	json_kv_u64(j, "tsc_hz", p->tsc_hz);
	json_kv_u64(j, "loop_cycles", p->loop_cycles);
	json_kv_u64(j, "busy_cycles", p->busy_cycles);
	json_kv_u64(j, "busy_packets", p->busy_packets);
	json_kv_u64(j, "encrypt_cycles", p->encrypt_cycles);
	json_kv_u64(j, "encrypt_packets", p->encrypt_packets);
	json_kv_u64(j, "decrypt_cycles", p->decrypt_cycles);
	json_kv_u64(j, "decrypt_packets", p->decrypt_packets);
	json_kv_u64(j, "driver_cycles", p->driver_cycles);
	json_kv_u64(j, "esp_cycles", p->esp_cycles);
	json_kv_u64(j, "esp_sample_cycles", p->esp_sample_cycles);
	json_kv_u64(j, "esp_sample_packets", p->esp_sample_packets);
	json_kv_u64(j, "esp_sample_switched", p->esp_sample_switched);
	json_kv_u64(j, "sleeps", p->sleeps);
	json_kv_u64(j, "room_wakes", p->room_wakes);
	json_kv_double(j, "wakes_per_second", p->wakes_per_second);
	json_kv_double(j, "packets_per_wake", p->packets_per_wake);
	json_key(j, "sas");
	json_array_begin(j);
	for (size_t k = 0; k < p->n_sas; k++) {
		const Esgw__SaRate *s = p->sas[k];

		json_object_begin(j);
		json_kv_u64(j, "id", s->id);
		json_kv_string(j, "tunnel", s->tunnel);
		json_kv_i64(j, "worker", p->worker);
		json_kv_double(j, "pps", s->packets_per_second);
		json_kv_double(j, "bps", s->bits_per_second);
		json_kv_u64(j, "packets", s->packets);
		json_kv_u64(j, "bytes", s->bytes);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

static void print_dataplane_json(const Esgw__ShowReply *reply, double at)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_kv_double(&j, "time", at);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < reply->n_dataplane; i++)
		json_dataplane_process(&j, reply->dataplane[i]);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

void print_dataplane(const Esgw__ShowReply *reply, bool json)
{
	if (json)
		print_dataplane_json(reply, now_seconds());
	else
		print_dataplane_table(reply);
	fflush(stdout);
}

static Esgw__Response *show_dataplane(const char *path)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__ShowRequest show = ESGW__SHOW_REQUEST__INIT;
	Esgw__Response *resp;
	int fd = connect_ctld(path);

	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__REQUEST__BODY_SHOW;
	req.show = &show;
	show.what = ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE;
	if (esgw_msg_write(fd, &req.base, 5000) < 0)
		die(1, "cannot send to %s: %s", path, strerror(errno));
	resp = read_response(fd, path, MONITOR_REPLY_TIMEOUT_MS);
	close(fd);
	return resp;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void monitor(const char *path, bool json)
{
	for (;;) {
		double started = now_seconds();
		Esgw__Response *resp = show_dataplane(path);
		long left;

		if (!json)
			fputs("\033[H\033[2J", stdout); /* redraw in place */
		if (resp->show != NULL) {
			if (!json) {
				time_t t = time(NULL);
				char when[32];

				strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
				printf("esgw dataplane at %s (Ctrl-C to stop)\n\n", when);
			}
			print_dataplane(resp->show, json);
		}
		esgw__response__free_unpacked(resp, NULL);
		left = MONITOR_PERIOD_MS - (long)((now_seconds() - started) * 1000);
		if (left > 0)
			sleep_ms(left);
	}
}

/* ---------------------------------------------------------------- events */

/* EVENT_KIND_PROCESS_EXIT -> "process_exit": the stable name in both outputs. */
static const char *kind_name(Esgw__EventKind kind, char *buf, size_t len)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&esgw__event_kind__descriptor, (int)kind);
	const char *prefix = "EVENT_KIND_";
	const char *s = v != NULL ? v->name : "EVENT_KIND_UNKNOWN";
	size_t i = 0;

	if (strncmp(s, prefix, strlen(prefix)) == 0)
		s += strlen(prefix);
	for (; *s && i + 1 < len; s++)
		buf[i++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
	buf[i] = '\0';
	return buf;
}

static bool is_process_event(Esgw__EventKind k)
{
	return k == ESGW__EVENT_KIND__EVENT_KIND_PROCESS_EXIT ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_PROCESS_RESTART;
}

static bool is_sa_event(Esgw__EventKind k)
{
	return k == ESGW__EVENT_KIND__EVENT_KIND_SA_ADDED ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_SA_REMOVED ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_SA_MOVED ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_SA_SOFT_EXPIRED ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_SA_HARD_EXPIRED ||
	       k == ESGW__EVENT_KIND__EVENT_KIND_SA_SEQ_HELD;
}

static void print_event_json(const Esgw__Event *ev)
{
	char kind[48];
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_kv_u64(&j, "seq", ev->seq);
	json_kv_double(&j, "time", ev->time);
	json_kv_string(&j, "kind", kind_name(ev->kind, kind, sizeof(kind)));
	if (is_process_event(ev->kind)) {
		json_kv_string(&j, "name", ev->name);
		json_kv_string(&j, "role", ev->role);
		json_kv_i64(&j, "worker", ev->worker);
		json_kv_i64(&j, "pid", ev->pid);
		json_kv_u64(&j, "restarts", ev->restarts);
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_PROCESS_EXIT) {
			json_kv_i64(&j, "exit_status", ev->exit_status);
			json_kv_i64(&j, "signal", ev->signal);
		}
	} else if (is_sa_event(ev->kind)) {
		json_kv_u64(&j, "sa", ev->sa);
		json_kv_i64(&j, "worker", ev->worker);
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_SA_MOVED)
			json_kv_i64(&j, "from_worker", ev->from_worker);
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_SA_SEQ_HELD)
			json_kv_string(&j, "detail", ev->detail);
	} else if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_WORKERS_CHANGED) {
		json_kv_u64(&j, "workers", ev->workers);
		json_kv_u64(&j, "from_workers", ev->from_workers);
	} else {
		json_kv_string(&j, "name", ev->name);
		json_kv_string(&j, "detail", ev->detail);
	}
	json_kv_u64(&j, "events_dropped", ev->events_dropped);
	json_object_end(&j);
	json_finish(&j);
}

static void print_event_text(const Esgw__Event *ev)
{
	time_t t = (time_t)ev->time;
	char when[32], kind[48];

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	printf("%s.%03d %-18s", when, (int)((ev->time - (double)t) * 1000),
	       kind_name(ev->kind, kind, sizeof(kind)));
	if (is_process_event(ev->kind)) {
		printf(" %s pid %d", ev->name, ev->pid);
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_PROCESS_EXIT) {
			if (ev->signal)
				printf(" killed by signal %d", ev->signal);
			else if (ev->exit_status >= 0)
				printf(" exit status %d", ev->exit_status);
		} else {
			printf(" (restart %u)", ev->restarts);
		}
	} else if (is_sa_event(ev->kind)) {
		printf(" SA %u", ev->sa);
		if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_SA_MOVED)
			printf(" worker %d -> %d", ev->from_worker, ev->worker);
		else if (ev->worker >= 0)
			printf(" worker %d", ev->worker);
		if (ev->detail[0])
			printf(": %s", ev->detail);
	} else if (ev->kind == ESGW__EVENT_KIND__EVENT_KIND_WORKERS_CHANGED) {
		printf(" %u -> %u workers", ev->from_workers, ev->workers);
	} else {
		printf(" %s%s%s", ev->name, ev->detail[0] ? ": " : "", ev->detail);
	}
	if (ev->events_dropped)
		printf(" [%llu events dropped: reading too slowly]",
		       (unsigned long long)ev->events_dropped);
	putchar('\n');
}

static void events(const char *path, bool json)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__EventsSubscribe sub = ESGW__EVENTS_SUBSCRIBE__INIT;
	int fd = connect_ctld(path);

	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE;
	req.events_subscribe = &sub;
	if (esgw_msg_write(fd, &req.base, 5000) < 0)
		die(1, "cannot send to %s: %s", path, strerror(errno));
	esgw__response__free_unpacked(read_response(fd, path, MONITOR_REPLY_TIMEOUT_MS), NULL);
	if (!json) {
		fprintf(stderr, "esgwctl: listening for events of %s (Ctrl-C to stop)\n", path);
		fflush(stderr);
	}
	for (;;) {
		Esgw__Response *resp = read_response(fd, path, -1);

		if (resp->event != NULL) {
			if (json)
				print_event_json(resp->event);
			else
				print_event_text(resp->event);
			fflush(stdout);
		}
		esgw__response__free_unpacked(resp, NULL);
	}
}

bool stream_command(int argc, char **argv, const char *socket_path, bool json)
{
	if (argc < 1 || (strcmp(argv[0], "monitor") != 0 && strcmp(argv[0], "events") != 0))
		return false;
	if (argc > 1)
		usage_error("%s: unexpected '%s'", argv[0], argv[1]);
	catch_interrupt();
	if (strcmp(argv[0], "monitor") == 0)
		monitor(socket_path, json);
	else
		events(socket_path, json);
	return true;
}
