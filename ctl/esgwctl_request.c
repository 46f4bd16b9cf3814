/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's command grammar: turns the words of a command into a Request,
 * checking every value locally so typos never reach esgw-ctld. */
#include "esgwctl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "esgw_limits.h"
#include "validate.h"

static const char help_text[] =
	"usage: esgwctl [--socket PATH] [--json] COMMAND | -f FILE\n"
	"  -f FILE|-                               the commands of FILE (- standard input), one a\n"
	"                                          line, applied as one: all or none ('#' comments;\n"
	"                                          keys may be in it if only its owner can read it)\n"
	"  interface add NAME DEVARGS [mtu N]      e.g. interface add wan net_af_packet0,iface=eth1\n"
	"  interface del NAME\n"
	"  interface address add NAME A.B.C.D/LEN|X:X::X/LEN\n"
	"  interface address del NAME A.B.C.D/LEN|X:X::X/LEN\n"
	"  route add PREFIX via ADDR [dev NAME]\n"
	"  route add PREFIX tunnel NAME\n"
	"  route del PREFIX\n"
	"  sa add ID spi SPI alg ALG [crypto-key -|HEX] [integ-key -|HEX] [salt -|HEX]\n"
	"         [key-file PATH]  keys: '-' reads one line of standard input each, in order;\n"
	"                          PATH has lines 'crypto-key HEX', 'integ-key HEX', 'salt HEX'\n"
	"                          and must be mode 0600 (or stricter), yours or root's.\n"
	"                          HEX on the command line works but is visible to all users\n"
	"         [replay-window 64..4096] [esn on|off] [worker N]\n"
	"         [encap udp [sport N] [dport N]]  RFC 3948 NAT-T; ports 4500 unless given\n"
	"         [lifetime-soft-bytes N] [lifetime-soft-packets N] [lifetime-soft-seconds N]\n"
	"         [lifetime-hard-bytes N] [lifetime-hard-packets N] [lifetime-hard-seconds N]\n"
	"         ALG                     crypto-key        integ-key\n"
	"         aes-gcm-128|-256        16|32 + 4 salt    -   (salt apart, or key||salt)\n"
	"         chacha20-poly1305       32 + 4 salt       -\n"
	"         aes-cbc-128|256-sha1-96         16|32     20\n"
	"         aes-cbc-128|256-sha256-128      16|32     32\n"
	"         aes-cbc-128|256-sha512-256      16|32     64\n"
	"         null-sha1-96|sha256-128|sha512-256  -     20|32|64 (no encryption: debugging)\n"
	"  sa del ID\n"
	"  sa move ID --worker W                  hand the SA over to worker W (also: worker W)\n"
	"  sa update ID [local ADDR] [remote ADDR] [encap udp|none] [sport N] [dport N]\n"
	"         move the SA (and its tunnel's endpoints) in place: keys, sequence numbers\n"
	"         and replay window stay (a NAT mapping changed, the peer moved)\n"
	"  workers set N                          run N crypto workers (SAs move off the stopped)\n"
	"  tunnel add NAME local ADDR remote ADDR sa-out ID sa-in ID[,ID...]\n"
	"  tunnel set NAME [sa-out ID] [sa-in ID[,ID...]]   switch SAs at once (rekey)\n"
	"  tunnel del NAME\n"
	"  policy add NAME [src PREFIX] [dst PREFIX] [proto tcp|udp|icmp|sctp|N]\n"
	"         [sport LO[-HI]] [dport LO[-HI]] [priority N (100; lower first)]\n"
	"         action protect tunnel NAME sa-out ID [sa-in ID[,ID...]] | action bypass\n"
	"         | action discard       (add replaces a policy of the same name)\n"
	"  policy del NAME\n"
	"  neighbor add IFACE ADDR MAC                a static neighbour (never learnt, never expires)\n"
	"  neighbor del IFACE ADDR\n"
	"  show interfaces|routes|sa|tunnels|policies|neighbors|stats|workers|config|dataplane\n"
	"  monitor                                 show dataplane every second until Ctrl-C\n"
	"  events                                  stream esgw-ctld's events until Ctrl-C\n"
	"  help\n"
	"--socket PATH (or env ESGW_SOCKET) names ctld's socket, default /run/esgw/ctl.sock;\n"
	"--json prints one JSON document. Exit status: 0 ok, 1 refused by esgw-ctld, 2 usage.\n";

