#include "scenario.h"
#include "adapter.h"
#include "cluster.h"
#include "consensus.h"
#include "strategy.h"
#include "topology.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const action_names[LB_ACT_COUNT] = {
	"slow", "crash", "sleep", "clock", "partition", "net-lose-reply", "kill", "pause",
	"node-kill", "node-restart", "node-pause", "node-clock", "failover",
	"net-delay", "net-blackhole", "net-cut", "net-partition",
	"sentinel-failover", "client-kill", "hook", "cluster-failover",
};

const char *lb_action_name(enum lb_action a)
{
	return (unsigned)a < LB_ACT_COUNT ? action_names[a] : "?";
}

bool lb_hook_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
			return false;
	return true;
}

bool lb_action_in_client(enum lb_action a)
{
	return a <= LB_ACT_LOSE_REPLY;
}

/* Parsing state: inih does not report line numbers to the handler in
 * Debian's build, so we follow the file's lines alongside it. */
struct parser {
	struct lb_scenario *sc;
	char **lines;
	int n_lines;
	int line;              /* line of the current key, 1-based */
	int err_line;
	char err[512];
	char last_section[64];
	char last_name[64];
	bool continued;        /* this value is a continuation line of the last key */
	struct lb_fault *fault;
	/* a list key given empty (`only =`): its continuation lines may still
	 * fill it; empty once its value has ended, it is an error at its line */
	char empty_key[16];    /* "only", "except", "lessons"; "" when none */
	const char *empty_list;
	int empty_line;
};

/* The first error of a scenario file is kept with its line (p->err,
 * p->err_line: the caller says it, with the path); 0 is what an inih
 * handler returns to stop the parse. */
static int ini_error(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int ini_error(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->err[0]) {
		va_start(ap, fmt);
		vsnprintf(p->err, sizeof(p->err), fmt, ap);
		va_end(ap);
		p->err_line = p->line;
	}
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Advance to the line that holds key @name (or its continuation). */
static void follow(struct parser *p, const char *section, const char *name)
{
	bool continuation = !strcmp(section, p->last_section) && !strcmp(name, p->last_name);
	size_t len = strlen(name);

	p->continued = continuation;

	for (int i = p->line; i < p->n_lines; i++) {
		const char *s = p->lines[i];
		const char *t = skip_ws(s);
		bool key = !strncmp(t, name, len) && strchr(" \t=:", t[len]) && t[len] != '\0';
		/* the same key again (threshold) is found as a continuation is */
		if (continuation ? (t != s && *t && *t != ';' && *t != '#') || key : key) {
			p->line = i + 1;
			break;
		}
	}
	snprintf(p->last_section, sizeof(p->last_section), "%s", section);
	snprintf(p->last_name, sizeof(p->last_name), "%s", name);
}

static int section_line(struct parser *p, const char *section)
{
	char want[80];
	snprintf(want, sizeof(want), "[%s]", section);
	for (int i = p->line - 1; i >= 0; i--)
		if (!strncmp(skip_ws(p->lines[i]), want, strlen(want)))
			return i + 1;
	return p->line;
}

static bool get_i64(const char *v, int64_t min, int64_t max, int64_t *out)
{
	return lb_parse_i64(v, min, max, out);
}

/* Seconds from a run's start: a finite number from 0 to 86400 (a day; inf,
 * nan and 1e300 are refused, not cast to a time that fires at once). */
static bool get_seconds(const char *v, double *out)
{
	double d;

	if (!lb_parse_double(v, &d) || d < 0 || d > 86400)
		return false;
	*out = d;
	return true;
}

static bool get_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		return (*out = true);
	if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		return !(*out = false);
	return false;
}

static bool get_nodes(const char *v, uint32_t *mask)
{
	char buf[128], *save = NULL;
	int64_t i;

	if (strlen(v) >= sizeof(buf))
		return false;
	strcpy(buf, v);
	*mask = 0;
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		if (!lb_parse_i64(t, 0, 31, &i))
			return false;
		*mask |= 1u << i;
	}
	return *mask != 0;
}

static const struct lb_scenario_expect *line_of(const struct lb_scenario *sc, const char *name);

/* @name as a C recipe (no adapter), or NULL. */
static const struct lock_strategy *strategy_recipe(const char *name)
{
	const struct lock_strategy *s = strncmp(name, "exec:", 5) ? lb_strategy_find(name) : NULL;
	return s && !lb_strategy_is_external(s) ? s : NULL;
}

/* A strategy a scenario may name: a registered one, or a library (NAME@VERSION)
 * whose adapter is not installed here: its lines stay, it just cannot run. */
/* A strategy this lockbench has, a library's name@version (its adapter may be
 * elsewhere), or exec:PATH (the program is looked for when it runs, not when
 * a scenario names it). */
static bool known_strategy(const char *name)
{
	if (!strncmp(name, "exec:", 5))
		return name[5] != '\0';
	return lb_strategy_find(name) || (strchr(name, '@') && !strchr(name, '/')) ||
	       lb_adapter_base_known(name); /* a library: redis-py = overlap */
}

/* The library @strategy is a version of (NAME of NAME@VERSION, or NAME when
 * bare and run from --library-env), into @base: false when it is none (a
 * recipe, exec:, a name no manifest with an env hook has). A recipe's name is
 * never a library's: redlock is the recipe, redlock@4.2.0 node-redlock. */
static bool library_of(const char *strategy, char *base, size_t len)
{
	const char *at = strrchr(strategy, '@');
	const struct lock_strategy *r;

	if (!strncmp(strategy, "exec:", 5))
		return false;
	snprintf(base, len, "%.*s", (int)(at ? (size_t)(at - strategy) : strlen(strategy)), strategy);
	r = strategy_recipe(base);
	return !r && lb_adapter_base_known(base);
}

/* " (did you mean 'token-lua'?)" for a near miss, else @otherwise. */
static const char *hint(const char *name, const char *otherwise, char *buf, size_t len)
{
	const char *near = lb_strategy_nearest(name);

	if (!near)
		return otherwise;
	snprintf(buf, len, " (did you mean '%s'?)", near);
	return buf;
}

/* Does the comma list @list name exactly @strategy? */
static bool list_names(const char *list, const char *strategy)
{
	size_t n = strlen(strategy);

	for (const char *t = list; *t; t += strcspn(t, ","), t += *t == ',')
		if (!strncmp(t, strategy, n) && (t[n] == ',' || t[n] == '\0'))
			return true;
	return false;
}

/* Does the comma list @list (as add_strategies writes it) name @strategy, or
 * the library it is a version of? */
static bool list_has(const char *list, const char *strategy)
{
	char base[200];

	return list_names(list, strategy) ||
	       (library_of(strategy, base, sizeof(base)) && list_names(list, base));
}

/* The strategies of @v, each checked, added to @list as NAME,NAME (no spaces,
 * no empty entries, as `list` shows it); @append: after what it holds. */
static int add_strategies(struct parser *p, const char *key, const char *v, char *list,
			  size_t size, bool append)
{
	char buf[1024], h[96], *save = NULL;

	if (!append)
		list[0] = '\0';
	if (strlen(list) + 1 + strlen(v) >= size || strlen(v) >= sizeof(buf))
		return ini_error(p, "%s: list too long", key);
	snprintf(buf, sizeof(buf), "%s", v);
	if (!buf[strspn(buf, ", \t")] && !p->continued) { /* judged when the value has ended */
		snprintf(p->empty_key, sizeof(p->empty_key), "%s", key);
		p->empty_list = list;
		p->empty_line = p->line;
	}
	for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		if (!known_strategy(t))
			return ini_error(p, "%s: unknown strategy '%s'%s", key, t, hint(t, "", h, sizeof(h)));
		if (list_names(list, t))
			return ini_error(p, "%s: '%s' is named twice", key, t);
		size_t used = strlen(list);
		snprintf(list + used, size - used, "%s%s", used ? "," : "", t);
	}
	return 1;
}

