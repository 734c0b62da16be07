#include "adapter.h"
#include "esc.h"
#include "node.h"
#include "consensus.h"
#include "ensemble.h"
#include "options.h"
#include "params.h"
#include "report.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The options that are not run parameters. The run parameters' options come
 * from their table (params.h): OPT_PARAM + the row's id. */
enum {
	OPT_STRATEGY = 256, OPT_STRATEGIES, OPT_OUT, OPT_REDIS, OPT_NO_STATUS, OPT_HELP,
	OPT_SCENARIO, OPT_NO_REPORT, OPT_VARY, OPT_SENTINEL, OPT_SENTINEL_MASTER,
	OPT_ALLOW_SKIPPED, OPT_ADAPTER_ARG, OPT_CHART_SCALE, OPT_CHECK, OPT_EXPECT, OPT_THRESHOLD,
	OPT_JSON, OPT_JUNIT, OPT_OPENMETRICS, OPT_MASTER_AUTH, OPT_ALLOW_FAULTS, OPT_HOOK, OPT_DRY_RUN, OPT_CLUSTER,
	OPT_RESOURCE_THEIRS,
	OPT_ETCD, OPT_ZOOKEEPER, OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_INSECURE,
	OPT_LIBRARY_ENV, OPT_HOSTS, OPT_SSH_CONFIG, OPT_AGENT_PATH, OPT_BIND,
	OPT_PARAM = 512,
};

static const struct option fixed_opts[] = {
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "strategies", required_argument, NULL, OPT_STRATEGIES },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "redis", required_argument, NULL, OPT_REDIS },
	{ "no-status", no_argument, NULL, OPT_NO_STATUS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "scenario", required_argument, NULL, OPT_SCENARIO },
	{ "no-report", no_argument, NULL, OPT_NO_REPORT },
	{ "chart-scale", required_argument, NULL, OPT_CHART_SCALE },
	{ "vary", required_argument, NULL, OPT_VARY },
	{ "sentinel", required_argument, NULL, OPT_SENTINEL },
	{ "sentinel-master", required_argument, NULL, OPT_SENTINEL_MASTER },
	{ "master-auth", required_argument, NULL, OPT_MASTER_AUTH },
	{ "allow-faults", no_argument, NULL, OPT_ALLOW_FAULTS },
	{ "hook", required_argument, NULL, OPT_HOOK },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "resource-on-deployment", no_argument, NULL, OPT_RESOURCE_THEIRS },
	{ "etcd", required_argument, NULL, OPT_ETCD },
	{ "zookeeper", required_argument, NULL, OPT_ZOOKEEPER },
	{ "tls-ca", required_argument, NULL, OPT_TLS_CA },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "tls-insecure", no_argument, NULL, OPT_TLS_INSECURE },
	{ "allow-skipped", no_argument, NULL, OPT_ALLOW_SKIPPED },
	{ "adapter-arg", required_argument, NULL, OPT_ADAPTER_ARG },
	{ "library-env", required_argument, NULL, OPT_LIBRARY_ENV },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "openmetrics", required_argument, NULL, OPT_OPENMETRICS },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "ssh-config", required_argument, NULL, OPT_SSH_CONFIG },
	{ "agent-path", required_argument, NULL, OPT_AGENT_PATH },
	{ "bind", required_argument, NULL, OPT_BIND },
};

#define N_FIXED (sizeof(fixed_opts) / sizeof(fixed_opts[0]))

/* The options of fixed_opts that name a deployment (lb_deploy_options). */
static const char *const deploy_names[] = {
	"redis", "sentinel", "sentinel-master", "master-auth", "cluster", "etcd", "zookeeper",
	"allow-faults", "hook", "tls-ca", "tls-cert", "tls-key", "tls-insecure",
	"resource-on-deployment",
};
#define N_DEPLOY (sizeof(deploy_names) / sizeof(deploy_names[0]))

const struct option *lb_deploy_options(int base, size_t *n)
{
	static struct option out[N_DEPLOY];

	for (size_t i = 0; i < N_DEPLOY; i++)
		for (size_t k = 0; k < N_FIXED; k++)
			if (!strcmp(fixed_opts[k].name, deploy_names[i]))
				out[i] = (struct option){ fixed_opts[k].name, fixed_opts[k].has_arg, NULL,
							  base + (int)i };
	*n = N_DEPLOY;
	return out;
}
#define N_OPTS (N_FIXED + LB_P_COUNT + 1)

