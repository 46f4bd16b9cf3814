/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's command line: the options into ctld.opt, each checked (CPU
 * placement against our own affinity mask) before anything starts. */
#include "ctld.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_list.h"
#include "log.h"
#include "slot_table.h"

#define IDLE_TIMEOUT_DEFAULT 120 /* seconds a control client may stay silent */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: esgw-ctld [--socket PATH] [--config FILE] [--rundir DIR] [--file-prefix P]\n"
		"                 [--standalone] [--workers N] [--bindir DIR] [--log-dir DIR]\n"
		"                 [--rxtx-cpu N] [--router-cpu N] [--worker-cpus LIST] [--busy-poll]\n"
		"                 [--seq-reserve N] [--idle-timeout SECONDS] [--max-sas N]\n"
		"                 [--max-workers N] [--slice-us N]\n"
		"defaults: socket /run/esgw/ctl.sock, config /var/lib/esgw/config.pb,\n"
		"          rundir /run/esgw, file prefix esgw, workers 1 (or as saved),\n"
		"          bindir: the directory of esgw-ctld, log dir: the rundir\n"
		"CPU placement (--standalone only; systemd units use their 10-cpu.conf):\n"
		"  --rxtx-cpu N, --router-cpu N   default 0\n"
		"  --worker-cpus LIST             CPUs and ranges, e.g. 1 or 0,1 or 2-5,8;\n"
		"                                 crypto worker N runs on LIST[N mod length];\n"
		"                                 default 1 (0 when CPU 1 is not ours)\n"
		"  every CPU must be in esgw-ctld's own affinity mask\n"
		"--busy-poll (--standalone only): the dataplane never sleeps when idle, a\n"
		"  whole CPU per process (to compare with the adaptive polling default)\n"
		"--slice-us N (--standalone only): the scheduler slice every dataplane process\n"
		"  asks for, %d..%d us or 0 for the kernel's (default %d): a process woken\n"
		"  by a doorbell preempts a busy neighbour on its CPU at once\n"
		"--seq-reserve N: outbound sequence numbers each SA may use beyond what is\n"
		"  saved, %u..%u (default %llu); an SA that outruns the saves holds its\n"
		"  packets. Make it several seconds at the busiest SA's packet rate.\n"
		"--idle-timeout SECONDS: close a control client that sends no request for this\n"
		"  long (default %d; event subscribers excepted)\n"
		"--max-sas N: SAs the gateway holds (two per tunnel), 1..%u (default %d);\n"
		"  esgw-rxtx takes %d MiB of hugepage memory for the default, %d bytes\n"
		"  more per SA above it (checked against the host's hugepages at start)\n"
		"--max-workers N: the most crypto workers `workers set` accepts, 1..%d\n"
		"  (default %d or the CPUs online if more; rings and doorbells for N)\n",
		ESGW_DP_SLICE_US_MIN, ESGW_DP_SLICE_US_MAX, ESGW_DP_SLICE_US_DEFAULT, SEQ_RESERVE_MIN,
		SEQ_RESERVE_MAX, SEQ_RESERVE_DEFAULT, IDLE_TIMEOUT_DEFAULT,
		ESGW_MAX_SAS_CAP, ESGW_DEFAULT_MAX_SAS, ESGW_RXTX_MEM_DEFAULT_MB, ESGW_SA_SHARED_BYTES,
		ESGW_MAX_WORKERS, ESGW_DEFAULT_MAX_WORKERS);
}

/* Exit 2 unless cpus[0..n-1] are all CPUs we may run on: a child pinned to
 * any other CPU fails in DPDK's EAL init, and would be restarted forever. */
static void check_cpus_allowed(const char *option, bool is_default, const int *cpus, int n,
			       const cpu_set_t *allowed)
{
	char list[256];
	int i = cpu_list_first_missing(cpus, n, allowed);

	if (i < 0)
		return;
	cpu_set_format(allowed, list, sizeof(list));
	fprintf(stderr, "esgw-ctld: %s: CPU %d%s is not available (allowed: %s)\n", option, cpus[i],
		is_default ? " (the default)" : "", list);
	exit(2);
}