static int on_scenario(struct parser *p, const char *name, const char *v)
{
	struct lb_scenario *sc = p->sc;

	if (!strcmp(name, "description")) {
		size_t used = strlen(sc->description);
		snprintf(sc->description + used, sizeof(sc->description) - used, "%s%s",
			 used ? " " : "", v);
	} else if (!strcmp(name, "summary")) {
		if (strlen(v) >= sizeof(sc->summary))
			return ini_error(p, "summary: at most %zu characters", sizeof(sc->summary) - 1);
		strcpy(sc->summary, v);
	} else if (!strcmp(name, "only")) {
		/* A list may go on over indented lines: they add to it. */
		return add_strategies(p, name, v, sc->only, sizeof(sc->only), p->continued);
	} else if (!strcmp(name, "except")) {
		return add_strategies(p, name, v, sc->except, sizeof(sc->except), p->continued);
	} else if (!strcmp(name, "lessons")) {
		return add_strategies(p, name, v, sc->lessons, sizeof(sc->lessons), p->continued);
	} else if (!strcmp(name, "probabilistic")) {
		if (!get_bool(v, &sc->probabilistic))
			return ini_error(p, "probabilistic: expected yes or no, got '%s'", v);
	} else if (!strcmp(name, "alone")) {
		if (!get_bool(v, &sc->alone))
			return ini_error(p, "alone: expected yes or no, got '%s'", v);
	} else {
		return ini_error(p, "unknown key '%s' in [scenario]: expected summary, description, "
			    "only, except, lessons, probabilistic or alone", name);
	}
	return 1;
}

/* A run parameter's key (params.h): its row reads the value. */
static int on_run_param(struct parser *p, const struct lb_param *prm, const char *v)
{
	struct lb_scenario *sc = p->sc;
	struct lb_param_value val;
	enum lb_param_id id = lb_param_index(prm);
	char why[300];

	if (lb_param_from_run(prm, v, &val, why, sizeof(why)) < 0)
		return ini_error(p, "%s: %s, got '%s'", prm->run_key, why, v);
	lb_param_set(prm, &sc->run, &val);
	sc->run_given |= lb_param_bit(id);
	if (id == LB_P_TOPOLOGY && (sc->run.sentinel || sc->run.cluster) && sc->replica)
		return ini_error(p, "topology = %s has its own replicas: leave out replica = yes", v);
	if ((id == LB_P_MAX_LAG || id == LB_P_DOWN_AFTER) && !sc->run_line)
		sc->run_line = p->line;
	return 1;
}

/* "unknown key" names them all: the rows' keys, then the servers' own. */
static int unknown_run_key(struct parser *p, const char *name)
{
	char keys[512];
	size_t n, o = 0;
	const struct lb_param *t = lb_params(&n);

	for (size_t i = 0; i < n; i++)
		if (t[i].run_key)
			o += (size_t)snprintf(keys + o, sizeof(keys) - o, "%s, ", t[i].run_key);
	return ini_error(p, "unknown key '%s' in [run]: expected %sreplica or min_replicas", name, keys);
}

static int on_run(struct parser *p, const char *name, const char *v)
{
	struct lb_scenario *sc = p->sc;
	const struct lb_param *prm = lb_param_by_run_key(name);
	int64_t x;

	if (prm)
		return on_run_param(p, prm, v);
	if (!strcmp(name, "replica")) {
		if (!get_bool(v, &sc->replica))
			return ini_error(p, "replica: expected yes or no, got '%s'", v);
		if ((sc->run.sentinel || sc->run.cluster) && sc->replica)
			return ini_error(p, "topology = %s has its own replicas: leave out replica = yes",
				    sc->run.sentinel ? "sentinel" : "cluster");
	} else if (!strcmp(name, "min_replicas")) {
		if (!get_i64(v, 1, LB_TOPO_REPLICAS, &x))
			return ini_error(p, "min_replicas: expected min-replicas-to-write, 1 to %d, got '%s'",
				    LB_TOPO_REPLICAS, v);
		sc->min_replicas = (int)x, sc->run_line = sc->run_line ? sc->run_line : p->line;
	} else {
		return unknown_run_key(p, name);
	}
	return 1;
}

/* One side of `sides`: "primary, client:0", or "rest". The names of servers
 * are the topology's: on a cluster, primary:N and replica:N (N < 3, replica
 * N following primary N; primary alone is primary:0, the lock's). */
