/*
 * harness.c - the AFL++ harness (persistent mode) for one target of
 * targets.h, chosen when it is built: -DFUZZ_TARGET=fuzz_history makes
 * build/fuzz/fuzz_history (the Makefile's fuzz rule). One main for every
 * target, so that adding a target is a function in targets.h and a name in
 * FUZZ_TARGETS.
 */
#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET=fuzz_NAME (the Makefile's fuzz rule does)"
#endif
#include <unistd.h>

#include "targets.h"

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
#endif

int main(int argc, char **argv)
{
	freopen("/dev/null", "w", stderr); /* the parsers' error messages */
#ifdef __AFL_FUZZ_TESTCASE_LEN
	(void)argc, (void)argv;
	__AFL_INIT();
	unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
	while (__AFL_LOOP(10000))
		FUZZ_TARGET(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
#else
	/* without AFL: run each file named on the command line once */
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static uint8_t data[1 << 20];
		size_t n = f ? fread(data, 1, sizeof(data), f) : 0;
		if (f)
			fclose(f);
		FUZZ_TARGET(data, n);
	}
#endif
	return 0;
}
