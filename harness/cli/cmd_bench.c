/*
 * cmd_bench.c - `lockbench bench` (make bench): side-by-side measurements in
 * one run, on the same servers, reported as ratios against named baselines:
 *  1. harness overhead: token-lua, 1 client, no work, hold 0, against the rate
 *     redis-benchmark -c 1 gets for the same two commands;
 *  2. contended hand-off: 8 clients, one key, counter work, hold 0, for each
 *     wait policy, against the serial limit of one section per 4 round trips
 *     (the round trip from redis-benchmark -c 1 PING);
 *  3. a library through the adapter protocol: the protocol's own cost (the
 *     C null adapter, null-c, no Redis work) against a redis-py@4.3.4
 *     section at 1 client, and each language's null adapter (its protocol
 *     loop) against it; then redis-py and token-lua under the same contended
 *     load, every library at 1 and 8 clients, and at 8 each library's
 *     adapter share: the CPU time per section (user + system, of the clients
 *     and their adapters, read by each client: client.c, cpu_used) of its
 *     language's null adapter under the same load over the library's;
 *  4. scaling: a sweep over 1..64 clients of every strategy (throughput, p99,
 *     commands per section, client RSS);
 *  5. Redlock fan-out: redlock's (5 nodes) acquire latency / token-lua's (1 node);
 *  7. what each library costs the lock's servers while a client holds the lock
 *     and while it does not, per client-second, counted by the relay per
 *     client (--count-commands): 3 clients, sections of 1.5 s, its own wait,
 *     at the scenarios' TTL (1 s) and at its own defaults (where its adapter
 *     takes `defaults`), against the recipe of its shape polling every 10 ms;
 *  6. fairness at scale: 8, 64, 256, 1024 and 4096 clients on one lock (hold
 *     5 ms), fair (a FIFO hand-off) against token-lua's polling and notify
 *     policies (at 4096 notify only): throughput, p99 and Jain's index over
 *     the steady state, with fair's goals (Jain >= 0.9 at every count, at
 *     1024 clients 0.8 of the 200 sections/s the hold allows); and the time
 *     a waiter killed in fair's queue holds it up, against its documented
 *     bound.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "commands.h"
#include "esc.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "rserver.h"
#include "scenario.h"
#include "results.h"
#include "signals.h"

#define BENCH_NODES 6 /* 5 lock nodes for redlock (node 0 for the others) + resource */

struct bench {
	struct lb_server *srv[BENCH_NODES];
	char one[128];   /* --redis for single-node strategies: node 0 + resource */
	char five[512];  /* node 0..4 + resource */
	char out[PATH_MAX - 256];
	char undrawn[400]; /* why a chart was not drawn (lb_gnuplot) */
	double duration;
	FILE *csv;
	FILE *md;
	struct lb_outfile csv_out, md_out; /* in place: an interrupted bench keeps its rows */
	int misses;
	double serial;   /* the serial limit: PING/4 */
	char only;       /* --only N: '3', '6', '7', '8', or 0 */
	bool cost_only;  /* --only 7: item 7 alone (it needs nothing the others measure) */
	bool libs_only;  /* --only 3: the baselines, then item 3 alone (every library and
			    consensus lock beside the recipes) */
	double ping, r_set, r_cad; /* redis-benchmark -c 1: PING, SET NX PX, EVALSHA per s */
	double token_mean; /* token-lua's mean acquire at 1 client, us (item 1) */
};

/* The index of the median of three ratios (ties by position). */
static int median3(const double r[3])
{
	int mid = 0;
	for (int k = 0; k < 3; k++) {
		int below = 0;
		for (int j = 0; j < 3; j++)
			below += r[j] < r[k] || (r[j] == r[k] && j < k);
		if (below == 1)
			mid = k;
	}
	return mid;
}

/* Run a program and capture its standard output (at most @len bytes). */
static int capture(const char *const *argv, char *buf, size_t len)
{
	int pfd[2], status;
	size_t used = 0;

	if (pipe(pfd) < 0)
		return LB_ESYS;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return LB_ESYS;
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		/* runs: redis-benchmark (redis-tools), /usr/bin/python3 (python3-minimal) */
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (ssize_t k; used < len - 1 && (k = read(pfd[0], buf + used, len - 1 - used)) > 0;)
		used += (size_t)k;
	buf[used] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : LB_ESYS;
}

/* requests per second redis-benchmark -c 1 gets for one command. */
static double redis_benchmark(int port, const char *const *cmd)
{
	char portbuf[16], out[4096];
	const char *argv[24] = { "redis-benchmark", "-h", "127.0.0.1", "-p", portbuf, "-c", "1",
				 "-n", "40000", "--csv" };
	int n = 10;

	snprintf(portbuf, sizeof(portbuf), "%d", port);
	for (; *cmd && n < 23; cmd++)
		argv[n++] = *cmd;
	argv[n] = NULL;
	if (capture(argv, out, sizeof(out)) < 0)
		return -1;
	/* the last line: "NAME","rps",... */
	char *last = strrchr(out, '\n');
	while (last && last > out && last[1] == '\0') {
		*last = '\0';
		last = strrchr(out, '\n');
	}
	const char *rps = strstr(last ? last : out, "\",\"");
	return rps ? strtod(rps + 3, NULL) : -1;
}

static void row(struct bench *b, const char *item, const char *what, double value,
		const char *unit, double baseline, const char *base_what, double ratio,
		const char *goal, int met)
{
	if (lb_stop_requested() && met >= 0) /* a run cut short judges no goal */
		met = -1, goal = "(interrupted: not judged)";
	if (isnan(value) || isnan(ratio)) { /* not measured: n/a, never 0 */
		lb_esc_fprintf(b->csv, LB_LANG_CSV, "%s,%s,n/a,%s,%.3f,%s,n/a,%s,-\n", item, what, unit,
			       baseline, base_what, goal);
		lb_esc_fprintf(b->md, LB_LANG_MD, "| %s | %s | n/a | %.4g (%s) | **n/a** | %s |\n",
			       item, what, baseline, base_what, goal);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-26s %10s %-10s vs %10.1f %-28s ratio n/a %s\n",
			       what, "n/a", unit, baseline, base_what, goal);
		fflush(stdout);
		b->misses += met == 0;
		return;
	}
	/* the descriptions hold commas: quoted (RFC 4180), as every CSV lockbench writes */
	lb_esc_fprintf(b->csv, LB_LANG_CSV, "%s,%s,%.3f,%s,%.3f,%s,%.5f,%s,%s\n", item, what, value,
		       unit, baseline, base_what, ratio, goal, met < 0 ? "-" : met ? "yes" : "no");
	/* two significant digits below 0.1: a ratio of 0.0026 is not 0.00 */
	int prec = ratio > 0 && ratio < 0.1 ? 2 - (int)floor(log10(ratio)) : 2;
	lb_esc_fprintf(b->md, LB_LANG_MD, "| %s | %s | %.4g %s | %.4g (%s) | **%.*f** | %s %s |\n",
		       item, what, value, unit, baseline, base_what, prec, ratio, goal,
		       met < 0 ? "" : met ? "✔" : "✘ missed");
	lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-26s %10.1f %-10s vs %10.1f %-28s ratio %6.*f %s %s\n",
		       what, value, unit, baseline, base_what, prec, ratio, goal,
		       met < 0 ? "" : met ? "met" : "MISSED");
	fflush(stdout);
	b->misses += met == 0;
}

static int bench_run(struct bench *b, struct lb_run_cfg *cfg, const char *name,
		     struct lb_run_result *res)
{
	struct lb_summary sum;

	snprintf(cfg->out_dir, sizeof(cfg->out_dir), "%.3800s/runs/%.60s", b->out, name);
	cfg->status_line = false;
	cfg->no_report = true;
	if (lb_results_prepare_dir(cfg->out_dir) < 0 || lb_run(cfg, res) < 0)
		return LB_ESYS;
	lb_summary_build(cfg, res, &sum);
	return lb_results_write(cfg, res, &sum);
}

