/*
 * params.c - the table of run parameters (params.h): one row each, read by
 * the command line, a scenario's [run], sweep --vary and summary.csv.
 */
#include "params.h"
#include "strategy.h"
#include "util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS INT64_C(86400000)

static const char *const works[] = { "counter", "none", NULL };         /* enum lb_work */
static const char *const topologies[] = { "single", "sentinel", "cluster", "etcd", "zookeeper",
					   NULL };

static void hold_set(struct lb_run_cfg *cfg, const struct lb_param_value *v)
{
	cfg->hold_min_ms = v->lo;
	cfg->hold_max_ms = v->hi;
}

static void hold_get(const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	v->lo = cfg->hold_min_ms;
	v->hi = cfg->hold_max_ms;
}

static void work_set(struct lb_run_cfg *cfg, const struct lb_param_value *v)
{
	cfg->work = v->i == 1 ? LB_WORK_NONE : LB_WORK_COUNTER;
}

static void work_get(const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	v->i = cfg->work == LB_WORK_NONE;
}

int lb_consensus_of(const struct lock_strategy *s)
{
	const char *t = lb_strategy_topology(s);

	return !t ? 0 : !strcmp(t, "etcd") ? 1 : 2;
}

/* Not a simple value: the topology is two flags of the run (and run.c starts
 * the servers each one needs). */
static void topology_set(struct lb_run_cfg *cfg, const struct lb_param_value *v)
{
	cfg->sentinel = v->i == 1;
	cfg->cluster = v->i == 2;
	cfg->consensus = v->i >= 3 ? (int)v->i - 2 : 0;
}

static void topology_get(const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	int k = cfg->consensus ? cfg->consensus : lb_consensus_of(cfg->strategy);

	v->i = cfg->sentinel ? 1 : cfg->cluster ? 2 : k ? 2 + k : 0;
}

/* The summary names the lock nodes the run had: 0 is the strategy's own count. */
/* --wait own is written as what it was for the run's strategy. */
static void wait_column(const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	v->wait = cfg->wait.kind == LB_WAIT_OWN && cfg->strategy ? lb_wait_own(cfg->strategy) :
		  cfg->wait;
}

static void nodes_column(const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	v->i = cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes;
}

#define AT(field) offsetof(struct lb_run_cfg, field)