void command_help(void)
{
	fputs(help_text, stdout);
}

void die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("esgwctl: ", stderr);
	if (esgwctl_where != NULL)
		fprintf(stderr, "%s: ", esgwctl_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	exit(status);
}

static void *zalloc(size_t size)
{
	void *p = calloc(1, size);

	if (p == NULL)
		usage_error("out of memory");
	return p;
}

/* Words of one command, consumed left to right. */
struct words {
	int argc;
	char **argv;
	int i;
	const char *command; /* for messages: "sa add" */
};

static const char *next_word(struct words *w, const char *what)
{
	if (w->i >= w->argc)
		usage_error("%s: missing %s", w->command, what);
	return w->argv[w->i++];
}

static void expect_end(struct words *w)
{
	if (w->i < w->argc)
		usage_error("%s: unexpected '%s'", w->command, w->argv[w->i]);
}

/* The next word, checked by one of validate.h's checks. */
static const char *checked_word(struct words *w, const char *what,
				int (*check)(const char *s, const char *what, char *err,
					     size_t errlen))
{
	const char *s = next_word(w, what);
	char err[160];

	if (check(s, what, err, sizeof(err)) < 0)
		usage_error("%s", err);
	return s;
}

#define name_word(w, what) checked_word(w, what, esgw_check_name)
#define address_word(w, what) checked_word(w, what, esgw_check_address)
#define prefix_word(w, what) checked_word(w, what, esgw_check_prefix)

static uint32_t number_word(struct words *w, const char *what, uint32_t max)
{
	const char *s = next_word(w, what);
	uint32_t v;

	if (esgw_parse_u32(s, max, &v) < 0)
		usage_error("%s '%s' is not a number 0..%u", what, s, max);
	return v;
}

/* crypto-key, integ-key or salt: HEX, or - (standard input), once each. */
static void key_option(struct words *w, ProtobufCBinaryData *dst, const char *what)
{
	char *word = (char *)next_word(w, what);

	if (dst->data != NULL)
		usage_error("sa add: %s given twice (or also in the key file)", what);
	*dst = esgwctl_key_word(word, what);
}

/* "10,20" -> array of ids. */
static uint32_t *id_list(const char *s, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	uint32_t *ids = zalloc((strlen(s) / 2 + 2) * sizeof(*ids));

	*n = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (esgw_parse_u32(tok, UINT32_MAX, &ids[*n]) < 0)
			usage_error("sa-in: '%s' is not an SA id", tok);
		(*n)++;
	}
	if (*n == 0 || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,") != NULL)
		usage_error("sa-in: '%s' is not a list of SA ids ID[,ID...]", s);
	free(copy);
	return ids;
}