/* One CPU from an option's text (or def when the option is absent). */
static int parse_one_cpu(const char *option, const char *text, int def, const cpu_set_t *allowed)
{
	char err[256];
	int cpu = def;

	if (text != NULL && (text[0] == '\0' || text[strspn(text, "0123456789")] != '\0')) {
		fprintf(stderr, "esgw-ctld: %s: '%s' is not one CPU\n", option, text);
		exit(2);
	}
	if (text != NULL && cpu_list_parse(text, &cpu, 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "esgw-ctld: %s: %s\n", option, err);
		exit(2);
	}
	check_cpus_allowed(option, text == NULL, &cpu, 1, allowed);
	return cpu;
}

/* --rxtx-cpu, --router-cpu and --worker-cpus, checked before anything starts. */
static void parse_placement(const char *rxtx_text, const char *router_text,
			    const char *workers_text)
{
	static int worker_cpus[CPU_SETSIZE];
	cpu_set_t allowed;
	char err[256];
	int n = 1;

	if (!ctld.opt.standalone) {
		/* An option that silently does nothing is worse than a refusal. */
		if (rxtx_text != NULL || router_text != NULL || workers_text != NULL) {
			fprintf(stderr, "esgw-ctld: --rxtx-cpu, --router-cpu and --worker-cpus "
					"apply to --standalone only (the systemd units take their "
					"CPUs from their 10-cpu.conf drop-ins)\n");
			exit(2);
		}
		return;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		fprintf(stderr, "esgw-ctld: sched_getaffinity: %s\n", strerror(errno));
		exit(1);
	}
	ctld.opt.rxtx_cpu = parse_one_cpu("--rxtx-cpu", rxtx_text, 0, &allowed);
	ctld.opt.router_cpu = parse_one_cpu("--router-cpu", router_text, 0, &allowed);
	worker_cpus[0] = CPU_ISSET(1, &allowed) ? 1 : 0;
	if (workers_text != NULL) {
		n = cpu_list_parse(workers_text, worker_cpus, CPU_SETSIZE, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "esgw-ctld: --worker-cpus: %s\n", err);
			exit(2);
		}
	}
	check_cpus_allowed("--worker-cpus", workers_text == NULL, worker_cpus, n, &allowed);
	ctld.opt.worker_cpus = worker_cpus;
	ctld.opt.n_worker_cpus = n;
}

/* One line at start-up saying where each process will run. */
void ctld_options_log_placement(void)
{
	char list[256];

	cpu_list_format(ctld.opt.worker_cpus, ctld.opt.n_worker_cpus, list, sizeof(list));
	ESGW_INFO("CPU placement: rxtx on CPU %d, router on CPU %d, crypto workers on CPUs %s "
		  "(worker N on entry N mod %d)",
		  ctld.opt.rxtx_cpu, ctld.opt.router_cpu, list, ctld.opt.n_worker_cpus);
}

static const struct option longopts[] = {
	{"socket", required_argument, NULL, 's'},
	{"config", required_argument, NULL, 'c'},
	{"rundir", required_argument, NULL, 'r'},
	{"file-prefix", required_argument, NULL, 'p'},
	{"standalone", no_argument, NULL, 'S'},
	{"workers", required_argument, NULL, 'w'},
	{"bindir", required_argument, NULL, 'b'},
	{"log-dir", required_argument, NULL, 'l'},
	{"rxtx-cpu", required_argument, NULL, 'X'},
	{"router-cpu", required_argument, NULL, 'R'},
	{"worker-cpus", required_argument, NULL, 'W'},
	{"busy-poll", no_argument, NULL, 'B'},
	{"slice-us", required_argument, NULL, 'L'},
	{"seq-reserve", required_argument, NULL, 'Q'},
	{"idle-timeout", required_argument, NULL, 'I'},
	{"max-sas", required_argument, NULL, 'M'},
	{"max-workers", required_argument, NULL, 'K'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* The CPU options, checked together once the mode is known. */
struct cpu_texts {
	const char *rxtx, *router, *workers;
};

static double parse_idle_timeout(const char *text)
{
	char *end;
	double v = strtod(text, &end);

	if (text[0] == '\0' || *end != '\0' || !(v >= 0.1) || v > 86400) {
		fprintf(stderr, "esgw-ctld: --idle-timeout must be 0.1..86400 seconds\n");
		exit(2);
	}
	return v;
}

static uint64_t parse_seq_reserve(const char *text)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v < SEQ_RESERVE_MIN ||
	    v > SEQ_RESERVE_MAX) {
		fprintf(stderr, "esgw-ctld: --seq-reserve must be %u..%u\n", SEQ_RESERVE_MIN,
			SEQ_RESERVE_MAX);
		exit(2);
	}
	return v;
}