static void base_cfg(struct bench *b, struct lb_run_cfg *cfg, const char *strategy)
{
	char *argv[] = { "bench", NULL };
	struct lb_run_opts o;

	lb_run_opts_parse(1, argv, LB_OPTS_RUN_DEFAULTS, &o);
	*cfg = o.cfg;
	cfg->strategy = lb_strategy_find(strategy);
	cfg->duration_s = b->duration;
	cfg->hold_min_ms = cfg->hold_max_ms = 0;
	cfg->seed = 1;
	cfg->redis_urls = cfg->strategy->min_nodes > 1 ? b->five : b->one;
	cfg->own_urls = true; /* bench started them */
	if (lb_consensus_of(cfg->strategy)) { /* its own ensemble, started for the run */
		cfg->redis_urls = NULL;
		cfg->own_urls = false;
	}
	snprintf(cfg->cmdline, sizeof(cfg->cmdline), "lockbench bench");
}

/* Mean time of one section (acquire to the end of the release) in us, from
 * a run's throughput: the adapter's cost shows per section, not per call. */
static double us_per_section(const struct lb_run_result *res)
{
	return res->throughput_per_s > 0 ? 1e6 / res->throughput_per_s : 0;
}

/* One 1-client, hold-0 run of @strategy (work none): us per section. */
static double solo(struct bench *b, const struct lock_strategy *s, const char *name)
{
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };
	double us = 0;

	base_cfg(b, &cfg, "token-lua");
	cfg.strategy = s;
	cfg.clients = 1;
	cfg.work = LB_WORK_NONE;
	cfg.duration_s = b->duration / 3 > 1 ? b->duration / 3 : 1;
	if (bench_run(b, &cfg, name, &res) == 0 && res.n_sections > 0)
		us = us_per_section(&res);
	lb_run_result_free(&res);
	return us;
}

/* Jain's index of the sections each client entered after @from_ns, over the
 * clients alive to the end: the steady state, without the start-up, when
 * clients fork and connect one after another and the first ones run alone. */
static double steady_jain(const struct lb_run_result *res, int clients, int64_t from_ns)
{
	uint64_t *n = calloc((size_t)clients, sizeof(*n));
	bool *dead = calloc((size_t)clients, sizeof(*dead));
	double j = 0;

	if (n && dead) {
		for (size_t i = 0; i < res->n_sections; i++) {
			const struct lb_section *s = &res->sections[i];
			if (s->outcome == LB_OUT_KILLED)
				dead[s->client] = true;
			else if (s->enter_ns >= from_ns)
				n[s->client]++;
		}
		size_t k = 0;
		for (int c = 0; c < clients; c++)
			if (!dead[c])
				n[k++] = n[c];
		j = lb_jain(n, k);
	}
	free(n);
	free(dead);
	return j;
}

struct fair_point {
	const char *strategy, *wait;
	int clients;
	double per_s, p99_ms, jain;
	double cpu_us, pss_kb, private_kb; /* lockbench's CPU a section, a client's memory */
};

static void fairness_chart(struct bench *b, const struct fair_point *p, size_t n)
{
	struct lb_outfile d, g;

	if (lb_outfile_open(&d, b->out, "fairness.dat", true) < 0)
		return;
	fprintf(d.f, "# config clients sections_per_s p99_ms jain\n");
	for (size_t i = 0; i < n; i++)
		fprintf(d.f, "%s/%s %d %.2f %.3f %.4f\n", p[i].strategy, p[i].wait, p[i].clients,
			p[i].per_s, p[i].p99_ms, p[i].jain);
	if (lb_outfile_close(&d) < 0 || lb_outfile_open(&g, b->out, "fairness.gp", true) < 0)
		return;
	fprintf(g.f, "set terminal pngcairo noenhanced size 1100,420 font 'DejaVu Sans,10'\n"
		     "set output 'fairness.png'\nset multiplot layout 1,2\n"
		     "set logscale x 2\nset xlabel 'clients on one lock'\nset grid\n"
		     "set key bottom left\nset title \"Jain's index, steady state (1 = all served alike)\"\n"
		     "set yrange [0:1.05]\n"
		     "plot for [c in 'fair/notify token-lua/notify token-lua/fixed:10 token-lua/backoff:1:20'] "
		     "'fairness.dat' using (strcol(1) eq c ? $2 : 1/0):5 with linespoints lw 2 title c\n"
		     "set title 'sections per second'\nset autoscale y\nset yrange [0:*]\n"
		     "set key top right\n"
		     "plot for [c in 'fair/notify token-lua/notify token-lua/fixed:10 token-lua/backoff:1:20'] "
		     "'fairness.dat' using (strcol(1) eq c ? $2 : 1/0):3 with linespoints lw 2 title c\n"
		     "unset multiplot\n");
	if (lb_outfile_close(&g) == 0 && lb_gnuplot(b->out, "fairness.gp", b->undrawn, sizeof(b->undrawn)) == 0)
		fprintf(b->md, "\n![fairness at scale](fairness.png)\n\n");
}

/* A waiter killed while queued in fair: the longest time nobody held the
 * lock afterwards, against the documented bound (grace 3 polls + 100 ms,
 * plus a poll for the next waiter to take the lock back). */
static int bench_dead_waiter(struct bench *b)
{
	char path[PATH_MAX + 16];
	struct lb_scenario *sc = calloc(1, sizeof(*sc));
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };
	int rc;

	if (!sc)
		return LB_ENOMEM;
	snprintf(path, sizeof(path), "%.4000s/dead-waiter.ini", b->out);
	FILE *f = fopen(path, "w");
	if (!f) {
		free(sc);
		return LB_ESYS;
	}
	fprintf(f, "[scenario]\nsummary = a waiter dies in fair's queue\n[run]\nclients = 8\n"
		   "duration = 4\nhold = 5\nwait = notify:100\n[fault dies]\naction = kill\n"
		   "target = client:3\nwhen = waiting\nat = 1.5\n");
	fclose(f);
	if ((rc = lb_scenario_parse_file(path, sc)) < 0) {
		free(sc);
		return rc;
	}
	base_cfg(b, &cfg, "fair");
	cfg.scenario = sc;
	snprintf(cfg.scenario_name, sizeof(cfg.scenario_name), "dead-waiter");
	cfg.clients = 8;
	cfg.duration_s = 4;
	cfg.hold_min_ms = cfg.hold_max_ms = 5;
	cfg.wait = sc->run.wait;
	if ((rc = bench_run(b, &cfg, "6-dead-waiter-fair", &res)) < 0) {
		free(sc);
		return rc;
	}
	int64_t kill = -1, gap = 0, last_exit = -1;
	for (size_t i = 0; i < res.n_events; i++)
		if (res.events[i].kind == LB_EV_KILL)
			kill = res.events[i].t_ns;
	for (size_t i = 0; i < res.n_sections && kill >= 0; i++) { /* sorted by enter */
		const struct lb_section *s = &res.sections[i];
		if (last_exit >= kill && s->enter_ns - last_exit > gap)
			gap = s->enter_ns - last_exit;
		int64_t e = lb_section_exit(s, (int64_t)(res.elapsed_s * 1e9));
		if (e > last_exit)
			last_exit = e;
	}
	double bound = 3 * 100 + 100 + 100;
	if (kill < 0)
		row(b, "6", "a waiter killed in fair's queue: the kill never fired", NAN, "ms", bound,
		    "documented bound", NAN, lb_stop_requested() ? "(interrupted: not judged)" :
		    "<= 1 (not measured: a miss)", lb_stop_requested() ? -1 : 0);
	else
		row(b, "6", "a waiter killed in fair's queue: longest time nobody held the lock after",
		    (double)gap / 1e6, "ms", bound, "documented bound (grace 400 + a poll 100)",
		    (double)gap / 1e6 / bound, "<= 1", (double)gap / 1e6 <= bound);
	lb_run_result_free(&res);
	free(sc);
	return 0;
}