static bool get_side(char *text, struct lb_fault *f, int side, bool cluster)
{
	char *save = NULL;
	int64_t x;
	bool any = false;

	for (char *t = strtok_r(text, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		any = true;
		if (!strcmp(t, "rest"))
			f->side_rest[side] = true;
		else if (cluster && !strcmp(t, "primary"))
			f->side_parts[side] |= 1u;
		else if (cluster && !strcmp(t, "primaries"))
			f->side_parts[side] |= (1u << LB_CLUSTER_SHARDS) - 1;
		else if (cluster && !strcmp(t, "replicas"))
			f->side_parts[side] |= ((1u << LB_CLUSTER_SHARDS) - 1) << LB_CLUSTER_SHARDS;
		else if (cluster && !strncmp(t, "primary:", 8) &&
			 get_i64(t + 8, 0, LB_CLUSTER_SHARDS - 1, &x))
			f->side_parts[side] |= 1u << x;
		else if (cluster && !strncmp(t, "replica:", 8) &&
			 get_i64(t + 8, 0, LB_CLUSTER_SHARDS - 1, &x))
			f->side_parts[side] |= 1u << (LB_CLUSTER_SHARDS + x);
		else if (cluster && (!strncmp(t, "sentinel", 8)))
			return false;
		else if (!strcmp(t, "primary"))
			f->side_parts[side] |= 1u << LB_PART_PRIMARY;
		else if (!strcmp(t, "replicas"))
			f->side_parts[side] |= ((1u << LB_TOPO_REPLICAS) - 1) << LB_PART_REPLICA0;
		else if (!strcmp(t, "sentinels"))
			f->side_parts[side] |= ((1u << LB_TOPO_SENTINELS) - 1) << LB_PART_SENTINEL0;
		else if (!strcmp(t, "clients"))
			f->side_all_clients[side] = true;
		else if (!strncmp(t, "replica:", 8) && get_i64(t + 8, 0, LB_TOPO_REPLICAS - 1, &x))
			f->side_parts[side] |= 1u << (LB_PART_REPLICA0 + x);
		else if (!strncmp(t, "sentinel:", 9) && get_i64(t + 9, 0, LB_TOPO_SENTINELS - 1, &x))
			f->side_parts[side] |= 1u << (LB_PART_SENTINEL0 + x);
		else if (!strncmp(t, "client:", 7) && get_i64(t + 7, 0, 63, &x))
			f->side_clients[side] |= UINT64_C(1) << x;
		else
			return false;
	}
	/* rest stands alone: it is what the other side leaves */
	return any && !(f->side_rest[side] && (f->side_parts[side] || f->side_clients[side] ||
					       f->side_all_clients[side]));
}

static bool get_sides(const char *v, struct lb_fault *f, bool cluster)
{
	char buf[256];
	char *bar;

	if (strlen(v) >= sizeof(buf))
		return false;
	strcpy(buf, v);
	if (!(bar = strchr(buf, '|')) || strchr(bar + 1, '|'))
		return false;
	*bar = '\0';
	memset(f->side_parts, 0, sizeof(f->side_parts));
	memset(f->side_clients, 0, sizeof(f->side_clients));
	memset(f->side_all_clients, 0, sizeof(f->side_all_clients));
	memset(f->side_rest, 0, sizeof(f->side_rest));
	if (!get_side(buf, f, 0, cluster) || !get_side(bar + 1, f, 1, cluster) || (f->side_rest[0] && f->side_rest[1]))
		return false;
	/* nobody on both sides */
	return !(f->side_parts[0] & f->side_parts[1]) && !(f->side_clients[0] & f->side_clients[1]) &&
	       !(f->side_all_clients[0] && (f->side_all_clients[1] || f->side_clients[1])) &&
	       !(f->side_all_clients[1] && f->side_clients[0]);
}

/* Does side @s name party @p itself (not as rest)? */
static bool side_names(const struct lb_fault *f, int s, int p)
{
	if (p < LB_TOPO_PARTS)
		return (f->side_parts[s] >> p) & 1u;
	int c = p - LB_TOPO_PARTS;
	return f->side_all_clients[s] || (c < 64 && ((f->side_clients[s] >> c) & 1u));
}

int lb_fault_side(const struct lb_fault *f, int p)
{
	for (int s = 0; s < 2; s++)
		if (side_names(f, s, p))
			return s;
	for (int s = 0; s < 2; s++)
		if (f->side_rest[s])
			return s;
	return -1;
}

/* on_fault's keys that tie a fault to the story: then, when, sides, fallback. */
static int on_fault_more(struct parser *p, struct lb_fault *f, const char *section,
			 const char *name, const char *v)
{
	const struct lb_scenario *sc = p->sc;

	if (!strcmp(name, "then")) {
		if (!strcmp(v, "idle"))
			f->then_idle = true;
		else if (!strcmp(v, "other-inside"))
			f->then_other_inside = true;
		else if (!strcmp(v, "failover-chosen"))
			f->then_failover_chosen = true;
		else if (!strcmp(v, "reset"))
			f->then_reset = true;
		else if (!strcmp(v, "hang"))
			f->then_hang = true;
		else
			return ini_error(p, "then: expected other-inside, idle, failover-chosen, reset or "
				    "hang, got '%s'", v);
	} else if (!strcmp(name, "of")) {
		if (strcmp(v, "acquire") && strcmp(v, "release"))
			return ini_error(p, "of: expected acquire or release, got '%s'", v);
		f->of_release = !strcmp(v, "release");
		f->of_given = true;
	} else if (!strcmp(name, "when")) {
		if (!strcmp(v, "waiting"))
			f->when_waiting = true;
		else if (!strcmp(v, "after-read"))
			f->when_after_read = true;
		else if (!strcmp(v, "before-write"))
			f->when_before_write = true;
		else
			return ini_error(p, "when: expected waiting, after-read or before-write, got "
				    "'%s'", v);
	} else if (!strcmp(name, "sides")) {
		snprintf(f->sides, sizeof(f->sides), "%s", v);
		/* checked again once the topology is known (check_fault) */
		if (!get_sides(v, f, sc->run.cluster) && (sc->run.sentinel || !get_sides(v, f, true)))
			return ini_error(p, "sides: expected two lists separated by |, of primary, "
				    "replica:N, replicas, sentinel:N, sentinels (topology = sentinel) "
				    "or primary:N, primaries, replica:N, replicas (cluster), client:N "
				    "(N < 64), clients, or rest alone (everyone else), like 'primary, "
				    "client:0 | rest'; got '%s'", v);
	} else if (!strcmp(name, "fallback")) {
		if (strcmp(v, "holder"))
			return ini_error(p, "fallback: expected holder, got '%s'", v);
		f->fallback_holder = true;
	} else if (!strcmp(name, "hook")) {
		if (!lb_hook_name_ok(v))
			return ini_error(p, "hook: expected a name of 1 to 31 letters, digits and '-', "
				    "the NAME of --hook NAME=COMMAND; got '%s'", v);
		strcpy(f->hook, v);
	} else if (!strcmp(name, "mode")) {
		if (strcmp(v, "all") && strcmp(v, "write"))
			return ini_error(p, "mode: expected all or write (node-pause on servers lockbench "
				    "did not start: CLIENT PAUSE ms ALL or WRITE), got '%s'", v);
		f->pause_write = !strcmp(v, "write");
	} else {
		return ini_error(p, "unknown key '%s' in [%s]: expected action, at, target, nodes, "
			    "resource, inside, within, when, failpoint, duration, delay, hold, offset, strobe, "
			    "then, of, sides, fallback, hook or mode", name, section);
	}
	return 1;
}

static int on_fault(struct parser *p, const char *section, const char *name, const char *v)
{
	struct lb_scenario *sc = p->sc;
	struct lb_fault *f = p->fault;
	int64_t x;

	if (!f || strcmp(f->name, section)) {
		if (strlen(section) >= sizeof(f->name))
			return ini_error(p, "section name '%.60s...' longer than %zu bytes", section,
				    sizeof(f->name) - 1);
		if (sc->n_faults == LB_MAX_FAULTS)
			return ini_error(p, "too many faults: at most %d", LB_MAX_FAULTS);
		f = p->fault = &sc->faults[sc->n_faults++];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", section);
		f->line = section_line(p, section);
		f->action = LB_ACT_COUNT;
		f->duration_ms = -1;
		f->target = LB_TGT_ANY;
	}
	if (!strcmp(name, "action")) {
		for (int a = 0; a < LB_ACT_COUNT; a++)
			if (!strcmp(v, action_names[a]))
				f->action = (enum lb_action)a;
		if (f->action == LB_ACT_COUNT)
			return ini_error(p, "action: expected one of slow, crash, sleep, clock, partition, "
				    "net-lose-reply, kill, pause, node-kill, node-restart, node-pause, node-clock, "
				    "failover, net-delay, net-blackhole, net-cut, net-partition, "
				    "sentinel-failover, client-kill, hook, cluster-failover; got '%s'", v);
	} else if (!strcmp(name, "at")) {
		if (!get_seconds(v, &f->at_s))
			return ini_error(p, "at: expected seconds from the start, from 0 to 86400, got '%s'", v);
	} else if (!strcmp(name, "target")) {
		if (!strcmp(v, "holder"))
			f->target = LB_TGT_HOLDER;
		else if (!strcmp(v, "any"))
			f->target = LB_TGT_ANY;
		else if (!strncmp(v, "client:", 7) && get_i64(v + 7, 0, LB_MAX_CLIENTS - 1, &x))
			f->target = LB_TGT_CLIENT, f->client = (int)x;
		else
			return ini_error(p, "target: expected holder, any or client:N, got '%s'", v);
	} else if (!strcmp(name, "nodes")) {
		if (!strcmp(v, "all"))
			f->all_nodes = true;
		else if (!strcmp(v, "leader"))
			f->leader = true;
		else if (!get_nodes(v, &f->nodes))
			return ini_error(p, "nodes: expected all, leader (etcd, ZooKeeper), or node "
				    "indexes from 0 like 2 or 2,3,4; got '%s'", v);
	} else if (!strcmp(name, "resource")) {
		if (!get_bool(v, &f->resource))
			return ini_error(p, "resource: expected yes or no, got '%s'", v);
	} else if (!strcmp(name, "within")) {
		if (!get_i64(v, 1, 86400000, &f->within_ms))
			return ini_error(p, "within: expected milliseconds from 1 to 86400000, got '%s'", v);
	} else if (!strcmp(name, "inside")) {
		if (!get_i64(v, 0, 86400000, &f->inside_ms))
			return ini_error(p, "inside: expected milliseconds from 0 to 86400000, got '%s'", v);
	} else if (!strcmp(name, "failpoint")) {
		if (strlen(v) >= sizeof(f->failpoint))
			return ini_error(p, "failpoint: name too long");
		strcpy(f->failpoint, v);
	} else if (!strcmp(name, "duration")) {
		if (!get_i64(v, 0, 86400000, &f->duration_ms))
			return ini_error(p, "duration: expected milliseconds from 0 to 86400000, got '%s'", v);
	} else if (!strcmp(name, "delay")) {
		if (!get_i64(v, 0, 86400000, &f->delay_ms))
			return ini_error(p, "delay: expected milliseconds from 0 to 86400000, got '%s'", v);
	} else if (!strcmp(name, "direction")) {
		if (strcmp(v, "requests") && strcmp(v, "replies"))
			return ini_error(p, "direction: expected requests or replies, got '%s'", v);
		f->replies = !strcmp(v, "replies");
	} else if (!strcmp(name, "hold")) {
		if (!get_i64(v, 0, 86400000, &f->hold_ms))
			return ini_error(p, "hold: expected milliseconds from 0 to 86400000, got '%s'", v);
	} else if (!strcmp(name, "offset")) {
		if (!get_i64(v, -INT64_C(86400000000), INT64_C(86400000000), &f->offset_ms))
			return ini_error(p, "offset: expected milliseconds from -86400000000 to 86400000000, "
				    "got '%s'", v);
	} else if (!strcmp(name, "strobe")) {
		if (!get_i64(v, 1, 86400000, &f->strobe_ms))
			return ini_error(p, "strobe: expected milliseconds from 1 to 86400000, got '%s'", v);
	} else {
		return on_fault_more(p, f, section, name, v);
	}
	return 1;
}

/* One piece of an expectation, spaces trimmed: a class into @e (0), or
 * LB_EINVAL with what was expected in @why. @first: the first piece, whose
 * error names every class. */
static int expect_class(char *s, struct lb_scenario_expect *e, bool first, char *why, size_t len)
{
	while (*s == ' ' || *s == '\t')
		s++;
	for (size_t n = strlen(s); n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'); n--)
		s[n - 1] = '\0';
	int c = lb_class_parse(s);
	if (c < 0 || c == LB_CLASS_INCONCLUSIVE || c == LB_CLASS_INTERRUPTED) {
		snprintf(why, len, "%ssafe, contained, overlap, foreign-release, deadlock or "
			 "unavailable%s, got '%.40s'%s", first ? "expected " : "after a class, expected "
			 "another (", first ? "" : ") or FIGURE OP N", s, c < 0 ? "" :
			 c == LB_CLASS_INTERRUPTED ? " (a run cut short is never compared)" :
			 " (a run that shows nothing is never what a scenario expects)");
		return LB_EINVAL;
	}
	if (e->classes & 1u << c) {
		snprintf(why, len, "%s is named twice", s);
		return LB_EINVAL;
	}
	if (first)
		e->cls = (enum lb_class)c;
	e->classes |= 1u << c;
	return 0;
}

int lb_expect_parse(const char *text, struct lb_scenario_expect *e, char *why, size_t len)
{
	char v[256], fig[160];

	memset(e, 0, sizeof(*e));
	if (strlen(text) >= sizeof(v)) {
		snprintf(why, len, "%zu characters; an expectation is at most %zu", strlen(text),
			 sizeof(v) - 1);
		return LB_EINVAL;
	}
	snprintf(v, sizeof(v), "%s", text);
	/* CLASS[,CLASS...][,FIGURE OP N]: a piece that is no class is the figure,
	 * the last piece */
	char *piece = v;
	for (bool first = true;; first = false) {
		char *comma = strchr(piece, ',');
		if (comma)
			*comma = '\0';
		const char *t = piece;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!first && strpbrk(t, "<>=!")) {
			if (comma) {
				snprintf(why, len, "FIGURE OP N comes last, after the classes (got "
					 "',%.40s' after it)", comma + 1);
				return LB_EINVAL;
			}
			if (lb_threshold_parse(t, &e->figure, fig, sizeof(fig)) < 0) {
				snprintf(why, len, "after the class, expected FIGURE OP N (e.g. "
					 "foreign-releases >= 10): %s", fig);
				return LB_EINVAL;
			}
			e->has_figure = true;
			return 0;
		}
		if (expect_class(piece, e, first, why, len) < 0)
			return LB_EINVAL;
		if (!comma)
			return 0;
		piece = comma + 1;
	}
}

static int on_expect(struct parser *p, const char *name, const char *value)
{
	struct lb_scenario *sc = p->sc;
	struct lb_scenario_expect e;
	char why[400], h[96];

	if (!strcmp(name, "threshold")) {
		if (sc->n_thresholds == LB_MAX_THRESHOLDS)
			return ini_error(p, "[expect] threshold: at most %d", LB_MAX_THRESHOLDS);
		if (lb_threshold_parse(value, &sc->thresholds[sc->n_thresholds], why, sizeof(why)) < 0)
			return ini_error(p, "[expect] threshold: %s", why);
		sc->n_thresholds++;
		return 1;
	}
	if (!strcmp(name, "exec"))
		return ini_error(p, "[expect] exec: an exec: name holds a ':', where the INI reader "
			    "ends a key: write it in double quotes, \"exec:PATH\" = CLASS");
	if (lb_expect_parse(value, &e, why, sizeof(why)) < 0)
		return ini_error(p, "[expect] %s: %s", name, why);
	if (e.classes != 1u << e.cls) /* summary.csv's expected column holds one */
		return ini_error(p, "[expect] %s: one class a strategy, got '%.80s' (a list of "
			    "classes, any of them, is for --expect)", name, value);
	if (!known_strategy(name))
		return ini_error(p, "[expect]: unknown strategy '%s'%s", name,
			    hint(name, " (see lockbench list)", h, sizeof(h)));
	if (strlen(name) >= sizeof(e.strategy))
		return ini_error(p, "[expect]: a strategy name of at most %zu bytes", sizeof(e.strategy) - 1);
	if (line_of(sc, name))
		return ini_error(p, "[expect]: %s is given twice", name);
	if (sc->n_expect == LB_MAX_EXPECT)
		return ini_error(p, "[expect]: too many lines");
	snprintf(e.strategy, sizeof(e.strategy), "%s", name);
	e.line = p->line;
	sc->expect[sc->n_expect++] = e;
	return 1;
}

/* Parse "MIN-MAX" milliseconds. */
static bool get_range(const char *v, int64_t *lo, int64_t *hi)
{
	char a[32];
	const char *dash = strchr(v, '-');

	if (!dash || (size_t)(dash - v) >= sizeof(a))
		return false;
	memcpy(a, v, (size_t)(dash - v));
	a[dash - v] = '\0';
	return get_i64(a, 0, 86400000, lo) && get_i64(dash + 1, 0, 86400000, hi) && *lo <= *hi;
}

static int on_chaos(struct parser *p, const char *name, const char *v)
{
	struct lb_chaos *c = &p->sc->chaos;
	int64_t x;

	c->on = true;
	if (!strcmp(name, "kills") || !strcmp(name, "pauses") || !strcmp(name, "restarts")) {
		if (!get_i64(v, 0, LB_MAX_FAULTS, &x))
			return ini_error(p, "%s: expected a count from 0 to %d, got '%s'", name, LB_MAX_FAULTS, v);
		*(name[0] == 'k' ? &c->kills : name[0] == 'p' ? &c->pauses : &c->restarts) = (int)x;
	} else if (!strcmp(name, "pause")) {
		if (!get_range(v, &c->pause_min_ms, &c->pause_max_ms))
			return ini_error(p, "pause: expected MIN-MAX milliseconds, got '%s'", v);
	} else if (!strcmp(name, "from") || !strcmp(name, "until")) {
		double d;
		if (!get_seconds(v, &d))
			return ini_error(p, "%s: expected seconds from the start, from 0 to 86400, got '%s'",
				    name, v);
		*(name[0] == 'f' ? &c->from_s : &c->until_s) = d;
	} else {
		return ini_error(p, "unknown key '%s' in [chaos]: expected kills, pauses, pause, restarts, "
			    "from or until", name);
	}
	return 1;
}

/* The list key given empty, once its value (continuation lines included)
 * has ended: still empty, an error at its line. 1, or 0 having said so. */
static int list_given_empty(struct parser *p)
{
	if (!p->empty_key[0] || p->empty_list[0]) {
		p->empty_key[0] = '\0';
		return 1;
	}
	ini_error(p, "%s: expected strategies (NAME, NAME), got nothing", p->empty_key);
	p->err_line = p->empty_line;
	return 0;
}

/* A key in double quotes ("exec:/x" = safe, docs/scenarios.md): inih splits
 * a line at its first '=' or ':', so an exec: name arrives cut at its ':'
 * ("exec, then /x" = safe); the two halves are put together again. @quoted
 * gets the key as written, with its quotes (to find its line), @key and @val
 * the key and value. NULL, or the error. */
static const char *unquote_key(const char *name, const char *value, char *quoted, char *key,
			       size_t klen, char *val, size_t vlen)
{
	char joined[LB_SCENARIO_LINE_MAX + 2];
	size_t n = strlen(name);
	const char *q;

	if (n >= 2 && name[n - 1] == '"' && !strchr(name + 1, '"')[1]) /* split at its '=' */
		snprintf(joined, sizeof(joined), "%s = %s", name, value);
	else
		snprintf(joined, sizeof(joined), "%s:%s", name, value);
	if (!(q = strchr(joined + 1, '"')))
		return "a key opened with \" needs its closing \" before the =";
	size_t k = (size_t)(q - joined - 1);
	const char *rest = skip_ws(q + 1);
	if (k == 0 || k >= klen || *rest != '=')
		return k == 0 ? "an empty key in quotes" : k >= klen ? "a key in quotes too long" :
		       "after a key in quotes, expected = and the value";
	snprintf(quoted, klen + 2, "%.*s", (int)k + 2, joined);
	snprintf(key, klen, "%.*s", (int)k, joined + 1);
	snprintf(val, vlen, "%s", skip_ws(rest + 1));
	return NULL;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	char quoted[LB_SCENARIO_LINE_MAX + 2], key[LB_SCENARIO_LINE_MAX], val[LB_SCENARIO_LINE_MAX];

	if (name[0] == '"') {
		const char *why = unquote_key(name, value, quoted, key, sizeof(key), val, sizeof(val));
		follow(p, section, why ? name : quoted);
		if (why)
			return ini_error(p, "[%s] %s: %s", section, name, why);
		name = key;
		value = val;
	} else {
		follow(p, section, name);
	}
	if (!p->continued && !list_given_empty(p))
		return 0;
	/* Only a description or a list (only, except, lessons) may go on over
	 * indented lines; any other value would be replaced by its continuation
	 * without a word. */
	if (p->continued && strcmp(name, "description") && strcmp(name, "only") &&
	    strcmp(name, "except") && strcmp(name, "lessons") && strcmp(name, "threshold"))
		return ini_error(p, "%s: the value goes on over an indented line, or is given twice; "
			    "only description, only, except and lessons may span lines (and "
			    "threshold, one a line)", name);
	if (!strcmp(section, "scenario"))
		return on_scenario(p, name, value);
	if (!strcmp(section, "run"))
		return on_run(p, name, value);
	if (!strcmp(section, "fault") || !strncmp(section, "fault ", 6))
		return on_fault(p, section, name, value);
	if (!strcmp(section, "expect"))
		return on_expect(p, name, value);
	if (!strcmp(section, "chaos"))
		return on_chaos(p, name, value);
	if (!section[0])
		return ini_error(p, "'%s' outside any section: expected [scenario], [run], [fault NAME], "
			    "[chaos] or [expect] first", name);
	return ini_error(p, "unknown section [%s]: expected [scenario], [run], [fault NAME], [chaos] "
		    "or [expect]", section);
}

/* net-partition: sides across the topology's links. 1, or 0 with the message. */
static int check_net_partition(struct parser *p, struct lb_fault *f)
{
	const struct lb_scenario *sc = p->sc;

	if (!sc->run.sentinel && !sc->run.cluster)
		return ini_error(p, "[%s] net-partition draws its sides across the links of "
			    "topology = sentinel or cluster: set it in [run]", f->name);
	if (!get_sides(f->sides, f, sc->run.cluster))
		return ini_error(p, "[%s] sides '%s' names servers topology = %s does not have",
			    f->name, f->sides, sc->run.cluster ? "cluster" : "sentinel");
	if (!f->side_parts[0] && !f->side_parts[1])
		return ini_error(p, "[%s] net-partition needs sides = A | B, with servers or "
			    "Sentinels on one side at least", f->name);
	for (int c = 0; c < 64; c++)
		if (lb_scenario_gives(sc, LB_P_CLIENTS) && c >= sc->run.clients &&
		    ((f->side_clients[0] | f->side_clients[1]) >> c) & 1u)
			return ini_error(p, "[%s] sides names client:%d but [run] has %d clients",
				    f->name, c, sc->run.clients);
	return 1;
}

/* net-delay, net-blackhole, net-cut: the links they act on. */
static int check_net_link(struct parser *p, const struct lb_fault *f)
{
	const struct lb_scenario *sc = p->sc;

	if ((sc->run.sentinel || sc->run.cluster) && (f->nodes || f->all_nodes))
		return ini_error(p, "[%s] on a %s topology, network faults between its "
			    "parts are drawn with action = net-partition and sides = A | B "
			    "(the lock node has no fixed address there)", f->name,
			    sc->run.sentinel ? "Sentinel" : "Cluster");
	if (!f->nodes && !f->all_nodes && !f->resource)
		return ini_error(p, "[%s] %s needs nodes = LIST|all or resource = yes", f->name,
			    lb_action_name(f->action));
	if (f->action == LB_ACT_NET_DELAY && f->delay_ms <= 0)
		return ini_error(p, "[%s] net-delay needs delay = MS (> 0)", f->name);
	if (f->when_waiting && f->target != LB_TGT_CLIENT)
		return ini_error(p, "[%s] when = waiting needs target = client:N", f->name);
	if (f->replies && (f->action != LB_ACT_NET_DELAY || f->then_idle))
		return ini_error(p, "[%s] direction = replies is for net-delay without then = idle",
			    f->name);
	if (lb_scenario_gives(sc, LB_P_NODES) && f->nodes >> sc->run.nodes)
		return ini_error(p, "[%s] names a node beyond the %d of [run] nodes", f->name,
			    sc->run.nodes);
	return 1;
}

/* strobe = MS: a clock's offset, on and off every MS. */
static int check_strobe(struct parser *p, const struct lb_fault *f)
{
	if (f->action != LB_ACT_CLOCK && f->action != LB_ACT_NODE_CLOCK)
		return ini_error(p, "[%s] strobe = MS is for clock and node-clock", f->name);
	if (!f->offset_ms)
		return ini_error(p, "[%s] strobe flips the offset on and off: it needs offset = MS "
			    "(not 0)", f->name);
	return 1;
}

/* What each action needs; 0 or a message at the fault's line. */
static int check_fault(struct parser *p, struct lb_fault *f)
{
	const struct lb_scenario *sc = p->sc;
	p->line = f->line;
	if (f->when_after_read && f->action != LB_ACT_PAUSE && f->action != LB_ACT_KILL)
		return ini_error(p, "[%s] when = after-read is for pause and kill", f->name);
	if (f->when_after_read && lb_scenario_gives(sc, LB_P_WORK) && sc->run.work == LB_WORK_NONE)
		return ini_error(p, "[%s] when = after-read needs work = counter (there is no read)", f->name);
	if (f->leader && f->action != LB_ACT_NODE_KILL && f->action != LB_ACT_NODE_PAUSE)
		return ini_error(p, "[%s] nodes = leader goes with node-kill and node-pause", f->name);
	if (f->when_before_write && f->action != LB_ACT_PAUSE)
		return ini_error(p, "[%s] when = before-write is for pause", f->name);
	if (f->when_before_write && lb_scenario_gives(sc, LB_P_WORK) && sc->run.work == LB_WORK_NONE)
		return ini_error(p, "[%s] when = before-write needs work = counter (there is no write)",
			    f->name);
	if (f->strobe_ms && !check_strobe(p, f))
		return 0;
	if ((f->then_reset || f->then_hang || f->of_given) && f->action != LB_ACT_LOSE_REPLY)
		return ini_error(p, "[%s] then = reset|hang and of = acquire|release are for "
			    "net-lose-reply", f->name);
	if (f->then_failover_chosen && (f->action != LB_ACT_NODE_KILL || !sc->run.sentinel))
		return ini_error(p, "[%s] then = failover-chosen is for node-kill on topology = sentinel "
			    "(the Sentinels choose the replica)", f->name);
	switch (f->action) {
	case LB_ACT_COUNT:
		return ini_error(p, "[%s] has no action", f->name);
	case LB_ACT_SLOW:
		if (!f->hold_ms)
			return ini_error(p, "[%s] slow needs hold = MS", f->name);
		break;
	case LB_ACT_CRASH:
	case LB_ACT_SLEEP:
		if (!f->failpoint[0])
			return ini_error(p, "[%s] %s needs failpoint = NAME", f->name, lb_action_name(f->action));
		if (f->action == LB_ACT_SLEEP && f->duration_ms < 0)
			return ini_error(p, "[%s] sleep needs duration = MS", f->name);
		break;
	case LB_ACT_CLOCK:
		if (f->target != LB_TGT_CLIENT)
			return ini_error(p, "[%s] clock needs target = client:N", f->name);
		break;
	case LB_ACT_PARTITION:
		if (sc->run.sentinel || sc->run.cluster)
			return ini_error(p, "[%s] on a %s topology, a partition is drawn across its "
				    "links: action = net-partition with sides = A | B", f->name,
				    sc->run.sentinel ? "Sentinel" : "Cluster");
		if (f->target != LB_TGT_CLIENT || !f->nodes)
			return ini_error(p, "[%s] partition needs target = client:N and nodes = LIST", f->name);
		break;
	case LB_ACT_LOSE_REPLY:
		if (sc->run.sentinel || sc->run.cluster)
			return ini_error(p, "[%s] net-lose-reply acts on a client's own links to its lock "
				    "nodes, which a %s topology does not have", f->name,
				    sc->run.sentinel ? "Sentinel" : "Cluster");
		if (f->target != LB_TGT_CLIENT || (!f->nodes && !f->all_nodes) || !f->of_given ||
		    f->then_reset == f->then_hang)
			return ini_error(p, "[%s] net-lose-reply needs target = client:N, nodes = LIST|all, "
				    "of = acquire|release and then = reset|hang", f->name);
		if (lb_scenario_gives(sc, LB_P_NODES) && f->nodes >> sc->run.nodes)
			return ini_error(p, "[%s] names a node beyond the %d of [run] nodes", f->name,
				    sc->run.nodes);
		break;
	case LB_ACT_KILL:
	case LB_ACT_PAUSE:
		if (f->target == LB_TGT_ANY)
			return ini_error(p, "[%s] %s needs target = holder or client:N", f->name,
				    lb_action_name(f->action));
		if (f->action == LB_ACT_PAUSE && f->duration_ms < 0)
			return ini_error(p, "[%s] pause needs duration = MS", f->name);
		break;
	case LB_ACT_NODE_KILL:
	case LB_ACT_NODE_RESTART:
	case LB_ACT_NODE_PAUSE:
	case LB_ACT_NODE_CLOCK:
		if (!f->nodes && !f->leader)
			return ini_error(p, "[%s] %s needs nodes = LIST", f->name, lb_action_name(f->action));
		if (f->action == LB_ACT_NODE_PAUSE && f->duration_ms < 0)
			return ini_error(p, "[%s] node-pause needs duration = MS", f->name);
		if (lb_scenario_gives(sc, LB_P_NODES) && f->nodes >> sc->run.nodes)
			return ini_error(p, "[%s] names a node beyond the %d of [run] nodes", f->name,
				    sc->run.nodes);
		break;
	case LB_ACT_FAILOVER:
		if (!sc->replica && !sc->run.sentinel && !sc->run.cluster)
			return ini_error(p, "[%s] failover needs replica = yes or topology = sentinel or "
				    "cluster in [run]", f->name);
		break;
	case LB_ACT_NET_PARTITION:
		if (!check_net_partition(p, f))
			return 0;
		break;
	case LB_ACT_SENTINEL_FAILOVER:
	case LB_ACT_CLUSTER_FAILOVER:
		break; /* lockbench's topology or the user's (--sentinel, --cluster): at the run */
	case LB_ACT_CLIENT_KILL:
		if (f->target == LB_TGT_ANY)
			return ini_error(p, "[%s] client-kill needs target = holder or client:N", f->name);
		if (!f->nodes)
			f->all_nodes = true;
		break;
	case LB_ACT_HOOK:
		if (!f->hook[0])
			return ini_error(p, "[%s] hook needs hook = NAME (the command is given on the "
				    "command line: --hook NAME=COMMAND)", f->name);
		break;
	case LB_ACT_NET_DELAY:
	case LB_ACT_NET_BLACKHOLE:
	case LB_ACT_NET_CUT:
		if (!check_net_link(p, f))
			return 0;
		break;
	}
	if (f->target == LB_TGT_CLIENT && lb_scenario_gives(sc, LB_P_CLIENTS) &&
	    f->client >= sc->run.clients)
		return ini_error(p, "[%s] targets client:%d but [run] has %d clients", f->name, f->client,
			    sc->run.clients);
	return 1;
}

/* The whole of @path (a regular file of at most 1 MiB), or NULL with why in
 * @why: a FIFO, a directory or a device is refused at once, never read. */
static char *slurp(const char *path, size_t *len, char *why, size_t why_len)
{
	const char *kind;
	int rc;
	FILE *f = lb_open_regular(path, &rc, &kind);
	char *buf;
	long n;

	if (!f) {
		char text[96];
		snprintf(why, why_len, "%s", lb_open_why(kind, text, sizeof(text)));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20)) {
		fclose(f);
		snprintf(why, why_len, "larger than 1 MiB");
		return NULL;
	}
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	else
		snprintf(why, why_len, "%s", strerror(errno ? errno : ENOMEM));
	*len = (size_t)n;
	return buf;
}

