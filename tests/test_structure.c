/*
 * test_structure.c - the map of the code holds (docs/architecture.md):
 * layers point one way (no two modules of harness/ and strategies/ include
 * each other's headers, directly or around a ring), strategies see the
 * harness through one header (strategy.h), and no function is over 120
 * lines, and harness/ is a folder per job: every #include points to its own
 * folder or one below, as the table of layers in docs/architecture.md says,
 * each folder says in a README what it owns, and harness/'s top keeps at most
 * 10 source files. A module is a stem: harness/run/run.c and
 * harness/run/run.h are "run". And the suite's own runner, tests/run.sh,
 * fails on a failed binary and says why at its end.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fixture.h"

FX_SUITE(structure, 60);

#define MAX_FILES 160
#define MAX_LONGEST 120

struct file {
	char dir[32];   /* "harness/run" (a folder of harness/) or "strategies" */
	char name[64];  /* "run.c" */
	char *text;
};

static struct file files[MAX_FILES];
static int n_files;

static void root(char *out, size_t len)
{
	snprintf(out, len, "%s", fx_root());
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot read %s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	cr_assert(n >= 0);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	cr_assert_not_null(s);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

static void load_dir(const char *top, const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", top, dir);
	DIR *d = opendir(path);
	cr_assert_not_null(d, "no %s", path);
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 3 || e->d_name[l - 2] != '.' || !strchr("ch", e->d_name[l - 1]))
			continue;
		cr_assert_lt(n_files, MAX_FILES, "more than %d sources: raise MAX_FILES", MAX_FILES);
		cr_assert_lt(l, sizeof(files[0].name));
		struct file *f = &files[n_files++];
		snprintf(f->dir, sizeof(f->dir), "%s", dir);
		memcpy(f->name, e->d_name, l + 1);
		snprintf(path, sizeof(path), "%s/%s/%s", top, dir, e->d_name);
		f->text = slurp(path);
	}
	closedir(d);
}

/* harness/'s folders (harness/run, harness/core, ...) and its top. */
static void load_harness(const char *top)
{
	char path[PATH_MAX + 300], sub[sizeof(((struct dirent *)0)->d_name) + 16];
	snprintf(path, sizeof(path), "%s/harness", top);
	DIR *d = opendir(path);
	cr_assert_not_null(d, "no %s", path);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		snprintf(path, sizeof(path), "%s/harness/%s", top, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		snprintf(sub, sizeof(sub), "harness/%s", e->d_name);
		load_dir(top, sub);
	}
	closedir(d);
	load_dir(top, "harness");
}

static void load(void)
{
	char top[PATH_MAX];
	root(top, sizeof(top));
	n_files = 0;
	load_harness(top);
	load_dir(top, "strategies");
	cr_assert_gt(n_files, 40, "found only %d sources under %s", n_files, top);
}

static void unload(void)
{
	for (int i = 0; i < n_files; i++)
		free(files[i].text);
	n_files = 0;
}