/* 8. A stampede (scenarios/stampede.ini's load): 2048 clients, one request
 * each, woken by one call; fair in its queue, token-lua polling, and
 * node-redlock with its defaults (hosted: a Node process each would not fit):
 * how many got in and when the last did, against the serial floor (every
 * client's hold one after another). */
static int bench_stampede(struct bench *b)
{
	static const char *const who[] = { "fair", "token-lua", "redlock@4.2.0" };
	const int clients = 2048, hold = 2;

	printf("8. a stampede: %d clients at once, one request each\n", clients);
	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]) && !lb_stop_requested(); i++) {
		struct lb_run_cfg cfg;
		struct lb_run_result res = { 0 };
		char name[80], what[400];
		if (!lb_strategy_find(who[i]))
			continue;
		base_cfg(b, &cfg, who[i]);
		cfg.clients = clients;
		cfg.calls = 1;
		cfg.hold_min_ms = cfg.hold_max_ms = hold;
		cfg.ttl_ms = 10000;
		cfg.acquire_timeout_ms = 30000;
		cfg.duration_s = 60;
		cfg.wait = lb_wait_own(cfg.strategy);
		cfg.adapter_hosts = lb_strategy_is_external(cfg.strategy) ? 2 : 0;
		snprintf(name, sizeof(name), "8-stampede-%s", who[i]);
		if (bench_run(b, &cfg, name, &res) < 0)
			return LB_ESYS;
		double floor_ms = (double)clients * hold, last = (double)res.last_served_ns / 1e6;
		char wait[48];
		lb_wait_format(&cfg.wait, wait, sizeof(wait));
		snprintf(what, sizeof(what), "stampede, %s (wait %s): %llu of %d served, %llu still "
			 "waiting at the end, %llu gave up%s, first calls within %.0f ms, %.0f lock "
			 "commands/s, %llu overlaps", who[i], wait,
			 (unsigned long long)res.served_clients, clients,
			 (unsigned long long)res.still_waiting_clients,
			 (unsigned long long)res.gave_up_clients,
			 res.gave_up_clients && !isnan(res.gave_up_attempts) ? " (attempts below)" : "",
			 (double)res.arrival_spread_ns / 1e6, res.lock_commands_known &&
			 res.elapsed_s > 0 ? (double)res.lock_commands / res.elapsed_s : 0,
			 (unsigned long long)res.verdict.overlaps);
		if (res.last_served_ns >= 0)
			row(b, "8", what, last, "ms to the last served", floor_ms,
			    "every hold one after another", last / floor_ms, "", -1);
		else
			row(b, "8", what, 0, "ms (nobody served)", floor_ms,
			    "every hold one after another", 0, "", -1);
		char after[64] = "none gave up";
		if (!isnan(res.gave_up_after_ms))
			snprintf(after, sizeof(after), "after %.0f ms of waiting on average",
				 res.gave_up_after_ms);
		snprintf(what, sizeof(what), "stampede, %s: clients that gave up (%s)%s", who[i], after,
			 isnan(res.gave_up_attempts) ? "" : ", their attempts (mean) as the value");
		if (!isnan(res.gave_up_attempts))
			row(b, "8", what, res.gave_up_attempts, "attempts",
			    (double)res.gave_up_clients, "clients that gave up",
			    (double)res.gave_up_clients / clients, "", -1);
		else
			row(b, "8", what, (double)res.gave_up_clients, "clients", clients, "clients",
			    (double)res.gave_up_clients / clients, "", -1);
		lb_run_result_free(&res);
	}
	return 0;
}

/* 9. What lockbench itself costs as the clients grow, from item 6's runs of
 * fair (the same load at every count): its CPU per section (the parent and
 * every client process), each client's memory of its own (private dirty) and
 * its share of the shared pages (PSS), charted. */
static void cost_growth(struct bench *b, const struct fair_point *p, size_t n)
{
	const struct fair_point *first = NULL, *last = NULL;
	struct lb_outfile d, g;

	printf("9. lockbench's own cost against the clients (item 6's fair runs)\n");
	if (lb_outfile_open(&d, b->out, "cost.dat", true) < 0)
		return;
	fprintf(d.f, "# clients cpu_us_per_section private_kib pss_kib\n");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].strategy, "fair") || p[i].cpu_us <= 0 || p[i].private_kb <= 0)
			continue;
		first = first ? first : &p[i];
		last = &p[i];
		fprintf(d.f, "%d %.1f %.0f %.0f\n", p[i].clients, p[i].cpu_us, p[i].private_kb,
			p[i].pss_kb);
		char what[200];
		snprintf(what, sizeof(what), "lockbench's CPU a section at %d clients (fair, hold 5 "
			 "ms): %.0f KiB private dirty and %.0f KiB PSS a client", p[i].clients,
			 p[i].private_kb, p[i].pss_kb);
		row(b, "9", what, p[i].cpu_us, "us CPU", first->cpu_us, "the same at 8 clients",
		    p[i].cpu_us / first->cpu_us, "", -1);
	}
	if (lb_outfile_close(&d) < 0)
		return;
	if (last) {
		char what[160];
		snprintf(what, sizeof(what), "a client's memory of its own (private dirty) at %d "
			 "clients", last->clients);
		row(b, "9", what, last->private_kb, "KiB", 2048, "the goal, 2 MiB",
		    last->private_kb / 2048, "<= 1 at 4096", last->clients >= 4096 ?
		    last->private_kb <= 2048 : -1);
	}
	if (lb_outfile_open(&g, b->out, "cost.gp", true) < 0)
		return;
	fprintf(g.f, "set terminal pngcairo noenhanced size 1100,420 font 'DejaVu Sans,10'\n"
		     "set output 'cost.png'\nset multiplot layout 1,2\n"
		     "set logscale x 2\nset xlabel 'clients on one lock (fair, hold 5 ms)'\nset grid\n"
		     "set title \"lockbench's CPU per section (parent and clients)\"\n"
		     "set ylabel 'us of CPU'\nset yrange [0:*]\n"
		     "plot 'cost.dat' using 1:2 with linespoints lw 2 title 'us CPU a section'\n"
		     "set title 'memory a client process'\nset ylabel 'KiB'\n"
		     "plot 'cost.dat' using 1:3 with linespoints lw 2 title 'private dirty (its own)', "
		     "'' using 1:4 with linespoints lw 2 title 'PSS (shared pages divided)', "
		     "2048 with lines dt 2 title 'goal: 2 MiB of its own'\n"
		     "unset multiplot\n");
	if (lb_outfile_close(&g) == 0 && lb_gnuplot(b->out, "cost.gp", b->undrawn, sizeof(b->undrawn)) == 0)
		fprintf(b->md, "\n![lockbench's cost against the clients](cost.png)\n\n");
}

/* Seconds a point of item 6 runs. The section counts of a FIFO differ by one
 * at most, and Jain's index of such counts is below 0.9 only when the window
 * after the start-up holds 1.2 to 1.5 rounds of the queue (0.89 at 4/3), and
 * at least 0.96 past two. At 4096 clients and the 75 to 121 sections/s measured
 * there, a round is 34 to 55 s: 120 s (108 after the start-up) holds at least
 * 1.5 rounds down to 57 sections/s. */
static double fairness_seconds(struct bench *b, int clients)
{
	return clients >= 4096 ? 120 : clients >= 256 ? 30 : clients >= 64 ? 5 : b->duration;
}

/* The goals of item 6 over fair's points: Jain >= 0.9 at every count, and at
 * 1024 clients at least 0.8 of what the 5 ms hold allows (200 sections/s). */
static void fairness_goals(struct bench *b, const struct fair_point *p, size_t n)
{
	double worst = 2, at_1024 = -1;
	int worst_n = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].strategy, "fair") != 0)
			continue;
		if (p[i].jain < worst) {
			worst = p[i].jain;
			worst_n = p[i].clients;
		}
		if (p[i].clients == 1024)
			at_1024 = p[i].per_s;
	}
	if (worst <= 1) {
		char what[120];
		snprintf(what, sizeof(what), "fair's lowest Jain index over the counts (at %d clients)",
			 worst_n);
		row(b, "6", what, worst, "Jain", 1.0, "all served alike", worst, ">= 0.9 at every count",
		    worst >= 0.9);
	}
	if (at_1024 >= 0)
		row(b, "6", "fair throughput at 1024 clients, hold 5 ms", at_1024, "sections/s", 200,
		    "the limit the hold allows, 1000/5", at_1024 / 200, ">= 0.8", at_1024 / 200 >= 0.8);
}

