#include "adapter.h"
#include "esc.h"
#include "options.h"
#include "report.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

enum {
	OPT_STRATEGY = 256, OPT_STRATEGIES, OPT_CLIENTS, OPT_DURATION, OPT_TTL, OPT_HOLD, OPT_THINK,
	OPT_KEYS, OPT_WAIT, OPT_ACQ_TIMEOUT, OPT_WORK, OPT_SEED, OPT_OUT, OPT_REDIS, OPT_NODES,
	OPT_NO_STATUS, OPT_HELP, OPT_SCENARIO, OPT_NO_REPORT, OPT_VARY,
	OPT_NO_VALIDITY, OPT_MAX_RENEWALS, OPT_DELAYED_RESTARTS, OPT_TOPOLOGY, OPT_SENTINEL, OPT_SENTINEL_MASTER, OPT_ALLOW_SKIPPED, OPT_ADAPTER_ARG, OPT_CHART_SCALE,
};

/* bits of lb_run_opts.given */
enum { G_CLIENTS = 1, G_DURATION = 2, G_TTL = 4, G_HOLD = 8, G_THINK = 16, G_KEYS = 32,
       G_WAIT = 64, G_ACQ = 128, G_WORK = 256, G_NODES = 512,
       G_VALIDITY = 1024, G_RENEWALS = 2048, G_DELAYED = 4096, G_TOPOLOGY = 8192 };

static const struct option long_opts[] = {
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "strategies", required_argument, NULL, OPT_STRATEGIES },
	{ "clients", required_argument, NULL, OPT_CLIENTS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "hold", required_argument, NULL, OPT_HOLD },
	{ "think", required_argument, NULL, OPT_THINK },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "acquire-timeout", required_argument, NULL, OPT_ACQ_TIMEOUT },
	{ "work", required_argument, NULL, OPT_WORK },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "redis", required_argument, NULL, OPT_REDIS },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "no-status", no_argument, NULL, OPT_NO_STATUS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "scenario", required_argument, NULL, OPT_SCENARIO },
	{ "no-report", no_argument, NULL, OPT_NO_REPORT },
	{ "chart-scale", required_argument, NULL, OPT_CHART_SCALE },
	{ "vary", required_argument, NULL, OPT_VARY },
	{ "no-validity-check", no_argument, NULL, OPT_NO_VALIDITY },
	{ "max-renewals", required_argument, NULL, OPT_MAX_RENEWALS },
	{ "delayed-restarts", no_argument, NULL, OPT_DELAYED_RESTARTS },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "sentinel", required_argument, NULL, OPT_SENTINEL },
	{ "sentinel-master", required_argument, NULL, OPT_SENTINEL_MASTER },
	{ "allow-skipped", no_argument, NULL, OPT_ALLOW_SKIPPED },
	{ "adapter-arg", required_argument, NULL, OPT_ADAPTER_ARG },
	{ NULL, 0, NULL, 0 },
};