/* A number 1..max for option (exit 2 otherwise). */
static uint32_t parse_count(const char *option, const char *text, long max)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (text[0] == '\0' || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "esgw-ctld: %s must be 1..%ld\n", option, max);
		exit(2);
	}
	return (uint32_t)v;
}

/* --slice-us: 0, or ESGW_DP_SLICE_US_MIN..MAX (exit 2 otherwise). */
static int parse_slice(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (text[0] == '\0' || *end != '\0' || v < 0 || v > ESGW_DP_SLICE_US_MAX ||
	    (v != 0 && v < ESGW_DP_SLICE_US_MIN)) {
		fprintf(stderr, "esgw-ctld: --slice-us must be 0 or %d..%d\n", ESGW_DP_SLICE_US_MIN,
			ESGW_DP_SLICE_US_MAX);
		exit(2);
	}
	return (int)v;
}

/* --max-workers' default: ESGW_DEFAULT_MAX_WORKERS, or the CPUs online if
 * more (a worker per CPU), within ESGW_MAX_WORKERS. */
static uint32_t default_max_workers(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < ESGW_DEFAULT_MAX_WORKERS)
		return ESGW_DEFAULT_MAX_WORKERS;
	return cpus > ESGW_MAX_WORKERS ? ESGW_MAX_WORKERS : (uint32_t)cpus;
}

/* One option (getopt_long's c) into ctld.opt, or into cpu. */
static void option_set(int c, const char *arg, struct cpu_texts *cpu)
{
	switch (c) {
	case 's':
		ctld.opt.socket_path = arg;
		break;
	case 'c':
		ctld.opt.config_path = arg;
		break;
	case 'r':
		ctld.opt.rundir = arg;
		break;
	case 'p':
		ctld.opt.file_prefix = arg;
		break;
	case 'S':
		ctld.opt.standalone = true;
		break;
	case 'b':
		ctld.opt.bindir = arg;
		break;
	case 'l':
		ctld.opt.log_dir = arg;
		break;
	case 'X':
		cpu->rxtx = arg;
		break;
	case 'R':
		cpu->router = arg;
		break;
	case 'W':
		cpu->workers = arg;
		break;
	case 'B':
		ctld.opt.busy_poll = true;
		break;
	case 'L':
		ctld.opt.slice_us = parse_slice(arg);
		break;
	case 'I':
		ctld.opt.idle_timeout = parse_idle_timeout(arg);
		break;
	case 'Q':
		ctld.opt.seq_reserve = parse_seq_reserve(arg);
		break;
	case 'M':
		ctld.opt.max_sas = parse_count("--max-sas", arg, ESGW_MAX_SAS_CAP);
		break;
	case 'K':
		ctld.opt.max_workers = parse_count("--max-workers", arg, ESGW_MAX_WORKERS);
		break;
	case 'w':
		ctld.opt.workers = (int)parse_count("--workers", arg, ESGW_MAX_WORKERS);
		break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		exit(2);
	}
}

/* What only the whole command line tells: words left over, the file prefix,
 * the options that need --standalone. */