static int bench_fairness(struct bench *b)
{
	static const char *const configs[][2] = {
		{ "fair", "notify" }, { "token-lua", "notify" }, { "token-lua", "fixed:10" },
		{ "token-lua", "backoff:1:20" }, { "token-lua", "fixed:1" },
	};
	static const int counts[] = { 8, 64, 256, 1024, 4096 };
	struct fair_point p[32];
	size_t n = 0;
	double best_polling_8 = 0, fair_8 = 0;

	printf("6. fairness at scale (hold 5 ms, one lock)\n");
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]) && !lb_stop_requested(); c++) {
			struct lb_run_cfg cfg;
			struct lb_run_result res = { 0 };
			char name[80], err[200];
			bool polling = strcmp(configs[c][1], "notify") != 0;
			if (counts[k] > 8 && !strcmp(configs[c][1], "fixed:1"))
				continue; /* the fastest barging policy, for the 8-client goal only */
			if (counts[k] > 1024 && polling)
				continue; /* at 1024 already a tenth of the limit: 4096 pollers
					   * would only hold the 2 cores for minutes */
			base_cfg(b, &cfg, configs[c][0]);
			cfg.clients = counts[k];
			cfg.hold_min_ms = cfg.hold_max_ms = 5;
			cfg.duration_s = fairness_seconds(b, counts[k]);
			if (counts[k] > 1024) /* a round is longer than the default 10 s */
				cfg.acquire_timeout_ms = (int64_t)(cfg.duration_s * 1000);
			lb_wait_parse(configs[c][1], &cfg.wait, err, sizeof(err));
			snprintf(name, sizeof(name), "6-fairness-%s-%s-%d", configs[c][0], configs[c][1],
				 counts[k]);
			for (char *q = name; *q; q++)
				*q = *q == ':' ? '-' : *q;
			if (bench_run(b, &cfg, name, &res) < 0)
				return LB_ESYS;
			int64_t warm = (int64_t)(cfg.duration_s * 0.1 * 1e9);
			warm = warm > LB_NS_PER_S ? warm : LB_NS_PER_S;
			/* waits that never entered count, at their length (a lower bound) */
			bool lower;
			p[n] = (struct fair_point){ configs[c][0], configs[c][1], counts[k],
						    res.throughput_per_s,
						    lb_acquire_quantile_us(&res, 0.99, &lower) / 1000,
						    steady_jain(&res, counts[k], warm),
						    res.harness_cpu_known && res.verdict.sections ?
						    (double)res.harness_cpu_us / (double)res.verdict.sections : 0,
						    (double)res.client_pss_kb, (double)res.client_private_kb };
			char what[200], conns[32] = "n/a", p99[48];
			lb_acquire_text(&res, 0.99, p99, sizeof(p99));
			if (res.server_connections)
				snprintf(conns, sizeof(conns), "%.1f",
					 (double)res.server_connections / counts[k]);
			snprintf(what, sizeof(what), "%d clients, %s, wait %s: %.1f sections/s, p99 %s, "
				 "%.1f MiB and %s connections a client", counts[k], configs[c][0],
				 configs[c][1], p[n].per_s, p99, (double)res.client_rss_kb / 1024,
				 conns);
			bool fair = !strcmp(configs[c][0], "fair");
			row(b, "6", what, p[n].jain, "Jain", 1.0, "all served alike", p[n].jain,
			    fair ? ">= 0.9" : "", fair ? p[n].jain >= 0.9 : -1);
			if (counts[k] == 8 && polling && res.throughput_per_s > best_polling_8)
				best_polling_8 = res.throughput_per_s;
			if (counts[k] == 8 && fair)
				fair_8 = res.throughput_per_s;
			n++;
			lb_run_result_free(&res);
		}
	if (fair_8 > 0 && best_polling_8 > 0)
		row(b, "6", "fair throughput at 8 clients", fair_8, "sections/s", best_polling_8,
		    "the best polling policy, 8 clients", fair_8 / best_polling_8, ">= 0.8",
		    fair_8 / best_polling_8 >= 0.8);
	fairness_goals(b, p, n);
	fairness_chart(b, p, n);
	cost_growth(b, p, n);
	return bench_dead_waiter(b);
}

/* CPU time (user + system) of the clients and their adapters per section,
 * from the go to each client's last section, in us; 0 when not known. */
static double cpu_per_section(const struct lb_run_result *res)
{
	return res->clients_cpu_ns > 0 && res->n_sections > 0 ?
	       (double)res->clients_cpu_ns / 1e3 / (double)res->n_sections : 0;
}

/* One contended run of @strategy (wait fixed:10, counter work, hold 0):
 * throughput and CPU per section (@cpu_us, us, 0 not known; may be NULL),
 * with p99, fairness and commands per section into @what. @args: words for
 * the adapter (--adapter-arg), or NULL. */
static int contended(struct bench *b, const char *strategy, int clients, const char *name,
		     const char *args, double *per_s, double *cpu_us, char *what, size_t len)
{
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };
	char fair[16] = "n/a"; /* one client: nothing to share */

	base_cfg(b, &cfg, strategy);
	cfg.clients = clients;
	if (args) {
		lb_adapter_set_exec_args(&args, 1);
		snprintf(cfg.adapter_args, sizeof(cfg.adapter_args), "%s", args);
	}
	int rc = bench_run(b, &cfg, name, &res);
	lb_adapter_set_exec_args(NULL, 0);
	if (rc < 0)
		return LB_ESYS;
	*per_s = res.throughput_per_s;
	if (cpu_us)
		*cpu_us = cpu_per_section(&res);
	if (clients > 1)
		snprintf(fair, sizeof(fair), "%.2f", res.verdict.fairness);
	char p99[48], cmds[32] = "n/a"; /* not Redis commands (a consensus lock): n/a */
	lb_acquire_text(&res, 0.99, p99, sizeof(p99));
	if (!isnan(res.cmds_per_section))
		snprintf(cmds, sizeof(cmds), "%.2f", res.cmds_per_section);
	snprintf(what, len, "%s, %d client%s: p99 %s, fairness %s, %s cmds/section, %llu "
		 "overlaps", strategy, clients, clients > 1 ? "s" : "", p99, fair, cmds,
		 (unsigned long long)res.verdict.overlaps);
	lb_run_result_free(&res);
	return 0;
}

/* The null adapters item 3 measures (strategies/adapters/null-*.adapter):
 * the C one, the protocol's own cost, and one a language the libraries are
 * written in, which runs that language's protocol loop (lbproto.serve,
 * protocol.js's serve, a PHP loop as symfony_lock.php's). The last entry is
 * null-python serving as the consensus locks' adapters do (a thread a
 * request: lbproto.serve(..., quit_stops=True)), with the argument "threaded". */
static const struct null_adapter {
	const char *name, *language, *args, *loop;
} nulls[] = {
	{ "null-c", "C", NULL, "the protocol alone" },
	{ "null-python", "Python 3", NULL, "lbproto.serve" },
	{ "null-node", "Node.js", NULL, "protocol.js serve" },
	{ "null-php", "PHP", NULL, "a PHP loop" },
	{ "null-python", "Python 3", "threaded", "lbproto.serve, a thread a request" },
};
#define N_NULLS (sizeof(nulls) / sizeof(nulls[0]))

/* The null adapter that stands for @s's adapter: its language, and for a
 * consensus lock the threaded loop; N_NULLS when there is none. */