void lb_run_opts_usage(FILE *f, enum lb_opts_mode mode)
{
	if (mode == LB_OPTS_RUN)
		fprintf(f, "usage: lockbench run --strategy NAME [options]\n\n"
			   "  --strategy NAME        the lock strategy (see `lockbench list`)\n");
	else if (mode == LB_OPTS_SWEEP)
		fprintf(f, "usage: lockbench sweep --vary NAME=V1,V2,... [--strategies a,b] [options]\n\n"
			   "  --vary NAME=LIST       the parameter to vary: clients, hold, ttl or keys\n"
			   "  --strategies LIST      strategies, one line each (default: all but none)\n"
			   "  --strategy NAME        one more, taken whole (a name with a comma); may repeat\n"
			   "  (each point runs --duration seconds, 3 by default here)\n");
	else
		fprintf(f, "usage: lockbench compare [--strategies a,b,...] [options]\n\n"
			   "  --strategies LIST      strategies to compare, in order (default: all);\n"
			   "  --strategy NAME        one more, taken whole (a name with a comma, an\n"
			   "                         exec: path); --strategy and --strategies may repeat\n"
			   "                         DIR/report.md shows them in that order; the table\n"
			   "                         (DIR/compare.txt) shows each run's summary.csv: n/a\n"
			   "                         where it says n/a, the outcome class, and the lock's\n"
			   "                         traffic when it is over 10x its bound\n");
	fprintf(f,
		"  --scenario NAME|PATH   a scenario: its load, faults and expectations\n"
		"                         (scenarios/NAME.ini; options given here override it)\n"
		"  --clients N            contending client processes (8)\n"
		"  --duration S           seconds to run (10; fractions allowed)\n"
		"  --ttl MS               lease length in ms (2000)\n"
		"  --hold MS|MIN-MAX      critical-section time, or a range drawn per section (5)\n"
		"  --think MS             pause between release and the next acquire (0)\n"
		"  --keys K               locks the clients spread over (1: all fight for one;\n"
		"                         client i uses lock i %% K; K >= clients is uncontended)\n"
		"  --wait POLICY          try | fixed:MS | retries:N:MS | backoff:MIN:MAX |\n"
		"                         notify[:MS] | library (fixed:10); notify blocks until\n"
		"                         the release signals, polling at most every MS (100);\n"
		"                         library: a library's own blocking acquire, with its\n"
		"                         defaults (library strategies only)\n"
		"  --acquire-timeout MS   give up an acquire after MS (10000)\n"
		"  --work counter|none    counter: non-atomic GET, hold, SET of a counter on the\n"
		"                         resource server (lost updates are counted); none: hold\n"
		"  --seed N               seed of every random choice (default: random, recorded)\n"
		"  --out DIR              where the files go (results/runs/<UTC time>-<strategy>)\n"
		"  --redis URL[,URL...]   use these servers instead of starting redis-server:\n"
		"                         redis://[user:pass@]host:port; the first ones are lock\n"
		"                         nodes, one more is the resource server (else the first);\n"
		"                         only keys under a per-run prefix are touched, never flushed\n"
		"  --nodes N              lock nodes (default: what the strategy needs)\n"
		"  --no-validity-check    redlock: enter on a quorum however late it came (naive)\n"
		"  --max-renewals N       renewal: stop renewing a lease after N extensions\n"
		"  --delayed-restarts     a node that restarts stays down one more TTL first\n"
		"                         (antirez's delayed restart)\n"
		"  --topology single|sentinel|cluster  sentinel: the lock lives on a primary\n"
		"                         with two replicas behind three Sentinels, found\n"
		"                         through them; cluster: on the primary of its slot in\n"
		"                         a cluster of three primaries and three replicas,\n"
		"                         found through CLUSTER SLOTS and MOVED (one-node\n"
		"                         strategies; docs/topologies.md)\n"
		"  --sentinel URL[,URL...] --sentinel-master NAME  the lock lives on the primary\n"
		"                         your Sentinels name NAME; clients ask them, as with\n"
		"                         --topology sentinel. Only keys under a per-run prefix;\n"
		"                         the resource is --redis URL if given, else that primary.\n"
		"                         Faults that need lockbench's own servers are skipped\n"
		"  --no-status            no status line while running\n"
		"  --no-report            no charts and report.md at the end (see lockbench report)\n"
		"  --chart-scale X        charts X times the size, fonts and lines (0.5 to 4; 1),\n"
		"                         e.g. 2 for slides on a projector\n"
		"  --allow-skipped        exit 0, not 3, when the run cannot happen here\n"
		"  --adapter-arg ARG      an argument for an external strategy's program, after\n"
		"                         its path (repeatable; exec:PATH and library adapters,\n"
		"                         e.g. redis-py@4.3.4 takes `defaults`: its own no-TTL default)\n"
		"\nExit status: 0 the run completed (violations are results), 1 runtime failure\n"
		"(or a figure outside its range: a bug, named and written n/a), 2 usage error,\n"
		"3 skipped: the scenario could not run here (a missing part; the reason is\n"
		"printed, and nothing was measured), 130 or 143 interrupted by Ctrl-C (SIGINT)\n"
		"or SIGTERM: what ran is written, classed `interrupted`, and compared with no\n"
		"expectation.\n");
}

