/*
 * cmd_servers.c - `lockbench servers [N]`: start N embedded redis-servers,
 * print their URLs, and stop them on Ctrl-C or SIGTERM. A playground for
 * `--redis`, and the process the tests kill -9 to prove nothing is left.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "commands.h"
#include "rserver.h"
#include "signals.h"
#include "util.h"

#define MAX_SERVERS 16

int lb_cmd_servers(int argc, char **argv)
{
	struct lb_server *s[MAX_SERVERS] = { NULL };
	int64_t n = 1;
	int rc = LB_EXIT_OK;

	if (argc > 2 || (argc == 2 && !lb_parse_i64(argv[1], 1, MAX_SERVERS, &n))) {
		fprintf(stderr, "usage: lockbench servers [N]   (N in 1..%d)\n", MAX_SERVERS);
		return LB_EXIT_USAGE;
	}
	for (int64_t i = 0; i < n; i++) {
		s[i] = lb_server_start(NULL);
		if (!s[i]) {
			rc = LB_EXIT_FAIL;
			goto out;
		}
		printf("redis://127.0.0.1:%d pid=%d dir=%s\n", s[i]->port, (int)s[i]->pid, s[i]->dir);
	}
	printf("ready; Ctrl-C stops them\n");
	fflush(stdout);
	while (!lb_stop_requested())
		pause();
out:
	for (int64_t i = 0; i < n; i++)
		lb_server_destroy(s[i]);
	return rc;
}
