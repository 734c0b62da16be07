/*
 * owned.h - the directories lockbench owns, and the one way it deletes.
 *
 * A directory lockbench makes (a server's, the adapter hosts' sockets', an
 * import's temporary copy, a run's --out) holds a marker, .lockbench-owned:
 * the maker's pid, uid, pid namespace, start time and boot. Nothing is ever
 * deleted but through this file: a tree only when it is a directory of this
 * user holding a marker of this user, walked with openat/unlinkat from
 * descriptors opened O_NOFOLLOW|O_DIRECTORY (a symlink is removed as a link,
 * never followed; another user's subdirectory, or another file system, is
 * left); a single file only when it is this user's and not a directory.
 *
 * An output directory (--out of every command) is claimed: made, or taken
 * when empty, and marked at once (O_EXCL: two lockbenches cannot claim one);
 * a directory that holds anything else is refused (docs/running.md).
 */
#ifndef LB_OWNED_H
#define LB_OWNED_H

#include <stdbool.h>
#include <stddef.h>

#define LB_OWNED_MARKER ".lockbench-owned"

/* Claim @dir for this process's output (@what names the option, "--out"):
 * its parents made (never one a ".." climbs out of), @dir made or found
 * empty, then marked. 0; LB_EINVAL when refused (said: not empty, a symlink,
 * not a directory, a parent that does not exist before a ".."); LB_ESYS
 * (said) when it cannot be written. A directory this process claimed already
 * is claimed again (0). */
int lb_owned_claim(const char *what, const char *dir);
/* Give back @dir, claimed by this process, when it holds nothing but its
 * marker (a run that could not happen wrote nothing): the marker removed,
 * and @dir too when @made (this process made it, lb_owned_claim). 1 when
 * @dir was removed; else 0 (it holds more, is not ours, or stays). */
int lb_owned_unclaim(const char *dir, bool made);
/* Would @dir be taken as a new directory, made later (an import renames
 * its finished copy there)? Absent, or an empty directory, not a symlink,
 * no ".." after a missing parent: 0; else LB_EINVAL (said). Makes nothing. */
int lb_owned_fresh(const char *what, const char *dir);
/* @dir's parents made, as lb_owned_claim makes them: 0 or said. */
int lb_owned_parents(const char *what, const char *dir);
/* mkdtemp(@tmpl), marked as a temporary directory (role=tmp: a sweep may
 * remove it once its maker is gone): 0, or LB_ESYS with errno set (nothing
 * left). */
int lb_owned_mkdtemp(char *tmpl);
/* A temporary directory of this process's made a result (an import's copy
 * renamed into its --out): its marker no longer says temporary, so that no
 * sweep removes it. 0; LB_EINVAL when it is not this process's; LB_ESYS. */
int lb_owned_keep(const char *dir);
/* Remove the tree @path if it is lockbench's (see above). 0 (also when it
 * is gone already), LB_EINVAL when it is not ours (left as it is), LB_ESYS
 * when something in it could not be removed. */
int lb_owned_rmtree(const char *path);
/* Remove the file @path that lockbench wrote (never a directory, never
 * another user's file; a symlink is removed, not followed). 0 (also when
 * absent), LB_EINVAL when refused, LB_ESYS. */
int lb_owned_unlink(const char *path);
/* Async-signal-safe, for a fatal signal: remove @dir's files named in
 * @files (NULL-ended) and its marker, then @dir if that emptied it. */
void lb_owned_rmdir_signal_safe(const char *dir, const char *const *files);
/* Remove every temporary directory (lb_owned_mkdtemp's, never a claimed
 * --out or one lb_owned_keep kept) in @parent whose name @match accepts and whose
 * maker is known to be gone: marked by this user, in this pid namespace (or
 * an earlier boot), its pid no longer running the process that made it. A
 * directory of another user, or one whose maker may live (its pid namespace
 * is another, or unknown), is left. How many were removed. */
int lb_owned_sweep(const char *parent, bool (*match)(const char *name, const void *arg),
		   const void *arg);

#endif