const struct lock_strategy *lb_strategy_or_usage(const char *name)
{
	const struct lock_strategy *s = lb_strategy_find(name);

	if (s)
		return s;
	if (!strncmp(name, "exec:", 5))
		return NULL; /* lb_strategy_find said what is wrong with the program */
	const char *near = lb_strategy_nearest(name);
	if (near)
		lb_errorf("unknown strategy '%s'; did you mean '%s'? valid strategies:", name, near);
	else
		lb_errorf("unknown strategy '%s'; valid strategies:", name);
	for (size_t i = 0; i < lb_strategy_count(); i++)
		fprintf(stderr, "  %s\n", lb_strategy_at(i)->name);
	return NULL;
}

void lb_default_out_dir(const char *base, const char *name, char *out, size_t len)
{
	char when[32];
	struct stat st;
	time_t now = time(NULL);

	char word[72];

	lb_path_word(name, word, sizeof(word)); /* exec:/a/b.sh nests nothing */
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", gmtime(&now));
	snprintf(out, len, "%s/%s-%s", base, when, word);
	for (int i = 2; stat(out, &st) == 0 && i < 1000; i++)
		snprintf(out, len, "%s/%s-%s-%d", base, when, word, i);
}

static bool parse_ms(const char *s, int64_t min, int64_t *out)
{
	return lb_parse_i64(s, min, INT64_C(86400000), out);
}

static bool parse_hold(const char *s, int64_t *lo, int64_t *hi)
{
	char buf[64];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash)
		return parse_ms(buf, 0, lo) && (*hi = *lo, true);
	*dash = '\0';
	return parse_ms(buf, 0, lo) && parse_ms(dash + 1, 0, hi) && *lo <= *hi;
}

static int strategies_list(struct lb_run_opts *o, const char *list)
{
	char buf[1024], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return LB_EINVAL;
	strcpy(buf, list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct lock_strategy *s = lb_strategy_or_usage(t);
		if (!s || o->n_strategies == LB_MAX_STRATEGIES)
			return LB_EINVAL;
		o->strategies[o->n_strategies++] = s;
	}
	return o->n_strategies ? 0 : LB_EINVAL;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --strategy NAME in compare and sweep: one more, taken whole (a name with a
 * comma, an exec: path, cannot be an item of a comma list). */
static int strategies_add(struct lb_run_opts *o, const char *name)
{
	const struct lock_strategy *s = lb_strategy_or_usage(name);
	if (!s)
		return LB_EINVAL;
	if (o->n_strategies == LB_MAX_STRATEGIES)
		return usage_error("more than %d strategies", LB_MAX_STRATEGIES);
	o->strategies[o->n_strategies++] = s;
	return 0;
}

static int parse_vary(struct lb_run_opts *o, const char *a)
{
	char buf[512], *save = NULL;
	const char *eq = strchr(a, '=');
	int64_t v;

	if (!eq || (size_t)(eq - a) >= sizeof(o->vary_name) || strlen(eq + 1) >= sizeof(buf))
		return LB_EINVAL;
	memcpy(o->vary_name, a, (size_t)(eq - a));
	o->vary_name[eq - a] = '\0';
	if (strcmp(o->vary_name, "clients") && strcmp(o->vary_name, "hold") &&
	    strcmp(o->vary_name, "ttl") && strcmp(o->vary_name, "keys") &&
	    strcmp(o->vary_name, "max_lag") && strcmp(o->vary_name, "down_after"))
		return LB_EINVAL;
	strcpy(buf, eq + 1);
	o->n_vary = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->n_vary == 32 || !lb_parse_i64(t, 0, 86400000, &v))
			return LB_EINVAL;
		o->vary[o->n_vary++] = v;
	}
	return o->n_vary ? 0 : LB_EINVAL;
}