static void interface_cmd(struct words *w, Esgw__Request *req)
{
	const char *verb = next_word(w, "add, del or address");

	if (strcmp(verb, "address") == 0) {
		Esgw__AddressChange *ac = zalloc(sizeof(*ac));
		const char *op = next_word(w, "add or del");

		esgw__address_change__init(ac);
		if (strcmp(op, "add") == 0) {
			w->command = "interface address add";
			req->body_case = ESGW__REQUEST__BODY_ADDRESS_ADD;
			req->address_add = ac;
		} else if (strcmp(op, "del") == 0) {
			w->command = "interface address del";
			req->body_case = ESGW__REQUEST__BODY_ADDRESS_DEL;
			req->address_del = ac;
		} else {
			usage_error("interface address: unknown operation '%s' (add or del)", op);
		}
		ac->interface = (char *)name_word(w, "interface name");
		ac->address = (char *)prefix_word(w, "address");
	} else if (strcmp(verb, "add") == 0) {
		Esgw__Interface *in = zalloc(sizeof(*in));
		char device[128];

		w->command = "interface add";
		esgw__interface__init(in);
		in->name = (char *)name_word(w, "interface name");
		in->devargs = (char *)next_word(w, "DEVARGS (e.g. net_af_packet0,iface=eth1)");
		if (esgw_devargs_device(in->devargs, device, sizeof(device))[0] == '\0')
			usage_error("interface add: devargs '%s' has no device name", in->devargs);
		while (w->i < w->argc) {
			const char *kw = next_word(w, "option");

			if (strcmp(kw, "mtu") != 0)
				usage_error("interface add: unknown option '%s' (mtu N)", kw);
			in->mtu = number_word(w, "mtu", ESGW_MTU_MAX);
			if (in->mtu < ESGW_MTU_MIN)
				usage_error("mtu %u is out of range %d..%d", in->mtu, ESGW_MTU_MIN,
					    ESGW_MTU_MAX);
		}
		req->body_case = ESGW__REQUEST__BODY_INTERFACE_ADD;
		req->interface_add = in;
	} else if (strcmp(verb, "del") == 0) {
		Esgw__NameRef *ref = zalloc(sizeof(*ref));

		w->command = "interface del";
		esgw__name_ref__init(ref);
		ref->name = (char *)name_word(w, "interface name");
		req->body_case = ESGW__REQUEST__BODY_INTERFACE_DEL;
		req->interface_del = ref;
	} else {
		usage_error("interface: unknown operation '%s' (add, del, address)", verb);
	}
	expect_end(w);
}

static void route_cmd(struct words *w, Esgw__Request *req)
{
	const char *verb = next_word(w, "add or del");
	Esgw__Route *r = zalloc(sizeof(*r));

	esgw__route__init(r);
	if (strcmp(verb, "add") == 0) {
		const char *kind;

		w->command = "route add";
		r->prefix = (char *)prefix_word(w, "prefix");
		kind = next_word(w, "'via ADDR' or 'tunnel NAME'");
		if (strcmp(kind, "via") == 0) {
			r->via = (char *)address_word(w, "next hop");
			if (w->i < w->argc) {
				const char *kw = next_word(w, "option");

				if (strcmp(kw, "dev") != 0)
					usage_error("route add: unknown option '%s' (dev NAME)",
						    kw);
				r->interface = (char *)name_word(w, "interface name");
			}
		} else if (strcmp(kind, "tunnel") == 0) {
			r->tunnel = (char *)name_word(w, "tunnel name");
		} else {
			usage_error("route add: expected 'via ADDR' or 'tunnel NAME', got '%s'",
				    kind);
		}
		req->body_case = ESGW__REQUEST__BODY_ROUTE_ADD;
		req->route_add = r;
	} else if (strcmp(verb, "del") == 0) {
		w->command = "route del";
		r->prefix = (char *)prefix_word(w, "prefix");
		req->body_case = ESGW__REQUEST__BODY_ROUTE_DEL;
		req->route_del = r;
	} else {
		usage_error("route: unknown operation '%s' (add or del)", verb);
	}
	expect_end(w);
}

/* lifetime-{soft,hard}-{bytes,packets,seconds} N */
static void lifetime_option(struct words *w, Esgw__Sa *sa, const char *kw)
{
	bool soft = strncmp(kw + 9, "soft-", 5) == 0, hard = strncmp(kw + 9, "hard-", 5) == 0;
	const char *what = kw + 14, *s;
	Esgw__Lifetime **lp = soft ? &sa->lifetime_soft : &sa->lifetime_hard;
	unsigned long long v;
	char *end;

	if ((!soft && !hard) || (strcmp(what, "bytes") != 0 && strcmp(what, "packets") != 0 &&
				 strcmp(what, "seconds") != 0))
		usage_error(
			"sa add: unknown option '%s' (lifetime-soft|hard-bytes|packets|seconds)",
			kw);
	s = next_word(w, kw);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v == 0)
		usage_error("%s '%s' is not a number 1..2^64-1", kw, s);
	if (*lp == NULL) {
		*lp = zalloc(sizeof(**lp));
		esgw__lifetime__init(*lp);
	}
	if (strcmp(what, "bytes") == 0)
		(*lp)->bytes = v;
	else if (strcmp(what, "packets") == 0)
		(*lp)->packets = v;
	else
		(*lp)->seconds = v;
}