static const struct file *find(const char *name)
{
	for (int i = 0; i < n_files; i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	return NULL;
}

/* The next `#include "NAME"` of a project header at or after @s: @s moves
 * past it; NULL at the end. */
static const struct file *next_include(const char **s)
{
	const char *p = *s;
	while ((p = strstr(p, "#include \""))) {
		if (p != *s && p[-1] != '\n') {
			p++;
			continue;
		}
		char name[64];
		const char *q = p + 10, *end = strchr(q, '"');
		p = q;
		if (!end || (size_t)(end - q) >= sizeof(name))
			continue;
		memcpy(name, q, (size_t)(end - q));
		name[end - q] = '\0';
		const struct file *f = find(name);
		if (f) {
			*s = end;
			return f;
		}
	}
	*s = NULL;
	return NULL;
}

/* The modules (stems) and which includes which. */
#define MAX_MODS MAX_FILES
static char mods[MAX_MODS][64];
static int n_mods;
static unsigned char edge[MAX_MODS][MAX_MODS];
static const char *edge_file[MAX_MODS][MAX_MODS]; /* a file of the edge */

static int mod_of(const char *name)
{
	char stem[64];
	snprintf(stem, sizeof(stem), "%s", name);
	stem[strlen(stem) - 2] = '\0';
	for (int i = 0; i < n_mods; i++)
		if (!strcmp(mods[i], stem))
			return i;
	snprintf(mods[n_mods], sizeof(mods[0]), "%s", stem);
	return n_mods++;
}

static void graph(void)
{
	n_mods = 0;
	memset(edge, 0, sizeof(edge));
	for (int i = 0; i < n_files; i++) {
		int a = mod_of(files[i].name);
		const char *s = files[i].text;
		for (const struct file *h; (h = next_include(&s));) {
			int b = mod_of(h->name);
			if (a != b) {
				edge[a][b] = 1;
				edge_file[a][b] = files[i].name;
			}
		}
	}
}

static int color[MAX_MODS], stack[MAX_MODS], depth;

/* Depth first: a module met again while on the stack closes a ring, said
 * into @out. */
static bool ring_from(int u, char *out, size_t len)
{
	color[u] = 1;
	stack[depth++] = u;
	for (int v = 0; v < n_mods; v++) {
		if (!edge[u][v])
			continue;
		if (color[v] == 1) {
			size_t used = 0;
			int k = 0;
			while (stack[k] != v)
				k++;
			for (; k < depth; k++) {
				int to = k + 1 < depth ? stack[k + 1] : v;
				used += (size_t)snprintf(out + used, len - used, "%s (%s includes %s.h) -> ",
							 mods[stack[k]], edge_file[stack[k]][to], mods[to]);
				if (used >= len)
					return true;
			}
			snprintf(out + used, len - used, "%s", mods[v]);
			return true;
		}
		if (!color[v] && ring_from(v, out, len))
			return true;
	}
	depth--;
	color[u] = 2;
	return false;
}

Test(structure, no_two_modules_include_each_other)
{
	char ring[4096] = "";
	load();
	graph();
	memset(color, 0, sizeof(color));
	depth = 0;
	bool found = false;
	for (int u = 0; u < n_mods && !found; u++)
		if (!color[u])
			found = ring_from(u, ring, sizeof(ring));
	unload();
	cr_assert(!found, "an include ring among harness/ and strategies/: %s", ring);
}

/* The ring finder finds a ring: two made-up modules that include each other. */
Test(structure, the_ring_finder_finds_a_ring)
{
	char ring[512] = "";
	n_files = 2;
	snprintf(files[0].name, sizeof(files[0].name), "a.c");
	snprintf(files[1].name, sizeof(files[1].name), "b.h");
	files[0].text = strdup("#include \"b.h\"\n");
	files[1].text = strdup("#include <stdio.h>\n#include \"a.c\"\n");
	graph();
	memset(color, 0, sizeof(color));
	depth = 0;
	bool found = ring_from(0, ring, sizeof(ring));
	unload();
	cr_assert(found);
	cr_assert(strstr(ring, "a (a.c includes b.h) -> b (b.h includes a.h) -> a"), "%s", ring);
}

/* Strategies see the harness through strategy.h alone: no other file of
 * strategies/ includes a harness header. */
Test(structure, strategies_see_the_harness_through_strategy_h)
{
	char bad[2048] = "";
	size_t used = 0;
	int harness_in_strategy_h = 0;

	load();
	for (int i = 0; i < n_files; i++) {
		if (strcmp(files[i].dir, "strategies"))
			continue;
		const char *s = files[i].text;
		for (const struct file *h; (h = next_include(&s));) {
			if (strncmp(h->dir, "harness", 7))
				continue;
			if (!strcmp(files[i].name, "strategy.h"))
				harness_in_strategy_h++;
			else if (used < sizeof(bad))
				used += (size_t)snprintf(bad + used, sizeof(bad) - used, " %s includes %s;",
							 files[i].name, h->name);
		}
	}
	unload();
	cr_assert(harness_in_strategy_h > 0, "strategy.h includes no harness header: "
		  "is the checker reading the includes?");
	cr_assert_eq(used, 0, "strategies/ reaches past strategy.h:%s", bad);
}

/* Every function body: its opening brace alone at the start of a line, its
 * closing one at the start of another (the house style). */
static int longest(const char *text, char *name, size_t len)
{
	int line = 1, open = 0, most = 0;
	const char *sig = text, *prev = text, *cur = text;
	for (const char *p = text; *p; p++) {
		if (p == cur) {
			if (p[0] == '{' && p[1] == '\n') {
				open = line;
				sig = prev;
			} else if (open && p[0] == '}' && p[1] != ';') {
				int n = line - open + 1;
				if (n > most) {
					most = n;
					snprintf(name, len, "%.*s (line %d)", (int)strcspn(sig, "\n"), sig,
						 open);
				}
				open = 0;
			}
		}
		if (*p == '\n') {
			line++;
			if (p[1] != '{')
				prev = p + 1;
			cur = p + 1;
		}
	}
	return most;
}

Test(structure, no_function_is_over_120_lines)
{
	char bad[4096] = "", name[200];
	size_t used = 0;
	int seen = 0;

	load();
	for (int i = 0; i < n_files; i++) {
		int n = longest(files[i].text, name, sizeof(name));
		seen += n > 0;
		if (n > MAX_LONGEST && used < sizeof(bad))
			used += (size_t)snprintf(bad + used, sizeof(bad) - used, "\n  %s/%s: %s, %d lines",
						 files[i].dir, files[i].name, name, n);
	}
	unload();
	cr_assert_gt(seen, 30, "found function bodies in only %d files", seen);
	cr_assert_eq(used, 0, "functions over %d lines:%s", MAX_LONGEST, bad);
}

/* The measure counts: a made-up function of 121 lines is found as such. */
Test(structure, the_measure_counts_lines)
{
	char text[4096], name[200];
	size_t used = (size_t)snprintf(text, sizeof(text), "static int f(void)\n{\n");
	for (int i = 0; i < 119; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "\tx();\n");
	snprintf(text + used, sizeof(text) - used, "}\n\nstruct s {\n\tint a;\n};\n");
	cr_assert_eq(longest(text, name, sizeof(name)), 121);
	cr_assert(strstr(name, "static int f(void) (line 2)"), "%s", name);
}

/* The table of layers in docs/architecture.md, top to bottom: each row's
 * files as written, a folder (`harness/run/`: the files in it) or a pattern
 * over the path (for strategies/, its .c and its .h files). */
#define MAX_LAYERS 16
#define MAX_TOKENS 48
struct layer {
	char name[32];
	char token[MAX_TOKENS][64];
	int n;
};

static int read_layers(struct layer *l)
{
	char top[PATH_MAX], path[PATH_MAX + 32];
	root(top, sizeof(top));
	snprintf(path, sizeof(path), "%s/docs/architecture.md", top);
	char *doc = slurp(path);
	const char *p = strstr(doc, "\n## Layers\n");
	cr_assert_not_null(p, "docs/architecture.md has no section 'Layers'");
	p = strstr(p, "\n|---");
	cr_assert_not_null(p, "docs/architecture.md: the Layers section has no table");
	p = strchr(p + 1, '\n') + 1;
	int n = 0;
	while (*p == '|') {
		const char *end = strchr(p, '\n');
		cr_assert_not_null(end);
		cr_assert_lt(n, MAX_LAYERS);
		struct layer *x = &l[n++];
		const char *c1 = strchr(p + 1, '|'), *c2 = c1 ? strchr(c1 + 1, '|') : NULL;
		cr_assert(c1 && c2 && c2 < end, "docs/architecture.md: a row of the Layers table "
			  "without its columns");
		const char *nm = p + 1;
		while (*nm == ' ')
			nm++;
		int nl = (int)(c1 - nm);
		while (nl > 0 && nm[nl - 1] == ' ')
			nl--;
		snprintf(x->name, sizeof(x->name), "%.*s", nl, nm);
		x->n = 0;
		for (const char *q = c1; (q = strchr(q, '`')) && q < c2;) {
			const char *e = strchr(q + 1, '`');
			cr_assert(e && e < c2);
			cr_assert_lt(x->n, MAX_TOKENS);
			snprintf(x->token[x->n++], sizeof(x->token[0]), "%.*s", (int)(e - q - 1), q + 1);
			cr_assert(strchr(x->token[x->n - 1], '/'), "docs/architecture.md: the Layers "
				  "row %s names `%s`: a row names folders (`harness/run/`) or patterns "
				  "over a path (`strategies/*.c`)", x->name, x->token[x->n - 1]);
			q = e + 1;
		}
		p = end + 1;
	}
	free(doc);
	cr_assert_gt(n, 3, "docs/architecture.md: the Layers table has %d rows", n);
	return n;
}

/* Whether @f is one of @x's files: a token ending in '/' is a folder (the
 * files in it, not in its folders), any other a pattern over the path. */
static bool in_layer(const struct layer *x, const struct file *f)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/%s", f->dir, f->name);
	for (int i = 0; i < x->n; i++) {
		const char *t = x->token[i];
		size_t l = strlen(t);
		if (l > 1 && t[l - 1] == '/') {
			if (strlen(f->dir) == l - 1 && !strncmp(f->dir, t, l - 1))
				return true;
		} else if (!fnmatch(t, path, FNM_PATHNAME)) {
			return true;
		}
	}
	return false;
}

