/*
 * adapter.h - external strategies: real lock libraries (or any program)
 * behind a small line protocol on a pipe (docs/adapters.md), one adapter
 * process per client (or one session each in shared adapter hosts). Inside lockbench an adapter is one more ops table
 * (adapter.c): create spawns it, acquire/release/extend exchange lines, held
 * reads its "lost" notices, destroy shuts it down and reaps it.
 *
 * The library adapters are found in strategies/adapters/ (installed:
 * PREFIX/share/lockbench/adapters/), one manifest NAME.adapter each:
 *   name = redis-py@4.3.4          what --strategy takes
 *   library, package, language, version, summary, source
 *   sends = ...                    the Redis commands it sends, with where in
 *                                  its source (lockbench list shows them)
 *   interpreter = /usr/bin/python3 (optional) and program = FILE (beside it)
 *   args = WORD...                 (optional) arguments of the program
 *   claims = MDO, nodes = 1
 *   outside_key = mutex:KEY        (optional) a key it writes outside the one
 *                                  lockbench gives it: never run on --redis
 *   requires = a command that exits 0 when the library is there (optional)
 *   topology = etcd | zookeeper    (optional) a consensus lock: its nodes are
 *                                  that system's members, not Redis servers
 *   kind = null                    (optional) a null adapter: no lock, it grants
 *                                  every acquire and sends nothing (the protocol's
 *                                  own cost); found by name, kept out of the
 *                                  libraries (matrix, chaos, bench's library rows)
 *   built = NAME                   instead of program: a program make builds,
 *                                  build/NAME beside lockbench, installed as
 *                                  PREFIX/lib/lockbench/NAME
 *   env = python-venv              (optional) how the library is found in an
 *                                  environment of its language: other versions
 *                                  (NAME@VERSION, from lockbench's cache) and
 *                                  --library-env DIR run the same program with
 *                                  that environment's interpreter (hooks[] in
 *                                  adapter_registry.c: one per language)
 *   dist = redis                   (with env) the package's name in its
 *                                  ecosystem's registry (PyPI's project)
 *   tls = ca,cert,insecure         (optional) on rediss:// (or etcd's https://) nodes, the TLS options
 *                                  of config (tls_ca=, tls_cert= and tls_key=,
 *                                  tls_insecure=1) its adapter hands its library;
 *                                  none: TLS, the system's CAs only; no (the
 *                                  default): rediss:// is refused for it
 */
#ifndef LB_ADAPTER_H
#define LB_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

#include "adapter_proto.h"
#include "strategy.h"

#define LB_ADAPTER_MAX_ARGS 16
/* How long an adapter has to answer 'quit' with 'bye', and then to exit:
 * 5 s, as an interpreter's teardown took more than 2 s on a loaded
 * two-core machine (tooz's Python under make check's load), where a hung
 * adapter takes for ever. */
#define LB_ADAPTER_QUIT_MS 5000

struct lb_adapter_def {
	char name[200];            /* what --strategy takes; "exec:PATH" for a program */
	char library[64], package[96], language[48], version[32];
	char summary[160];
	char sends[1024];
	char source[200];
	char manifest[512];          /* where it was read from, or "" for exec: */
	char requires[512];          /* shell command: exits 0 when usable; "" none */
	char outside_key[96];        /* a key it writes beyond its own; "" none */
	char defaults[200];          /* what `--adapter-arg defaults` keeps of the library's
				        own settings, or "" when it takes no such argument */
	char topology[16];           /* "etcd" or "zookeeper": the consensus system its lock
				        lives on (it runs only there); "" a Redis lock */
	char kind[16];               /* "null": a null adapter (no lock); "" a library */
	char built[64];              /* a program make builds (lb_find_installed, "lib"),
				        or "" (program lies beside the manifest) */
	char hosts[4];               /* "no": it cannot serve as an adapter host; "" or "yes" */
	char env[16];                /* its language's environment hook ("python-venv"), or "" */
	char dist[96];               /* the package in its ecosystem's registry, or "" */
	char tls[32];                /* the TLS options its adapter hands its library on
				        rediss:// (tls = ca,cert,insecure, some of them, or
				        "none": TLS with the system's CAs only; sentinel:
				        to its Sentinel client too, on --sentinel rediss://);
				        "" or "no": it does not speak TLS (rediss:// refused) */
	char env_dir[512];           /* the environment it runs in: --library-env's DIR or
				        the cache's; "" the manifest's own interpreter */
	char ran_version[32];        /* the version the library said it is (its hello's
				        version=, else its --check's), "" not asked yet */
	const char *argv[LB_ADAPTER_MAX_ARGS + 1]; /* program and its arguments */
	char argbuf[2048];           /* storage for argv */
	unsigned claims;
	unsigned min_nodes;
	bool exec;                   /* exec:PATH, not a manifest */
	int usable;                  /* its --check: 0 not run yet, 1 passed, -1 failed */
	int greeted;                 /* lb_adapter_greet: 0 not asked, 1 answered, -1 failed */
	bool claims_declared;        /* its hello gave claims= */
	char failpoint[8][32];       /* its hello's failpoints= (version 3) */
	const char *failpoint_list[9]; /* the same, NULL-ended, for lock_strategy.failpoints */
	char unusable[400];          /* why, when it failed */
};