/* The value of "esn on|off" and of "encap udp". */
static bool esn_option(struct words *w)
{
	const char *v = next_word(w, "on or off");

	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
		usage_error("esn: expected on or off, got '%s'", v);
	return strcmp(v, "on") == 0;
}

static bool encap_option(struct words *w)
{
	const char *v = next_word(w, "udp");

	if (strcmp(v, "udp") != 0)
		usage_error("encap: only 'udp' (RFC 3948), not '%s'", v);
	return true;
}

/* One keyword of `sa add` (kw, its value next in w) into sa. */
static void sa_add_option(struct words *w, Esgw__Sa *sa, const char *kw, bool *have_spi)
{
	if (strcmp(kw, "spi") == 0) {
		sa->spi = number_word(w, "spi", UINT32_MAX);
		*have_spi = true;
	} else if (strcmp(kw, "alg") == 0) {
		const char *name = next_word(w, "algorithm");

		sa->algorithm = esgw_algorithm_parse(name);
		if (sa->algorithm == ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED)
			usage_error("unknown algorithm '%s' (%s)", name, esgw_algorithm_list());
	} else if (strcmp(kw, "crypto-key") == 0) {
		key_option(w, &sa->crypto_key, "crypto-key");
	} else if (strcmp(kw, "integ-key") == 0) {
		key_option(w, &sa->integ_key, "integ-key");
	} else if (strcmp(kw, "salt") == 0) {
		key_option(w, &sa->salt, "salt");
	} else if (strcmp(kw, "key-file") == 0) {
		esgwctl_key_file(next_word(w, "key-file PATH"), &sa->crypto_key, &sa->integ_key,
				 &sa->salt);
	} else if (strcmp(kw, "replay-window") == 0) {
		sa->replay_window = number_word(w, "replay-window", UINT32_MAX);
	} else if (strcmp(kw, "worker") == 0) {
		sa->worker = (int32_t)number_word(w, "worker", 255);
	} else if (strcmp(kw, "esn") == 0) {
		sa->esn = esn_option(w);
	} else if (strncmp(kw, "lifetime-", 9) == 0) {
		lifetime_option(w, sa, kw);
	} else if (strcmp(kw, "encap") == 0) {
		sa->udp_encap = encap_option(w);
	} else if (strcmp(kw, "sport") == 0) {
		sa->udp_sport = number_word(w, "sport", 65535);
	} else if (strcmp(kw, "dport") == 0) {
		sa->udp_dport = number_word(w, "dport", 65535);
	} else {
		usage_error("sa add: unknown option '%s'", kw);
	}
}

static void sa_add_cmd(struct words *w, Esgw__Request *req)
{
	Esgw__Sa *sa = zalloc(sizeof(*sa));
	bool have_spi = false;
	char err[256];

	w->command = "sa add";
	esgw__sa__init(sa);
	sa->worker = -1; /* least loaded */
	sa->id = number_word(w, "SA id", UINT32_MAX);
	while (w->i < w->argc)
		sa_add_option(w, sa, next_word(w, "option"), &have_spi);
	if (!have_spi)
		usage_error("sa add: missing spi SPI");
	if (sa->algorithm == ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED)
		usage_error("sa add: missing alg ALG (%s)", esgw_algorithm_list());
	/* NULL encryption (RFC 2410) is the one kind without a crypto key. */
	if (sa->crypto_key.data == NULL &&
	    strncmp(esgw_algorithm_name(sa->algorithm), "null-", 5) != 0)
		usage_error("sa add: missing crypto-key HEX");
	if (esgw_check_sa(sa, err, sizeof(err)) < 0)
		usage_error("%s", err);
	req->body_case = ESGW__REQUEST__BODY_SA_ADD;
	req->sa_add = sa;
}

