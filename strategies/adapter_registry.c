/*
 * adapter_registry.c - which external strategies there are: the library
 * adapters' manifests (strategies/adapters/NAME.adapter, adapter.h says
 * their keys), exec:PATH programs, and whether each can run here (its
 * --check, with a deadline). The processes themselves are adapter.c's.
 */
#include "adapter.h"
#include "adapter_proto.h"
#include "strategy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_LIMIT_MS 10000 /* an adapter's --check: a library loading */
#define MAX_ADAPTERS 64 /* the libraries of every language, and the null adapters */
#define MAX_EXEC 8
#define MAX_VARIANTS 16 /* NAME@VERSION and --library-env strategies made in one process */
#define MANIFEST_LINE_MAX 198 /* inih splits longer lines: refused instead */

struct loaded {
	struct lb_adapter_def def;
	struct lock_strategy s;
};

static struct loaded adapters[MAX_ADAPTERS]; /* the libraries, then the null adapters */
static size_t n_adapters, n_libraries;
static bool loaded;
static struct loaded execs[MAX_EXEC];
static size_t n_execs;
static struct loaded variants[MAX_VARIANTS];
static size_t n_variants;
static const char *library_env; /* --library-env DIR, or NULL */

/* A language's environment (a manifest's env = NAME): how a program is run
 * with the library as an environment of that language has it installed. To
 * add a language: a row, and its installer for `lockbench install` (see
 * cmd_install.c). */
static const struct env_hook {
	const char *name;
	const char *interpreter;   /* the environment's interpreter, below its directory */
	const char *what;          /* what such a directory is, for a message */
} hooks[] = {
	{ "python-venv", "bin/python3", "a Python virtualenv" },
};

static const struct env_hook *hook_of(const char *name)
{
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (!strcmp(hooks[i].name, name))
			return &hooks[i];
	return NULL;
}

/* ---- the manifest, a pure parser ---- */

struct manifest {
	struct lb_adapter_def *d;
	const char *path;
	char interpreter[256], program[256], args[256];
	unsigned seen;             /* keys given, by their index in keys[] */
	char err[300];             /* what is wrong, for the line inih names */
	const char *last;          /* the key of the line before (sends goes on) */
};

/* The keys of a manifest and where each goes: a field of the definition
 * (@def) or of the manifest (the program's words). */
static const struct key {
	const char *name;
	bool def;
	size_t off, size;
} keys[] = {
	{ "name", true, offsetof(struct lb_adapter_def, name), sizeof(((struct lb_adapter_def *)0)->name) },
	{ "library", true, offsetof(struct lb_adapter_def, library), sizeof(((struct lb_adapter_def *)0)->library) },
	{ "package", true, offsetof(struct lb_adapter_def, package), sizeof(((struct lb_adapter_def *)0)->package) },
	{ "language", true, offsetof(struct lb_adapter_def, language), sizeof(((struct lb_adapter_def *)0)->language) },
	{ "version", true, offsetof(struct lb_adapter_def, version), sizeof(((struct lb_adapter_def *)0)->version) },
	{ "summary", true, offsetof(struct lb_adapter_def, summary), sizeof(((struct lb_adapter_def *)0)->summary) },
	{ "source", true, offsetof(struct lb_adapter_def, source), sizeof(((struct lb_adapter_def *)0)->source) },
	{ "outside_key", true, offsetof(struct lb_adapter_def, outside_key), sizeof(((struct lb_adapter_def *)0)->outside_key) },
	{ "sends", true, offsetof(struct lb_adapter_def, sends), sizeof(((struct lb_adapter_def *)0)->sends) },
	{ "defaults", true, offsetof(struct lb_adapter_def, defaults), sizeof(((struct lb_adapter_def *)0)->defaults) },
	{ "topology", true, offsetof(struct lb_adapter_def, topology), sizeof(((struct lb_adapter_def *)0)->topology) },
	{ "interpreter", false, offsetof(struct manifest, interpreter), sizeof(((struct manifest *)0)->interpreter) },
	{ "program", false, offsetof(struct manifest, program), sizeof(((struct manifest *)0)->program) },
	{ "args", false, offsetof(struct manifest, args), sizeof(((struct manifest *)0)->args) },
	{ "nodes", false, 0, 0 },
	{ "claims", false, 0, 0 },
	{ "kind", true, offsetof(struct lb_adapter_def, kind), sizeof(((struct lb_adapter_def *)0)->kind) },
	{ "built", true, offsetof(struct lb_adapter_def, built), sizeof(((struct lb_adapter_def *)0)->built) },
	{ "hosts", true, offsetof(struct lb_adapter_def, hosts), sizeof(((struct lb_adapter_def *)0)->hosts) },
	{ "env", true, offsetof(struct lb_adapter_def, env), sizeof(((struct lb_adapter_def *)0)->env) },
	{ "dist", true, offsetof(struct lb_adapter_def, dist), sizeof(((struct lb_adapter_def *)0)->dist) },
	{ "tls", true, offsetof(struct lb_adapter_def, tls), sizeof(((struct lb_adapter_def *)0)->tls) },
};