int lb_scenario_parse_file(const char *path, struct lb_scenario *sc)
{
	size_t len = 0;
	char why[128];
	char *text = slurp(path, &len, why, sizeof(why));
	int rc;

	if (!text) {
		memset(sc, 0, sizeof(*sc));
		snprintf(sc->error, sizeof(sc->error), "cannot read scenario %.300s: %s", path, why);
		lb_errorf("%s", sc->error);
		return LB_ESYS;
	}
	if (strlen(text) != len) { /* C text ends at a NUL: what follows would go unread */
		size_t at = strlen(text);
		int line = 1;
		for (size_t i = 0; i < at; i++)
			line += text[i] == '\n';
		memset(sc, 0, sizeof(*sc));
		snprintf(sc->error, sizeof(sc->error), "%.300s:%d: a NUL byte (byte %zu): a scenario is "
			 "text", path, line, at + 1);
		lb_errorf("%s", sc->error);
		free(text);
		return LB_EINVAL;
	}
	rc = lb_scenario_parse_text(text, path, sc);
	free(text);
	return rc;
}

/* The section a header line opens, as inih reads it (between '[' and the
 * first ']'), into @out; false when @line is not a header. */
static bool header_name(const char *line, char *out, size_t len)
{
	const char *t = skip_ws(line), *end;
	if (*t != '[' || !(end = strchr(t, ']')))
		return false;
	snprintf(out, len, "%.*s", (int)(end - t - 1), t + 1);
	return true;
}