int lb_run_cfg_set(struct lb_run_cfg *cfg, const char *name, int64_t v)
{
	if (!strcmp(name, "clients") && v >= 1 && v <= LB_MAX_CLIENTS)
		cfg->clients = (int)v;
	else if (!strcmp(name, "hold") && v >= 0)
		cfg->hold_min_ms = cfg->hold_max_ms = v;
	else if (!strcmp(name, "ttl") && v >= 1)
		cfg->ttl_ms = v;
	else if (!strcmp(name, "keys") && v >= 1 && v <= LB_MAX_KEYS)
		cfg->keys = (int)v;
	else if (!strcmp(name, "max_lag") && v >= 1 && v <= 3600)
		cfg->min_replicas_max_lag = (int)v;
	else if (!strcmp(name, "down_after") && v >= 100 && v <= 60000)
		cfg->down_after_ms = v;
	else
		return LB_EINVAL;
	return 0;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lb_errorf("%s (see --help)", msg);
	return LB_EINVAL;
}

int lb_run_opts_parse(int argc, char **argv, enum lb_opts_mode mode, struct lb_run_opts *o)
{
	struct lb_run_cfg *cfg = &o->cfg;
	char err[256];
	int64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	lb_run_cfg_defaults(cfg);
	lb_sh_cmdline(cfg->cmdline, sizeof(cfg->cmdline), "lockbench", argc, argv);
	if (getrandom(&cfg->seed, sizeof(cfg->seed), 0) != sizeof(cfg->seed))
		cfg->seed = (uint64_t)lb_now_ns();
	cfg->seed %= UINT64_C(1000000000000);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case OPT_STRATEGY:
			if (mode == LB_OPTS_COMPARE || mode == LB_OPTS_SWEEP) {
				if (strategies_add(o, a) < 0)
					return LB_EINVAL;
				break;
			}
			if (mode != LB_OPTS_RUN)
				return usage_error("--strategy is for run, compare and sweep");
			if (!(cfg->strategy = lb_strategy_or_usage(a)))
				return LB_EINVAL;
			break;
		case OPT_VARY:
			if (mode != LB_OPTS_SWEEP)
				return usage_error("--vary is for sweep");
			if (parse_vary(o, a) < 0)
				return usage_error("--vary '%s': expected clients=, hold=, ttl=, keys=, "
						   "max_lag= or down_after= and a comma list of integers "
						   "(at most 32)", a);
			break;
		case OPT_STRATEGIES:
			if (mode != LB_OPTS_COMPARE && mode != LB_OPTS_SWEEP)
				return usage_error("--strategies is for compare; use --strategy");
			if (strategies_list(o, a) < 0)
				return LB_EINVAL;
			break;
		case OPT_CLIENTS:
			o->given |= G_CLIENTS;
			if (!lb_parse_i64(a, 1, LB_MAX_CLIENTS, &v))
				return usage_error("--clients '%s': expected an integer from 1 to %d", a,
						   LB_MAX_CLIENTS);
			cfg->clients = (int)v;
			break;
		case OPT_DURATION: {
			char *end;
			o->given |= G_DURATION;
			cfg->duration_s = strtod(a, &end);
			if (*end || !(cfg->duration_s > 0 && cfg->duration_s <= 86400))
				return usage_error("--duration '%s': expected seconds, more than 0 "
						   "and at most 86400", a);
			break;
		}
		case OPT_TTL:
			o->given |= G_TTL;
			if (!parse_ms(a, 1, &cfg->ttl_ms))
				return usage_error("--ttl '%s': expected milliseconds from 1 to 86400000", a);
			break;
		case OPT_HOLD:
			o->given |= G_HOLD;
			if (!parse_hold(a, &cfg->hold_min_ms, &cfg->hold_max_ms))
				return usage_error("--hold '%s': expected MS or MIN-MAX with 0 <= MIN <= MAX", a);
			break;
		case OPT_THINK:
			o->given |= G_THINK;
			if (!parse_ms(a, 0, &cfg->think_ms))
				return usage_error("--think '%s': expected milliseconds >= 0", a);
			break;
		case OPT_KEYS:
			o->given |= G_KEYS;
			if (!lb_parse_i64(a, 1, LB_MAX_KEYS, &v))
				return usage_error("--keys '%s': expected an integer from 1 to 1024", a);
			cfg->keys = (int)v;
			break;
		case OPT_WAIT:
			o->given |= G_WAIT;
			if (lb_wait_parse(a, &cfg->wait, err, sizeof(err)) < 0)
				return usage_error("%s", err);
			break;
		case OPT_ACQ_TIMEOUT:
			o->given |= G_ACQ;
			if (!parse_ms(a, 1, &cfg->acquire_timeout_ms))
				return usage_error("--acquire-timeout '%s': expected milliseconds >= 1", a);
			break;
		case OPT_WORK:
			o->given |= G_WORK;
			if (!strcmp(a, "counter"))
				cfg->work = LB_WORK_COUNTER;
			else if (!strcmp(a, "none"))
				cfg->work = LB_WORK_NONE;
			else
				return usage_error("--work '%s': expected counter or none", a);
			break;
		case OPT_SEED:
			if (!lb_parse_i64(a, 0, INT64_MAX, &v))
				return usage_error("--seed '%s': expected a non-negative integer", a);
			cfg->seed = (uint64_t)v;
			break;
		case OPT_OUT:
			if (!lb_dir_arg_ok("--out", a))
				return LB_EINVAL;
			strcpy(cfg->out_dir, a);
			o->out_given = true;
			break;
		case OPT_REDIS:
			cfg->redis_urls = a;
			break;
		case OPT_NODES:
			o->given |= G_NODES;
			if (!lb_parse_i64(a, 1, LB_MAX_NODES, &v))
				return usage_error("--nodes '%s': expected an integer from 1 to 9", a);
			cfg->nodes = (int)v;
			break;
		case OPT_NO_VALIDITY:
			o->given |= G_VALIDITY;
			cfg->no_validity_check = true;
			break;
		case OPT_MAX_RENEWALS:
			o->given |= G_RENEWALS;
			if (!lb_parse_i64(a, 1, 1000000, &v))
				return usage_error("--max-renewals '%s': expected an integer >= 1", a);
			cfg->max_renewals = (int)v;
			break;
		case OPT_DELAYED_RESTARTS:
			o->given |= G_DELAYED;
			cfg->delayed_restarts = true;
			break;
		case OPT_SENTINEL:
			cfg->sentinel_urls = a;
			break;
		case OPT_SENTINEL_MASTER:
			if (!*a || strlen(a) >= sizeof(cfg->sentinel_master))
				return usage_error("--sentinel-master '%s': expected the name the "
						   "Sentinels monitor, 1 to %zu characters", a,
						   sizeof(cfg->sentinel_master) - 1);
			strcpy(cfg->sentinel_master, a);
			break;
		case OPT_TOPOLOGY:
			o->given |= G_TOPOLOGY;
			if (strcmp(a, "single") && strcmp(a, "sentinel") && strcmp(a, "cluster"))
				return usage_error("--topology '%s': expected single, sentinel or "
						   "cluster", a);
			cfg->sentinel = !strcmp(a, "sentinel");
			cfg->cluster = !strcmp(a, "cluster");
			break;
		case OPT_NO_STATUS:
			cfg->status_line = false;
			break;
		case OPT_ALLOW_SKIPPED:
			cfg->allow_skipped = true;
			break;
		case OPT_ADAPTER_ARG:
			if (o->n_adapter_args == LB_MAX_ADAPTER_ARGS)
				return usage_error("--adapter-arg: at most %d", LB_MAX_ADAPTER_ARGS);
			o->adapter_args[o->n_adapter_args++] = a;
			lb_adapter_set_exec_args(o->adapter_args, o->n_adapter_args);
			snprintf(cfg->adapter_args + strlen(cfg->adapter_args),
				 sizeof(cfg->adapter_args) - strlen(cfg->adapter_args), "%s%s",
				 cfg->adapter_args[0] ? " " : "", a);
			break;
		case OPT_NO_REPORT:
			cfg->no_report = true;
			break;
		case OPT_CHART_SCALE:
			if (lb_chart_scale_arg(a) < 0)
				return LB_EINVAL;
			break;
		case OPT_HELP:
			lb_run_opts_usage(stdout, mode);
			return 1;
		case OPT_SCENARIO:
			if (lb_scenario_load(a, &o->scenario) < 0)
				return LB_EINVAL;
			o->has_scenario = true;
			break;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (mode == LB_OPTS_RUN_DEFAULTS)
		return 0;
	if (mode == LB_OPTS_RUN && !cfg->strategy)
		return usage_error("run needs --strategy NAME");
	if (!cfg->sentinel_urls != !cfg->sentinel_master[0])
		return usage_error("--sentinel URL[,URL...] and --sentinel-master NAME go together: "
				   "the Sentinels to ask, and the name of the primary they monitor");
	if (cfg->sentinel_urls && (o->given & G_TOPOLOGY) && cfg->sentinel)
		return usage_error("--topology sentinel starts lockbench's own Sentinels; "
				   "--sentinel names yours: one or the other");
	if (o->has_scenario)
		lb_run_opts_apply_scenario(o, &o->scenario);
	if (cfg->sentinel_urls && cfg->cluster)
		return usage_error("--sentinel names a Sentinel deployment; topology cluster starts "
				   "lockbench's own cluster: one or the other");
	char why[400];
	if (mode == LB_OPTS_RUN && o->has_scenario &&
	    lb_scenario_why_not(&o->scenario, cfg->strategy->name, why, sizeof(why)))
		return usage_error("%s", why);
	if (mode == LB_OPTS_SWEEP && o->n_vary == 0)
		return usage_error("sweep needs --vary NAME=V1,V2,...");
	if (mode == LB_OPTS_SWEEP && !cfg->sentinel &&
	    (!strcmp(o->vary_name, "max_lag") || !strcmp(o->vary_name, "down_after")))
		return usage_error("--vary %s sets up the Sentinel topology: add --topology sentinel "
				   "or a scenario with topology = sentinel", o->vary_name);
	if (mode == LB_OPTS_SWEEP && !strcmp(o->vary_name, "max_lag") &&
	    !(o->has_scenario && o->scenario.min_replicas > 0))
		return usage_error("--vary max_lag changes min-replicas-max-lag, which does nothing "
				   "without min-replicas-to-write: use a scenario with min_replicas "
				   "(sentinel-split-brain-min-replicas)");
	if (mode == LB_OPTS_SWEEP && !(o->given & G_DURATION) &&
	    !(o->has_scenario && o->scenario.duration_set))
		cfg->duration_s = 3; /* a scenario's own duration is part of its story */
	if ((mode == LB_OPTS_COMPARE || mode == LB_OPTS_SWEEP) && o->n_strategies == 0)
		for (size_t i = 0; i < lb_strategy_count() && i < LB_MAX_STRATEGIES; i++)
			if (mode == LB_OPTS_COMPARE || strcmp(lb_strategy_at(i)->name, "none"))
				o->strategies[o->n_strategies++] = lb_strategy_at(i);
	for (int i = 0; i < o->n_vary; i++) {
		struct lb_run_cfg probe = *cfg;
		if (lb_run_cfg_set(&probe, o->vary_name, o->vary[i]) < 0)
			return usage_error("--vary %s=%lld is out of range", o->vary_name,
					   (long long)o->vary[i]);
	}
	for (size_t i = 0; i < (mode == LB_OPTS_RUN || mode == LB_OPTS_RUN_DEFAULTS ? 1 : o->n_strategies); i++) {
		const struct lock_strategy *s = mode == LB_OPTS_RUN ? cfg->strategy : o->strategies[i];
		if (cfg->wait.kind == LB_WAIT_NOTIFY && !s->wait)
			return usage_error("--wait notify: %s cannot be woken by its releaser; use "
					   "fixed:MS or backoff:MIN:MAX (token-lua can)", s->name);
		if (cfg->wait.kind == LB_WAIT_LIBRARY && !lb_strategy_is_external(s))
			return usage_error("--wait library: %s is a recipe with no waiting of its own; "
					   "library is for library strategies (lockbench list)", s->name);
		if ((cfg->sentinel || cfg->cluster) && (s->min_nodes > 1 || cfg->nodes > 1))
			return usage_error("--topology %s: %s needs several lock nodes; the "
					   "topology has one primary for the lock",
					   cfg->sentinel ? "sentinel" : "cluster", s->name);
		if ((cfg->sentinel || cfg->cluster) && cfg->redis_urls)
			return usage_error("--topology %s starts its own servers%s; it does not go "
					   "with --redis", cfg->sentinel ? "sentinel" : "cluster",
					   cfg->sentinel ? " and Sentinels" : "");
		if (cfg->cluster && lb_strategy_is_external(s))
			return usage_error("--topology cluster: %s is a library; the adapters do not "
					   "set up their libraries' cluster clients yet", s->name);
		if (cfg->sentinel_urls && (s->min_nodes > 1 || cfg->nodes > 1))
			return usage_error("--sentinel: %s needs several lock nodes; a Sentinel "
					   "deployment has one primary", s->name);
		if (cfg->nodes && cfg->nodes < (int)s->min_nodes) {
			char m[64];
			snprintf(m, sizeof(m), "%u", s->min_nodes);
			lb_errorf("--nodes %d: %s needs at least %s", cfg->nodes, s->name, m);
			return LB_EINVAL;
		}
	}
	return 0;
}