/* Say what is wrong with key @name; 0 stops inih, which gives the line. */
static int bad_key(struct manifest *m, const char *name, const char *fmt, const char *v)
{
	char shown[64] = "";
	if (v)
		lb_proto_printable(v, shown, sizeof(shown));
	snprintf(m->err, sizeof(m->err), "%.40s: %s%s%s%s", name, fmt, v ? ", got '" : "",
		 v ? shown : "", v ? "'" : "");
	return 0;
}

/* A strategy's name: what --strategy takes, a directory and a chart title
 * are made of it, so only letters, digits and - _ . @ + */
static bool good_name(const char *v)
{
	if (!*v || !strncmp(v, "exec:", 5))
		return false;
	for (const char *p = v; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@+", *p))
			return false;
	return true;
}

/* tls = no | none | a comma-separated list of ca, cert, insecure, sentinel,
 * each once. */
static bool good_tls(const char *v)
{
	static const char *const words[] = { "ca", "cert", "insecure", "sentinel" };
	unsigned seen = 0;

	if (!strcmp(v, "no") || !strcmp(v, "none"))
		return true;
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ","), k = 0;
		while (k < 4 && (strlen(words[k]) != len || strncmp(p, words[k], len)))
			k++;
		if (k == 4 || (seen & (1u << k)))
			return false;
		seen |= 1u << k;
		p += len;
		if (*p == ',' && !*++p)
			return false;
	}
	return *v != '\0';
}