static const struct lb_param table[LB_P_COUNT] = {
	[LB_P_CLIENTS] = {
		.name = "clients", .cli = "clients", .run_key = "clients", .vary = "clients",
		.column = "clients", .type = LB_PT_INT, .unit = "clients",
		.min = 1, .max = LB_MAX_CLIENTS, .dflt = { .i = 8 }, .metavar = "N",
		.help = "contending client processes ({default})", .offset = AT(clients),
	},
	[LB_P_DURATION] = {
		.name = "duration", .cli = "duration", .run_key = "duration",
		.column = "duration_s", .type = LB_PT_SECONDS, .unit = "s",
		.min = 0, .max = 86400, .dflt = { .s = 10 }, .metavar = "S",
		.help = "seconds to run ({default}; fractions allowed)", .offset = AT(duration_s),
	},
	[LB_P_TTL] = {
		.name = "ttl", .cli = "ttl", .run_key = "ttl", .vary = "ttl", .column = "ttl_ms",
		.type = LB_PT_MS, .unit = "ms", .min = 1, .max = DAY_MS, .dflt = { .i = 2000 },
		.metavar = "MS", .help = "lease length in ms ({default})", .offset = AT(ttl_ms),
	},
	[LB_P_HOLD] = {
		.name = "hold", .cli = "hold", .run_key = "hold", .vary = "hold", .column = "hold_ms",
		.type = LB_PT_MS_RANGE, .unit = "ms", .min = 0, .max = DAY_MS,
		.dflt = { .lo = 5, .hi = 5 }, .metavar = "MS|MIN-MAX",
		.help = "critical-section time, or a range drawn per section ({default})",
		.set = hold_set, .get = hold_get,
	},
	[LB_P_THINK] = {
		.name = "think", .cli = "think", .run_key = "think", .column = "think_ms",
		.type = LB_PT_MS, .unit = "ms", .min = 0, .max = DAY_MS, .dflt = { .i = 0 },
		.metavar = "MS", .help = "pause between release and the next acquire ({default})",
		.offset = AT(think_ms),
	},
	[LB_P_KEYS] = {
		.name = "keys", .cli = "keys", .run_key = "keys", .vary = "keys", .column = "keys",
		.type = LB_PT_INT, .unit = "locks", .min = 1, .max = LB_MAX_KEYS, .dflt = { .i = 1 },
		.metavar = "K",
		.help = "locks the clients spread over ({default}: all fight for one;\n"
			"client i uses lock i % K; K >= clients is uncontended)",
		.offset = AT(keys),
	},
	[LB_P_WAIT] = {
		.name = "wait", .cli = "wait", .run_key = "wait", .column = "wait",
		.type = LB_PT_WAIT, .unit = "policy",
		.dflt = { .wait = { .kind = LB_WAIT_FIXED, .interval_ms = 10 } }, .metavar = "POLICY",
		.help = "try | fixed:MS | retries:N:MS | backoff:MIN:MAX |\n"
			"notify[:MS] | library ({default}); notify blocks until\n"
			"the release signals, polling at most every MS (100);\n"
			"library: a library's own blocking acquire, with its\n"
			"defaults (library strategies only); own: each\n"
			"strategy its own (a library's, fair's notify, else\n"
			"fixed:10), as the summary's wait column then says",
		.offset = AT(wait), .column_value = wait_column,
	},
	[LB_P_ACQUIRE_TIMEOUT] = {
		.name = "acquire-timeout", .cli = "acquire-timeout", .run_key = "acquire_timeout",
		.type = LB_PT_MS, .unit = "ms", .min = 1, .max = DAY_MS, .dflt = { .i = 10000 },
		.metavar = "MS", .help = "give up an acquire after MS ({default})",
		.offset = AT(acquire_timeout_ms),
	},
	[LB_P_WORK] = {
		.name = "work", .cli = "work", .run_key = "work", .column = "work",
		.type = LB_PT_WORDS, .unit = "mode", .words = works, .dflt = { .i = LB_WORK_COUNTER },
		.help = "counter: non-atomic GET, hold, SET of a counter on the\n"
			"resource server (lost updates are counted); none: hold",
		.set = work_set, .get = work_get,
	},
	/* Drawn at random by lb_run_opts_parse unless given; a scenario has none
	 * (its randomness is the run's). */
	[LB_P_SEED] = {
		.name = "seed", .cli = "seed", .column = "seed", .type = LB_PT_U64, .unit = "seed",
		.min = 0, .max = INT64_MAX, .metavar = "N",
		.help = "seed of every random choice (default: random, recorded)",
		.offset = AT(seed),
	},
	[LB_P_NODES] = {
		.name = "nodes", .cli = "nodes", .run_key = "nodes", .column = "nodes",
		.type = LB_PT_INT, .unit = "lock nodes", .min = 1, .max = LB_MAX_NODES,
		.metavar = "N", .help = "lock nodes (default: what the strategy needs)",
		.offset = AT(nodes), .column_value = nodes_column,
	},
	[LB_P_NO_VALIDITY_CHECK] = {
		.name = "no-validity-check", .cli = "no-validity-check", .run_key = "validity_check",
		.run_negated = true, .variant = true, .type = LB_PT_FLAG, .unit = "flag", .max = 1,
		.help = "redlock: enter on a quorum however late it came (naive)",
		.offset = AT(no_validity_check),
	},
	[LB_P_MAX_RENEWALS] = {
		.name = "max-renewals", .cli = "max-renewals", .run_key = "max_renewals",
		.type = LB_PT_INT, .unit = "extensions", .min = 1, .max = 1000000,
		.metavar = "N", .help = "renewal: stop renewing a lease after N extensions",
		.offset = AT(max_renewals),
	},
	[LB_P_DELAYED_RESTARTS] = {
		.name = "delayed-restarts", .cli = "delayed-restarts", .run_key = "delayed_restarts",
		.variant = true, .type = LB_PT_FLAG, .unit = "flag", .max = 1,
		.help = "a node that restarts stays down one more TTL first\n"
			"(antirez's delayed restart)",
		.offset = AT(delayed_restarts),
	},
	[LB_P_COUNT_COMMANDS] = {
		.name = "count-commands", .cli = "count-commands", .run_key = "count_commands",
		.variant = true, .type = LB_PT_FLAG, .unit = "flag", .max = 1,
		.help = "every client's lock commands through the relay, which\n"
			"counts them inside sections and outside\n"
			"(cmds_per_s_holding, cmds_per_s_waiting); one more hop\n"
			"on every command",
		.offset = AT(count_commands),
	},
	[LB_P_CALLS] = {
		.name = "calls", .cli = "calls", .run_key = "calls", .vary = "calls",
		.column = "calls", .type = LB_PT_INT, .unit = "calls", .min = 0, .max = 1000000,
		.dflt = { .i = 0 }, .metavar = "N",
		.help = "acquire calls per client, entered or given up, after\n"
			"which it stops; the run ends when every client has\n"
			"(0: no limit, the default; 1: a stampede's one request\n"
			"each, see scenarios/stampede.ini)",
		.offset = AT(calls),
	},
	[LB_P_DRAIN] = {
		.name = "drain", .cli = "drain", .run_key = "drain", .column = "drain_s",
		.type = LB_PT_SECONDS, .unit = "s", .min = 0, .max = 3600, .dflt = { .s = 0 },
		.metavar = "S",
		.help = "after the run's end, a client waiting in an acquire\n"
			"call keeps trying up to S seconds more: it enters (its\n"
			"section counts as any other) or is cut off then; no\n"
			"new call starts ({default}: none). For a percentile a\n"
			"cut-off wait leaves as an interval (docs/running.md)",
		.offset = AT(drain_s),
	},
	[LB_P_TOPOLOGY] = {
		.name = "topology", .cli = "topology", .run_key = "topology", .type = LB_PT_WORDS,
		.unit = "topology", .words = topologies,
		.help = "sentinel: the lock lives on a primary\n"
			"with two replicas behind three Sentinels, found\n"
			"through them; cluster: on the primary of its slot in\n"
			"a cluster of three primaries and three replicas,\n"
			"found through CLUSTER SLOTS and MOVED (one-node\n"
			"strategies); etcd, zookeeper: three members of that\n"
			"consensus system, for its locks (etcd-lock@3.4.23,\n"
			"kazoo-lock@2.8.0; their own topology by default;\n"
			"docs/topologies.md)",
		.set = topology_set, .get = topology_get,
	},
	[LB_P_ADAPTER_HOSTS] = {
		.name = "adapter-hosts", .cli = "adapter-hosts", .run_key = "adapter_hosts",
		.type = LB_PT_INT, .unit = "processes", .min = 0, .max = LB_MAX_ADAPTER_HOSTS,
		.dflt = { .i = 0 }, .metavar = "N",
		.help = "a library's clients share N adapter processes, each\n"
			"serving many sessions on a Unix socket ({default}: one\n"
			"adapter process per client); refuses faults that act\n"
			"on a client's process (docs/adapters.md)",
		.offset = AT(adapter_hosts),
	},
	/* The Sentinel topology's settings: a scenario's, or sweep's. */
	[LB_P_MAX_LAG] = {
		.name = "max-lag", .run_key = "min_replicas_max_lag", .vary = "max_lag",
		.type = LB_PT_INT, .unit = "s", .min = 1, .max = 3600, .metavar = "S",
		.help = "sentinel: min-replicas-max-lag on its servers, seconds (Redis's 10;\n"
			"it acts with min_replicas only)",
		.offset = AT(min_replicas_max_lag),
	},
	[LB_P_DOWN_AFTER] = {
		.name = "down-after", .run_key = "down_after", .vary = "down_after",
		.type = LB_PT_MS, .unit = "ms", .min = 100, .max = 60000, .metavar = "MS",
		.help = "sentinel: the Sentinels' down-after-milliseconds (1000)",
		.offset = AT(down_after_ms),
	},
};