struct lb_proto_msg;
/* Start @d's program, ask its hello and let it go: what it says of itself
 * (version 3: its claims and failpoints) in @hello. 0, or a status with a
 * message naming the adapter. */
int lb_adapter_hello(const struct lb_adapter_def *d, struct lb_proto_msg *hello);
/* What an external strategy says of itself in its hello, asked once per
 * process (a program is started for it): its failpoints go into
 * s->failpoints, and its claims into s->claims when it has none of its own
 * (an exec: program; a manifest's claims stand). 0, or a status (said). */
int lb_adapter_greet(const struct lock_strategy *s);
/* Its claims as its hello gave them: false when it gave none (version < 3,
 * or no claims= field) or was not asked. */
bool lb_adapter_claims_declared(const struct lock_strategy *s);

/* The library adapters found (loaded once); the null adapters (kind = null)
 * are not among them. */
size_t lb_adapter_count(void);
const struct lock_strategy *lb_adapter_at(size_t i);
/* The null adapters found (kind = null), by name. */
size_t lb_null_adapter_count(void);
const struct lock_strategy *lb_null_adapter_at(size_t i);
/* A library or null adapter by name, or NULL. A NAME@VERSION that no
 * manifest has, of a manifest with env = (NAME@OTHER), is that version as
 * `lockbench install` left it in the cache; with a library environment set
 * (lb_adapter_set_library_env) such a manifest, or its bare NAME, runs the
 * library installed there. NULL with no message when nothing fits. */
const struct lock_strategy *lb_adapter_find(const char *name);
/* --library-env DIR: from now on a library with an env hook is the one
 * installed in @dir (borrowed: a user's virtualenv). NULL: none. */
void lb_adapter_set_library_env(const char *dir);
/* Does @base name the strategies of a manifest (NAME in NAME@VERSION, with
 * an env hook), as a scenario's [expect] line may? */
bool lb_adapter_base_known(const char *base);
/* Where lockbench keeps the library versions it installs: $LOCKBENCH_CACHE,
 * else $XDG_CACHE_HOME/lockbench, else $HOME/.cache/lockbench. false when
 * none is set. */
bool lb_adapter_cache_dir(char *out, size_t len);
/* The cache's directory of @d's package at @version into @out (its env
 * hook's language, then DIST@VERSION): false when @d has no env hook or no
 * cache is known. */
bool lb_adapter_cache_of(const struct lb_adapter_def *d, const char *version, char *out,
			 size_t len);
/* The manifest whose strategies NAME@VERSION may be made of (its env hook
 * set, its name's part before the @ @base), or NULL. */
const struct lb_adapter_def *lb_adapter_template(const char *base);
/* The version the library says it is (its hello's version=, asked once per
 * process, else its --check's), or NULL when it said none. */
const char *lb_adapter_ran_version(const struct lock_strategy *s);
/* Is @s a null adapter (kind = null)? */
bool lb_adapter_is_null(const struct lock_strategy *s);
/* "exec:PATH": an external strategy of the program at PATH (made once per
 * PATH). NULL with a message when PATH is not an executable file. */
const struct lock_strategy *lb_adapter_exec(const char *spec);
/* Arguments every adapter started from now on gets after its own
 * (--adapter-arg); @args is borrowed. */
