/*
 * run_preflight.c - what a run checks before it starts anything, and of the
 * servers before the clients: what this machine lacks is a skip, what the
 * user asked that cannot be is an error, each said with what to do.
 */
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/resource.h>

#include "adapter.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"

/* libfakeclock.so where make or make install puts it (beside the binary, or
 * ../lib/lockbench/), or $LOCKBENCH_CLOCK_SHIM. false when there is none. */
static bool find_shim(struct run_ctx *r)
{
	const char *env = getenv("LOCKBENCH_CLOCK_SHIM");

	if (env && *env)
		snprintf(r->shim, sizeof(r->shim), "%s", env);
	else if (!lb_find_installed("libfakeclock.so", "lib", r->shim, sizeof(r->shim)))
		return false;
	return access(r->shim, R_OK) == 0;
}

/* Processes this user runs now (RLIMIT_NPROC counts every one of them). */
static size_t user_processes(void)
{
	DIR *d = opendir("/proc");
	struct stat st;
	size_t n = 0;
	char path[300];

	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9') {
			snprintf(path, sizeof(path), "/proc/%.200s", e->d_name);
			n += stat(path, &st) == 0 && st.st_uid == geteuid();
		}
	if (d)
		closedir(d);
	return n;
}

/*
 * The descriptors a run needs, against RLIMIT_NOFILE, raised to the hard
 * limit first (servers inherit it). The relay holds a listener per link and
 * two descriptors per connection through it, about one connection per link;
 * a server holds one connection per client. Refused with the limit named
 * rather than run into EMFILE, which would quietly starve the relay.
 */
static int fd_budget(const struct lb_run_cfg *cfg, size_t n_lock, bool relay)
{
	struct rlimit rl;
	size_t links = relay ? (size_t)cfg->clients * (n_lock + 1) + 1 : 0;
	if (cfg->sentinel || cfg->cluster) /* every part's listeners; a client's lookups and
					      its primary; the cluster bus */
		links += 2 * LB_TOPO_PARTS + 2 * (size_t)cfg->clients + 64;
	size_t need = lb_relay_fds_needed(links, links) + 64;

	if ((size_t)cfg->clients + 96 > need)
		need = (size_t)cfg->clients + 96;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
		lb_errorf("%d clients need about %zu open files (%s), but RLIMIT_NOFILE allows %llu "
			  "even raised to its hard limit: raise it (ulimit -Hn, then ulimit -n) or run "
			  "fewer clients", cfg->clients, need, relay ? "the relay holds a listener and a "
			  "connection's two ends per client and server" : "a connection per client on "
			  "each server", (unsigned long long)rl.rlim_cur);
		return LB_EINVAL;
	}
	/* processes: every client (and its adapter), the servers, the relay, on
	 * top of what this user already runs (RLIMIT_NPROC counts them all) */
	size_t procs = (size_t)cfg->clients * (lb_strategy_is_external(cfg->strategy) &&
					       !run_hosts_wanted(cfg) ? 2 : 1) +
		       (size_t)run_hosts_wanted(cfg) + 32;
	if (getrlimit(RLIMIT_NPROC, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
		getrlimit(RLIMIT_NPROC, &rl);
	}
	size_t mine = user_processes();
	if (rl.rlim_cur != RLIM_INFINITY && geteuid() != 0 && procs + mine > rl.rlim_cur) {
		lb_errorf("%d clients need about %zu processes, and this user runs %zu already, but "
			  "RLIMIT_NPROC allows %llu: raise it (ulimit -u) or run fewer clients",
			  cfg->clients, procs, mine, (unsigned long long)rl.rlim_cur);
		return LB_EINVAL;
	}
	return 0;
}

bool run_scenario_has(const struct lb_scenario *sc, enum lb_action a)
{
	for (int i = 0; sc && i < sc->n_faults; i++)
		if (sc->faults[i].action == a)
			return true;
	return false;
}

/* The relay carries a scenario's network faults; for library code it also
 * carries partitions (client.c cuts the partitioned client's links), which
 * lockbench's own recipes are told of directly. */
bool run_needs_relay(const struct lb_run_cfg *cfg)
{
	return cfg->sentinel || cfg->cluster || cfg->count_commands ||
	       (cfg->scenario && (lb_scenario_needs_relay(cfg->scenario) ||
				 (lb_strategy_is_external(cfg->strategy) &&
				  run_scenario_has(cfg->scenario, LB_ACT_PARTITION))));
}