_Static_assert(LB_P_COUNT <= 32, "lb_param_bit: a set of rows is 32 bits");

const struct lb_param *lb_param_row(enum lb_param_id id)
{
	return (unsigned)id < LB_P_COUNT ? &table[id] : NULL;
}

const struct lb_param *lb_params(size_t *n)
{
	*n = LB_P_COUNT;
	return table;
}

enum lb_param_id lb_param_index(const struct lb_param *p)
{
	return (enum lb_param_id)(p - table);
}

/* The row whose name at @offset (a const char * member) is @name. */
static const struct lb_param *find(size_t offset, const char *name)
{
	for (size_t i = 0; name && i < LB_P_COUNT; i++) {
		const char *n = *(const char *const *)(const void *)((const char *)&table[i] + offset);
		if (n && !strcmp(n, name))
			return &table[i];
	}
	return NULL;
}

const struct lb_param *lb_param_by_cli(const char *opt)
{
	return find(offsetof(struct lb_param, cli), opt);
}

const struct lb_param *lb_param_by_run_key(const char *key)
{
	return find(offsetof(struct lb_param, run_key), key);
}

const struct lb_param *lb_param_by_vary(const char *name)
{
	return find(offsetof(struct lb_param, vary), name);
}

const struct lb_param *lb_param_by_column(const char *column)
{
	return find(offsetof(struct lb_param, column), column);
}