static int on_key(void *user, const char *section, const char *name, const char *v)
{
	struct manifest *m = user;
	size_t k = 0;

	if (section[0])
		return bad_key(m, name, "a manifest has no [sections]", section);
	while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k].name, name))
		k++;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return bad_key(m, name, "not a manifest key (name, library, package, language, version, "
			       "summary, sends, defaults, source, interpreter, program, args, claims, "
			       "nodes, outside_key, topology, kind, built, hosts, env, dist, tls)", NULL);
	bool more = k == 8 && m->last && !strcmp(m->last, "sends"); /* sends goes on over indented lines */
	if ((m->seen & 1u << k) && !more)
		return bad_key(m, name, "given twice (only sends goes on over indented lines)", NULL);
	m->seen |= 1u << k;
	m->last = keys[k].name;
	if (!strcmp(name, "nodes")) {
		int64_t n;
		if (!lb_parse_i64(v, 1, LB_MAX_NODES, &n))
			return bad_key(m, name, "expected the lock nodes it needs, 1 to 9", v);
		m->d->min_nodes = (unsigned)n;
		return 1;
	}
	if (!strcmp(name, "claims")) {
		for (const char *c = v; *c; c++) {
			const char *at = strchr("MDFOL", *c);
			if (!at || !*c)
				return bad_key(m, name, "expected claim letters among M, D, F, O, L", v);
			m->d->claims |= 1u << (at - "MDFOL");
		}
		return 1;
	}
	if (!strcmp(name, "hosts") && strcmp(v, "yes") && strcmp(v, "no"))
		return bad_key(m, name, "expected yes (the default: it serves sessions as an adapter "
			       "host) or no", v);
	char *field = (char *)(keys[k].def ? (void *)m->d : (void *)m) + keys[k].off;
	size_t used = more ? strlen(field) : 0;
	if (used + (used ? 1 : 0) + strlen(v) >= keys[k].size)
		return bad_key(m, name, "too long for lockbench (it keeps fewer characters): shorten it", NULL);
	snprintf(field + used, keys[k].size - used, "%s%s", used ? " " : "", v);
	if (k == 0 && !good_name(field))
		return bad_key(m, name, "expected letters, digits and - _ . @ + only", field);
	if (!strcmp(name, "topology") && strcmp(field, "etcd") && strcmp(field, "zookeeper"))
		return bad_key(m, name, "expected etcd or zookeeper (a Redis lock names none)", field);
	if (!strcmp(name, "kind") && strcmp(field, "library") && strcmp(field, "null"))
		return bad_key(m, name, "expected library (the default) or null (a null adapter)", field);
	if (!strcmp(name, "env") && !hook_of(field))
		return bad_key(m, name, "expected python-venv (the languages whose environments "
			       "lockbench knows)", field);
	if (!strcmp(name, "dist") && !good_name(field))
		return bad_key(m, name, "expected a package name (letters, digits and - _ . only)",
			       field);
	if (!strcmp(name, "tls") && !good_tls(field))
		return bad_key(m, name, "expected no, none, or the TLS options its adapter passes on, "
			       "among ca, cert and insecure (comma-separated)", field);
	if (!strcmp(name, "built") && !good_name(field))
		return bad_key(m, name, "expected the name of a program make builds (letters, digits "
			       "and - _ . @ + only)", field);
	return 1;
}

/* argv of @d: [interpreter] program [args...], stored in d->argbuf. */
static void set_argv(struct lb_adapter_def *d, const char *const *words, int n);

int lb_adapter_manifest_parse(const char *text, const char *path, const char *dir,
			      struct lb_adapter_def *d)
{
	struct manifest m = { .d = d, .path = path };
	char program[PATH_MAX + 300];
	int line = 1;