static int layer_of(const struct layer *l, int n, const struct file *f, char *why, size_t len)
{
	int found = -1;
	for (int i = 0; i < n; i++)
		if (in_layer(&l[i], f)) {
			if (found >= 0)
				snprintf(why, len, "%s/%s is in two layers: %s and %s", f->dir, f->name,
					 l[found].name, l[i].name);
			found = found >= 0 ? -2 : i;
			if (found == -2)
				return -2;
		}
	if (found < 0)
		snprintf(why, len, "%s/%s is in no layer of docs/architecture.md", f->dir, f->name);
	return found;
}

Test(structure, includes_point_down_the_layers_of_the_architecture_doc)
{
	static struct layer l[MAX_LAYERS];
	char bad[4096] = "", why[200];
	size_t used = 0;
	int n = read_layers(l), checked = 0;

	load();
	for (int i = 0; i < n_files; i++) {
		int a = layer_of(l, n, &files[i], why, sizeof(why));
		if (a < 0) {
			used += (size_t)snprintf(bad + used, sizeof(bad) - used, "\n  %s", why);
			if (used >= sizeof(bad))
				break;
			continue;
		}
		const char *s = files[i].text;
		for (const struct file *h; (h = next_include(&s));) {
			int b = layer_of(l, n, h, why, sizeof(why));
			checked++;
			if (b >= 0 && b < a && used < sizeof(bad))
				used += (size_t)snprintf(bad + used, sizeof(bad) - used,
							 "\n  %s/%s (%s) includes %s (%s, above it)",
							 files[i].dir, files[i].name, l[a].name, h->name,
							 l[b].name);
		}
	}
	unload();
	cr_assert_gt(checked, 100, "only %d includes checked", checked);
	cr_assert_eq(used, 0, "the layers of docs/architecture.md do not hold:%s", bad);
}