static size_t null_of(const struct lock_strategy *s)
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s);
	bool threaded = lb_consensus_of(s) != 0;

	for (size_t i = 1; d && i < N_NULLS; i++)
		if (!strcmp(nulls[i].language, d->language) && (nulls[i].args != NULL) == threaded)
			return i;
	return N_NULLS;
}

/* Each language's null adapter at 8 clients, under the load of the
 * libraries' 8-client rows: its CPU per section into @cpu (us; 0 when it
 * cannot run here or measured nothing). */
static int null_at_8(struct bench *b, double cpu[N_NULLS + 1])
{
	for (size_t i = 0; i < N_NULLS && !lb_stop_requested(); i++) {
		const struct lock_strategy *s = lb_strategy_find(nulls[i].name);
		char why[600] = "its manifest is missing", what[400], name[96];
		double per_s;
		if (!s || !lb_adapter_usable(s, why, sizeof(why))) {
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  3. SKIPPED %s: %s\n", nulls[i].name, why);
			lb_esc_fprintf(b->md, LB_LANG_MD, "| 3 | %s: SKIPPED (%s) | n/a | n/a | n/a | |\n",
				       nulls[i].name, why);
			continue;
		}
		snprintf(name, sizeof(name), "3-null-8-%s%s%s", nulls[i].name, nulls[i].args ? "-" : "",
			 nulls[i].args ? nulls[i].args : "");
		if (contended(b, nulls[i].name, 8, name, nulls[i].args, &per_s, &cpu[i], what,
			      sizeof(what)) < 0)
			return LB_ESYS;
		char line[500];
		snprintf(line, sizeof(line), "%s (%s), 8 clients, no lock: CPU per section of the clients "
			 "and their adapters (%.0f sections/s)", nulls[i].name, nulls[i].loop, per_s);
		row(b, "3", line, cpu[i], "us CPU", cpu[i], "itself", 1.0, "", -1);
	}
	return 0;
}

/* The adapter's share of library @s's cost at 8 clients: the CPU per
 * section of its language's null adapter (@null8, null_at_8) over the
 * library's own (@cpu_us), both the CPU time of the clients and their
 * adapters per section under the same load. */
static void adapter_share(struct bench *b, const struct lock_strategy *s, double cpu_us,
			  const double null8[N_NULLS + 1])
{
	size_t i = null_of(s);
	char what[300];

	if (i == N_NULLS || null8[i] <= 0 || cpu_us <= 0) {
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  3. %s: adapter share n/a (%s)\n", s->name,
			       i == N_NULLS ? "no null adapter in its language" :
			       cpu_us <= 0 ? "its CPU time was not measured" :
			       "its language's null adapter did not run");
		return;
	}
	char alone[64] = "";
	if (null8[0] > 0) /* the part of it that is lockbench's client and the protocol */
		snprintf(alone, sizeof(alone), " (null-c's: %.3f)", null8[0] / cpu_us);
	snprintf(what, sizeof(what), "%s, 8 clients: adapter share, %s%s%s's CPU per section over "
		 "the library's%s", s->name, nulls[i].name, nulls[i].args ? " " : "",
		 nulls[i].args ? nulls[i].args : "", alone);
	row(b, "3", what, null8[i], "us CPU", cpu_us, "the library's CPU per section", null8[i] / cpu_us,
	    "", -1);
}

/* Every library strategy at 1 and 8 clients under the same load, against the
 * C recipe of its shape (token-lua on one node, redlock on five) measured in
 * the same run: the ratio is the library's throughput over the recipe's,
 * adapter overhead included (row 3 above states it). A consensus lock (etcd,
 * ZooKeeper) against token-lua too: its ensemble of three on the same
 * machine, its requests through the same adapter protocol. */
static int bench_every_library(struct bench *b)
{
	static const int counts[] = { 1, 8 };
	double base[2][2] = { { 0 } }; /* [one node, five][1, 8 clients] */
	double null8[N_NULLS + 1] = { 0 }; /* each null adapter's CPU per section, 8 clients */
	char what[400], name[96];

	if (null_at_8(b, null8) < 0)
		return LB_ESYS;

	for (int n = 0; n < 2; n++)
		for (int k = 0; k < 2 && !lb_stop_requested(); k++) {
			const char *recipe = n ? "redlock" : "token-lua";
			snprintf(name, sizeof(name), "3-library-baseline-%s-%d", recipe, counts[k]);
			if (contended(b, recipe, counts[k], name, NULL, &base[n][k], NULL, what,
				      sizeof(what)) < 0)
				return LB_ESYS;
			if (base[n][k] <= 0) {
				lb_errorf("bench: %s measured no section (see %s/runs)", recipe, b->out);
				return LB_EINVAL;
			}
			row(b, "3", what, base[n][k], "sections/s", base[n][k], "itself", 1.0, "", -1);
		}
	for (size_t i = 0; i < lb_adapter_count() && !lb_stop_requested(); i++) {
		const struct lock_strategy *s = lb_adapter_at(i);
		char why[600];
		int five = s->min_nodes > 1 && !lb_consensus_of(s);
		if (!lb_adapter_usable(s, why, sizeof(why))) {
			printf("  3. SKIPPED %s: %s\n", s->name, why);
			fprintf(b->md, "| 3 | %s: SKIPPED (%s) | n/a | n/a | n/a | |\n", s->name, why);
			b->misses++;
			continue;
		}
		for (int k = 0; k < 2 && !lb_stop_requested(); k++) {
			double per_s, cpu_us;
			char base_what[96];
			snprintf(name, sizeof(name), "3-library-%s-%d", s->name, counts[k]);
			for (char *q = name; *q; q++)
				*q = *q == '@' || *q == '/' ? '-' : *q;
			if (contended(b, s->name, counts[k], name, NULL, &per_s, &cpu_us, what,
				      sizeof(what)) < 0)
				return LB_ESYS;
			snprintf(base_what, sizeof(base_what), "%s, %d client%s, same load",
				 five ? "redlock" : "token-lua", counts[k], counts[k] > 1 ? "s" : "");
			row(b, "3", what, per_s, "sections/s", base[five][k], base_what,
			    per_s / base[five][k], "", -1); /* base > 0: checked above */
			if (counts[k] == 8)
				adapter_share(b, s, cpu_us, null8);
		}
	}
	return 0;
}

/* One cost run (item 7): 3 clients on one key, hold 1.5 s (past the TTL:
 * a lease must be extended to last), TTL 1 s, 4.5 s, on
 * lockbench's own servers (the relay counts each client's commands there);
 * a library under its own wait, with `defaults` when @defaults. 0, or the
 * run failed; *@known false when the phases could not be counted. */
static int cost_run(struct bench *b, const struct lock_strategy *s, bool defaults, const char *name,
		    double rate[2], bool *known)
{
	static const char *const def[] = { "defaults" };
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };
	int rc;

	base_cfg(b, &cfg, "token-lua");
	cfg.strategy = s;
	cfg.redis_urls = NULL;
	cfg.own_urls = false;
	cfg.clients = 3;
	cfg.ttl_ms = 1000;
	cfg.hold_min_ms = cfg.hold_max_ms = 1500;
	cfg.duration_s = 4.5;
	cfg.count_commands = true;
	if (lb_strategy_is_external(s))
		cfg.wait = (struct lb_wait){ .kind = LB_WAIT_LIBRARY };
	if (defaults) {
		lb_adapter_set_exec_args(def, 1);
		snprintf(cfg.adapter_args, sizeof(cfg.adapter_args), "defaults");
	}
	rc = bench_run(b, &cfg, name, &res);
	lb_adapter_set_exec_args(NULL, 0);
	*known = rc == 0 && res.phase_known && res.holding_s > 0 && res.waiting_s > 0;
	rate[0] = *known ? (double)res.cmds_holding / res.holding_s : 0;
	rate[1] = *known ? (double)res.cmds_waiting / res.waiting_s : 0;
	lb_run_result_free(&res);
	return rc;
}