/* Header line @i of the file: a fault has a name, and no section appears
 * twice (inih would merge two alike in a row, or keep both: a fault that
 * never fires, a [run] that overrides another). false with the error set. */
static bool check_header(struct parser *p, int i)
{
	char name[LB_SCENARIO_LINE_MAX + 1], other[LB_SCENARIO_LINE_MAX + 1];
	if (!header_name(p->lines[i], name, sizeof(name)))
		return true;
	p->line = i + 1;
	if (!strcmp(name, "fault") || !strncmp(name, "fault ", 6)) {
		const char *n = skip_ws(name + 5);
		if (!*n)
			return ini_error(p, "[%s]: a fault needs a name, [fault NAME]", name), false;
	}
	for (int k = 0; k < i; k++)
		if (header_name(p->lines[k], other, sizeof(other)) && !strcmp(name, other))
			return ini_error(p, "section [%.60s] again (first at line %d): each section once", name,
				    k + 1), false;
	return true;
}

int lb_scenario_parse_text(const char *text, const char *path, struct lb_scenario *sc)
{
	struct parser p = { .sc = sc };
	char *copy;
	const char *base = strrchr(path, '/');
	int rc;

	memset(sc, 0, sizeof(*sc));
	snprintf(sc->path, sizeof(sc->path), "%s", path);
	snprintf(sc->name, sizeof(sc->name), "%s", base ? base + 1 : path);
	char *dot = strrchr(sc->name, '.');
	if (dot && !strcmp(dot, ".ini"))
		*dot = '\0';
	if (strlen(text) > (1u << 20)) {
		snprintf(sc->error, sizeof(sc->error), "%.300s: larger than 1 MiB", path);
		lb_errorf("%s", sc->error);
		return LB_EINVAL;
	}
	if (!(copy = strdup(text)))
		return LB_ENOMEM;
	for (char *s = copy; *s; s++)
		p.n_lines += *s == '\n';
	p.lines = calloc((size_t)p.n_lines + 2, sizeof(char *));
	if (!p.lines) {
		free(copy);
		return LB_ENOMEM;
	}
	/* one entry per line, empty lines included */
	p.n_lines = 0;
	size_t total = strlen(copy);
	for (char *start = copy, *s = copy; s <= copy + total; s++)
		if (s == copy + total || *s == '\n') {
			*s = '\0';
			p.lines[p.n_lines++] = start;
			start = s + 1;
		}
	/* inih reads a header without its ']' as an error but goes on, so the
	 * next key would be blamed: name the header's own line instead. */
	rc = 0;
	int content = 0;
	for (int i = 0; i < p.n_lines && !rc; i++) {
		const char *t = skip_ws(p.lines[i]);
		content += *t && *t != ';' && *t != '#' && *t != '\r';
		if (*t == '[' && strchr(t, ']') && (rc = check_header(&p, i) ? 0 : i + 1) != 0)
			break;
		if (strlen(p.lines[i]) > LB_SCENARIO_LINE_MAX) {
			/* inih would read the rest of it as a line of its own */
			p.line = i + 1;
			ini_error(&p, "a line longer than %d bytes", LB_SCENARIO_LINE_MAX);
			rc = i + 1;
		} else if (*t == '[' && !strchr(t, ']')) {
			p.line = i + 1;
			ini_error(&p, "section header '%.60s' has no closing ']'", t);
			rc = i + 1;
		}
	}
	if (!rc && !content) { /* keys outside any section are inih's to name */
		p.line = p.n_lines > 0 ? 1 : 0;
		ini_error(&p, "empty: expected [scenario], [run], [fault NAME], [chaos] or [expect]");
		rc = 1;
	}
	if (!rc) {
		p.line = 0; /* the pass above left it at the last header: keys are followed from the top */
		rc = ini_parse_string(text, handler, &p);
	}
	if (rc > 0 && !p.err[0])
		snprintf(p.err, sizeof(p.err), "expected [section], key = value, or a comment");
	if (rc > 0 && !p.err_line)
		p.err_line = rc;
	for (int i = 0; rc == 0 && i < sc->n_faults; i++)
		if (!check_fault(&p, &sc->faults[i]))
			rc = 1;
	if (rc == 0 && !list_given_empty(&p))
		rc = 1;
	if (rc == 0 && sc->run_line && !sc->run.sentinel) {
		p.err_line = sc->run_line;
		snprintf(p.err, sizeof(p.err), "min_replicas, min_replicas_max_lag and down_after "
			 "set up topology = sentinel: set it in [run]");
		rc = 1;
	}
	free(p.lines);
	free(copy);
	if (rc != 0) {
		snprintf(sc->error, sizeof(sc->error), "%.150s:%d: %.500s", path, p.err_line, p.err);
		lb_errorf("%s", sc->error);
		return LB_EINVAL;
	}
	return 0;
}