void lb_run_cfg_defaults(struct lb_run_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->scenario_name, "none");
	for (size_t i = 0; i < LB_P_COUNT; i++)
		lb_param_set(&table[i], cfg, &table[i].dflt);
	cfg->status_line = true;
}

/* @w joined: "a, b or c" (@sep ", ", @last " or "), "a|b|c". */
static void words_text(const char *const *w, const char *sep, const char *last, char *buf,
		       size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; w[i] && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 0 ? "" : w[i + 1] ? sep : last,
				      w[i]);
}

void lb_param_expected(const struct lb_param *p, char *buf, size_t len)
{
	long long lo = (long long)p->min, hi = (long long)p->max;

	switch (p->type) {
	case LB_PT_INT:
		snprintf(buf, len, "%s from %lld to %lld",
			 !strcmp(p->unit, "s") ? "seconds" : "an integer", lo, hi);
		break;
	case LB_PT_MS:
		snprintf(buf, len, "milliseconds from %lld to %lld", lo, hi);
		break;
	case LB_PT_U64:
		snprintf(buf, len, "a non-negative integer");
		break;
	case LB_PT_SECONDS:
		snprintf(buf, len, "seconds, more than %lld and at most %lld", lo, hi);
		break;
	case LB_PT_MS_RANGE:
		snprintf(buf, len, "MS or MIN-MAX with %lld <= MIN <= MAX <= %lld", lo, hi);
		break;
	case LB_PT_WAIT:
		lb_wait_expected(buf, len);
		break;
	case LB_PT_WORDS:
		words_text(p->words, ", ", " or ", buf, len);
		break;
	case LB_PT_FLAG:
		snprintf(buf, len, "yes or no");
		break;
	}
}

static bool get_range(const struct lb_param *p, const char *text, int64_t *lo, int64_t *hi)
{
	char buf[64];
	char *dash;

	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	if (!(dash = strchr(buf, '-')))
		return lb_parse_i64(buf, p->min, p->max, lo) && (*hi = *lo, true);
	*dash = '\0';
	return lb_parse_i64(buf, p->min, p->max, lo) && lb_parse_i64(dash + 1, p->min, p->max, hi) &&
	       *lo <= *hi;
}

static bool get_word(const char *const *w, const char *text, int64_t *out)
{
	for (int64_t i = 0; w[i]; i++)
		if (!strcmp(w[i], text))
			return (*out = i, true);
	return false;
}

static bool get_bool(const char *text, int64_t *out)
{
	if (!strcmp(text, "yes") || !strcmp(text, "true") || !strcmp(text, "1"))
		return (*out = 1);
	if (!strcmp(text, "no") || !strcmp(text, "false") || !strcmp(text, "0"))
		return !(*out = 0);
	return false;
}

/* @text as a value of @p; false when it is not one. */
static bool parse(const struct lb_param *p, const char *text, struct lb_param_value *v)
{
	char err[256];
	int64_t x;

	memset(v, 0, sizeof(*v));
	switch (p->type) {
	case LB_PT_INT:
	case LB_PT_MS:
		return lb_parse_i64(text, p->min, p->max, &v->i);
	case LB_PT_U64:
		return lb_parse_i64(text, p->min, p->max, &x) && (v->u = (uint64_t)x, true);
	case LB_PT_SECONDS:
		/* a finite number: inf, nan and 1e300 are refused, not cast */
		return lb_parse_double(text, &v->s) && v->s > (double)p->min &&
		       v->s <= (double)p->max;
	case LB_PT_MS_RANGE:
		return get_range(p, text, &v->lo, &v->hi);
	case LB_PT_WAIT:
		return lb_wait_parse(text, &v->wait, err, sizeof(err)) == 0;
	case LB_PT_WORDS:
		return get_word(p->words, text, &v->i);
	case LB_PT_FLAG:
		return get_bool(text, &v->i);
	}
	return false;
}