static void sa_update_cmd(struct words *w, Esgw__Request *req)
{
	Esgw__SaUpdate *u = zalloc(sizeof(*u));

	w->command = "sa update";
	esgw__sa_update__init(u);
	u->id = number_word(w, "SA id", UINT32_MAX);
	while (w->i < w->argc) {
		const char *kw = next_word(w, "option");

		if (strcmp(kw, "local") == 0) {
			u->local = (char *)address_word(w, "local address");
		} else if (strcmp(kw, "remote") == 0) {
			u->remote = (char *)address_word(w, "remote address");
		} else if (strcmp(kw, "encap") == 0) {
			const char *v = next_word(w, "udp or none");

			if (strcmp(v, "udp") != 0 && strcmp(v, "none") != 0)
				usage_error("encap: udp (RFC 3948) or none, not '%s'", v);
			u->encap = strcmp(v, "udp") == 0 ? ESGW__SA_UPDATE__ENCAP__ENCAP_UDP
							 : ESGW__SA_UPDATE__ENCAP__ENCAP_NONE;
		} else if (strcmp(kw, "sport") == 0) {
			u->udp_sport = number_word(w, "sport", 65535);
		} else if (strcmp(kw, "dport") == 0) {
			u->udp_dport = number_word(w, "dport", 65535);
		} else {
			usage_error("sa update: unknown option '%s'", kw);
		}
	}
	if (!u->local[0] && !u->remote[0] && u->encap == ESGW__SA_UPDATE__ENCAP__ENCAP_UNCHANGED &&
	    !u->udp_sport && !u->udp_dport)
		usage_error("sa update: give local, remote, encap, sport or dport");
	req->body_case = ESGW__REQUEST__BODY_SA_UPDATE;
	req->sa_update = u;
}

static void sa_cmd(struct words *w, Esgw__Request *req)
{
	const char *verb = next_word(w, "add, del, move or update");

	if (strcmp(verb, "add") == 0) {
		sa_add_cmd(w, req);
	} else if (strcmp(verb, "update") == 0) {
		sa_update_cmd(w, req);
	} else if (strcmp(verb, "move") == 0) {
		Esgw__SaMove *mv = zalloc(sizeof(*mv));
		const char *kw;

		w->command = "sa move";
		esgw__sa_move__init(mv);
		mv->id = number_word(w, "SA id", UINT32_MAX);
		kw = next_word(w, "--worker W");
		if (strcmp(kw, "--worker") != 0 && strcmp(kw, "worker") != 0)
			usage_error("sa move: expected '--worker W', got '%s'", kw);
		mv->worker = number_word(w, "worker", ESGW_MAX_WORKERS - 1);
		req->body_case = ESGW__REQUEST__BODY_SA_MOVE;
		req->sa_move = mv;
	} else if (strcmp(verb, "del") == 0) {
		Esgw__IdRef *ref = zalloc(sizeof(*ref));

		w->command = "sa del";
		esgw__id_ref__init(ref);
		ref->id = number_word(w, "SA id", UINT32_MAX);
		req->body_case = ESGW__REQUEST__BODY_SA_DEL;
		req->sa_del = ref;
	} else {
		usage_error("sa: unknown operation '%s' (add, del, move or update)", verb);
	}
	expect_end(w);
}

static void workers_cmd(struct words *w, Esgw__Request *req)
{
	const char *verb = next_word(w, "set");
	Esgw__WorkersSet *ws = zalloc(sizeof(*ws));

	if (strcmp(verb, "set") != 0)
		usage_error("workers: unknown operation '%s' (set N)", verb);
	w->command = "workers set";
	esgw__workers_set__init(ws);
	/* The limit is esgw-ctld's --max-workers: it says so. */
	ws->count = number_word(w, "number of workers", UINT32_MAX);
	if (ws->count < 1)
		usage_error("workers set: N must be at least 1");
	expect_end(w);
	req->body_case = ESGW__REQUEST__BODY_WORKERS_SET;
	req->workers_set = ws;
}