bool lb_scenario_dir(char *out, size_t len)
{
	struct stat st;
	const char *env = getenv("LOCKBENCH_SCENARIOS");

	if (env && *env && stat(env, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, len, "%s", env);
		return true;
	}
	if (stat("scenarios", &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, len, "scenarios");
		return true;
	}
	return lb_find_installed("scenarios", "share", out, len) && stat(out, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

int lb_scenario_load(const char *name, struct lb_scenario *sc)
{
	char dir[PATH_MAX - 128], path[PATH_MAX];
	size_t len = strlen(name);

	if (strchr(name, '/') || (len > 4 && !strcmp(name + len - 4, ".ini")))
		return lb_scenario_parse_file(name, sc);
	if (!lb_scenario_dir(dir, sizeof(dir))) {
		lb_errorf("no scenarios directory found (set LOCKBENCH_SCENARIOS)");
		return LB_EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%.60s.ini", dir, name);
	if (access(path, R_OK) != 0) {
		lb_errorf("unknown scenario '%s': no %s (see `lockbench list`)", name, path);
		return LB_EINVAL;
	}
	int rc = lb_scenario_parse_file(path, sc);
	sc->by_name = rc == 0;
	return rc;
}

const char *lb_scenario_arg(const struct lb_scenario *sc)
{
	return sc->by_name ? sc->name : sc->path;
}

/* The line that names exactly @name, or NULL. */
static const struct lb_scenario_expect *line_of(const struct lb_scenario *sc, const char *name)
{
	for (int i = 0; i < sc->n_expect; i++)
		if (!strcmp(sc->expect[i].strategy, name))
			return &sc->expect[i];
	return NULL;
}

int lb_scenario_expected(const struct lb_scenario *sc, const char *strategy)
{
	const struct lb_scenario_expect *e = lb_scenario_expect_of(sc, strategy);
	return e ? (int)e->cls : -1;
}

/* A library's line: NAME@VERSION's own (the version asked, or for a bare NAME
 * run from --library-env the one that ran), else NAME's, the library's, so
 * that an upgrade is judged by the same expectations. Any other strategy:
 * its own line. */
const struct lb_scenario_expect *lb_scenario_expect_of(const struct lb_scenario *sc,
						       const char *strategy)
{
	const struct lb_scenario_expect *e;
	char base[200], versioned[240];

	if (!library_of(strategy, base, sizeof(base)))
		return line_of(sc, strategy);
	if (strcmp(base, strategy))
		return (e = line_of(sc, strategy)) ? e : line_of(sc, base);
	const char *ran = lb_adapter_ran_version(lb_adapter_find(strategy));
	snprintf(versioned, sizeof(versioned), "%s@%s", base, ran ? ran : "");
	return ran && (e = line_of(sc, versioned)) ? e : line_of(sc, base);
}

/* The classes of @e in the order of enum lb_class, the first given first,
 * joined by @sep. */
static void expect_classes(const struct lb_scenario_expect *e, const char *sep, char *out,
			   size_t len)
{
	snprintf(out, len, "%s", lb_class_name(e->cls));
	for (int c = 0; c < LB_CLASS_COUNT; c++)
		if (c != (int)e->cls && e->classes & 1u << c)
			snprintf(out + strlen(out), len - strlen(out), "%s%s", sep,
				 lb_class_name((enum lb_class)c));
}

bool lb_expect_met(const struct lb_scenario_expect *e, const struct lb_observed *o, char *why,
		   size_t len)
{
	char line[200], want[200];

	if (why && len)
		why[0] = '\0';
	if (!(e->classes & 1u << o->cls)) {
		if (why) {
			expect_classes(e, " or ", want, sizeof(want));
			snprintf(why, len, "expected %s, observed %s", want, lb_class_name(o->cls));
		}
		return false;
	}
	if (e->has_figure && lb_threshold_judge(&e->figure, o->value(o->src, e->figure.column),
						line, sizeof(line)) != 1) {
		if (why)
			snprintf(why, len, "%s as expected, but not %s", lb_class_name(o->cls), line);
		return false;
	}
	return true;
}

bool lb_scenario_expect_met(const struct lb_scenario *sc, const char *strategy,
			    const struct lb_observed *o, char *why, size_t len)
{
	const struct lb_scenario_expect *e = lb_scenario_expect_of(sc, strategy);
	char line[200];

	if (why && len)
		why[0] = '\0';
	if (e && sc->probabilistic) { /* its lines are "at worst": a better run meets them */
		if (lb_class_severity(o->cls) > lb_class_severity(e->cls)) {
			if (why)
				snprintf(why, len, "expected at worst %s, observed %s",
					 lb_class_name(e->cls), lb_class_name(o->cls));
			return false;
		}
	} else if (e && !lb_expect_met(e, o, why, len)) {
		return false;
	}
	for (int i = 0; i < sc->n_thresholds; i++) {
		const struct lb_threshold *t = &sc->thresholds[i];
		if (lb_threshold_judge(t, o->value(o->src, t->column), line, sizeof(line)) != 1) {
			if (why)
				snprintf(why, len, "threshold not held: %s", line);
			return false;
		}
	}
	return true;
}

void lb_expect_text(const struct lb_scenario_expect *e, char *out, size_t len)
{
	char classes[200];

	expect_classes(e, ", ", classes, sizeof(classes));
	if (!e->has_figure)
		snprintf(out, len, "%s", classes);
	else
		snprintf(out, len, "%s, %s", classes, e->figure.text);
}

void lb_scenario_expect_text(const struct lb_scenario *sc, const char *strategy, char *out,
			     size_t len)
{
	const struct lb_scenario_expect *e = lb_scenario_expect_of(sc, strategy);

	if (!e)
		snprintf(out, len, "-");
	else
		lb_expect_text(e, out, len);
}

/* Does external strategy @s announce failpoint @name? Its hello is asked
 * (once per process) only when a scenario has such a fault. A program whose
 * hello cannot be read (it said why) is taken at its word that it might:
 * the run then starts it, and fails on it loudly, rather than leaving the
 * scenario out as if it did not apply. An unusable library is left for the
 * run to skip, with its reason. */
static bool external_has_failpoint(const struct lock_strategy *s, const char *name)
{
	char usable[400];

	if (!lb_adapter_usable(s, usable, sizeof(usable)))
		return false;
	if (lb_adapter_greet(s) < 0)
		return true;
	for (const char *const *f = s->failpoints; f && *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}

/* A fault that acts on Redis itself (its data, its replicas, its Sentinels,
 * its commands) or through a shim an etcd member or ZooKeeper server does not
 * load: none of them reaches a consensus lock. */
static const char *redis_only(enum lb_action a)
{
	switch (a) {
	case LB_ACT_NODE_RESTART: return "restarts a Redis server empty (a consensus member "
					 "keeps its data and rejoins: node-kill with duration)";
	case LB_ACT_NODE_CLOCK: return "moves a server's clock through an LD_PRELOAD shim, which "
				       "etcd's static Go binary and ZooKeeper's JVM do not go through";
	case LB_ACT_FAILOVER: return "promotes a Redis replica";
	case LB_ACT_NET_PARTITION: return "partitions a Sentinel or Cluster topology";
	case LB_ACT_SENTINEL_FAILOVER: return "asks Redis Sentinels to fail over";
	case LB_ACT_CLIENT_KILL: return "sends Redis's CLIENT KILL";
	case LB_ACT_CLUSTER_FAILOVER: return "sends Redis's CLUSTER FAILOVER";
	case LB_ACT_HOOK: return "runs a command meant for the user's Redis deployment";
	case LB_ACT_LOSE_REPLY: return "loses a reply the relay finds by counting requests in "
				       "Redis's protocol";
	default: return NULL;
	}
}

/* Why a scenario does not apply to a consensus lock (@k: lb_consensus_of), or
 * to a Redis lock when it runs on a consensus topology; false when it does. */
static bool consensus_why_not(const struct lb_scenario *sc, const char *strategy, int k,
			      char *why, size_t len)
{
	const char *shown = lb_consensus_shown((enum lb_consensus_kind)k);
	const char *runs_on = lb_consensus_shown((enum lb_consensus_kind)sc->run.consensus);

	if (sc->run.consensus && k != sc->run.consensus) {
		snprintf(why, len, "scenario %s runs on the %s topology, for %s locks; %s %s: n/a",
			 sc->name, runs_on, runs_on, strategy,
			 k ? "keeps its lock elsewhere" : "is a Redis lock");
		return true;
	}
	for (int i = 0; !k && i < sc->n_faults; i++)
		if (sc->faults[i].leader) {
			snprintf(why, len, "scenario %s's fault [%s] acts on the leader of an etcd or "
				 "ZooKeeper ensemble; %s is a Redis lock: n/a", sc->name,
				 sc->faults[i].name, strategy);
			return true;
		}
	if (!k)
		return false;
	if (sc->run.sentinel || sc->run.cluster || sc->replica) {
		snprintf(why, len, "scenario %s acts on Redis %s; %s keeps its lock in %s: n/a",
			 sc->name, sc->run.sentinel ? "Sentinels and replicas" : sc->run.cluster ?
			 "Cluster nodes" : "replication", strategy, shown);
		return true;
	}
	if (sc->chaos.on && sc->chaos.restarts > 0) {
		snprintf(why, len, "scenario %s draws restarts of a lock server, which %s (its "
			 "[chaos] restarts); %s keeps its lock in %s: n/a", sc->name,
			 redis_only(LB_ACT_NODE_RESTART), strategy, shown);
		return true;
	}
	for (int i = 0; i < sc->n_faults; i++) {
		const char *what = redis_only(sc->faults[i].action);
		if (what) {
			snprintf(why, len, "scenario %s's fault [%s] %s; %s keeps its lock in %s: n/a",
				 sc->name, sc->faults[i].name, what, strategy, shown);
			return true;
		}
		if (sc->faults[i].nodes >> 3) {
			snprintf(why, len, "scenario %s's fault [%s] names lock nodes beyond the three "
				 "members of %s: n/a", sc->name, sc->faults[i].name, shown);
			return true;
		}
	}
	return false;
}

bool lb_scenario_why_not(const struct lb_scenario *sc, const char *strategy, char *why, size_t len)
{
	const struct lock_strategy *s = lb_strategy_find(strategy);

	if (consensus_why_not(sc, strategy, lb_consensus_of(s), why, len))
		return true;

	if (list_has(sc->except, strategy)) {
		snprintf(why, len, "scenario %s leaves %s out (its description says why)", sc->name,
			 strategy);
		return true;
	}
	if (sc->only[0] && !list_has(sc->only, strategy)) {
		snprintf(why, len, "scenario %s applies only to: %s", sc->name, sc->only);
		return true;
	}
	if ((sc->run.sentinel || sc->run.cluster) && s && s->min_nodes > 1) {
		snprintf(why, len, "scenario %s runs on a %s topology, one primary for the lock; %s "
			 "needs %u independent lock nodes: n/a", sc->name,
			 sc->run.sentinel ? "Sentinel" : "Cluster", strategy, s->min_nodes);
		return true;
	}
	if (sc->run.cluster && s && lb_strategy_is_external(s)) {
		snprintf(why, len, "scenario %s runs on a Cluster topology; the library adapters do "
			 "not set up their libraries' cluster clients yet (docs/topologies.md): n/a",
			 sc->name);
		return true;
	}
	/* a fault at a failpoint lives inside a C recipe, or in an adapter's code
	 * that announces it (protocol version 3: its hello names it) */
	for (int i = 0; s && lb_strategy_is_external(s) && i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		/* asked with a fallback too: the run must know whether the fault acts at
		 * the failpoint (lb_strategy_has_failpoint) or falls back on the holder */
		if ((f->action == LB_ACT_CRASH || f->action == LB_ACT_SLEEP) &&
		    !external_has_failpoint(s, f->failpoint) && !f->fallback_holder) {
			snprintf(why, len, "scenario %s's fault [%s] acts at the failpoint %s, which %s's "
				 "code does not announce (its hello names no such failpoint, and the "
				 "fault has no fallback): n/a", sc->name, f->name, f->failpoint, strategy);
			return true;
		}
	}
	return false;
}

bool lb_scenario_applies(const struct lb_scenario *sc, const char *strategy)
{
	char why[400];
	return !lb_scenario_why_not(sc, strategy, why, sizeof(why));
}

bool lb_scenario_is_lesson(const struct lb_scenario *sc, const char *strategy)
{
	return list_has(sc->lessons, strategy) && lb_scenario_applies(sc, strategy);
}

bool lb_scenario_needs_clock_shim(const struct lb_scenario *sc)
{
	for (int i = 0; i < sc->n_faults; i++)
		if (sc->faults[i].action == LB_ACT_NODE_CLOCK)
			return true;
	return false;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int lb_scenario_names(char (*names)[64], int max)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (!lb_scenario_dir(dir, sizeof(dir)) || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);
		if (len > 4 && len < 64 && !strcmp(e->d_name + len - 4, ".ini")) {
			memcpy(names[n], e->d_name, len - 4);
			names[n++][len - 4] = '\0';
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), name_cmp);
	return n;
}

bool lb_scenario_needs_relay(const struct lb_scenario *sc)
{
	for (int i = 0; sc && i < sc->n_faults; i++)
		if ((sc->faults[i].action >= LB_ACT_NET_DELAY && sc->faults[i].action <= LB_ACT_NET_CUT) ||
		    sc->faults[i].action == LB_ACT_FAILOVER || /* it holds the replication link */
		    sc->faults[i].action == LB_ACT_LOSE_REPLY ||
		    sc->faults[i].action == LB_ACT_NET_PARTITION)
			return true;
	return false;
}

static double draw_at(uint64_t *rng, const struct lb_chaos *c)
{
	double u = (double)(lb_rand_next(rng) >> 11) / (double)(UINT64_C(1) << 53);
	return c->from_s + u * (c->until_s - c->from_s);
}

static struct lb_fault *chaos_fault(struct lb_scenario *sc, enum lb_action a, const char *what,
				    int k, double at)
{
	if (sc->n_faults == LB_MAX_FAULTS)
		return NULL;
	struct lb_fault *f = &sc->faults[sc->n_faults++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "chaos-%s-%d", what, k);
	f->action = a;
	f->at_s = at;
	f->duration_ms = -1;
	f->target = LB_TGT_HOLDER;
	return f;
}

void lb_scenario_draw_chaos(struct lb_scenario *sc, uint64_t seed, int clients, int nodes)
{
	const struct lb_chaos *c = &sc->chaos;
	uint64_t rng = seed ^ UINT64_C(0x9e3779b97f4a7c15);
	struct lb_fault *f;

	(void)clients;
	if (!c->on)
		return;
	for (int k = 0; k < c->kills; k++)
		chaos_fault(sc, LB_ACT_KILL, "kill", k, draw_at(&rng, c));
	for (int k = 0; k < c->pauses; k++)
		if ((f = chaos_fault(sc, LB_ACT_PAUSE, "pause", k, draw_at(&rng, c)))) {
			uint64_t span = (uint64_t)(c->pause_max_ms - c->pause_min_ms + 1);
			f->duration_ms = c->pause_min_ms + (int64_t)(lb_rand_next(&rng) % span);
		}
	for (int k = 0; k < c->restarts; k++)
		if ((f = chaos_fault(sc, LB_ACT_NODE_RESTART, "restart", k, draw_at(&rng, c)))) {
			f->target = LB_TGT_ANY;
			f->nodes = 1u << (lb_rand_next(&rng) % (uint64_t)(nodes > 0 ? nodes : 1));
		}
}