static int refuse(const struct lb_param *p, char *why, size_t len)
{
	char what[256];

	lb_param_expected(p, what, sizeof(what));
	snprintf(why, len, "expected %s", what);
	return LB_EINVAL;
}

int lb_param_from_cli(const struct lb_param *p, const char *text, struct lb_param_value *v,
		      char *why, size_t len)
{
	if (p->type == LB_PT_FLAG && !text) {
		memset(v, 0, sizeof(*v));
		v->i = 1;
		return 0;
	}
	return text && p->type != LB_PT_FLAG && parse(p, text, v) ? 0 : refuse(p, why, len);
}

int lb_param_from_run(const struct lb_param *p, const char *text, struct lb_param_value *v,
		      char *why, size_t len)
{
	if (!parse(p, text, v))
		return refuse(p, why, len);
	if (p->type == LB_PT_FLAG && p->run_negated)
		v->i = !v->i;
	return 0;
}

int lb_param_from_int(const struct lb_param *p, int64_t x, struct lb_param_value *v)
{
	memset(v, 0, sizeof(*v));
	if ((p->type != LB_PT_INT && p->type != LB_PT_MS && p->type != LB_PT_MS_RANGE) ||
	    x < p->min || x > p->max)
		return LB_EINVAL;
	v->i = v->lo = v->hi = x;
	return 0;
}

static void *field(struct lb_run_cfg *cfg, const struct lb_param *p)
{
	return (char *)cfg + p->offset;
}

static const void *cfield(const struct lb_run_cfg *cfg, const struct lb_param *p)
{
	return (const char *)cfg + p->offset;
}

void lb_param_set(const struct lb_param *p, struct lb_run_cfg *cfg, const struct lb_param_value *v)
{
	if (p->set) {
		p->set(cfg, v);
		return;
	}
	switch (p->type) {
	case LB_PT_INT:
		*(int *)field(cfg, p) = (int)v->i;
		break;
	case LB_PT_MS:
		*(int64_t *)field(cfg, p) = v->i;
		break;
	case LB_PT_U64:
		*(uint64_t *)field(cfg, p) = v->u;
		break;
	case LB_PT_SECONDS:
		*(double *)field(cfg, p) = v->s;
		break;
	case LB_PT_WAIT:
		*(struct lb_wait *)field(cfg, p) = v->wait;
		break;
	case LB_PT_FLAG:
		*(bool *)field(cfg, p) = v->i != 0;
		break;
	case LB_PT_MS_RANGE:
	case LB_PT_WORDS:
		break; /* set and get (test_params checks that such rows have them) */
	}
}

void lb_param_get(const struct lb_param *p, const struct lb_run_cfg *cfg, struct lb_param_value *v)
{
	memset(v, 0, sizeof(*v));
	if (p->get) {
		p->get(cfg, v);
		return;
	}
	switch (p->type) {
	case LB_PT_INT:
		v->i = *(const int *)cfield(cfg, p);
		break;
	case LB_PT_MS:
		v->i = *(const int64_t *)cfield(cfg, p);
		break;
	case LB_PT_U64:
		v->u = *(const uint64_t *)cfield(cfg, p);
		break;
	case LB_PT_SECONDS:
		v->s = *(const double *)cfield(cfg, p);
		break;
	case LB_PT_WAIT:
		v->wait = *(const struct lb_wait *)cfield(cfg, p);
		break;
	case LB_PT_FLAG:
		v->i = *(const bool *)cfield(cfg, p);
		break;
	case LB_PT_MS_RANGE:
	case LB_PT_WORDS:
		break;
	}
}

void lb_param_copy(const struct lb_param *p, struct lb_run_cfg *to, const struct lb_run_cfg *from)
{
	struct lb_param_value v;

	lb_param_get(p, from, &v);
	lb_param_set(p, to, &v);
}

bool lb_param_equal(const struct lb_param *p, const struct lb_param_value *a,
		    const struct lb_param_value *b)
{
	switch (p->type) {
	case LB_PT_U64:
		return a->u == b->u;
	case LB_PT_SECONDS:
		return a->s == b->s;
	case LB_PT_MS_RANGE:
		return a->lo == b->lo && a->hi == b->hi;
	case LB_PT_WAIT:
		return a->wait.kind == b->wait.kind && a->wait.interval_ms == b->wait.interval_ms &&
		       a->wait.max_tries == b->wait.max_tries && a->wait.min_ms == b->wait.min_ms &&
		       a->wait.max_ms == b->wait.max_ms;
	case LB_PT_INT:
	case LB_PT_MS:
	case LB_PT_WORDS:
		return a->i == b->i;
	case LB_PT_FLAG:
		return !a->i == !b->i;
	}
	return false;
}

