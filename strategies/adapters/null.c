/*
 * null.c - the null adapter in C (docs/adapters.md, manifest null-c.adapter):
 * it answers lockbench's adapter protocol at once and sends nothing to
 * Redis. Every acquire is granted, every release released. What a section
 * costs through it is the protocol's own cost: two requests and their
 * replies over the pipes, and lockbench's side of them (`lockbench bench`,
 * item 3, sets it against a redis-py section). It is not a lock: two
 * clients are inside at once, and no scenario's expectations name it.
 *
 * One read() per request line and one write() per reply: lockbench waits for
 * each reply before its next request, so a read returns one whole line (a
 * line split across reads is still put together). --check prints what the
 * manifest's --check wants. The argument "broken" (tests/test_adapters.c)
 * answers every acquire with "acquired yes please", a reply lockbench must
 * refuse. Built by make into build/null-adapter, installed
 * as PREFIX/lib/lockbench/null-adapter.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096 /* the protocol's longest line (LB_PROTO_LINE_MAX) */

static const char hello[] = "hello 3 library=null version=1 language=c extend=yes lost=no "
			    "extends=never claims=-\n";

/* Write all of @s; false when lockbench has gone. */
static int say(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		s += w;
		n -= (size_t)w;
	}
	return 1;
}

#define SAY(lit) say(lit, sizeof(lit) - 1)

static int broken; /* the argument "broken": a malformed answer to acquire */

/* The reply to one request line (without its newline); 0 to stop. */
static int answer(const char *line)
{
	size_t n = strcspn(line, " ");

	if (n == 7 && !strncmp(line, "acquire", 7))
		return broken ? SAY("acquired yes please\n") : SAY("acquired\n");
	if (n == 7 && !strncmp(line, "release", 7))
		return SAY("released\n");
	if (n == 6 && !strncmp(line, "extend", 6))
		return SAY("extended\n");
	if (n == 5 && !strncmp(line, "hello", 5))
		return say(hello, sizeof(hello) - 1);
	if (n == 6 && !strncmp(line, "config", 6))
		return SAY("ok\n");
	if (n == 4 && !strncmp(line, "quit", 4)) {
		SAY("bye\n");
		return 0;
	}
	if (n == 0)
		return 1; /* an empty line asks nothing */
	return SAY("error unknown request\n");
}

int main(int argc, char **argv)
{
	static char buf[2 * LINE_MAX_BYTES];
	size_t used = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check")) {
			puts("library=null version=1");
			return 0;
		}
		broken |= !strcmp(argv[i], "broken");
	}
	for (;;) {
		ssize_t k = read(STDIN_FILENO, buf + used, sizeof(buf) - 1 - used);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0; /* end of file: lockbench has gone */
		used += (size_t)k;
		buf[used] = '\0';
		char *start = buf, *nl;
		while ((nl = memchr(start, '\n', used - (size_t)(start - buf)))) {
			*nl = '\0';
			if (!answer(start))
				return 0;
			start = nl + 1;
		}
		used -= (size_t)(start - buf);
		memmove(buf, start, used);
		if (used >= LINE_MAX_BYTES) { /* a line longer than the protocol's: refused */
			SAY("error request too long\n");
			used = 0;
		}
	}
}