static void tunnel_add_cmd(struct words *w, Esgw__Request *req)
{
	Esgw__Tunnel *t = zalloc(sizeof(*t));
	bool have_out = false;

	w->command = "tunnel add";
	esgw__tunnel__init(t);
	t->name = (char *)name_word(w, "tunnel name");
	while (w->i < w->argc) {
		const char *kw = next_word(w, "option");

		if (strcmp(kw, "local") == 0) {
			t->local = (char *)address_word(w, "local address");
		} else if (strcmp(kw, "remote") == 0) {
			t->remote = (char *)address_word(w, "remote address");
		} else if (strcmp(kw, "sa-out") == 0) {
			t->sa_out = number_word(w, "sa-out", UINT32_MAX);
			have_out = true;
		} else if (strcmp(kw, "sa-in") == 0) {
			t->sa_in = id_list(next_word(w, "sa-in ID[,ID...]"), &t->n_sa_in);
		} else {
			usage_error("tunnel add: unknown option '%s'", kw);
		}
	}
	if (t->local[0] == '\0')
		usage_error("tunnel add: missing local ADDR");
	if (t->remote[0] == '\0')
		usage_error("tunnel add: missing remote ADDR");
	if (!have_out)
		usage_error("tunnel add: missing sa-out ID");
	if (t->n_sa_in == 0)
		usage_error("tunnel add: missing sa-in ID[,ID...]");
	req->body_case = ESGW__REQUEST__BODY_TUNNEL_ADD;
	req->tunnel_add = t;
}

static void tunnel_set_cmd(struct words *w, Esgw__Request *req)
{
	Esgw__Tunnel *t = zalloc(sizeof(*t));

	w->command = "tunnel set";
	esgw__tunnel__init(t);
	t->name = (char *)name_word(w, "tunnel name");
	while (w->i < w->argc) {
		const char *kw = next_word(w, "option");

		if (strcmp(kw, "sa-out") == 0) {
			t->sa_out = number_word(w, "sa-out", UINT32_MAX);
			if (t->sa_out == 0)
				usage_error("sa-out: SA id 0 is reserved");
		} else if (strcmp(kw, "sa-in") == 0) {
			t->sa_in = id_list(next_word(w, "sa-in ID[,ID...]"), &t->n_sa_in);
		} else {
			usage_error("tunnel set: unknown option '%s' (sa-out ID, sa-in "
				    "ID[,ID...])",
				    kw);
		}
	}
	if (t->sa_out == 0 && t->n_sa_in == 0)
		usage_error("tunnel set: give sa-out ID and/or sa-in ID[,ID...]");
	req->body_case = ESGW__REQUEST__BODY_TUNNEL_SET;
	req->tunnel_set = t;
}

static void tunnel_cmd(struct words *w, Esgw__Request *req)
{
	const char *verb = next_word(w, "add, set or del");

	if (strcmp(verb, "add") == 0) {
		tunnel_add_cmd(w, req);
	} else if (strcmp(verb, "set") == 0) {
		tunnel_set_cmd(w, req);
	} else if (strcmp(verb, "del") == 0) {
		Esgw__NameRef *ref = zalloc(sizeof(*ref));

		w->command = "tunnel del";
		esgw__name_ref__init(ref);
		ref->name = (char *)name_word(w, "tunnel name");
		req->body_case = ESGW__REQUEST__BODY_TUNNEL_DEL;
		req->tunnel_del = ref;
	} else {
		usage_error("tunnel: unknown operation '%s' (add, set or del)", verb);
	}
	expect_end(w);
}