void lb_param_format(const struct lb_param *p, const struct lb_param_value *v, char *buf,
		     size_t len)
{
	switch (p->type) {
	case LB_PT_INT:
	case LB_PT_MS:
		snprintf(buf, len, "%lld", (long long)v->i);
		break;
	case LB_PT_U64:
		snprintf(buf, len, "%llu", (unsigned long long)v->u);
		break;
	case LB_PT_SECONDS:
		snprintf(buf, len, "%g", v->s);
		break;
	case LB_PT_MS_RANGE:
		if (v->lo == v->hi)
			snprintf(buf, len, "%lld", (long long)v->lo);
		else
			snprintf(buf, len, "%lld-%lld", (long long)v->lo, (long long)v->hi);
		break;
	case LB_PT_WAIT:
		lb_wait_format(&v->wait, buf, len);
		break;
	case LB_PT_WORDS: {
		int64_t n = 0;
		while (p->words[n])
			n++;
		snprintf(buf, len, "%s", v->i >= 0 && v->i < n ? p->words[v->i] : "?");
		break;
	}
	case LB_PT_FLAG:
		snprintf(buf, len, "%s", v->i ? "yes" : "no");
		break;
	}
}

void lb_param_column_text(const struct lb_param *p, const struct lb_run_cfg *cfg, char *buf,
			  size_t len)
{
	struct lb_param_value v;

	memset(&v, 0, sizeof(v));
	if (p->column_value)
		p->column_value(cfg, &v);
	else
		lb_param_get(p, cfg, &v);
	lb_param_format(p, &v, buf, len);
}

void lb_param_variant_text(const struct lb_run_cfg *cfg, char *buf, size_t len)
{
	struct lb_param_value v;
	char text[64];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < LB_P_COUNT && o < len; i++) {
		const struct lb_param *p = &table[i];
		if (!p->variant)
			continue;
		lb_param_get(p, cfg, &v);
		if (lb_param_equal(p, &v, &p->dflt))
			continue;
		lb_param_format(p, &v, text, sizeof(text));
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", o ? ";" : "", p->name,
				      p->type == LB_PT_FLAG ? "" : "=", p->type == LB_PT_FLAG ? "" : text);
	}
}

/* @help, its lines after the first indented to the text column, "{default}"
 * written as the default. */
static void print_help(FILE *f, const struct lb_param *p)
{
	static const char mark[] = "{default}";
	char dflt[64];

	lb_param_format(p, &p->dflt, dflt, sizeof(dflt));
	for (const char *s = p->help; *s; s++) {
		if (*s == '\n') {
			fprintf(f, "\n%25s", "");
		} else if (!strncmp(s, mark, sizeof(mark) - 1)) {
			fputs(dflt, f);
			s += sizeof(mark) - 2;
		} else {
			fputc(*s, f);
		}
	}
	fputc('\n', f);
}

void lb_params_usage(FILE *f, enum lb_param_id from, enum lb_param_id to)
{
	char opt[96], words[64];

	for (size_t i = from; i < to && i < LB_P_COUNT; i++) {
		const struct lb_param *p = &table[i];
		const char *metavar = p->metavar;
		if (!p->cli)
			continue;
		if (p->words) {
			words_text(p->words, "|", "|", words, sizeof(words));
			metavar = words;
		}
		snprintf(opt, sizeof(opt), "--%s%s%s", p->cli, metavar ? " " : "", metavar ? metavar : "");
		if (strlen(opt) < 23)
			fprintf(f, "  %-23s", opt);
		else
			fprintf(f, "  %s  ", opt);
		print_help(f, p);
	}
}

const char *lb_hook_command(const struct lb_run_cfg *cfg, const char *name, int node)
{
	char one[48];

	snprintf(one, sizeof(one), "%s:%d", name, node);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < cfg->n_hooks; i++)
			if (!strcmp(cfg->hooks[i].name, pass ? name : one))
				return cfg->hooks[i].command;
	return NULL;
}