static int preflight_shim(struct run_ctx *r, bool theirs);

/* Before anything starts: what the run cannot do here is a skip (1, the
 * reason in res->skipped, reported by the caller), what is wrong an error. */
int run_preflight(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int rc = lb_faults_check(cfg, !theirs, false, res->skipped, sizeof(res->skipped));

	if (rc == LB_ENOTSUP)
		return 1;
	if (rc < 0) {
		lb_errorf("%s", res->skipped);
		res->skipped[0] = '\0';
		return rc;
	}
	const struct lb_adapter_def *def =
		lb_strategy_is_external(cfg->strategy) ? lb_adapter_def_of(cfg->strategy) : NULL;
	if (theirs && !cfg->own_urls && def && def->outside_key[0]) {
		snprintf(res->skipped, sizeof(res->skipped), "%s writes %s, outside the key "
			 "lockbench gives it (the run's prefix): lockbench runs it only on servers "
			 "it starts itself, never on yours", cfg->strategy->name, def->outside_key);
		return 1;
	}
	if (def && !lb_adapter_usable(cfg->strategy, res->skipped, sizeof(res->skipped)))
		return 1;
	/* a library of many versions says which one it is in its hello (meta.txt,
	 * summary.json's library_version, the report) */
	if (def && def->env[0] && (rc = lb_adapter_greet(cfg->strategy)) < 0)
		return rc;
	if ((rc = fd_budget(cfg, r->n_lock, run_needs_relay(cfg))) < 0 ||
	    (rc = run_hosts_check(cfg)) < 0) /* after fd_budget: it raises the open-files limit */
		return rc;
	return preflight_shim(r, theirs);
}

/* The clock shim: a scenario that moves a server's clock needs it; a
 * library's client clock fault and its connections on lockbench's Sentinels
 * use it where it is found. */
static int preflight_shim(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	bool external = lb_strategy_is_external(cfg->strategy);

	if (!theirs && cfg->scenario && lb_scenario_needs_clock_shim(cfg->scenario) &&
	    !find_shim(r)) {
		snprintf(res->skipped, sizeof(res->skipped), "%.64s moves a server's clock and needs "
			 "libfakeclock.so, not found (%.200s); `make` builds it, or set "
			 "LOCKBENCH_CLOCK_SHIM", cfg->scenario->name, r->shim[0] ? r->shim : "beside "
			 "the binary or in ../lib/lockbench");
		return 1;
	}
	if (external && run_scenario_has(cfg->scenario, LB_ACT_CLOCK) && !find_shim(r)) {
		/* the client clock fault would not reach the library: a run without
		 * it would show nothing about the fault, and pass for "safe" */
		snprintf(res->skipped, sizeof(res->skipped), "%.64s moves a client's clock; a "
			 "library reads its own clock, which only libfakeclock.so can move, not "
			 "found (%.200s); `make` builds it, or set LOCKBENCH_CLOCK_SHIM",
			 cfg->scenario->name, r->shim[0] ? r->shim : "beside the binary or in "
			 "../lib/lockbench");
		return 1;
	}
	/* on lockbench's Sentinels, the relay tells a library's connections apart
	 * by the address the shim makes them come from */
	if (external && cfg->sentinel && !find_shim(r)) {
		r->shim[0] = '\0';
		if (run_scenario_has(cfg->scenario, LB_ACT_NET_PARTITION)) {
			snprintf(res->skipped, sizeof(res->skipped), "%.64s puts clients on the sides "
				 "of a partition: a library's connections need libfakeclock.so to "
				 "come from the client's own address, not found; `make` builds it, "
				 "or set LOCKBENCH_CLOCK_SHIM", cfg->scenario->name);
			return 1;
		}
	}
	return 0;
}