/* Item 7's rows for @s (one cost run, or two with its defaults). */
static int cost_rows(struct bench *b, const struct lock_strategy *s, double base[2][2])
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s);
	int five = s->min_nodes > 1;
	static const char *const phase[] = { "holding", "waiting" };

	for (int def = 0; def < 2 && !lb_stop_requested(); def++) {
		double rate[2];
		bool known;
		char name[96], what[400], base_what[96];
		if (def && (!d || !d->defaults[0]))
			break; /* it takes no `defaults` */
		snprintf(name, sizeof(name), "7-cost-%s%s", s->name, def ? "-defaults" : "");
		for (char *q = name; *q; q++)
			*q = *q == '@' || *q == '/' ? '-' : *q;
		if (cost_run(b, s, def, name, rate, &known) < 0)
			return LB_ESYS;
		for (int p = 0; p < 2; p++) {
			snprintf(what, sizeof(what), "%s, %s, commands sent per client-second %s",
				 s->name, def ? d->defaults : "TTL 1 s", phase[p]);
			snprintf(base_what, sizeof(base_what), "%s polling every 10 ms",
				 five ? "redlock" : "token-lua");
			if (!known) {
				lb_esc_fprintf(b->md, LB_LANG_MD, "| 7 | %s | n/a (not counted: see "
					       "%s/runs/%s) | | | |\n", what, b->out, name);
				lb_esc_fprintf(b->csv, LB_LANG_CSV, "7,%s,n/a,commands/s,n/a,%s,n/a,,-\n",
					       what, base_what);
				lb_esc_fprintf(stdout, LB_LANG_TERM, "  7. %s: n/a\n", what);
				b->misses++;
				continue;
			}
			row(b, "7", what, rate[p], "commands/s", base[five][p], base_what,
			    base[five][p] > 0 ? rate[p] / base[five][p] : 0, "", -1);
		}
	}
	return 0;
}

/* 7. Every library's commands while holding and while waiting (cost_run). */
static int bench_cost(struct bench *b)
{
	double base[2][2] = { { 0 } };
	bool known;

	for (int n = 0; n < 2 && !lb_stop_requested(); n++) {
		const char *recipe = n ? "redlock" : "token-lua";
		char name[64];
		snprintf(name, sizeof(name), "7-cost-%s", recipe);
		if (cost_run(b, lb_strategy_find(recipe), false, name, base[n], &known) < 0)
			return LB_ESYS;
		if (!known) {
			lb_errorf("bench: %s's commands by phase were not counted (see %s/runs/%s)",
				  recipe, b->out, name);
			return LB_EINVAL;
		}
		for (int p = 0; p < 2; p++) {
			char what[160];
			snprintf(what, sizeof(what), "%s (the recipe, polling every 10 ms), commands sent "
				 "per client-second %s", recipe, p ? "waiting" : "holding");
			row(b, "7", what, base[n][p], "commands/s", base[n][p], recipe, 1.0, "", -1);
		}
	}
	for (size_t i = 0; i < lb_adapter_count() && !lb_stop_requested(); i++) {
		const struct lock_strategy *s = lb_adapter_at(i);
		char why[600];
		if (!lb_adapter_usable(s, why, sizeof(why))) {
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  7. SKIPPED %s: %s\n", s->name, why);
			lb_esc_fprintf(b->md, LB_LANG_MD, "| 7 | %s: SKIPPED (%s) | n/a | n/a | n/a | |\n",
				       s->name, why);
			lb_esc_fprintf(b->csv, LB_LANG_CSV, "7,%s: SKIPPED (%s),n/a,,n/a,,n/a,,-\n",
				       s->name, why);
			b->misses++;
			continue;
		}
		if (lb_consensus_of(s)) { /* not a figure that applies: no miss */
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  7. %s: n/a (its requests go to etcd "
				       "or ZooKeeper; the relay counts Redis commands)\n", s->name);
			lb_esc_fprintf(b->md, LB_LANG_MD, "| 7 | %s: n/a (its requests go to etcd or "
				       "ZooKeeper; the relay counts Redis commands) | n/a | n/a | n/a | |\n",
				       s->name);
			continue;
		}
		if (cost_rows(b, s, base) < 0)
			return LB_ESYS;
	}
	return 0;
}

/* Item 3's first rows: each null adapter's us per section at 1 client
 * (no work, hold 0), three rounds, each beside a redis-py section in the
 * same round: null-c against redis-py (the goal), the others against null-c
 * and redis-py; each ratio the median of its three rounds. */
static int bench_null_solo(struct bench *b, const struct lock_strategy *lib)
{
	const struct lock_strategy *s[N_NULLS] = { 0 };
	double us[N_NULLS][3] = { { 0 } }, lu[3] = { 0 }, ratio[N_NULLS][3] = { { 0 } };
	char why[600] = "its manifest is missing", name[96], what[300];

	for (size_t i = 0; i + 1 < N_NULLS; i++) /* the threaded loop: at 8 clients only */
		if (!(s[i] = lb_strategy_find(nulls[i].name)) || !lb_adapter_usable(s[i], why, sizeof(why))) {
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  3. SKIPPED %s: %s\n", nulls[i].name, why);
			lb_esc_fprintf(b->md, LB_LANG_MD, "| 3 | %s: SKIPPED (%s) | n/a | n/a | n/a | |\n",
				       nulls[i].name, why);
			b->misses += i == 0; /* the C one carries the goal */
			s[i] = NULL;
		}
	for (int k = 0; k < 3 && !lb_stop_requested(); k++) {
		for (size_t i = 0; i + 1 < N_NULLS; i++)
			if (s[i]) {
				snprintf(name, sizeof(name), "3-%s-%d", nulls[i].name, k + 1);
				us[i][k] = solo(b, s[i], name);
			}
		snprintf(name, sizeof(name), "3-redis-py-solo-%d", k + 1);
		lu[k] = solo(b, lib, name);
		for (size_t i = 0; i + 1 < N_NULLS; i++) /* null-c against redis-py, the rest against null-c */
			ratio[i][k] = i == 0 ? (lu[k] > 0 ? us[0][k] / lu[k] : 0) :
				      us[0][k] > 0 ? us[i][k] / us[0][k] : 0;
	}
	for (size_t i = 0; i + 1 < N_NULLS && !lb_stop_requested(); i++) {
		if (!s[i] || (i > 0 && !s[0]))
			continue;
		int mid = median3(ratio[i]);
		if (us[i][mid] <= 0 || lu[mid] <= 0 || (i > 0 && us[0][mid] <= 0)) {
			lb_errorf("bench: the null adapter runs measured nothing (see %s/runs)", b->out);
			return LB_EINVAL;
		}
		if (i == 0) {
			row(b, "3", "adapter overhead: null-c (the C null adapter), us per section (median of 3)",
			    us[0][mid], "us", lu[mid], "redis-py@4.3.4 section, 1 client, same round",
			    ratio[0][mid], "<= 0.1", ratio[0][mid] <= 0.1);
		} else {
			snprintf(what, sizeof(what), "%s (%s), us per section (median of 3): %.3f of a "
				 "redis-py section", nulls[i].name, nulls[i].loop, us[i][mid] / lu[mid]);
			row(b, "3", what, us[i][mid], "us", us[0][mid], "null-c, same round", ratio[i][mid],
			    "", -1);
		}
		fprintf(b->md, "| | (the three rounds' ratios: %.3f, %.3f, %.3f) | | | | |\n",
			ratio[i][0], ratio[i][1], ratio[i][2]);
	}
	return 0;
}

