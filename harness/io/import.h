/*
 * import.h - a production history, read: the CSV of critical sections an
 * SRE makes from the workers' logs (docs/running.md, "Your production history
 * through the oracle"), one row per section:
 *
 *   client,enter,exit[,key][,token][,fence][,server][,clock_uncertainty_ms]
 *
 * columns by name in any order, a header first, blank lines and # comments
 * anywhere, RFC 4180 quotes within a line. Times are epoch seconds with up
 * to 9 decimals (1764072000.123456789) or RFC 3339 (2026-11-25T12:00:00.5Z,
 * +01:00), read digit by digit into integer nanoseconds: exact.
 *
 * The reader is a parser: bytes in, values out (lb_import_read_file reads a
 * FILE*, the fuzzing harness may feed it from memory). Every refusal names
 * the file, the line, the field and what was expected:
 *   prod.csv:7: field exit: expected a time at or after enter (1764072000.5), got '1764071999'
 * Nothing is read past a limit, and nothing allocated grows beyond the input.
 * All return 0, LB_EINVAL (malformed: the message is printed), LB_ESYS
 * (unreadable) or LB_ENOMEM.
 */
#ifndef LB_IMPORT_H
#define LB_IMPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LB_IMPORT_MAX_LINE 4096          /* bytes of a line, its end excluded */
#define LB_IMPORT_MAX_FIELD 200          /* bytes of a field (a name, a token) */
#define LB_IMPORT_MAX_SECTIONS 1000000   /* rows */
#define LB_IMPORT_MAX_UNC_MS 3600000     /* a clock's uncertainty: one hour */
#define LB_IMPORT_MAX_EPOCH_S INT64_C(9000000000) /* 2255-03-14: int64 ns hold it */
#define LB_IMPORT_MAX_PAIRS 1000000      /* overlapping pairs judged, exactly */
#define LB_IMPORT_MAX_WORK 400000000     /* comparisons the judge may make */

/* One critical section of the file. */
struct lb_isec {
	size_t line;        /* its line in the file */
	int client;         /* index of its client's name (order of first appearance) */
	int key;            /* index of its key's name; 0 with no key column */
	int server;         /* index of its server's name; -1 when not given */
	int64_t enter_ns;   /* epoch ns */
	int64_t exit_ns;
	int64_t unc_ns;     /* its clock's uncertainty: the row's, else the default */
	int64_t fence;      /* -1 when not given */
	uint64_t token;     /* lb_token_hash of the token, 0 when not given */
	bool unc_given;     /* the row gave its own uncertainty */
	/* lockbench's history.csv: one lane (a "client" there) per client and key,
	 * lane % keys == key, as history.csv's readers require */
	int lane;
	uint32_t seq;       /* the lane's sections, from 0 in enter order */
};

/* Names, in order of first appearance. */
struct lb_inames {
	char **name;
	int n, cap;
	int *slot;          /* open addressing: index + 1, 0 empty */
	size_t slots;
};

struct lb_import {
	struct lb_isec *s;  /* in file order */
	size_t n, cap;
	struct lb_inames clients, keys, servers;
	bool has_key, has_fence, has_token, has_server, has_unc;
	int64_t default_unc_ns;
	int64_t first_ns;   /* the earliest enter; 0 with no section */
	int64_t last_ns;    /* the latest exit */
	int lanes;          /* keys x the most clients of one key */
	int *lane_client;   /* @lanes long: the client of each lane, -1 for none */
};

/* @path opened for reading without blocking, and refused unless a regular
 * file (a directory, a FIFO or a device is named as such, never waited on):
 * the stream, or NULL with *@rc LB_EINVAL (not a regular file) or LB_ESYS
 * (unreadable), said. */
FILE *lb_import_open(const char *path, int *rc);
/* Read @path so opened; messages name it @name (NULL: @path); @default_unc_ns
 * is a row's uncertainty when it gives none. */
int lb_import_read(const char *path, const char *name, int64_t default_unc_ns,
		   struct lb_import *imp);
int lb_import_read_file(FILE *f, const char *path, int64_t default_unc_ns, struct lb_import *imp);
void lb_import_free(struct lb_import *imp);

/* A time of the file into epoch ns: 0, or -1 with what is wrong in @why. */
int lb_import_parse_time(const char *s, int64_t *ns, char *why, size_t len);
/* Milliseconds with up to 6 decimals (an uncertainty) into ns, in
 * [0, @max_ms]: 0, or -1 with what is wrong in @why. */
int lb_import_parse_ms(const char *s, int64_t max_ms, int64_t *ns, char *why, size_t len);
/* @ns since the epoch as RFC 3339 UTC with 9 decimals ("2026-11-25T12:00:00.123456789Z"). */
void lb_import_utc(int64_t ns, char *buf, size_t len);
/* @ns as milliseconds with 6 decimals, exactly ("-1.500000"). */
void lb_import_ms(int64_t ns, char *buf, size_t len);

#endif
