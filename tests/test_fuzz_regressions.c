/*
 * test_fuzz_regressions.c - every input the fuzzers were given or found,
 * replayed through the same targets (tests/fuzz/targets.h): the seed corpora
 * (tests/fuzz/corpus, scenarios/) and every saved crash or hang
 * (tests/fuzz/regressions/<harness>/). Under `make check` ASan and UBSan
 * watch each one; a target may refuse an input, never crash on it. The
 * parsers' messages, the name of each input before it is fed and any sanitizer
 * report go to build/fuzz-regressions.log: when an input crashes the test, the
 * log's last lines name it and say why.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>

#include "fixture.h"
#include "fuzz/targets.h"

static char root[PATH_MAX];

static void find_root(void)
{
	char buf[PATH_MAX + 64];
	snprintf(root, sizeof(root), "%s", fx_root());
	snprintf(buf, sizeof(buf), "%s/build/fuzz-regressions.log", root);
	cr_assert_not_null(freopen(buf, "w", stderr), "cannot write %s", buf);
	setvbuf(stderr, NULL, _IONBF, 0);
}

/* Feed every regular file of @sub to @fn; how many. */
static int replay(const char *sub, void (*fn)(const uint8_t *, size_t))
{
	char dir[PATH_MAX + 64], path[PATH_MAX * 2];
	static uint8_t data[1 << 20];
	int n = 0;
	snprintf(dir, sizeof(dir), "%s/%s", root, sub);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t len = fread(data, 1, sizeof(data), f);
		fclose(f);
		fprintf(stderr, "== %s\n", path);
		fn(data, len);
		n++;
	}
	closedir(d);
	return n;
}

static const struct {
	const char *name, *corpus;
	void (*fn)(const uint8_t *, size_t);
} targets[] = {
	{ "scenario", "scenarios", fuzz_scenario },
	{ "scenario_file", "scenarios", fuzz_scenario_file },
	{ "import_out", "tests/fuzz/corpus/import", fuzz_import_out },
	{ "args", "tests/fuzz/corpus/args", fuzz_args },
	{ "history", "tests/fuzz/corpus/history", fuzz_history },
	{ "import", "tests/fuzz/corpus/import", fuzz_import },
	{ "summary", "tests/fuzz/corpus/summary", fuzz_summary },
	{ "events", "tests/fuzz/corpus/events", fuzz_events },
	{ "adapter", "tests/fuzz/corpus/adapter", fuzz_adapter },
	{ "manifest", "strategies/adapters", fuzz_manifest },
	{ "esc", "tests/fuzz/corpus/esc", fuzz_esc },
};

Test(fuzz_regressions, every_saved_input_is_survived, .init = find_root)
{
	fx_deadline(60);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		char sub[128];
		int seeds = replay(targets[i].corpus, targets[i].fn);
		cr_assert_gt(seeds, 0, "no seed corpus for %s in %s", targets[i].name, targets[i].corpus);
		snprintf(sub, sizeof(sub), "tests/fuzz/regressions/%s", targets[i].name);
		replay(sub, targets[i].fn);
	}
}