static int bench_libraries(struct bench *b)
{
	static const char lib_name[] = "redis-py@4.3.4";
	const struct lock_strategy *lib = lb_strategy_find(lib_name);
	char why[600] = "";

	if (!lib || !lb_adapter_usable(lib, why, sizeof(why))) {
		printf("  3. SKIPPED: %s\n", !lib ? "no redis-py adapter found" : why);
		fprintf(b->md, "| 3 | libraries: SKIPPED (%s) | n/a | n/a | n/a | |\n",
			!lib ? "no redis-py adapter" : why);
		b->misses++;
		return 0;
	}
	if (bench_null_solo(b, lib) < 0)
		return LB_EINVAL;
	/* the library and the best single-node recipe, the same load */
	const char *const names[] = { "token-lua", lib_name };
	for (int i = 0; i < 2 && !lb_stop_requested(); i++) {
		struct lb_run_cfg cfg;
		struct lb_run_result res = { 0 };
		char what[160], name[64];
		base_cfg(b, &cfg, "token-lua");
		cfg.strategy = lb_strategy_find(names[i]);
		cfg.clients = 8;
		snprintf(name, sizeof(name), "3-contended-%s", names[i]);
		if (bench_run(b, &cfg, name, &res) < 0)
			return LB_ESYS;
		char p99[48];
		lb_acquire_text(&res, 0.99, p99, sizeof(p99));
		snprintf(what, sizeof(what), "%s, 8 clients, wait fixed:10: p99 %s, fairness %.2f, "
			 "%.2f cmds/section", names[i], p99, res.verdict.fairness, res.cmds_per_section);
		row(b, "3", what, res.throughput_per_s, "sections/s", b->serial, "serial limit PING/4",
		    res.throughput_per_s / b->serial, "", -1);
		lb_run_result_free(&res);
	}
	return bench_every_library(b);
}

static const char *const set_cmd[] = { "SET", "lbbench:k", "tok", "NX", "PX", "2000", NULL };
static const char *cad_cmd[] = { "EVALSHA", NULL, "1", "lbbench:k", "tok", NULL };

/* The command line: 0, -1 after --help (exit 0 now), or the usage error's
 * exit status. */
static int parse(int argc, char **argv, struct bench *b)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			if (!lb_dir_arg_ok("--out", argv[++i]) || strlen(argv[i]) > 3800) {
				if (strlen(argv[i]) > 3800)
					lb_errorf("--out: a path of at most 3800 bytes");
				return LB_EXIT_USAGE;
			}
			snprintf(b->out, sizeof(b->out), "%s", argv[i]);
		} else if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			if (!lb_parse_double(argv[++i], &b->duration) ||
			    !(b->duration > 0 && b->duration <= 600)) {
				lb_errorf("--duration '%s': expected seconds in (0, 600]", argv[i]);
				return LB_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			if (strcmp(argv[++i], "7") && strcmp(argv[i], "3") && strcmp(argv[i], "6") &&
			    strcmp(argv[i], "8")) {
				lb_errorf("--only: items 3 (the libraries and consensus locks beside "
					  "the recipes), 6 (fairness at scale, with item 9, lockbench's "
					  "cost against the clients), 7 (each library's cost by phase) "
					  "and 8 (a stampede) run alone; got '%.40s'", argv[i]);
				return LB_EXIT_USAGE;
			}
			b->only = argv[i][0];
			b->cost_only = argv[i][0] == '7';
			b->libs_only = argv[i][0] == '3';
		} else {
			fprintf(stderr, "usage: lockbench bench [--duration S] [--out DIR] [--only 3|6|7|8]\n\n"
					"Measures lockbench against redis-benchmark and the serial limit, the\n"
					"adapter protocol (the null adapters: null-c, and null-python, null-node,\n"
					"null-php, each its language's protocol loop) against a redis-py@4.3.4\n"
					"section at 1 client, and redis-py beside token-lua, on the same servers,\n"
					"every library and consensus lock (etcd, ZooKeeper: on their own three\n"
					"members) beside token-lua at 1 and 8 clients, with each library's\n"
					"adapter share at 8 clients: its language's null adapter's CPU time per\n"
					"section (user + system, of the clients and their adapters) over the\n"
					"library's (item 3; --only 3 runs it alone), and what each library's\n"
					"extensions and retries cost while it holds and while it waits (item 7,\n"
					"4.5 s a run whatever --duration says; --only 7 runs it alone), the\n"
					"fair hand-off at 8 to 4096 clients with lockbench's own CPU and\n"
					"memory at each count (items 6 and 9; --only 6), and a stampede of\n"
					"2048 clients (item 8; --only 8); writes\n"
					"DIR/bench.csv, DIR/bench.md and a scaling sweep\n"
					"(default DIR: results/bench/<UTC time>).\n");
			return strcmp(argv[i], "--help") ? LB_EXIT_USAGE : -1;
		}
	}
	return 0;
}

/* The servers (node 0..4 and the resource) and the two files with their
 * headers: 0 or an error. */
static int start(struct bench *b, const char *when)
{
	for (int i = 0; i < BENCH_NODES; i++)
		if (!(b->srv[i] = lb_server_start(NULL)))
			return LB_ESYS;
	snprintf(b->one, sizeof(b->one), "redis://127.0.0.1:%d,redis://127.0.0.1:%d",
		 b->srv[0]->port, b->srv[5]->port);
	snprintf(b->five, sizeof(b->five), "redis://127.0.0.1:%d", b->srv[0]->port);
	for (int i = 1; i < BENCH_NODES; i++)
		snprintf(b->five + strlen(b->five), sizeof(b->five) - strlen(b->five),
			 ",redis://127.0.0.1:%d", b->srv[i]->port);
	if (lb_outfile_open(&b->csv_out, b->out, "bench.csv", false) < 0 ||
	    lb_outfile_open(&b->md_out, b->out, "bench.md", false) < 0)
		return LB_ESYS;
	b->csv = b->csv_out.f;
	b->md = b->md_out.f;
	fprintf(b->csv, "item,what,value,unit,baseline,baseline_what,ratio,goal,met\n");
	fprintf(b->md, "# lockbench bench, %s\n\nAll figures measured in this one run, on the same "
		       "servers (redis-server started by lockbench on loopback; a consensus lock "
		       "on three etcd members or ZooKeeper servers started for its run, its "
		       "resource a redis-server), %g s per run.\n\n"
		       "| # | what | measured | baseline | ratio | goal |\n|---|---|---|---|---|---|\n",
		when, b->duration);
	return 0;
}

/* redis-benchmark on node 0: PING, SET NX PX and the compare-and-delete
 * script; the serial limit. 0 or an error (said). */
static int baselines(struct bench *b)
{
	struct lb_node n0;

	cad_cmd[1] = lb_script_cad.sha;
	b->ping = redis_benchmark(b->srv[0]->port, (const char *const[]){ "PING", NULL });
	lb_node_init_local(&n0, b->srv[0]->port, 2000);
	redisReply *r = lb_node_cmd(&n0, "SCRIPT LOAD %s", lb_script_cad.src);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n0);
	b->r_set = redis_benchmark(b->srv[0]->port, set_cmd);
	b->r_cad = redis_benchmark(b->srv[0]->port, cad_cmd);
	if (b->ping <= 0 || b->r_set <= 0 || b->r_cad <= 0) {
		if (lb_stop_requested())
			return LB_ECANCELED; /* interrupted: redis-benchmark was stopped with it */
		lb_errorf("redis-benchmark did not run (Debian package redis-tools)");
		return LB_ESYS;
	}
	b->serial = b->ping / 4.0;
	printf("baselines: PING %.0f/s (round trip %.1f us), SET NX PX %.0f/s, EVALSHA %.0f/s\n",
	       b->ping, 1e6 / b->ping, b->r_set, b->r_cad);
	return 0;
}

/* 1. harness overhead: baseline and run interleaved, three rounds, median
 * ratio (a noisy shared machine drifts between measurements taken apart) */