void lb_run_opts_apply_scenario(struct lb_run_opts *o, const struct lb_scenario *sc)
{
	struct lb_run_cfg *cfg = &o->cfg;

	cfg->scenario = sc;
	snprintf(cfg->scenario_name, sizeof(cfg->scenario_name), "%s", sc->name);
	if (sc->clients_set && !(o->given & G_CLIENTS))
		cfg->clients = sc->clients;
	if (sc->duration_set && !(o->given & G_DURATION))
		cfg->duration_s = sc->duration_s;
	if (sc->ttl_set && !(o->given & G_TTL))
		cfg->ttl_ms = sc->ttl_ms;
	if (sc->hold_set && !(o->given & G_HOLD)) {
		cfg->hold_min_ms = sc->hold_min_ms;
		cfg->hold_max_ms = sc->hold_max_ms;
	}
	if (sc->think_set && !(o->given & G_THINK))
		cfg->think_ms = sc->think_ms;
	if (sc->keys_set && !(o->given & G_KEYS))
		cfg->keys = sc->keys;
	if (sc->wait_set && !(o->given & G_WAIT))
		cfg->wait = sc->wait;
	if (sc->acquire_timeout_set && !(o->given & G_ACQ))
		cfg->acquire_timeout_ms = sc->acquire_timeout_ms;
	if (sc->work_set && !(o->given & G_WORK))
		cfg->work = sc->work_none ? LB_WORK_NONE : LB_WORK_COUNTER;
	if (sc->nodes_set && !(o->given & G_NODES))
		cfg->nodes = sc->nodes;
	if (sc->no_validity_check && !(o->given & G_VALIDITY))
		cfg->no_validity_check = true;
	if (sc->max_renewals > 0 && !(o->given & G_RENEWALS))
		cfg->max_renewals = sc->max_renewals;
	if (sc->delayed_restarts && !(o->given & G_DELAYED))
		cfg->delayed_restarts = true;
	if (sc->sentinel && !(o->given & G_TOPOLOGY) && !cfg->sentinel_urls)
		cfg->sentinel = true; /* with --sentinel, the user's Sentinels take its place */
	if (sc->cluster && !(o->given & G_TOPOLOGY))
		cfg->cluster = true;
}