	memset(d, 0, sizeof(*d));
	for (const char *p = text; *p; line++) {
		size_t n = strcspn(p, "\n");
		if (n > MANIFEST_LINE_MAX) {
			lb_errorf("%s:%d: not a valid adapter manifest: a line longer than %d bytes", path,
				  line, MANIFEST_LINE_MAX);
			return LB_EINVAL;
		}
		p += n + (p[n] == '\n');
	}
	int rc = ini_parse_string(text, on_key, &m);
	if (rc != 0) {
		lb_errorf("%s:%d: not a valid adapter manifest: %s", path, rc,
			  m.err[0] ? m.err : "expected KEY = VALUE, [a section] or a ; comment");
		return LB_EINVAL;
	}
	if (!d->name[0] || (!m.program[0] && !d->built[0])) {
		lb_errorf("%s: not a valid adapter manifest: %s", path,
			  d->name[0] ? "program missing (or built)" : "name missing");
		return LB_EINVAL;
	}
	if (d->env[0] && (!d->dist[0] || !m.interpreter[0])) {
		lb_errorf("%s: not a valid adapter manifest: env = %s needs dist (the package's "
			  "name in its registry) and interpreter (replaced by the environment's)",
			  path, d->env);
		return LB_EINVAL;
	}
	if (m.program[0] && d->built[0]) {
		lb_errorf("%s: not a valid adapter manifest: program and built both given (built "
			  "names a program make builds, program one beside the manifest: one of them)",
			  path);
		return LB_EINVAL;
	}
	snprintf(d->manifest, sizeof(d->manifest), "%.500s", path);
	/* a built program's path is found when it is loaded (load_one): bare here */
	if (d->built[0])
		snprintf(program, sizeof(program), "%s", d->built);
	else
		snprintf(program, sizeof(program), "%.*s/%s", PATH_MAX, dir, m.program);
	/* [interpreter] program [args split at spaces] */
	const char *words[LB_ADAPTER_MAX_ARGS];
	char interp[PATH_MAX + 300];
	int n = 0;
	/* a relative interpreter with a slash (python/venv/bin/python3, the one
	 * harness/deps.sh makes) lies below the manifest's directory */
	if (m.interpreter[0] != '/' && strchr(m.interpreter, '/'))
		snprintf(interp, sizeof(interp), "%.*s/%s", PATH_MAX, dir, m.interpreter);
	else
		snprintf(interp, sizeof(interp), "%s", m.interpreter);
	if (interp[0])
		words[n++] = interp;
	words[n++] = program;
	for (char *save = NULL, *w = strtok_r(m.args, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		if (n == LB_ADAPTER_MAX_ARGS) {
			lb_errorf("%s: not a valid adapter manifest: args: more words than lockbench "
				  "passes (%d in all, with the program and its interpreter)", path,
				  LB_ADAPTER_MAX_ARGS);
			return LB_EINVAL;
		}
		words[n++] = w;
	}
	set_argv(d, words, n);
	return 0;
}

/* ---- the registry ---- */

/* argv of @d: [interpreter] program [args...], stored in d->argbuf. */
static void set_argv(struct lb_adapter_def *d, const char *const *words, int n)
{
	size_t used = 0;
	int k = 0;

	for (int i = 0; i < n && k < LB_ADAPTER_MAX_ARGS; i++) {
		size_t len = strlen(words[i]) + 1;
		if (!words[i][0] || used + len > sizeof(d->argbuf))
			continue;
		memcpy(d->argbuf + used, words[i], len);
		d->argv[k++] = d->argbuf + used;
		used += len;
	}
	d->argv[k] = NULL;
}

static void make_strategy(struct loaded *l)
{
	l->s = lb_adapter_ops;
	l->s.name = l->def.name;
	l->s.summary = l->def.summary;
	l->s.sends = l->def.sends;
	l->s.claims = l->def.claims;
	l->s.min_nodes = l->def.min_nodes ? l->def.min_nodes : 1;
	l->s.impl = &l->def;
}

/* A built program's path (build/NAME beside lockbench, or installed
 * PREFIX/lib/lockbench/NAME) for its bare name in @d's argv. Not found:
 * the last place looked, which its --check then says cannot run. */
static void locate_built(struct lb_adapter_def *d)
{
	char prog[PATH_MAX], keep[sizeof(d->argbuf)];
	const char *words[LB_ADAPTER_MAX_ARGS];
	int n = 0;

	lb_find_installed(d->built, "lib", prog, sizeof(prog));
	memcpy(keep, d->argbuf, sizeof(keep)); /* argv points into argbuf: copied first */
	for (int k = 0; d->argv[k] && n < LB_ADAPTER_MAX_ARGS; k++)
		words[n++] = strcmp(d->argv[k], d->built) ? keep + (d->argv[k] - d->argbuf) : prog;
	set_argv(d, words, n);
}

/* One manifest file: read whole (a manifest is small), then parsed. */
static void load_one(const char *dir, const char *file)
{
	struct loaded *l = &adapters[n_adapters];
	char path[PATH_MAX + 300], text[16384];

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	const char *kind;
	char why[96];
	int rc;
	FILE *f = lb_open_regular(path, &rc, &kind); /* a FIFO there cannot hang the listing */
	if (!f) {
		lb_errorf("%s: cannot read: %s", path, lb_open_why(kind, why, sizeof(why)));
		return;
	}
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (n == sizeof(text)) {
		lb_errorf("%s: not a valid adapter manifest: longer than %zu bytes", path, sizeof(text) - 1);
		return;
	}
	text[n] = '\0';
	if (lb_adapter_manifest_parse(text, path, dir, &l->def) < 0)
		return;
	if (l->def.built[0])
		locate_built(&l->def);
	make_strategy(l);
	n_adapters++;
}

static bool is_null(const struct lb_adapter_def *d)
{
	return !strcmp(d->kind, "null");
}

/* The libraries by name, then the null adapters by name. */
static int by_name(const void *a, const void *b)
{
	const struct lb_adapter_def *x = &((const struct loaded *)a)->def;
	const struct lb_adapter_def *y = &((const struct loaded *)b)->def;
	if (is_null(x) != is_null(y))
		return is_null(x) ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void load_all(void)
{
	char dir[PATH_MAX];
	DIR *d;

	if (loaded)
		return;
	loaded = true;
	const char *env = getenv("LOCKBENCH_ADAPTERS");
	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if (!lb_find_installed("strategies/adapters", "share", dir, sizeof(dir)))
		return;
	if (!(d = opendir(dir)))
		return;
	for (struct dirent *e; (e = readdir(d)) && n_adapters < MAX_ADAPTERS;) {
		size_t n = strlen(e->d_name);
		if (n > 8 && !strcmp(e->d_name + n - 8, ".adapter"))
			load_one(dir, e->d_name);
	}
	closedir(d);
	qsort(adapters, n_adapters, sizeof(adapters[0]), by_name);
	while (n_libraries < n_adapters && !is_null(&adapters[n_libraries].def))
		n_libraries++;
	for (size_t i = 0; i < n_adapters; i++) { /* qsort moved them: point at the new places */
		struct lb_adapter_def *def = &adapters[i].def;
		adapters[i].s.impl = def, adapters[i].s.name = def->name, adapters[i].s.summary = def->summary;
		adapters[i].s.sends = def->sends;
		/* argv pointed into the argbuf where the struct was: its words lie
		 * one after another in argbuf, so walk them again */
		const char *w = def->argbuf;
		for (int k = 0; def->argv[k]; k++, w += strlen(w) + 1)
			def->argv[k] = w;
	}
}

size_t lb_adapter_count(void)
{
	load_all();
	return n_libraries;
}

const struct lock_strategy *lb_adapter_at(size_t i)
{
	load_all();
	return i < n_libraries ? &adapters[i].s : NULL;
}

size_t lb_null_adapter_count(void)
{
	load_all();
	return n_adapters - n_libraries;
}

const struct lock_strategy *lb_null_adapter_at(size_t i)
{
	load_all();
	return i < n_adapters - n_libraries ? &adapters[n_libraries + i].s : NULL;
}

bool lb_adapter_is_null(const struct lock_strategy *s)
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s); /* NULL but for an adapter's */
	return d && is_null(d);
}

