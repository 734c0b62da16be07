/*
 * accept.h - the failures an audit accepts (`lockbench audit --accept
 * CLAIM:SCENARIO[,...]`, `--accept-file FILE`): a claim a lock is known to
 * break under a scenario, with the reason a team accepts it. The file is
 * what a team commits beside its pipeline:
 *
 *   # failures of our lock we accept, and why
 *   [accept]
 *   M:holder-pause = fencing tokens: the store refuses the paused holder's write
 *   mutex:slow-holder = the same: contained, never applied
 *
 * CLAIM is a letter of MDFOL or its name (mutex, deadlock-free,
 * fault-tolerant, owner-release, no-lapse); the key may be in double
 * quotes; every line of the file is a comment (; or #), blank, the [accept]
 * header or one CLAIM:SCENARIO = REASON, and anything else is refused with
 * the file, the line, the field and what was expected. Whether SCENARIO
 * tests CLAIM is the audit's to say (cmd_audit.c), with the line kept here.
 */
#ifndef LB_ACCEPT_H
#define LB_ACCEPT_H

#define LB_ACCEPT_MAX 64

struct lb_accept {
	unsigned claim;            /* its index, 0..LB_CLAIM_COUNT-1 (strategy.h) */
	char scenario[64];
	char reason[400];          /* "" from --accept, which gives none */
	char where[300];           /* "--accept", or "FILE:LINE" */
};

struct lb_accept_list {
	struct lb_accept a[LB_ACCEPT_MAX];
	int n;
};

/* --accept CLAIM:SCENARIO[,...] added to @l: 0, or LB_EINVAL (said). */
int lb_accept_arg(struct lb_accept_list *l, const char *arg);
/* The [accept] section of @path added to @l: 0, LB_EINVAL (malformed or not
 * a regular file: said with the file and line) or LB_ESYS (unreadable:
 * said). */
int lb_accept_file(struct lb_accept_list *l, const char *path);

#endif