static int bench_overhead(struct bench *b)
{
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };
	double ratios[3], thr[3], pairs[3];

	b->token_mean = 0;
	for (int k = 0; k < 3; k++) {
		char name[48];
		double rs = redis_benchmark(b->srv[0]->port, set_cmd);
		double rc2 = redis_benchmark(b->srv[0]->port, cad_cmd);
		pairs[k] = 1.0 / (1.0 / rs + 1.0 / rc2);
		base_cfg(b, &cfg, "token-lua");
		cfg.clients = 1;
		cfg.work = LB_WORK_NONE;
		cfg.duration_s = b->duration / 3 > 1 ? b->duration / 3 : 1;
		snprintf(name, sizeof(name), "1-overhead-token-lua-%d", k + 1);
		if (bench_run(b, &cfg, name, &res) < 0)
			return LB_ESYS;
		thr[k] = res.throughput_per_s;
		ratios[k] = thr[k] / pairs[k];
		/* exact means: the histogram's 12.5% buckets are too coarse for a ratio goal */
		if (res.latency.n)
			b->token_mean += (double)res.latency.sum_ns / (double)res.latency.n / 1e3 / 3;
		lb_run_result_free(&res);
	}
	int mid = median3(ratios);
	row(b, "1", "harness overhead: token-lua, 1 client (median of 3)", thr[mid], "sections/s",
	    pairs[mid], "redis-benchmark SET+EVALSHA, same round", ratios[mid], ">= 0.9",
	    ratios[mid] >= 0.9);
	printf("    rounds: %.2f %.2f %.2f\n", ratios[0], ratios[1], ratios[2]);
	fprintf(b->md, "| | (the three rounds' ratios: %.2f, %.2f, %.2f) | | | | |\n", ratios[0],
		ratios[1], ratios[2]);
	return 0;
}

/* 2. contended hand-off, each wait policy */
static int bench_handoff(struct bench *b)
{
	static const char *const policies[] = { "notify", "fixed:1", "fixed:10", "backoff:1:20",
						"try", NULL };
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };

	for (const char *const *p = policies; *p && !lb_stop_requested(); p++) {
		char name[64], what[96], err[200];
		base_cfg(b, &cfg, "token-lua");
		cfg.clients = 8;
		lb_wait_parse(*p, &cfg.wait, err, sizeof(err));
		snprintf(name, sizeof(name), "2-handoff-%s", *p);
		for (char *c = name; *c; c++)
			*c = *c == ':' ? '-' : *c;
		if (bench_run(b, &cfg, name, &res) < 0)
			return LB_ESYS;
		snprintf(what, sizeof(what), "8 clients, wait %s (fairness %.2f)", *p, res.verdict.fairness);
		bool notify = !strcmp(*p, "notify");
		double ratio = res.throughput_per_s / b->serial;
		row(b, "2", what, res.throughput_per_s, "sections/s", b->serial, "serial limit PING/4",
		    ratio, notify ? ">= 0.6, fair >= 0.9" : "",
		    notify ? ratio >= 0.6 && res.verdict.fairness >= 0.9 : -1);
		lb_run_result_free(&res);
	}
	return 0;
}

/* 5. redlock fan-out, then the baselines said under the table */
static int bench_fanout(struct bench *b)
{
	struct lb_run_cfg cfg;
	struct lb_run_result res = { 0 };

	base_cfg(b, &cfg, "redlock");
	cfg.clients = 1;
	cfg.work = LB_WORK_NONE;
	if (bench_run(b, &cfg, "5-fanout-redlock", &res) < 0)
		return LB_ESYS;
	double red_mean = res.latency.n ? (double)res.latency.sum_ns / (double)res.latency.n / 1e3 : 0;
	row(b, "5", "redlock mean acquire (5 nodes)", red_mean, "us", b->token_mean,
	    "token-lua mean acquire (1 node)", red_mean / b->token_mean, "<= 2",
	    red_mean / b->token_mean <= 2);
	lb_run_result_free(&res);
	fprintf(b->md, "\nBaselines: redis-benchmark -c 1 on the same server: PING %.0f/s (round trip "
		       "%.1f µs), SET NX PX %.0f/s, EVALSHA compare-and-delete %.0f/s. The serial limit "
		       "is one section per 4 round trips (SET NX, GET, SET, EVALSHA): %.0f/s.\n",
		b->ping, 1e6 / b->ping, b->r_set, b->r_cad, b->serial);
	fprintf(b->md, "\n4. Scaling: see [sweep/report.md](sweep/report.md) (1..64 clients, every "
		       "strategy; client_rss_kb in sweep/sweep.csv).\n");
	fflush(b->md);
	return 0;
}

/* 4. scaling sweep, on fresh servers per point */
static int bench_scaling(struct bench *b)
{
	char sweep_dir[PATH_MAX], dur[32];

	snprintf(sweep_dir, sizeof(sweep_dir), "%s/sweep", b->out);
	snprintf(dur, sizeof(dur), "%g", b->duration < 2 ? b->duration : 2.0);
	char *sv[] = { "sweep", "--strategies",
		       "setnx,setnx-expire,set-nx-px,get-del,watch-multi,token-lua,redlock,setnx-getset",
		       "--vary", "clients=1,2,4,8,16,32,64", "--duration", dur, "--hold", "0",
		       "--out", sweep_dir, NULL };
	printf("4. scaling sweep (every strategy, 1..64 clients)\n");
	if (!lb_stop_requested() &&
	    lb_cmd_sweep((int)(sizeof(sv) / sizeof(sv[0])) - 1, sv) != LB_EXIT_OK)
		return LB_EINVAL;
	return 0;
}

int lb_cmd_bench(int argc, char **argv)
{
	struct bench b = { .duration = 3 };
	char when[32];
	time_t now = time(NULL);
	int rc = parse(argc, argv, &b);

	if (rc)
		return rc < 0 ? LB_EXIT_OK : rc;
	rc = LB_EXIT_FAIL;
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", gmtime(&now));
	if (!b.out[0])
		snprintf(b.out, sizeof(b.out), "results/bench/%s", when);
	int rc_dir = lb_results_prepare_dir(b.out);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	if (start(&b, when) < 0)
		goto out;
	if (b.cost_only) {
		if (bench_cost(&b) == 0)
			rc = LB_EXIT_OK;
		goto out;
	}
	if (b.only == '6' || b.only == '8') {
		if ((b.only == '6' ? bench_fairness(&b) : bench_stampede(&b)) == 0)
			rc = LB_EXIT_OK;
		goto out;
	}
	if (b.libs_only) {
		if (baselines(&b) == 0 && bench_libraries(&b) == 0)
			rc = LB_EXIT_OK;
		goto out;
	}
	if (baselines(&b) < 0 || bench_overhead(&b) < 0 || bench_handoff(&b) < 0)
		goto out;
	/* 3. a library through the adapter, beside the recipes: what the adapter
	 * costs (the null adapters, which send nothing to Redis, against a
	 * redis-py section at 1 client, interleaved), then redis-py and
	 * token-lua under the same contended load, every library, and each
	 * library's adapter share at 8 clients */
	if (bench_libraries(&b) < 0 || bench_fanout(&b) < 0)
		goto out;
	/* 7. what each library's extensions and retries cost, by phase */
	if (!lb_stop_requested() && bench_cost(&b) < 0)
		goto out;
	/* 6. fairness at scale, and a waiter that dies in the queue; 9. what
	 * lockbench costs as the clients grow, from the same runs */
	if (!lb_stop_requested() && bench_fairness(&b) < 0)
		goto out;
	/* 8. a stampede */
	if (!lb_stop_requested() && bench_stampede(&b) < 0)
		goto out;
	fflush(b.md);
	if (bench_scaling(&b) < 0)
		goto out;
	rc = LB_EXIT_OK;
	printf("\nbench in %s/bench.md (%d goal%s missed)\n", b.out, b.misses,
	       b.misses == 1 ? "" : "s");
out:
	if (lb_stop_requested() && b.md) { /* what ran is kept, and said to be cut short */
		fprintf(b.md, "\n**Interrupted** (%s): the runs after it were cut short, and no goal "
			"was judged from then on.\n", lb_stop_signal() == SIGTERM ? "SIGTERM" : "SIGINT");
		printf("bench interrupted: %s/bench.md says so\n", b.out);
	}
	if (lb_outfile_close(&b.csv_out) < 0)
		rc = LB_EXIT_FAIL;
	if (lb_outfile_close(&b.md_out) < 0)
		rc = LB_EXIT_FAIL;
	for (int i = 0; i < BENCH_NODES; i++)
		lb_server_destroy(b.srv[i]);
	return rc;
}