static const struct lock_strategy *variant_of(struct loaded *t, const char *name);

const struct lock_strategy *lb_adapter_find(const char *name)
{
	load_all();
	for (size_t i = 0; i < n_adapters; i++)
		if (!strcmp(adapters[i].def.name, name))
			return library_env && adapters[i].def.env[0] ? variant_of(&adapters[i], name) :
			       &adapters[i].s;
	return variant_of(NULL, name);
}

/* ---- versions and environments: NAME@VERSION, --library-env ---- */

void lb_adapter_set_library_env(const char *dir)
{
	library_env = dir && *dir ? dir : NULL;
}

bool lb_adapter_cache_dir(char *out, size_t len)
{
	const char *own = getenv("LOCKBENCH_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (own && *own)
		snprintf(out, len, "%s", own);
	else if (xdg && *xdg == '/')
		snprintf(out, len, "%s/lockbench", xdg);
	else if (home && *home == '/')
		snprintf(out, len, "%s/.cache/lockbench", home);
	else
		return false;
	return true;
}

bool lb_adapter_cache_of(const struct lb_adapter_def *d, const char *version, char *out,
			 size_t len)
{
	char cache[PATH_MAX];

	if (!d || !d->env[0] || !d->dist[0] || !lb_adapter_cache_dir(cache, sizeof(cache)))
		return false;
	int w = snprintf(out, len, "%s/%s/%s@%s", cache, d->env, d->dist, version);
	return w >= 0 && (size_t)w < len; /* a path cut short names another directory */
}

/* The part of @name before its last '@' (all of it when it has none). */
static void base_of(const char *name, char *out, size_t len)
{
	const char *at = strrchr(name, '@');
	snprintf(out, len, "%.*s", (int)(at ? (size_t)(at - name) : strlen(name)), name);
}

/* The last manifest by name whose strategies @base names, with an env hook. */
static struct loaded *template_of(const char *base)
{
	struct loaded *t = NULL;
	char b[sizeof(adapters[0].def.name)];

	load_all();
	for (size_t i = 0; i < n_libraries; i++) {
		base_of(adapters[i].def.name, b, sizeof(b));
		if (adapters[i].def.env[0] && !strcmp(b, base))
			t = &adapters[i];
	}
	return t;
}

const struct lb_adapter_def *lb_adapter_template(const char *base)
{
	struct loaded *t = template_of(base);
	return t ? &t->def : NULL;
}

bool lb_adapter_base_known(const char *base)
{
	return template_of(base) != NULL;
}

/* Strategy @name: manifest @t's program, run by the interpreter of the
 * environment @dir (its hook's); @version "" when any will do. */
static const struct lock_strategy *make_variant(const struct loaded *t, const char *name,
						const char *version, const char *dir, bool cached)
{
	const struct env_hook *h = hook_of(t->def.env);
	char interp[PATH_MAX + 300];

	for (size_t i = 0; i < n_variants; i++)
		if (!strcmp(variants[i].def.name, name) && !strcmp(variants[i].def.env_dir, dir))
			return &variants[i].s;
	if (n_variants == MAX_VARIANTS || strlen(dir) >= sizeof(t->def.env_dir) - 32) {
		lb_errorf("%s: too many library versions in one command (%d), or a directory longer "
			  "than %zu", name, MAX_VARIANTS, sizeof(t->def.env_dir) - 32);
		return NULL;
	}
	struct loaded *l = &variants[n_variants++];
	*l = *t;
	struct lb_adapter_def *d = &l->def;
	const char *words[LB_ADAPTER_MAX_ARGS];
	int n = 0;
	snprintf(interp, sizeof(interp), "%s/%s", dir, h->interpreter);
	/* the manifest's interpreter is its first word: the environment's instead */
	for (const char *w = t->def.argbuf; t->def.argv[n] && n < LB_ADAPTER_MAX_ARGS;
	     w += strlen(w) + 1, n++)
		words[n] = n ? w : interp;
	set_argv(d, words, n);
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->version, sizeof(d->version), "%s", version);
	snprintf(d->env_dir, sizeof(d->env_dir), "%s", dir);
	if (cached)
		snprintf(d->package, sizeof(d->package), "%.40s %.20s (lockbench install)",
			 t->def.dist, version);
	else
		snprintf(d->package, sizeof(d->package), "as installed in --library-env");
	d->usable = d->greeted = 0;
	d->ran_version[0] = d->unusable[0] = '\0';
	if (access(interp, X_OK) < 0) {
		d->usable = -1;
		if (cached)
			snprintf(d->unusable, sizeof(d->unusable), "%.48s is not installed here: "
				 "`lockbench install %.48s` fetches it into %.160s (nothing is "
				 "fetched while a run runs)", name, name, dir);
		else
			snprintf(d->unusable, sizeof(d->unusable), "--library-env %.200s is not %.40s "
				 "(no executable %.20s in it)", dir, h->what, h->interpreter);
	}
	make_strategy(l);
	return &l->s;
}