static const struct {
	const char *word;
	Esgw__ShowRequest__What what;
} show_items[] = {
	{"interfaces", ESGW__SHOW_REQUEST__WHAT__WHAT_INTERFACES},
	{"interface", ESGW__SHOW_REQUEST__WHAT__WHAT_INTERFACES},
	{"routes", ESGW__SHOW_REQUEST__WHAT__WHAT_ROUTES},
	{"route", ESGW__SHOW_REQUEST__WHAT__WHAT_ROUTES},
	{"sa", ESGW__SHOW_REQUEST__WHAT__WHAT_SAS},
	{"sas", ESGW__SHOW_REQUEST__WHAT__WHAT_SAS},
	{"tunnels", ESGW__SHOW_REQUEST__WHAT__WHAT_TUNNELS},
	{"tunnel", ESGW__SHOW_REQUEST__WHAT__WHAT_TUNNELS},
	{"stats", ESGW__SHOW_REQUEST__WHAT__WHAT_STATS},
	{"workers", ESGW__SHOW_REQUEST__WHAT__WHAT_WORKERS},
	{"worker", ESGW__SHOW_REQUEST__WHAT__WHAT_WORKERS},
	{"config", ESGW__SHOW_REQUEST__WHAT__WHAT_CONFIG},
	{"dataplane", ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE},
	{"policies", ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES},
	{"policy", ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES},
	{"neighbors", ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS},
	{"neighbor", ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS},
};

static void show_cmd(struct words *w, Esgw__Request *req)
{
	const char *item;
	Esgw__ShowRequest *s = zalloc(sizeof(*s));

	w->command = "show";
	item = next_word(w, "what to show (interfaces, routes, sa, tunnels, stats, workers, "
			    "config, dataplane)");
	esgw__show_request__init(s);
	for (size_t i = 0; i < sizeof(show_items) / sizeof(show_items[0]); i++)
		if (strcmp(show_items[i].word, item) == 0)
			s->what = show_items[i].what;
	if (s->what == ESGW__SHOW_REQUEST__WHAT__WHAT_UNSPECIFIED)
		usage_error("show: unknown item '%s' (interfaces, routes, sa, tunnels, stats, "
			    "workers, config, dataplane)",
			    item);
	expect_end(w);
	req->body_case = ESGW__REQUEST__BODY_SHOW;
	req->show = s;
}

bool command_parse(int argc, char **argv, Esgw__Request *req)
{
	struct words w = {.argc = argc, .argv = argv, .command = "esgwctl"};
	const char *object;

	esgw__request__init(req);
	req->version = ESGW__API_VERSION__API_VERSION_CURRENT;
	if (argc == 0)
		usage_error("missing command (try 'esgwctl help')");
	object = next_word(&w, "command");
	w.command = object;
	if (strcmp(object, "help") == 0 || strcmp(object, "--help") == 0 ||
	    strcmp(object, "-h") == 0)
		return false;
	if (strcmp(object, "interface") == 0)
		interface_cmd(&w, req);
	else if (strcmp(object, "route") == 0)
		route_cmd(&w, req);
	else if (strcmp(object, "sa") == 0)
		sa_cmd(&w, req);
	else if (strcmp(object, "tunnel") == 0)
		tunnel_cmd(&w, req);
	else if (strcmp(object, "workers") == 0)
		workers_cmd(&w, req);
	else if (strcmp(object, "show") == 0)
		show_cmd(&w, req);
	else if (strcmp(object, "policy") == 0)
		policy_cmd_parse(argc - w.i, argv + w.i, req);
	else if (strcmp(object, "neighbor") == 0)
		neighbor_cmd_parse(argc - w.i, argv + w.i, req);
	else
		usage_error("unknown command '%s' (try 'esgwctl help')", object);
	return true;
}

void command_wipe(Esgw__Request *req)
{
	if (req->body_case == ESGW__REQUEST__BODY_BATCH)
		for (size_t i = 0; i < req->batch->n_requests; i++)
			command_wipe(req->batch->requests[i]);
	if (req->body_case != ESGW__REQUEST__BODY_SA_ADD)
		return;
	if (req->sa_add->crypto_key.data)
		explicit_bzero(req->sa_add->crypto_key.data, ESGWCTL_KEY_MAX);
	if (req->sa_add->integ_key.data)
		explicit_bzero(req->sa_add->integ_key.data, ESGWCTL_KEY_MAX);
	if (req->sa_add->salt.data)
		explicit_bzero(req->sa_add->salt.data, ESGWCTL_KEY_MAX);
}