/* The layer check can fail: a core file that includes a command's header
 * is found, a folder's own folders are not its files, and a file in no row
 * is named. */
Test(structure, an_include_up_the_layers_is_found)
{
	struct layer l[2] = { { .name = "top", .token = { "harness/cli/" }, .n = 1 },
			      { .name = "bottom", .token = { "harness/core/", "strategies/*.c" }, .n = 2 } };
	struct file up = { .dir = "harness/core", .name = "util.c" };
	struct file cmd = { .dir = "harness/cli", .name = "cmd_run.h" };
	struct file strat = { .dir = "strategies", .name = "redlock.c" };
	char why[200];
	cr_assert_eq(layer_of(l, 2, &up, why, sizeof(why)), 1);
	cr_assert_eq(layer_of(l, 2, &cmd, why, sizeof(why)), 0);
	cr_assert_eq(layer_of(l, 2, &strat, why, sizeof(why)), 1);
	struct file deeper = { .dir = "harness/cli/x", .name = "util.c" };
	cr_assert_eq(layer_of(l, 2, &deeper, why, sizeof(why)), -1);
	struct file other = { .dir = "harness/misc", .name = "util.c" };
	cr_assert_eq(layer_of(l, 2, &other, why, sizeof(why)), -1);
	cr_assert(strstr(why, "harness/misc/util.c is in no layer"), "%s", why);
}

/* harness/ is a folder per job: its top keeps at most 10 source files, and
 * every folder with sources has a README.md saying what it owns and what it
 * may call. */