/* @name as a version (NAME@VERSION) or, with --library-env, as the library
 * installed there: of manifest @t, or of the manifest its NAME names. NULL
 * when nothing fits. */
static const struct lock_strategy *variant_of(struct loaded *t, const char *name)
{
	char base[sizeof(adapters[0].def.name)], dir[PATH_MAX];
	const char *at = strrchr(name, '@'), *version = at ? at + 1 : "";

	if (!good_name(name) || strlen(name) >= sizeof(base) || (at && !*version) ||
	    strlen(version) >= sizeof(t->def.version))
		return NULL;
	base_of(name, base, sizeof(base));
	if (!t && !(t = template_of(base)))
		return NULL;
	if (library_env)
		return make_variant(t, name, version, library_env, false);
	if (!at || !lb_adapter_cache_of(&t->def, version, dir, sizeof(dir)))
		return NULL;
	return make_variant(t, name, version, dir, true);
}

const char *lb_adapter_ran_version(const struct lock_strategy *s)
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s); /* NULL but for an adapter's */
	char why[400];

	/* a library of many versions not asked yet: its --check says it (once) */
	if (d && !d->ran_version[0] && d->env[0] && !d->usable)
		lb_adapter_usable(s, why, sizeof(why));
	return d && d->ran_version[0] ? d->ran_version : NULL;
}