void lb_adapter_set_exec_args(const char *const *args, int n);
/* The definition of an external strategy; NULL for any other (its impl is NULL). */
const struct lb_adapter_def *lb_adapter_def_of(const struct lock_strategy *s);
/* Can it run here? false with the reason (its --check failed). The check runs
 * once per process: a matrix asks for every cell. */
bool lb_adapter_usable(const struct lock_strategy *s, char *why, size_t len);

/*
 * Adapter hosts (--adapter-hosts N, docs/adapters.md): N processes of the
 * run's adapter, each serving many clients' sessions, one Unix socket
 * connection each, in the same protocol. The harness starts them
 * (harness/run/run_hosts.c); a client then opens a session in host client % N
 * instead of starting a process of its own.
 */
#define LB_ADAPTER_HOST_ENV "LOCKBENCH_ADAPTER_HOST" /* the socket a host listens on */
/* From now on (and in every process forked after), clients open sessions in
 * the @n hosts listening in @dir (borrowed), each serving at most @sessions
 * (their hello and config wait longer for it); @n 0: a process each again. */
void lb_adapter_use_hosts(const char *dir, int n, int sessions);
/* Host @host's socket in @dir into @buf: 0, or LB_EINVAL when it does not
 * fit (a Unix socket's path is at most 107 bytes). */
int lb_adapter_host_path(const char *dir, int host, char *buf, size_t len);
/* In a forked child whose stdio and process group are set: exec @d's program
 * as a host listening on @socket_path. Never returns. */
void lb_adapter_exec_host(const struct lb_adapter_def *d, const char *socket_path)
	__attribute__((noreturn));

/* CPU time (user + system) the adapter process of @state (an external
 * strategy's lock, from create) has used so far, ns; -1 when it has gone. */
int64_t lb_adapter_cpu_ns(const void *state);

/*
 * adapter-test (harness/cli/cmd_adapter_test.c): the lines as they pass, and the
 * requests one by one. @fn sees every line sent (@sent) and every line read
 * (answers, notices, 'at'), with the session's state and when (lb_now_ns);
 * NULL: none. In this process only.
 */
typedef void (*lb_adapter_tracer)(void *arg, const void *state, bool sent, const char *line,
				  int64_t t_ns);
void lb_adapter_trace(lb_adapter_tracer fn, void *arg);
/* From now on, every adapter process started leads a process group of its
 * own (not its client's), killed whole when it is let go: for a command
 * whose own process is the client (adapter-test), so that a pause stops
 * the adapter alone and nothing it started outlives it. */
void lb_adapter_own_groups(bool on);
/* The adapter process of @state (from create), or 0 (gone; a host's session). */
pid_t lb_adapter_pid(const void *state);
/* The deadline of one request of @state's, ms (docs/adapters.md). */
int64_t lb_adapter_limit_ms(const void *state);
/* Send @req, which asks @asked, and read its answer into @m, exactly as a run
 * does (its deadline, notices taken on the way): 0, or the status of a
 * protocol error (said). Whatever the hello said: an 'extend' is sent to an
 * adapter whose hello says extend=no. */
int lb_adapter_ask(void *state, const char *req, enum lb_proto_req asked, struct lb_proto_msg *m);
/* Send quit, read its answer (@m: bye), and wait (2 s at most) for the
 * process to exit: @exit_ms how long it took after the answer (-1: it did
 * not; destroy then kills it), @status waitpid's. 0, or the request's status. */
int lb_adapter_quit(void *state, struct lb_proto_msg *m, int64_t *exit_ms, int *status);

/* For adapter_registry.c: the ops every external strategy shares. */
extern const struct lock_strategy lb_adapter_ops;
/* A manifest's text (@path names it in messages, @dir is where its program
 * lies) into @d: 0, or LB_EINVAL with a message naming the file, the line
 * and the field. Pure: reads nothing but @text. */
int lb_adapter_manifest_parse(const char *text, const char *path, const char *dir,
			      struct lb_adapter_def *d);

/* The most bytes a file an adapter writes may hold: its log (stderr,
 * adapter-N.log) first. docs/running.md, Limits. */
#define LB_ADAPTER_LOG_MAX (64L << 20)

#endif
