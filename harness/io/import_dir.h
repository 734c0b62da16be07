/*
 * import_dir.h - an imported production history (import.h) judged, and
 * written as a run-like directory that `lockbench check` and `report` read:
 *
 *   imported.csv   the file as given, byte for byte: what everything else is
 *                  derived from, and what `check` derives it from again
 *   history.csv    lockbench's own history (readers.h): one lane per client
 *                  and lock, times in ns after the earliest enter
 *   names.csv      lane,client,key: each lane's client and lock by name
 *   overlaps.csv   every overlap, certain or possible (uncertain.h)
 *   fences.csv     every fence that went backwards, certain or possible
 *   summary.csv    what can be known of such a history; summary.json, with
 *                  the reason of each n/a
 *   meta.txt       the command, the source's path, when it was written
 *
 * The directory is written whole or not at all: beside it under a temporary
 * name, renamed into place when every file is there.
 */
#ifndef LB_IMPORT_DIR_H
#define LB_IMPORT_DIR_H

#include <stdio.h>

#include "import.h"
#include "oracle.h"
#include "results.h"
#include "uncertain.h"

#define LB_IMPORT_NAMES_HEADER "lane,client,key"
#define LB_IMPORT_OVERLAPS_HEADER "certainty,key,client_a,line_a,client_b,line_b,from_ns,to_ns," \
	"overlap_ns,margin_ns,uncertainty_ns,from_utc"
#define LB_IMPORT_FENCES_HEADER "certainty,key,client,line,fence,enter_ns,after_client," \
	"after_line,after_fence,after_enter_ns"
#define LB_IMPORT_MAX_COPY (INT64_C(1) << 30) /* bytes of a file --out keeps */

/* Judge @imp with lb_ujudge at the limits of import.h; a limit reached is
 * said, naming @path. */
int lb_import_judge(const struct lb_import *imp, const char *path, struct lb_ujudgement *j);

/* The class of the history and the sentence that says why: overlap (an
 * overlap is certain), inconclusive (some are possible, none certain) or
 * safe (none even possible). */
enum lb_class lb_import_class(const struct lb_import *imp, const struct lb_ujudgement *j,
			      char *why, size_t len);

/* Each file's text, as the directory holds it (check writes them again and
 * compares). */
void lb_import_history_write(FILE *f, const struct lb_import *imp);
void lb_import_names_write(FILE *f, const struct lb_import *imp);
void lb_import_overlaps_write(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j);
void lb_import_fences_write(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j);
/* The summary: @source names the file (its last component is kept). */
void lb_import_summary(const struct lb_import *imp, const struct lb_ujudgement *j,
		       const char *source, struct lb_summary *s);

/* Whether @imp fits a run directory (history.csv's lanes and keys, two days);
 * if not, says why, naming @path, and returns LB_EINVAL. */
int lb_import_fits(const struct lb_import *imp, const char *path);

/* Make the temporary directory beside @dir (its parents created) into @tmp,
 * marked and the janitor's to remove if lockbench is killed (owned.h,
 * rserver.h); copies a killed import left beside @dir are swept first: 0 or
 * LB_ESYS, said. */
int lb_import_dir_begin(const char *dir, char *tmp, size_t len);
/* Remove @tmp, the work given up. */
void lb_import_dir_abandon(const char *tmp);
/* Copy the regular file @src (never a FIFO or device: refused, LB_EINVAL)
 * into @tmp/imported.csv, at most LB_IMPORT_MAX_COPY bytes (LB_EINVAL past
 * it). */
int lb_import_copy_source(const char *src, const char *tmp);
/* Every other file into @tmp, then @tmp renamed to @dir: 0 or LB_ESYS (said;
 * @tmp is removed). @cmdline goes into meta.txt. */
int lb_import_dir_finish(const char *tmp, const char *dir, const char *src, const char *cmdline,
			 const struct lb_import *imp, const struct lb_ujudgement *j);

/* An imported directory read back: imported.csv parsed with the uncertainty
 * its summary @s records, and judged again. 0 or an error (said). */
int lb_import_load_dir(const char *dir, const struct lb_summary *s, struct lb_import *imp,
		       struct lb_ujudgement *j);

/* A lane's label for charts and pages: "2: worker-b" ("2: worker-b · orders"
 * with several locks), cut to about @len - 1 bytes at a character's edge. */
void lb_import_lane_label(const struct lb_import *imp, int lane, char *buf, size_t len);

#endif