const struct lock_strategy *lb_adapter_exec(const char *spec)
{
	const char *path = spec + 5; /* after "exec:" */
	struct stat st;

	for (size_t i = 0; i < n_execs; i++)
		if (!strcmp(execs[i].def.name, spec))
			return &execs[i].s;
	if (n_execs == MAX_EXEC || strlen(spec) >= sizeof(execs[0].def.name)) {
		lb_errorf("%s: too many exec: strategies, or a path longer than %zu", spec,
			  sizeof(execs[0].def.name) - 6);
		return NULL;
	}
	if (!*path || stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
		lb_errorf("%s: %s is not an executable file (%s)", spec, *path ? path : "(empty)",
			  *path ? strerror(errno ? errno : EACCES) : "exec:PATH names a program");
		return NULL;
	}
	struct loaded *l = &execs[n_execs++];
	memset(l, 0, sizeof(*l));
	snprintf(l->def.name, sizeof(l->def.name), "%s", spec);
	snprintf(l->def.library, sizeof(l->def.library), "%s", path);
	snprintf(l->def.summary, sizeof(l->def.summary), "your program %.80s, through the adapter "
		 "protocol (docs/adapters.md)", path);
	/* the file checked above is the one run: a name without a slash is in
	 * the current directory, never looked up on PATH */
	char here[sizeof(l->def.name) + 2];
	snprintf(here, sizeof(here), "%s%s", strchr(path, '/') ? "" : "./", path);
	const char *prog = here;
	set_argv(&l->def, &prog, 1);
	l->def.exec = true;
	make_strategy(l);
	return &l->s;
}

const struct lb_adapter_def *lb_adapter_def_of(const struct lock_strategy *s)
{
	return s ? s->impl : NULL;
}

static bool check_usable(struct lb_adapter_def *d, char *why, size_t len);

_Static_assert(LB_PROTO_FAILPOINTS_MAX == 8 && LB_PROTO_FAILPOINT_LEN == 32,
	       "adapter.h keeps a hello's failpoints in arrays of these sizes");

/* The strategy of @s, writable: one of ours. */
static struct loaded *loaded_of(const struct lock_strategy *s)
{
	for (size_t i = 0; i < n_adapters; i++)
		if (&adapters[i].s == s)
			return &adapters[i];
	for (size_t i = 0; i < n_execs; i++)
		if (&execs[i].s == s)
			return &execs[i];
	for (size_t i = 0; i < n_variants; i++)
		if (&variants[i].s == s)
			return &variants[i];
	return NULL;
}

int lb_adapter_greet(const struct lock_strategy *s)
{
	struct loaded *l = loaded_of(s);
	struct lb_proto_msg hello;
	int rc;

	if (!l)
		return LB_EINVAL;
	if (l->def.greeted)
		return l->def.greeted > 0 ? 0 : LB_EPROTO;
	if ((rc = lb_adapter_hello(&l->def, &hello)) < 0) {
		l->def.greeted = -1;
		return rc;
	}
	l->def.greeted = 1;
	if (hello.lib_version[0]) /* the library's own word, from the process that runs it */
		snprintf(l->def.ran_version, sizeof(l->def.ran_version), "%s", hello.lib_version);
	for (int i = 0; i < hello.n_failpoints && i < 8; i++) {
		snprintf(l->def.failpoint[i], sizeof(l->def.failpoint[i]), "%s", hello.failpoints[i]);
		l->def.failpoint_list[i] = l->def.failpoint[i];
	}
	l->s.failpoints = hello.n_failpoints ? l->def.failpoint_list : NULL;
	l->def.claims_declared = hello.claims_given;
	if (hello.claims_given && l->def.exec)
		l->s.claims = l->def.claims = hello.claims;
	return 0;
}