static void options_check(int argc, char **argv, const struct cpu_texts *cpu)
{
	if (optind < argc) {
		fprintf(stderr, "esgw-ctld: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	/* The prefix names files ctld deletes on exit: keep it a plain word. */
	if (ctld.opt.file_prefix[0] == '\0' || strpbrk(ctld.opt.file_prefix, "/*?[. ") != NULL) {
		fprintf(stderr, "esgw-ctld: --file-prefix must be a plain non-empty word\n");
		exit(2);
	}
	parse_placement(cpu->rxtx, cpu->router, cpu->workers);
	if (ctld.opt.workers > (int)ctld.opt.max_workers) {
		fprintf(stderr, "esgw-ctld: --workers %d is above --max-workers %u\n",
			ctld.opt.workers, ctld.opt.max_workers);
		exit(2);
	}
	if (ctld.opt.busy_poll && !ctld.opt.standalone) {
		fprintf(stderr, "esgw-ctld: --busy-poll applies to --standalone only\n");
		exit(2);
	}
	if (ctld.opt.slice_us >= 0 && !ctld.opt.standalone) {
		fprintf(stderr, "esgw-ctld: --slice-us applies to --standalone only (systemd units: "
				"the process's own --slice-us)\n");
		exit(2);
	}
}

/* Hugepage memory the host reserves, in KiB (/proc/meminfo's Hugetlb: every
 * page size; else HugePages_Total pages of Hugepagesize); -1 if unknown. */
static long long hugepages_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	long long hugetlb = -1, pages = -1, page_kib = -1, v;
	char line[256];

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Hugetlb: %lld kB", &v) == 1)
			hugetlb = v;
		else if (sscanf(line, "HugePages_Total: %lld", &v) == 1)
			pages = v;
		else if (sscanf(line, "Hugepagesize: %lld kB", &v) == 1)
			page_kib = v;
	}
	fclose(f);
	if (hugetlb >= 0)
		return hugetlb;
	return pages >= 0 && page_kib >= 0 ? pages * page_kib : -1;
}

/* Exit 2 if the host's hugepages cannot hold esgw-rxtx's memory for
 * --max-sas: at start, not as an esgw-rxtx restarted forever. */
static void check_hugepages(void)
{
	uint32_t need_mb = esgw_rxtx_mem_mb(ctld.opt.max_sas);
	long long have_kib = hugepages_kib();

	if (have_kib < 0 || have_kib >= (long long)need_mb * 1024)
		return;
	fprintf(stderr,
		"esgw-ctld: --max-sas %u needs %u MiB of hugepage memory for esgw-rxtx (%d bytes "
		"per SA slot: %.1f MiB for the slots), the host reserves %lld MiB: lower "
		"--max-sas or reserve more hugepages (deploy/setup-host.sh, ESGW_HUGEPAGES)\n",
		ctld.opt.max_sas, need_mb, ESGW_SA_SHARED_BYTES,
		(double)ctld.opt.max_sas * ESGW_SA_SHARED_BYTES / (1 << 20), have_kib / 1024);
	exit(2);
}

void *ctld_slots_calloc(size_t size)
{
	void *t = esgw_slot_table_alloc(ctld.opt.max_sas, size);

	if (t == NULL) {
		ESGW_ERR("out of memory for a table of %u SA slots of %zu bytes (--max-sas)",
			 ctld.opt.max_sas, size);
		exit(1);
	}
	return t;
}

/* The directories whose default is another: esgw-ctld's own, the rundir. */
static void options_default_dirs(void)
{
	static char self_dir[PATH_MAX];

	if (ctld.opt.bindir == NULL) {
		ssize_t n = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);

		self_dir[n > 0 ? n : 0] = '\0';
		ctld.opt.bindir = n > 0 ? dirname(self_dir) : ".";
	}
	if (ctld.opt.log_dir == NULL)
		ctld.opt.log_dir = ctld.opt.rundir;
}

void ctld_options_parse(int argc, char **argv)
{
	struct cpu_texts cpu = {0};
	int c;

	ctld.opt = (struct ctld_options){
		.socket_path = "/run/esgw/ctl.sock",
		.config_path = "/var/lib/esgw/config.pb",
		.rundir = "/run/esgw",
		.file_prefix = "esgw",
		.workers = -1,
		.slice_us = -1,
		.seq_reserve = SEQ_RESERVE_DEFAULT,
		.idle_timeout = IDLE_TIMEOUT_DEFAULT,
		.max_sas = ESGW_DEFAULT_MAX_SAS,
		.max_workers = default_max_workers(),
	};
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		option_set(c, optarg, &cpu);
	options_check(argc, argv, &cpu);
	check_hugepages();
	options_default_dirs();
}