Test(structure, harness_is_a_folder_per_job_each_with_its_readme)
{
	char top[PATH_MAX], path[PATH_MAX + 64], bad[2048] = "";
	size_t used = 0;
	int at_top = 0, folders = 0;

	root(top, sizeof(top));
	load();
	for (int i = 0; i < n_files; i++) {
		if (!strcmp(files[i].dir, "harness")) {
			at_top++;
			continue;
		}
		if (strncmp(files[i].dir, "harness/", 8))
			continue;
		bool first = true; /* the folder's first file met: check its README once */
		for (int k = 0; k < i && first; k++)
			first = strcmp(files[k].dir, files[i].dir) != 0;
		if (!first)
			continue;
		folders++;
		snprintf(path, sizeof(path), "%s/%.31s/README.md", top, files[i].dir);
		struct stat st;
		if (stat(path, &st) || st.st_size < 40)
			used += (size_t)snprintf(bad + used, sizeof(bad) - used, " %s/README.md;",
						 files[i].dir);
		if (used >= sizeof(bad))
			break;
	}
	unload();
	cr_assert_leq(at_top, 10, "harness/ has %d source files at its top: put them in the "
		      "folder of their job", at_top);
	cr_assert_geq(folders, 5, "found only %d folders under harness/", folders);
	cr_assert_eq(used, 0, "a folder of harness/ without its README (what it owns, what it "
		     "may call):%s", bad);
}

/* Run tests/run.sh on @bins (or none), its output into @out; its exit status. */
static int run_sh(const char *dir, const char *bins, char *out, size_t len)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "cd '%s' && bash '%s/tests/run.sh' %s 2>&1", dir, fx_root(), bins);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, len - 1, p);
	for (size_t i = 0; i < n; i++) /* a NUL passed through is shown as @ */
		out[i] = out[i] ? out[i] : '@';
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The suite's runner fails when a binary fails, and says why again at its
 * very end: CI keeps only the tail of a log, and the binary's own output
 * may be far above it (a NUL in it included: grep must not call it binary).
 * No binary at all is no pass either. */
Test(structure, the_suite_runner_names_each_failure_and_why_at_its_end)
{
	char dir[] = "/tmp/lbtest-runner-XXXXXX", path[PATH_MAX], out[8192];
	cr_assert_not_null(fx_mkdtemp(dir));
	static const char *const bins[][2] = {
		{ "pass", "echo '[====] Synthesis: Tested: 1 | Passing: 1'\nexit 0\n" },
		{ "fail", "echo '[----] tests/x.c:7: Assertion Failed'\nprintf '[----]   3 is not\\0 4\\n'\n"
			  "echo '[FAIL] x::y: (0.01s)'\necho 'lots of other output'\nexit 1\n" },
		{ "long", "i=0; while [ $i -lt 60 ]; do echo \"[----]   line $i\"; i=$((i+1)); done\n"
			  "echo '[FAIL] h::last'\nkill -SEGV $$\n" },
	};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, bins[i][0]);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f, "#!/bin/sh\n%s", bins[i][1]);
		fclose(f);
		chmod(path, 0755);
	}
	cr_assert_eq(run_sh(dir, "./pass ./fail", out, sizeof(out)), 1, "%s", out);
	const char *end = strstr(out, "== failed:\n");
	cr_assert_not_null(end, "%s", out);
	cr_assert(strstr(end, "./fail (exit 1)") && strstr(end, "3 is not@ 4") &&
		  strstr(end, "[FAIL] x::y") && !strstr(end, "lots of other") && !strstr(end, "./pass"),
		  "the end does not say which binary failed and why:\n%s", end);
	/* a long message keeps the failed test's name, says what it cut, and a
	 * signal is named */
	cr_assert_eq(run_sh(dir, "./long", out, sizeof(out)), 1, "%s", out);
	end = strstr(out, "== failed:\n");
	cr_assert(end && strstr(end, "(exit 139): killed by signal 11 (SEGV)") &&
		  strstr(end, "[FAIL] h::last") && strstr(end, "line 29") && !strstr(end, "line 30") &&
		  strstr(end, "and 30 more [----] lines"), "%s", end ? end : out);
	cr_assert_eq(run_sh(dir, "./pass", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "1 test binaries passed"), "%s", out);
	cr_assert_eq(run_sh(dir, "", out, sizeof(out)), 2, "%s", out);
	cr_assert(strstr(out, "nothing ran, which is no pass"), "%s", out);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	cr_assert_eq(system(path), 0);
}