bool lb_adapter_claims_declared(const struct lock_strategy *s)
{
	const struct lb_adapter_def *d = lb_adapter_def_of(s);
	return d && d->claims_declared;
}

bool lb_adapter_usable(const struct lock_strategy *s, char *why, size_t len)
{
	struct lb_adapter_def *d = (struct lb_adapter_def *)lb_adapter_def_of(s);

	if (!d || d->exec)
		return true;
	if (!d->usable)
		d->usable = check_usable(d, d->unusable, sizeof(d->unusable)) ? 1 : -1;
	if (d->usable < 0)
		snprintf(why, len, "%s", d->unusable);
	return d->usable > 0;
}

/* The value of "NAME=" in @out (a word), or "". */
static void word_value(const char *out, const char *name, char *v, size_t len)
{
	size_t n = strlen(name);
	v[0] = '\0';
	for (const char *p = out; (p = strstr(p, name)); p += n)
		if ((p == out || p[-1] == ' ') && p[n] == '=') {
			snprintf(v, len, "%.*s", (int)strcspn(p + n + 1, " "), p + n + 1);
			return;
		}
}

/* Its --check, with a deadline: an adapter whose probe hangs is unusable,
 * and killed, never waited for. */
static bool check_usable(struct lb_adapter_def *d, char *why, size_t len)
{
	char out[512] = "", ver[64];
	int pfd[2], status = 0;
	size_t used = 0;

	if (!d || d->exec)
		return true;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return false;
	}
	const char *argv[LB_ADAPTER_MAX_ARGS + 2];
	int n = 0;
	for (; d->argv[n] && n < LB_ADAPTER_MAX_ARGS; n++)
		argv[n] = d->argv[n];
	argv[n++] = "--check";
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0); /* its helpers are killed with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		/* nothing to read: a --check that reads its input anyway ends at once */
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0 && null != STDIN_FILENO)
			dup2(null, STDIN_FILENO);
		/* runs: (manifests) the adapter's own --check, by its interpreter */
		execvp(argv[0], (char *const *)argv);
		/* written at once: _exit flushes no stdio buffer */
		dprintf(STDOUT_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	int64_t deadline = lb_now_ns() + CHECK_LIMIT_MS * LB_NS_PER_MS;
	bool late = false;
	while (pid > 0 && used < sizeof(out) - 1) {
		int64_t left = (deadline - lb_now_ns()) / LB_NS_PER_MS;
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			late = true;
			break;
		}
		ssize_t k = read(pfd[0], out + used, sizeof(out) - 1 - used);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		used += (size_t)k;
	}
	out[used] = '\0';
	close(pfd[0]);
	/* its output is read; now its exit, by the same deadline */
	while (pid > 0 && !late && waitpid(pid, &status, WNOHANG) == 0) {
		if (lb_now_ns() >= deadline)
			late = true;
		else
			lb_sleep_ns(2 * LB_NS_PER_MS);
	}
	if (pid > 0 && late) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(why, len, "%s is not usable here: its --check did not finish within %d s",
			 d->name, CHECK_LIMIT_MS / 1000);
		return false;
	}
	out[strcspn(out, "\n")] = '\0';
	char shown[320];
	lb_proto_printable(out, shown, sizeof(shown));
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "%.64s is not usable here: %.300s", d->name, shown[0] ? shown : "its --check failed");
		return false;
	}
	word_value(out, "version", ver, sizeof(ver));
	lb_proto_printable(ver, shown, 40);
	if (d->version[0] && ver[0] && strcmp(ver, d->version)) {
		if (d->env_dir[0])
			snprintf(why, len, "%.48s asks for %.40s %.20s, but %.160s has %.20s", d->name,
				 d->library, d->version, d->env_dir, shown);
		else
			snprintf(why, len, "%s expects %s %s, but %.40s is installed", d->name,
				 d->library, d->version, shown);
		return false;
	}
	if (!d->ran_version[0] && ver[0] && strlen(shown) < sizeof(d->ran_version))
		snprintf(d->ran_version, sizeof(d->ran_version), "%.*s",
				 (int)sizeof(d->ran_version) - 1, shown);
	return true;
}