/* wait-replicas on servers we did not start: node 0 must have a replica. */
int run_check_replica(struct run_ctx *r)
{
	redisReply *rep = lb_node_cmd(&r->lock[0], "INFO replication");
	const char *p = rep && rep->type == REDIS_REPLY_STRING ?
			strstr(rep->str, "connected_slaves:") : NULL;
	int n = p ? atoi(p + 17) : 0;

	if (rep)
		freeReplyObject(rep);
	lb_node_close(&r->lock[0]);
	if (n < 1)
		lb_errorf("%s needs a replica of redis://%s:%d, which reports none",
			  r->cfg->strategy->name, r->lock[0].host, r->lock[0].port);
	return n < 1 ? LB_EINVAL : 0;
}

/* Each client holds a connection to every server, the relay one more: a
 * server whose maxclients is lower (Redis lowers it to fit its open-files
 * limit) would refuse some of them, which would look like a fault. */
int run_check_maxclients(struct lb_node *n, int clients)
{
	redisReply *rep = lb_node_cmd(n, "CONFIG GET maxclients");
	long long max = -1;
	int rc = 0;

	if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	    rep->element[1]->type == REDIS_REPLY_STRING)
		max = atoll(rep->element[1]->str);
	if (max >= 0 && max < clients + 32) {
		lb_errorf("redis://%s:%d accepts %lld clients (maxclients), and %d clients need %d "
			  "connections: raise maxclients (and the server's open-files limit) or run fewer "
			  "clients", n->host, n->port, max, clients, clients + 32);
		rc = LB_EINVAL;
	}
	if (rep)
		freeReplyObject(rep);
	lb_node_close(n);
	return rc;
}

/* PING every node; name the one that does not answer. */
int run_check_primary(struct lb_node *n)
{
	redisReply *rep = lb_node_cmd(n, "ROLE");
	const char *role = rep && rep->type == REDIS_REPLY_ARRAY && rep->elements > 0 &&
			   rep->element[0]->type == REDIS_REPLY_STRING ? rep->element[0]->str : NULL;
	char where[1200];
	struct lb_node shown = *n;

	if (shown.pass[0])
		snprintf(shown.pass, sizeof(shown.pass), "*");
	lb_node_url(&shown, where, sizeof(where));
	bool ok = role && !strcmp(role, "master");
	if (!ok && role && !strcmp(role, "slave") && rep->elements > 2 &&
	    rep->element[1]->type == REDIS_REPLY_STRING && rep->element[2]->type == REDIS_REPLY_INTEGER)
		lb_errorf("cannot use %s: it is a replica (of %.64s:%lld), and a lock lives on a "
			  "primary: give the primary's address", where, rep->element[1]->str,
			  rep->element[2]->integer);
	else if (!ok && role && !strcmp(role, "sentinel"))
		lb_errorf("cannot use %s: it is a Sentinel: give it with --sentinel URL "
			  "--sentinel-master NAME", where);
	else if (!ok)
		lb_errorf("cannot use %s: ROLE: %.100s", where, rep && rep->type == REDIS_REPLY_ERROR ?
			  rep->str : role ? role : "no answer");
	if (rep)
		freeReplyObject(rep);
	lb_node_close(n);
	return ok ? 0 : LB_EREDIS;
}

int run_check_reachable(struct lb_node *n)
{
	redisReply *rep = lb_node_cmd(n, "PING");
	bool ok = rep && rep->type == REDIS_REPLY_STATUS;
	char where[1200];

	if (n->n_sentinels > 0) {
		snprintf(where, sizeof(where), "the primary '%s' through the Sentinels", n->master);
	} else if (n->n_seeds > 0 && !n->ctx && n->port == 0) { /* none found: no address */
		snprintf(where, sizeof(where), "the primary of slot %d through the seeds", n->slot);
	} else {
		struct lb_node shown = *n; /* its address, never its password */
		shown.pass[0] = shown.pass[0] ? '*' : '\0';
		shown.pass[shown.pass[0] ? 1 : 0] = '\0';
		lb_node_url(&shown, where, sizeof(where));
	}
	if (!ok && rep && rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOAUTH", 6))
		lb_errorf("cannot use %s: it needs a password (NOAUTH): give it in the URL, "
			  "redis://[user]:password@host:port", where);
	else if (!ok)
		lb_errorf("cannot use %s: %s", where, rep && rep->type == REDIS_REPLY_ERROR ?
			  rep->str : n->why[0] ? n->why : "no answer");
	if (rep)
		freeReplyObject(rep);
	lb_node_close(n);
	return ok ? 0 : LB_EREDIS;
}