/* fixed_opts, then one for each row with an option, then the end. */
static void long_opts(struct option out[N_OPTS])
{
	size_t n = N_FIXED, rows;
	const struct lb_param *t = lb_params(&rows);

	memcpy(out, fixed_opts, sizeof(fixed_opts));
	for (size_t i = 0; i < rows; i++)
		if (t[i].cli)
			out[n++] = (struct option){ t[i].cli, t[i].type == LB_PT_FLAG ? no_argument :
						    required_argument, NULL, OPT_PARAM + (int)i };
	out[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* "clients@, ttl@, ... or down_after@" with @suffix for @: the --vary names. */
static void vary_names(const char *suffix, char *buf, size_t len)
{
	size_t n, o = 0, left = 0;
	const struct lb_param *t = lb_params(&n);

	for (size_t i = 0; i < n; i++)
		left += t[i].vary != NULL;
	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++) {
		if (!t[i].vary)
			continue;
		const char *sep = o == 0 ? "" : left == 1 ? " or " : ", ";
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s", sep, t[i].vary, suffix);
		left--;
	}
}

/* @text from column 25, broken at spaces before column 80. */
static void print_wrapped(FILE *f, const char *text)
{
	int col = 25;

	while (*text) {
		int word = (int)strcspn(text, " ");
		if (col > 25 && col + 1 + word > 80) {
			fprintf(f, "\n%25s", "");
			col = 25;
		} else if (col > 25) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", word, text);
		col += word;
		text += word;
		text += *text == ' ';
	}
	fputc('\n', f);
}

/* The options that name a deployment and what may be done to it: run's,
 * compare's, sweep's and audit's (one table: lb_deploy_options). */
void lb_deploy_opts_usage(FILE *f)
{
	fprintf(f,
		"  --redis URL[,URL...]   use these servers instead of starting redis-server:\n"
		"                         redis://[user:pass@]host:port; the first ones are lock\n"
		"                         nodes, one more is the resource server (else one that\n"
		"                         lockbench starts); only keys under a per-run prefix are\n"
		"                         touched, never flushed\n"
		"  --sentinel URL[,URL...] --sentinel-master NAME  the lock lives on the primary\n"
		"                         your Sentinels name NAME; clients ask them, as with\n"
		"                         --topology sentinel. Only keys under a per-run prefix;\n"
		"                         the resource is --redis URL if given, else a server\n"
		"                         lockbench starts (--resource-on-deployment: the primary).\n"
		"                         Sentinel URLs may hold the Sentinels' own user:password\n"
		"  --master-auth [USER]:PASSWORD  the AUTH of the primary behind --sentinel\n"
		"  --cluster URL[,URL...] the lock lives on your Redis Cluster (these are seeds):\n"
		"                         on the primary of the run's slot, found by CLUSTER\n"
		"                         SLOTS and followed through MOVED and ASK; one-node C\n"
		"                         recipes. The same promise as --redis\n"
		"  --etcd URL[,URL...]    an etcd lock (etcd-lock*) on your etcd cluster: its\n"
		"                         members' client URLs, http://host:port (https://:\n"
		"                         TLS, with --tls-ca etc.), member 0 first; only keys\n"
		"                         under a per-run prefix, deleted at the end\n"
		"  --zookeeper HOST:PORT[,...]  a ZooKeeper lock (kazoo-lock*) on your ensemble:\n"
		"                         only znodes /lockbench/<per-run prefix>..., deleted at\n"
		"                         the end (and /lockbench if the run made it)\n"
		"  --tls-ca FILE          rediss:// and --etcd https:// URLs: the CA that signed\n"
		"                         your servers' certificates (else the system's);\n"
		"                         --tls-cert FILE and\n"
		"                         --tls-key FILE: a client certificate when they ask one;\n"
		"                         --tls-insecure: do not check the server's certificate.\n"
		"                         C recipes reach a rediss:// server through a TLS tunnel\n"
		"                         lockbench starts and stops (stunnel4): rediss:// Sentinels\n"
		"                         or cluster seeds, one to each server they name; a library\n"
		"                         connects itself, given these in its TLS settings\n"
		"                         (docs/adapters.md; on rediss:// Sentinels only redis-py,\n"
		"                         to its Sentinel client; none on a cluster)\n"
		"  --resource-on-deployment  the counter (the resource) on your server too (the\n"
		"                         first lock node, or the primary), not on a redis-server\n"
		"                         lockbench starts: a failover may roll it back, so each\n"
		"                         acknowledged write is counted by its client and\n"
		"                         lost_updates is acknowledged minus final\n"
		"  --allow-faults         let the scenario's faults act on servers lockbench did\n"
		"                         not start (--redis, --sentinel, --cluster, --etcd,\n"
		"                         --zookeeper): the commands each sends\n"
		"                         are in docs/running.md; without it such runs are skipped\n"
		"  --hook NAME=COMMAND    the command a fault runs (repeatable): a scenario's\n"
		"                         [fault] with action = hook and hook = NAME, or how\n"
		"                         node-kill, node-start, node-pause, node-resume (NAME\n"
		"                         or NAME:N for node N) act on servers lockbench did not\n"
		"                         start. Split into words as a shell would, never run by\n"
		"                         one; its output goes to DIR/hook-NAME.log\n");
}

void lb_run_opts_usage(FILE *f, enum lb_opts_mode mode)
{
	char names[160], vary[200];

	if (mode == LB_OPTS_RUN) {
		fprintf(f, "usage: lockbench run --strategy NAME [options]\n\n"
			   "  --strategy NAME        the lock strategy (see `lockbench list`)\n");
	} else if (mode == LB_OPTS_SWEEP) {
		fprintf(f, "usage: lockbench sweep --vary NAME=V1,V2,... [--strategies a,b] [options]\n\n"
			   "  --vary NAME=LIST       ");
		vary_names("", names, sizeof(names));
		snprintf(vary, sizeof(vary), "the parameter to vary: %s", names);
		print_wrapped(f, vary);
		fprintf(f, "  --strategies LIST      strategies, one line each (default: all but none)\n"
			   "  --strategy NAME        one more, taken whole (a name with a comma); may repeat\n"
			   "  (each point runs --duration seconds, 3 by default here)\n");
	} else {
		fprintf(f, "usage: lockbench compare [--strategies a,b,...] [options]\n\n"
			   "  --strategies LIST      strategies to compare, in order (default: all);\n"
			   "  --strategy NAME        one more, taken whole (a name with a comma, an\n"
			   "                         exec: path); --strategy and --strategies may repeat\n"
			   "                         DIR/report.md shows them in that order; the table\n"
			   "                         (DIR/compare.txt) shows each run's summary.csv: n/a\n"
			   "                         where it says n/a, the outcome class, and the lock's\n"
			   "                         traffic when it is over 10x its bound\n");
	}
	fprintf(f, "  --scenario NAME|PATH   a scenario: its load, faults and expectations\n"
		   "                         (scenarios/NAME.ini; options given here override it)\n");
	/* the run parameters, with --out and --redis where they always were */
	lb_params_usage(f, 0, LB_P_NODES);
	fprintf(f,
		"  --out DIR              where the files go (results/runs/<UTC time>-<strategy>)\n");
	lb_params_usage(f, LB_P_NODES, LB_P_COUNT);
	lb_deploy_opts_usage(f);
	if (mode == LB_OPTS_RUN)
		fprintf(f,
		"  --hosts FILE           the clients on other hosts: one `[user@]host[:port]\n"
		"                         [clients]` a line (# comments); lockbench starts\n"
		"                         `lockbench agent` on each with ssh -o BatchMode=yes (your\n"
		"                         keys, never a password), refuses a host ssh cannot\n"
		"                         reach (exit 255) or whose agent is another version\n"
		"                         before anything starts (exit 3), splits the clients\n"
		"                         (a line's count, the rest evenly), takes their records\n"
		"                         onto this clock by each host's offset to the first\n"
		"                         lock node (TIME round trips), and judges them as a\n"
		"                         run's; each host's bound, and the overlaps across\n"
		"                         hosts certain or possible within them, in meta.txt\n"
		"  --bind ADDR            with --hosts: the servers lockbench starts listen on\n"
		"                         ADDR too (an IPv4 address of this machine's the hosts\n"
		"                         route to), and the agents are given it\n"
		"  --ssh-config FILE      with --hosts: ssh -F FILE\n"
		"  --agent-path PATH      with --hosts: lockbench on the hosts (else this one's own\n"
		"                         absolute path; the scenario's file too is sent by its\n"
		"                         path here)\n");
	fprintf(f,
		"  --dry-run              (run) print the servers, keys, commands and faults the\n"
		"                         run would use, and send nothing\n"
		"  --no-status            no status line while running\n"
		"  --no-report            no charts and report.md at the end (see lockbench report)\n"
		"  --chart-scale X        charts X times the size, fonts and lines (0.5 to 4; 1),\n"
		"                         e.g. 2 for slides on a projector\n"
		"  --allow-skipped        exit 0, not 3, when the run cannot happen here\n"
		"  --adapter-arg ARG      an argument for an external strategy's program, after\n"
		"                         its path (repeatable; exec:PATH and library adapters,\n"
		"                         e.g. redis-py@4.3.4 takes `defaults`: its own no-TTL default)\n"
		"  --library-env DIR      run the library as your project installed it: DIR is\n"
		"                         a virtualenv (Python); --strategy NAME runs the version\n"
		"                         found there, NAME@VERSION checks it is that one. Without\n"
		"                         it NAME@VERSION is a shipped manifest's, or one that\n"
		"                         `lockbench install NAME@VERSION` put in the cache\n");
	if (mode != LB_OPTS_SWEEP)
		fprintf(f,
		"  --check                exit 1 unless the run meets the scenario's [expect]\n"
		"                         section: its line for the strategy, its thresholds\n"
		"  --expect CLASS[,CLASS...][,FIGURE OP N]  exit 1 unless the run is of one\n"
		"                         of the classes (safe, contained, overlap,\n"
		"                         foreign-release, deadlock, unavailable) and FIGURE OP\n"
		"                         N holds; with --check it takes the place of the\n"
		"                         scenario's line. With no class expected (thresholds\n"
		"                         alone), an overlap or a lost update fails the run\n"
		"                         unless a threshold names that figure\n"
		"  --threshold 'FIGURE OP N'  exit 1 unless it holds, e.g. 'acquire_p99_ms<50'\n"
		"                         (a figure of summary.csv; OP < <= > >= == !=; a\n"
		"                         figure in us or ms may be named in ms or s);\n"
		"                         repeatable. A figure known as an interval (waits\n"
		"                         cut off by the run's end: see --drain) holds when\n"
		"                         all of it does, and is INCONCLUSIVE (exit 5) when\n"
		"                         only some does; an event that never happened\n"
		"                         (no split brain) holds < <= !=; n/a is INCONCLUSIVE;\n"
		"                         a skipped run holds nothing (docs/running.md,\n"
		"                         \"Failing a build\")\n"
		"  --junit FILE           write what they judged as JUnit XML, one test case a\n"
		"                         run, for a CI system's test report: named by scenario\n"
		"                         and strategy (never by seed or time), its time the\n"
		"                         run's elapsed time\n");
	if (mode == LB_OPTS_RUN)
		fprintf(f, "  --json                 print summary.json (every figure, its unit; null and\n"
			   "                         the reason for n/a) on standard output, the table on\n"
			   "                         standard error\n"
			   "  --openmetrics FILE     write the run's figures to FILE in the OpenMetrics\n"
			   "                         text format (lockbench_overlaps_total,\n"
			   "                         lockbench_acquire_p99_seconds, ... labelled with the\n"
			   "                         strategy and the scenario; n/a figures left out)\n");
	fprintf(f,
		"\nExit status: 0 the run completed (violations are results), 1 runtime failure\n"
		"(or a figure outside its range: a bug, named and written n/a), or a condition\n"
		"of --check, --expect or --threshold not held, 2 usage error,\n"
		"5 (run, compare) no condition failed and one was inconclusive (a figure\n"
		"cut off by the run's end across its bound, or not measured),\n"
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
	if (lb_adapter_base_known(name)) {
		lb_errorf("%s names a library, not one version of it: give a version (%s@VERSION: "
			  "a shipped one, see lockbench list, or one `lockbench install` fetched), "
			  "or --library-env DIR to run the one installed in DIR", name, name);
		return NULL;
	}
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

/* Every URL of a --redis or --sentinel list well-formed: a usage error, said
 * with what is wrong, before anything starts. */
static int check_urls(const char *opt, const char *list)
{
	size_t len = strlen(list), at = 0, max = strcmp(opt, "--redis") ? 511 : 2047;
	int count = 0;

	if (len == 0 || len > max)
		return usage_error("%s: expected URL[,URL...], at most %zu bytes", opt, max);
	while (at <= len) {
		size_t k = strcspn(list + at, ",");
		char url[2048], why[256];
		struct lb_node n;
		memcpy(url, list + at, k);
		url[k] = '\0';
		char shown[2048];
		lb_url_list_masked(url, shown, sizeof(shown)); /* a message never shows a password */
		if (!k)
			return usage_error("%s: an empty address in the list", opt);
		if (lb_node_parse_url(url, &n, why, sizeof(why)) < 0)
			return usage_error("%s '%s': %s", opt, shown, why);
		if (strcmp(opt, "--redis") && n.tls != !strncasecmp(list, "rediss://", 9))
			return usage_error("%s '%s': rediss:// and redis:// mixed: a TLS deployment's "
					   "%s are all rediss://", opt, shown, !strcmp(opt, "--sentinel") ?
					   "Sentinels" : "seeds");
		if (strcmp(opt, "--redis") && n.db)
			return usage_error("%s '%s': %s has no database: drop /%d", opt, shown,
					   !strcmp(opt, "--sentinel") ? "a Sentinel" : "a cluster", n.db);
		if (++count > (!strcmp(opt, "--sentinel") ? LB_MAX_SENTINELS :
			       !strcmp(opt, "--cluster") ? LB_MAX_SEEDS : LB_MAX_NODES + 1))
			return usage_error("%s: at most %d addresses", opt,
					   !strcmp(opt, "--sentinel") ? LB_MAX_SENTINELS :
					   !strcmp(opt, "--cluster") ? LB_MAX_SEEDS : LB_MAX_NODES + 1);
		at += k + 1;
	}
	return 0;
}

/* The command line as meta.txt keeps it, its passwords masked: a URL's,
 * and the whole of --master-auth's. */
static void record_cmdline(struct lb_run_cfg *cfg, int argc, char **argv)
{
	enum { MAX_ARGS = 256 };
	char *shown[MAX_ARGS];
	static char masked[8][2048];
	int n = argc < MAX_ARGS ? argc : MAX_ARGS, m = 0;

	for (int i = 0; i < n; i++) {
		shown[i] = argv[i];
		const char *prev = i ? argv[i - 1] : "";
		bool url = !strcmp(prev, "--redis") || !strcmp(prev, "--sentinel") ||
			   !strcmp(prev, "--cluster");
		if ((url || !strcmp(prev, "--master-auth")) && m < 8) {
			if (url)
				lb_url_list_masked(argv[i], masked[m], sizeof(masked[m]));
			else
				snprintf(masked[m], sizeof(masked[m]), "***");
			shown[i] = masked[m++];
		}
	}
	lb_sh_cmdline(cfg->cmdline, sizeof(cfg->cmdline), "lockbench", n, shown);
}

/* --hook NAME=COMMAND: a name a fault can use, a command that splits into words. */
static int hook_arg(struct lb_run_cfg *cfg, const char *a)
{
	const char *eq = strchr(a, '=');
	char name[40], buf[1024], *argv[64], why[80];

	if (!eq || (size_t)(eq - a) >= sizeof(name))
		return usage_error("--hook '%s': expected NAME=COMMAND", a);
	memcpy(name, a, (size_t)(eq - a));
	name[eq - a] = '\0';
	char *colon = strchr(name, ':');
	int64_t node;
	if (colon && !lb_parse_i64(colon + 1, 0, LB_MAX_NODES - 1, &node))
		return usage_error("--hook %s: expected NAME or NAME:N, N a node from 0", name);
	if (colon)
		*colon = '\0';
	if (!lb_hook_name_ok(name))
		return usage_error("--hook '%s': NAME is 1 to 31 letters, digits and '-'", name);
	if (colon)
		*colon = ':';
	if (strlen(eq + 1) >= sizeof(cfg->hooks[0].command))
		return usage_error("--hook %s: the command is longer than %zu bytes", name,
				   sizeof(cfg->hooks[0].command) - 1);
	if (lb_split_words(eq + 1, buf, sizeof(buf), argv, 64, why, sizeof(why)) < 0)
		return usage_error("--hook %s: %s", name, why);
	for (int i = 0; i < cfg->n_hooks; i++)
		if (!strcmp(cfg->hooks[i].name, name))
			return usage_error("--hook %s given twice", name);
	if (cfg->n_hooks == LB_MAX_HOOKS)
		return usage_error("more than %d --hook", LB_MAX_HOOKS);
	strcpy(cfg->hooks[cfg->n_hooks].name, name);
	strcpy(cfg->hooks[cfg->n_hooks++].command, eq + 1);
	return 0;
}

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
	if (!lb_param_by_vary(o->vary_name))
		return LB_EINVAL;
	strcpy(buf, eq + 1);
	o->n_vary = 0;
	/* every item a value: "1,,2", ",2" and "1," are slips, not fewer points */
	if (!buf[0] || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return LB_EINVAL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->n_vary == 32 || !lb_parse_i64(t, 0, 86400000, &v))
			return LB_EINVAL;
		o->vary[o->n_vary++] = v;
	}
	return o->n_vary ? 0 : LB_EINVAL;
}

int lb_run_cfg_set(struct lb_run_cfg *cfg, const char *name, int64_t v)
{
	const struct lb_param *p = lb_param_by_vary(name);
	struct lb_param_value val;

	if (!p || lb_param_from_int(p, v, &val) < 0)
		return LB_EINVAL;
	lb_param_set(p, cfg, &val);
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

/* A run parameter's option: its row reads the value (params.h). */
static int param_arg(struct lb_run_opts *o, const struct lb_param *p, const char *a)
{
	struct lb_param_value v;
	char why[300];

	o->given |= lb_param_bit(lb_param_index(p));
	if (lb_param_from_cli(p, a, &v, why, sizeof(why)) < 0)
		return usage_error("--%s '%s': %s", p->cli, a, why);
	lb_param_set(p, &o->cfg, &v);
	return 0;
}

/* --strategy: one strategy (run), or one more (compare, sweep). */
static int strategy_arg(struct lb_run_opts *o, enum lb_opts_mode mode, const char *a)
{
	if (mode == LB_OPTS_COMPARE || mode == LB_OPTS_SWEEP)
		return strategies_add(o, a);
	if (mode != LB_OPTS_RUN)
		return usage_error("--strategy is for run, compare and sweep");
	return (o->cfg.strategy = lb_strategy_or_usage(a)) ? 0 : LB_EINVAL;
}

static int adapter_arg(struct lb_run_opts *o, const char *a)
{
	struct lb_run_cfg *cfg = &o->cfg;

	if (o->n_adapter_args == LB_MAX_ADAPTER_ARGS)
		return usage_error("--adapter-arg: at most %d", LB_MAX_ADAPTER_ARGS);
	o->adapter_args[o->n_adapter_args++] = a;
	lb_adapter_set_exec_args(o->adapter_args, o->n_adapter_args);
	snprintf(cfg->adapter_args + strlen(cfg->adapter_args),
		 sizeof(cfg->adapter_args) - strlen(cfg->adapter_args), "%s%s",
		 cfg->adapter_args[0] ? " " : "", a);
	return 0;
}

/* --check, --expect, --threshold (gate.h) and --json: for run and compare
 * (--json for run alone). */
static int gate_arg(struct lb_run_opts *o, enum lb_opts_mode mode, int c, const char *a)
{
	struct lb_gate *g = &o->gate;
	char why[400];

	if (mode != LB_OPTS_RUN && mode != LB_OPTS_COMPARE)
		return usage_error("--check, --expect, --threshold, --junit, --json and --openmetrics "
				   "are for run and compare");
	switch (c) {
	case OPT_CHECK:
		g->check = true;
		return 0;
	case OPT_EXPECT:
		if (lb_expect_parse(a, &g->expect, why, sizeof(why)) < 0)
			return usage_error("--expect '%s': %s", a, why);
		g->has_expect = true;
		return 0;
	case OPT_THRESHOLD:
		if (g->n_thresholds == LB_MAX_THRESHOLDS)
			return usage_error("--threshold: at most %d", LB_MAX_THRESHOLDS);
		if (lb_threshold_parse(a, &g->thresholds[g->n_thresholds], why, sizeof(why)) < 0)
			return usage_error("--threshold %s", why);
		g->n_thresholds++;
		return 0;
	case OPT_JUNIT:
		if (!lb_file_arg_ok("--junit", a))
			return LB_EINVAL;
		snprintf(o->junit_path, sizeof(o->junit_path), "%s", a);
		return 0;
	case OPT_OPENMETRICS:
		if (mode != LB_OPTS_RUN)
			return usage_error("--openmetrics is for run");
		if (!lb_file_arg_ok("--openmetrics", a))
			return LB_EINVAL;
		snprintf(o->openmetrics_path, sizeof(o->openmetrics_path), "%s", a);
		return 0;
	default: /* OPT_JSON */
		if (mode != LB_OPTS_RUN)
			return usage_error("--json is for run (compare writes each run's summary.json "
					   "in its directory)");
		o->json = true;
		return 0;
	}
}

/* --tls-ca, --tls-cert, --tls-key FILE: once each, a readable regular file. */
static int tls_file_arg(const char **slot, const char *opt, const char *a)
{
	struct stat st;

	errno = 0;
	if (*slot)
		return usage_error("%s given twice", opt);
	if (!*a || stat(a, &st) < 0 || !S_ISREG(st.st_mode) || access(a, R_OK) < 0)
		return usage_error("%s '%s': not a readable file (%s)", opt, a, !*a ? "empty" :
				   errno ? strerror(errno) : "not a regular file");
	*slot = a;
	return 0;
}

/* --hosts FILE, --ssh-config FILE, --agent-path PATH, --bind ADDR (run). */
static int hosts_arg(struct lb_run_opts *o, enum lb_opts_mode mode, int c, const char *a)
{
	static struct lb_hosts hosts;
	struct lb_run_cfg *cfg = &o->cfg;
	struct in_addr ip;

	if (mode != LB_OPTS_RUN)
		return usage_error("--hosts, --ssh-config, --agent-path and --bind are for run");
	if (c == OPT_HOSTS) {
		if (cfg->hosts)
			return usage_error("--hosts given twice");
		if (lb_hosts_read(a, &hosts) < 0)
			return LB_EINVAL;
		cfg->hosts = &hosts;
		return 0;
	}
	if (c == OPT_SSH_CONFIG)
		return tls_file_arg(&cfg->ssh_config, "--ssh-config", a);
	if (c == OPT_AGENT_PATH) {
		/* it becomes words of a remote shell's command: nothing it could read */
		size_t ok = strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789/._+-");
		if (!*a || a[ok] || *a == '-' || strlen(a) >= PATH_MAX)
			return usage_error("--agent-path '%s': expected a path of A-Z a-z 0-9 / . _ + -"
					   " (not beginning with -)", a);
		cfg->agent_path = a;
		return 0;
	}
	if (inet_pton(AF_INET, a, &ip) != 1 || strlen(a) >= sizeof(cfg->bind_addr))
		return usage_error("--bind '%s': expected an IPv4 address of this machine's, "
				   "e.g. 10.0.0.5", a);
	strcpy(cfg->bind_addr, a);
	return 0;
}

static int tls_arg(struct lb_run_cfg *cfg, int c, const char *a)
{
	if (c == OPT_TLS_INSECURE) {
		cfg->tls_insecure = true;
		return 0;
	}
	return tls_file_arg(c == OPT_TLS_CA ? &cfg->tls_ca : c == OPT_TLS_CERT ? &cfg->tls_cert :
			    &cfg->tls_key, c == OPT_TLS_CA ? "--tls-ca" : c == OPT_TLS_CERT ?
			    "--tls-cert" : "--tls-key", a);
}

/* --etcd, --zookeeper: the user's members, each address well-formed. */
static int ensemble_arg(struct lb_run_opts *o, bool etcd, const char *a)
{
	struct lb_run_cfg *cfg = &o->cfg;
	struct lb_ensemble e;
	char why[600];

	if (cfg->etcd_urls || cfg->zk_urls)
		return usage_error("%s: give one of --etcd and --zookeeper, once, with every member "
				   "in one list", etcd ? "--etcd" : "--zookeeper");
	if (lb_ensemble_parse(etcd ? LB_CONSENSUS_ETCD : LB_CONSENSUS_ZOOKEEPER, a, &e, why,
			      sizeof(why)) < 0)
		return usage_error("%s", why);
	*(etcd ? &cfg->etcd_urls : &cfg->zk_urls) = a;
	o->n_members = e.n;
	return 0;
}

/* --redis, --sentinel, --cluster: one list each, its URLs checked. */
static int url_list_arg(const char **slot, const char *opt, const char *a)
{
	if (*slot)
		return usage_error("%s given twice: give one list, URL[,URL...]", opt);
	if (check_urls(opt, a) < 0)
		return LB_EINVAL;
	*slot = a;
	return 0;
}

/* --master-auth [USER]:PASSWORD */
static int master_auth_arg(struct lb_run_cfg *cfg, const char *a)
{
	const char *colon = strchr(a, ':');

	if (cfg->master_pass[0])
		return usage_error("--master-auth given twice");
	for (const char *q = a; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return usage_error("--master-auth: a control character in it");
	if (!colon || !colon[1] || (size_t)(colon - a) >= sizeof(cfg->master_user) ||
	    strlen(colon + 1) >= sizeof(cfg->master_pass))
		return usage_error("--master-auth: expected [USER]:PASSWORD (a user name of at "
				   "most %zu bytes, a password of 1 to %zu)",
				   sizeof(cfg->master_user) - 1, sizeof(cfg->master_pass) - 1);
	memcpy(cfg->master_user, a, (size_t)(colon - a));
	cfg->master_user[colon - a] = '\0';
	strcpy(cfg->master_pass, colon + 1);
	return 0;
}

/* An option that is not a run parameter: 0, 1 after --help, or an error. */
static int fixed_arg(struct lb_run_opts *o, enum lb_opts_mode mode, int c, const char *a,
		     const char *word)
{
	struct lb_run_cfg *cfg = &o->cfg;
	char names[160];

	switch (c) {
	case OPT_STRATEGY:
		return strategy_arg(o, mode, a);
	case OPT_VARY:
		if (mode != LB_OPTS_SWEEP)
			return usage_error("--vary is for sweep");
		vary_names("=", names, sizeof(names));
		if (parse_vary(o, a) < 0)
			return usage_error("--vary '%s': expected %s and a comma list of integers "
					   "(at most 32)", a, names);
		return 0;
	case OPT_STRATEGIES:
		if (mode != LB_OPTS_COMPARE && mode != LB_OPTS_SWEEP)
			return usage_error("--strategies is for compare; use --strategy");
		return strategies_list(o, a) < 0 ? LB_EINVAL : 0;
	case OPT_OUT:
		if (!lb_dir_arg_ok("--out", a))
			return LB_EINVAL;
		strcpy(cfg->out_dir, a);
		o->out_given = true;
		return 0;
	case OPT_REDIS:
		return url_list_arg(&cfg->redis_urls, "--redis", a);
	case OPT_SENTINEL:
		return url_list_arg(&cfg->sentinel_urls, "--sentinel", a);
	case OPT_CLUSTER:
		return url_list_arg(&cfg->cluster_urls, "--cluster", a);
	case OPT_ETCD:
	case OPT_ZOOKEEPER:
		return ensemble_arg(o, c == OPT_ETCD, a);
	case OPT_TLS_CA:
	case OPT_TLS_CERT:
	case OPT_TLS_KEY:
	case OPT_TLS_INSECURE:
		return tls_arg(cfg, c, a);
	case OPT_SENTINEL_MASTER:
		if (!*a || strlen(a) >= sizeof(cfg->sentinel_master))
			return usage_error("--sentinel-master '%s': expected the name the "
					   "Sentinels monitor, 1 to %zu characters", a,
					   sizeof(cfg->sentinel_master) - 1);
		strcpy(cfg->sentinel_master, a);
		return 0;
	case OPT_MASTER_AUTH:
		return master_auth_arg(cfg, a);
	case OPT_ALLOW_FAULTS:
		cfg->allow_faults = true;
		return 0;
	case OPT_RESOURCE_THEIRS:
		cfg->resource_theirs = true;
		return 0;
	case OPT_HOOK:
		return hook_arg(cfg, a);
	case OPT_DRY_RUN:
		if (mode != LB_OPTS_RUN)
			return usage_error("--dry-run is for run");
		o->dry_run = true;
		return 0;
	case OPT_NO_STATUS:
		cfg->status_line = false;
		return 0;
	case OPT_ALLOW_SKIPPED:
		cfg->allow_skipped = true;
		return 0;
	case OPT_ADAPTER_ARG:
		return adapter_arg(o, a);
	case OPT_LIBRARY_ENV:
		return 0; /* taken before the options (lb_library_env_option) */
	case OPT_NO_REPORT:
		cfg->no_report = true;
		return 0;
	case OPT_CHART_SCALE:
		return lb_chart_scale_arg(a) < 0 ? LB_EINVAL : 0;
	case OPT_CHECK:
	case OPT_EXPECT:
	case OPT_THRESHOLD:
	case OPT_JSON:
	case OPT_JUNIT:
	case OPT_OPENMETRICS:
		return gate_arg(o, mode, c, a);
	case OPT_HOSTS:
	case OPT_SSH_CONFIG:
	case OPT_AGENT_PATH:
	case OPT_BIND:
		return hosts_arg(o, mode, c, a);
	case OPT_HELP:
		lb_run_opts_usage(stdout, mode);
		return 1;
	case OPT_SCENARIO:
		if (lb_scenario_load(a, &o->scenario) < 0)
			return LB_EINVAL;
		o->has_scenario = true;
		return 0;
	default:
		return usage_error("unknown or incomplete option '%s'", word);
	}
}

/* --sentinel against --sentinel-master and --topology, before the scenario. */
static int check_sentinel(const struct lb_run_opts *o)
{
	const struct lb_run_cfg *cfg = &o->cfg;

	if (!cfg->sentinel_urls != !cfg->sentinel_master[0])
		return usage_error("--sentinel URL[,URL...] and --sentinel-master NAME go together: "
				   "the Sentinels to ask, and the name of the primary they monitor");
	if (cfg->master_pass[0] && !cfg->sentinel_urls)
		return usage_error("--master-auth is the password of the primary behind --sentinel; "
				   "with --redis, give it in the URL (redis://[user]:password@host:port)");
	if (cfg->resource_theirs && !lb_cfg_theirs(cfg))
		return usage_error("--resource-on-deployment puts the counter on your servers: it "
				   "goes with --redis, --sentinel or --cluster");
	if (cfg->sentinel_urls && (o->given & lb_param_bit(LB_P_TOPOLOGY)) && cfg->sentinel)
		return usage_error("--topology sentinel starts lockbench's own Sentinels; "
				   "--sentinel names yours: one or the other");
	return 0;
}

/* Can library @s take rediss:// with the TLS options given? Its manifest's
 * tls = says which of them its adapter hands its library (adapter.h); an
 * exec: program reads config's TLS words itself. 0, or a usage error. */
static int library_tls(const struct lb_run_cfg *cfg, const struct lock_strategy *s,
		       const char *scheme)
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s);
	const char *opt = cfg->tls_ca ? "--tls-ca" : cfg->tls_insecure ? "--tls-insecure" : NULL;
	const char *word = cfg->tls_ca ? "ca" : "insecure";

	if (!d || d->exec)
		return 0;
	if (!d->tls[0] || !strcmp(d->tls, "no"))
		return usage_error("%s: %s does not speak TLS (its manifest %s has no tls = "
				   "line naming what its adapter hands its library); a C recipe "
				   "reaches a rediss:// server through lockbench's TLS tunnel",
				   scheme, s->name, d->manifest[0] ? d->manifest : "");
	for (int k = 0; k < 2; k++, opt = cfg->tls_cert ? "--tls-cert" : NULL, word = "cert") {
		if (!opt || strstr(d->tls, word))
			continue;
		return usage_error("%s: %s takes no %s: its library's TLS settings %s (its "
				   "manifest: tls = %s; docs/adapters.md)", scheme, s->name, opt,
				   !strcmp(word, "cert") ? "have no client certificate" :
				   "check the server against the system's CAs only", d->tls);
	}
	return 0;
}

/* Does the list @urls hold a URL of @scheme ("rediss://"), in any case? */
static bool has_scheme(const char *urls, const char *scheme)
{
	size_t n = strlen(scheme);

	for (const char *p = urls; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncasecmp(p, scheme, n))
			return true;
	return false;
}

/* The TLS options: with a rediss:// or an etcd https:// URL, a certificate
 * with its key, and for a library those its adapter hands on (library_tls). */
static int check_tls(const struct lb_run_opts *o, enum lb_opts_mode mode)
{
	const struct lb_run_cfg *cfg = &o->cfg;
	bool deployment = has_scheme(cfg->sentinel_urls, "rediss://") ||
			  has_scheme(cfg->cluster_urls, "rediss://");
	const char *scheme = deployment || has_scheme(cfg->redis_urls, "rediss://") ? "rediss://" :
			     has_scheme(cfg->etcd_urls, "https://") ? "https://" : NULL;
	bool tls = scheme != NULL;
	int rc;

	for (size_t i = 0; deployment && i < (mode == LB_OPTS_RUN ? 1 : o->n_strategies); i++) {
		const struct lock_strategy *s = mode == LB_OPTS_RUN ? cfg->strategy : o->strategies[i];
		const struct lb_adapter_def *d = s ? lb_adapter_def_of(s) : NULL;
		if (!s || !lb_strategy_is_external(s) ||
		    (cfg->sentinel_urls && d && (d->exec || strstr(d->tls, "sentinel"))))
			continue;
		return usage_error("rediss:// %s: %s is a library whose own %s client is not given "
				   "TLS settings (%s); the C recipes reach a TLS deployment through "
				   "lockbench's tunnels", cfg->sentinel_urls ? "--sentinel" : "--cluster",
				   s->name, cfg->sentinel_urls ? "Sentinel" : "cluster",
				   cfg->sentinel_urls ? "its manifest's tls = has no sentinel" :
				   "no library runs on --cluster");
	}
	if (!tls && (cfg->tls_ca || cfg->tls_cert || cfg->tls_key || cfg->tls_insecure))
		return usage_error("--tls-ca, --tls-cert, --tls-key and --tls-insecure are for "
				   "rediss:// URLs (--redis, --sentinel, --cluster) and https:// "
				   "URLs of --etcd");
	if (!cfg->tls_cert != !cfg->tls_key)
		return usage_error("--tls-cert and --tls-key go together: the client certificate "
				   "and its private key");
	if (tls && cfg->tls_insecure && cfg->tls_ca)
		return usage_error("--tls-insecure checks no certificate: --tls-ca would be unused");
	for (size_t i = 0; tls && i < (mode == LB_OPTS_RUN ? 1 : o->n_strategies); i++) {
		const struct lock_strategy *s = mode == LB_OPTS_RUN ? cfg->strategy : o->strategies[i];
		if (s && lb_strategy_is_external(s) && (rc = library_tls(cfg, s, scheme)) < 0)
			return rc;
	}
	return 0;
}

/* --etcd, --zookeeper against the other deployment options and --nodes: the
 * run's lock nodes are the members given. */
static int check_ensemble(struct lb_run_opts *o)
{
	struct lb_run_cfg *cfg = &o->cfg;
	const char *opt = cfg->etcd_urls ? "--etcd" : "--zookeeper";

	if (!cfg->etcd_urls && !cfg->zk_urls)
		return 0;
	if (cfg->redis_urls || cfg->sentinel_urls || cfg->cluster_urls)
		return usage_error("%s names the lock's ensemble; --redis, --sentinel and --cluster "
				   "name Redis servers: one or the other (the counter lives on a "
				   "redis-server lockbench starts)", opt);
	if ((o->given & lb_param_bit(LB_P_TOPOLOGY)) && (cfg->consensus || cfg->sentinel ||
							  cfg->cluster))
		return usage_error("--topology starts lockbench's own servers; %s names yours: one "
				   "or the other", opt);
	if ((o->given & lb_param_bit(LB_P_NODES)) && cfg->nodes != o->n_members)
		return usage_error("--nodes %d: %s names %d member%s, and the lock lives on those",
				   cfg->nodes, opt, o->n_members, o->n_members == 1 ? "" : "s");
	cfg->consensus = 0; /* a scenario's topology = etcd: the user's ensemble takes its place */
	cfg->sentinel = cfg->cluster = false;
	cfg->nodes = o->n_members;
	return 0;
}

/* What sweep's parameter needs, and its points' duration. */
static int check_sweep(struct lb_run_opts *o)
{
	if (o->n_vary == 0)
		return usage_error("sweep needs --vary NAME=V1,V2,...");
	enum lb_param_id id = lb_param_index(lb_param_by_vary(o->vary_name)); /* parse_vary found it */
	if ((id == LB_P_MAX_LAG || id == LB_P_DOWN_AFTER) && !o->cfg.sentinel)
		return usage_error("--vary %s sets up the Sentinel topology: add --topology sentinel "
				   "or a scenario with topology = sentinel", o->vary_name);
	if (id == LB_P_MAX_LAG && !(o->has_scenario && o->scenario.min_replicas > 0))
		return usage_error("--vary max_lag changes min-replicas-max-lag, which does nothing "
				   "without min-replicas-to-write: use a scenario with min_replicas "
				   "(sentinel-split-brain-min-replicas)");
	if (!(o->given & lb_param_bit(LB_P_DURATION)) &&
	    !(o->has_scenario && lb_scenario_gives(&o->scenario, LB_P_DURATION)))
		o->cfg.duration_s = 3; /* a scenario's own duration is part of its story */
	return 0;
}

/* A consensus lock (etcd, ZooKeeper) runs on its own system's topology, which
 * lockbench starts; a Redis lock on none of those. */
static int check_consensus(const struct lb_run_cfg *cfg, const struct lock_strategy *s)
{
	int k = lb_consensus_of(s);
	const char *shown = lb_consensus_shown((enum lb_consensus_kind)k);
	enum lb_consensus_kind given = (enum lb_consensus_kind)cfg->consensus;

	if (cfg->consensus && k != cfg->consensus)
		return usage_error("--topology %s: %s is %s; that topology is for the locks of %s "
				   "(lockbench list)", lb_consensus_name(given), s->name,
				   k ? "a lock on another consensus system" : "a Redis lock",
				   lb_consensus_shown(given));
	if (k && (cfg->sentinel || cfg->cluster))
		return usage_error("--topology %s: %s keeps its lock in %s; it runs on that "
				   "topology (its default), not on Redis servers", cfg->sentinel ?
				   "sentinel" : "cluster", s->name, shown);
	if (k && (cfg->redis_urls || cfg->sentinel_urls || cfg->cluster_urls))
		return usage_error("%s keeps its lock in %s; --redis, --sentinel and --cluster name "
				   "Redis servers (yours: --etcd or --zookeeper)", s->name, shown);
	if ((cfg->etcd_urls || cfg->zk_urls) &&
	    k != (cfg->etcd_urls ? LB_CONSENSUS_ETCD : LB_CONSENSUS_ZOOKEEPER))
		return usage_error("%s names your %s; %s is %s (lockbench list: its topology)",
				   cfg->etcd_urls ? "--etcd" : "--zookeeper", cfg->etcd_urls ?
				   "etcd cluster" : "ZooKeeper ensemble", s->name,
				   k ? "a lock on another consensus system" : "a Redis lock");
	if (cfg->etcd_urls || cfg->zk_urls)
		return 0; /* on the members given: their number is the run's lock nodes */
	if (k && cfg->nodes && cfg->nodes != 3)
		return usage_error("--nodes %d: %s runs on the 3 members of its %s ensemble", cfg->nodes,
				   s->name, shown);
	if (k && cfg->count_commands) /* the relay parses Redis's protocol, not HTTP or jute */
		return usage_error("--count-commands counts Redis commands on the relay; %s sends "
				   "%s's requests, which it cannot count", s->name, shown);
	return 0;
}

/* What strategy @s cannot do with the run's options. */
static int check_strategy(const struct lb_run_cfg *cfg, const struct lock_strategy *s)
{
	int rc = check_consensus(cfg, s);

	if (rc < 0)
		return rc;
	if (cfg->wait.kind == LB_WAIT_NOTIFY && !s->wait)
		return usage_error("--wait notify: %s cannot be woken by its releaser; use "
				   "fixed:MS or backoff:MIN:MAX%s", s->name, lb_strategy_is_external(s) ?
				   ", or --wait library (the library's own wait)" : " (token-lua can)");
	if (cfg->wait.kind == LB_WAIT_LIBRARY && !lb_strategy_is_external(s))
		return usage_error("%.500s%s--wait library: %s is a recipe with no waiting of its "
				   "own; library is for library strategies (lockbench list)",
				   cfg->scenario ? cfg->scenario->path : "",
				   cfg->scenario ? ": [run] wait = library, or " : "", s->name);
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
	if (cfg->nodes && cfg->nodes < (int)s->min_nodes && !cfg->etcd_urls && !cfg->zk_urls) {
		char m[64];
		snprintf(m, sizeof(m), "%u", s->min_nodes);
		lb_errorf("--nodes %d: %s needs at least %s", cfg->nodes, s->name, m);
		return LB_EINVAL;
	}
	return 0;
}

/* Every --hook is one a fault can run: a scenario's hook, or a node action's
 * for a node the run has (a mistyped name would be a fault that never acts). */
static int check_hooks_used(const struct lb_run_opts *o)
{
	static const char *const node_hooks[] = { "node-kill", "node-start", "node-pause",
						   "node-resume" };
	const struct lb_run_cfg *cfg = &o->cfg;
	int nodes = cfg->nodes > 0 ? cfg->nodes : cfg->strategy ? (int)cfg->strategy->min_nodes : 1;

	for (int h = 0; h < cfg->n_hooks; h++) {
		char name[32];
		snprintf(name, sizeof(name), "%s", cfg->hooks[h].name);
		char *colon = strchr(name, ':');
		int node = colon ? atoi(colon + 1) : 0;
		if (colon)
			*colon = '\0';
		bool used = false;
		for (size_t k = 0; k < 4 && !used; k++)
			used = !strcmp(name, node_hooks[k]) && node < nodes;
		for (int i = 0; o->has_scenario && i < o->scenario.n_faults && !used; i++)
			used = !colon && o->scenario.faults[i].action == LB_ACT_HOOK &&
			       !strcmp(o->scenario.faults[i].hook, name);
		if (!used)
			return usage_error("--hook %s: no fault of this run would run it (a node hook "
					   "is node-kill, node-start, node-pause or node-resume, :N for "
					   "a node below %d; else a scenario's hook = NAME)",
					   cfg->hooks[h].name, nodes);
	}
	return 0;
}

/* --redis names the lock nodes and at most one more server, the resource
 * (with --sentinel: the resource alone); a server more would go unused. */
static int check_redis_count(const struct lb_run_opts *o)
{
	const struct lb_run_cfg *cfg = &o->cfg;
	int n = 1, need;

	if (!cfg->redis_urls || !cfg->strategy || lb_consensus_of(cfg->strategy))
		return 0; /* a consensus lock: refused with its own reason (check_consensus) */
	for (const char *p = cfg->redis_urls; *p; p++)
		n += *p == ',';
	need = cfg->sentinel_urls ? 0 : cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes;
	if (n < need || n > need + 1)
		return usage_error("--redis names %d server%s; %s needs %d lock node%s%s (and may "
				   "have one more server for the resource)", n, n == 1 ? "" : "s",
				   cfg->sentinel_urls ? "with --sentinel, the lock" : cfg->strategy->name,
				   need, need == 1 ? "" : "s", cfg->sentinel_urls ? " there" : "");
	return 0;
}

/* The options together: the scenario under them, then what does not go together. */
/* run --hosts: the clients split among the hosts, and what the agents do
 * not serve yet refused before anything starts. */
static int check_hosts(struct lb_run_opts *o)
{
	struct lb_run_cfg *cfg = &o->cfg;
	char why[300];

	if (!cfg->hosts) {
		if (cfg->ssh_config || cfg->agent_path)
			return usage_error("--ssh-config and --agent-path go with --hosts FILE");
		return 0;
	}
	if (lb_hosts_split(cfg->hosts, cfg->clients, why, sizeof(why)) < 0)
		return usage_error("--hosts %s: %s", cfg->hosts->path, why);
	if (!lb_cfg_theirs(cfg) && !cfg->bind_addr[0])
		return usage_error("--hosts: the hosts reach the servers lockbench starts only on an "
				   "address of this machine's they can route to: give --bind ADDR "
				   "(or your servers, --redis URLS)");
	if (cfg->sentinel || cfg->cluster || cfg->consensus || cfg->sentinel_urls ||
	    cfg->cluster_urls || cfg->etcd_urls || cfg->zk_urls || cfg->tls_ca ||
	    (cfg->strategy && lb_consensus_of(cfg->strategy)) ||
	    (cfg->redis_urls && strstr(cfg->redis_urls, "rediss://")))
		return usage_error("--hosts: the agents serve Redis servers (one or more, redis://) "
				   "for now, not Sentinel, Cluster, etcd, ZooKeeper or TLS");
	struct lb_run_cfg one = *cfg;
	one.scenario = o->has_scenario ? &o->scenario : NULL;
	if (lb_run_needs_relay(&one) || cfg->count_commands)
		return usage_error("--hosts: the scenario's network faults (or --count-commands) need "
				   "lockbench's relay beside the clients, which an agent does not "
				   "start yet");
	return 0;
}

static int check_opts(struct lb_run_opts *o, enum lb_opts_mode mode)
{
	struct lb_run_cfg *cfg = &o->cfg;
	char why[400];
	int rc;

	if (mode == LB_OPTS_RUN && !cfg->strategy)
		return usage_error("run needs --strategy NAME");
	if ((rc = check_sentinel(o)) < 0)
		return rc;
	if (o->has_scenario)
		lb_run_opts_apply_scenario(o, &o->scenario);
	if (cfg->sentinel_urls && cfg->cluster)
		return usage_error("--sentinel names a Sentinel deployment; topology cluster starts "
				   "lockbench's own cluster: one or the other");
	if ((rc = check_ensemble(o)) < 0 || (rc = check_tls(o, mode)) < 0)
		return rc;
	if (cfg->cluster_urls && (cfg->cluster || cfg->sentinel || cfg->sentinel_urls ||
				  cfg->redis_urls))
		return usage_error("--cluster names your cluster: it goes with none of --redis, "
				   "--sentinel, --topology sentinel or cluster");
	if (cfg->cluster_urls && mode != LB_OPTS_SWEEP && cfg->strategy &&
	    (cfg->strategy->min_nodes > 1 || cfg->nodes > 1 || lb_strategy_is_external(cfg->strategy)))
		return usage_error("--cluster: %s is not a one-node C recipe (a Redlock needs "
				   "independent nodes; a library needs its own cluster client)",
				   cfg->strategy->name);
	for (int i = 0; o->has_scenario && i < o->scenario.n_faults; i++) {
		const struct lb_fault *f = &o->scenario.faults[i];
		if (f->action == LB_ACT_HOOK && !lb_hook_command(cfg, f->hook, 0))
			return usage_error("%s:%d: [%s] runs hook %s: give its command, --hook "
					   "%s=COMMAND", o->scenario.path, f->line, f->name, f->hook,
					   f->hook);
	}
	if ((rc = check_hooks_used(o)) < 0 || (rc = check_redis_count(o)) < 0 ||
	    (rc = check_hosts(o)) < 0)
		return rc;
	if ((o->given & lb_param_bit(LB_P_TOPOLOGY)) && cfg->strategy && !cfg->sentinel &&
	    !cfg->cluster && !cfg->consensus && lb_consensus_of(cfg->strategy))
		return usage_error("--topology single: %s keeps its lock in %s, on three members: "
				   "its topology is %s", cfg->strategy->name,
				   lb_consensus_shown((enum lb_consensus_kind)lb_consensus_of(cfg->strategy)),
				   lb_consensus_name((enum lb_consensus_kind)lb_consensus_of(cfg->strategy)));
	for (int i = 0; o->has_scenario && cfg->work == LB_WORK_NONE && i < o->scenario.n_faults; i++)
		if (o->scenario.faults[i].when_before_write || o->scenario.faults[i].when_after_read)
			return usage_error("--work none: %s's [%s] acts at the counter's %s, "
					   "which work none does not have", o->scenario.name,
					   o->scenario.faults[i].name,
					   o->scenario.faults[i].when_before_write ? "write" : "read");
	if (mode == LB_OPTS_RUN && o->has_scenario &&
	    lb_scenario_why_not(&o->scenario, cfg->strategy->name, why, sizeof(why)))
		return usage_error("%s", why);
	if (mode == LB_OPTS_SWEEP && (rc = check_sweep(o)) < 0)
		return rc;
	if ((mode == LB_OPTS_COMPARE || mode == LB_OPTS_SWEEP) && o->n_strategies == 0 &&
	    lb_strategy_count() > LB_MAX_STRATEGIES)
		return usage_error("%zu strategies, more than one command compares (%d): name them "
				   "with --strategies", lb_strategy_count(), LB_MAX_STRATEGIES);
	if ((mode == LB_OPTS_COMPARE || mode == LB_OPTS_SWEEP) && o->n_strategies == 0)
		for (size_t i = 0; i < lb_strategy_count(); i++)
			if (mode == LB_OPTS_COMPARE || strcmp(lb_strategy_at(i)->name, "none"))
				o->strategies[o->n_strategies++] = lb_strategy_at(i);
	for (int i = 0; i < o->n_vary; i++) {
		struct lb_run_cfg probe = *cfg;
		if (lb_run_cfg_set(&probe, o->vary_name, o->vary[i]) < 0)
			return usage_error("--vary %s=%lld is out of range", o->vary_name,
					   (long long)o->vary[i]);
	}
	if (o->junit_path[0] && !lb_gate_active(&o->gate))
		return usage_error("--junit FILE records what --check, --expect and --threshold judge: "
				   "give one of them");
	for (size_t i = 0; i < (mode == LB_OPTS_RUN ? 1 : o->n_strategies); i++) {
		const struct lock_strategy *s = mode == LB_OPTS_RUN ? cfg->strategy : o->strategies[i];
		if ((rc = check_strategy(cfg, s)) < 0)
			return rc;
		struct lb_run_cfg one = *cfg;
		one.strategy = s;
		one.scenario = o->has_scenario ? &o->scenario : NULL;
		if (lb_run_hosts_refused(&one, why, sizeof(why)))
			return usage_error("%s", why);
		if (lb_gate_ready(&o->gate, o->has_scenario ? &o->scenario : NULL, s->name, why,
				  sizeof(why)) < 0)
			return usage_error("%s", why);
	}
	return 0;
}

int lb_library_env_option(int argc, char **argv)
{
	static char dir[PATH_MAX];
	const char *v = NULL;
	struct stat st;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--library-env"))
			v = i + 1 < argc ? argv[++i] : "";
		else if (!strncmp(argv[i], "--library-env=", 14))
			v = argv[i] + 14;
	}
	if (!v) {
		lb_adapter_set_library_env(NULL);
		return 0;
	}
	if (!*v || stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
		return usage_error("--library-env '%s': expected the directory of an environment "
				   "the library is installed in (a virtualenv): %s", v,
				   !*v ? "none given" : stat(v, &st) < 0 ? strerror(errno) :
				   "not a directory");
	if (!realpath(v, dir))
		return usage_error("--library-env '%s': %s", v, strerror(errno));
	lb_adapter_set_library_env(dir);
	return 0;
}

int lb_run_opts_parse(int argc, char **argv, enum lb_opts_mode mode, struct lb_run_opts *o)
{
	struct lb_run_cfg *cfg = &o->cfg;
	struct option opts[N_OPTS];
	int c, rc;

	if ((rc = lb_library_env_option(argc, argv)) < 0)
		return rc;
	memset(o, 0, sizeof(*o));
	lb_run_cfg_defaults(cfg);
	record_cmdline(cfg, argc, argv);
	if (getrandom(&cfg->seed, sizeof(cfg->seed), 0) != sizeof(cfg->seed))
		cfg->seed = (uint64_t)lb_now_ns();
	cfg->seed %= UINT64_C(1000000000000); /* the seed row's default: drawn */
	long_opts(opts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c >= OPT_PARAM && c < OPT_PARAM + LB_P_COUNT)
			rc = param_arg(o, lb_param_row((enum lb_param_id)(c - OPT_PARAM)), optarg);
		else
			rc = fixed_arg(o, mode, c, optarg, argv[optind - 1]);
		if (rc != 0)
			return rc;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (mode == LB_OPTS_RUN_DEFAULTS)
		return 0;
	return check_opts(o, mode);
}

void lb_run_opts_apply_scenario(struct lb_run_opts *o, const struct lb_scenario *sc)
{
	struct lb_run_cfg *cfg = &o->cfg;
	size_t n;
	const struct lb_param *t = lb_params(&n);

	cfg->scenario = sc;
	snprintf(cfg->scenario_name, sizeof(cfg->scenario_name), "%s", sc->name);
	for (size_t i = 0; i < n; i++) /* the command line wins */
		if (lb_scenario_gives(sc, (enum lb_param_id)i) &&
		    !(o->given & lb_param_bit((enum lb_param_id)i)))
			lb_param_copy(&t[i], cfg, &sc->run);
	if (cfg->sentinel_urls && !(o->given & lb_param_bit(LB_P_TOPOLOGY)))
		cfg->sentinel = false; /* with --sentinel, the user's Sentinels take its place */
	if (cfg->cluster_urls && !(o->given & lb_param_bit(LB_P_TOPOLOGY)))
		cfg->cluster = false; /* with --cluster, the user's cluster takes its place */
}
