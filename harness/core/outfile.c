#include "esc.h"
#include "outfile.h"
#include "owned.h"
#include "signals.h"
#include "util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int lb_outfile_open(struct lb_outfile *o, const char *dir, const char *name, bool whole)
{
	memset(o, 0, sizeof(*o));
	o->whole = whole;
	/* a path that would not fit is refused, never cut: a cut path is
	 * another directory's file */
	if (strlen(dir) > 3000 || (name && strlen(name) > 200)) {
		lb_errorf("cannot write %.100s...: the path is longer than lockbench writes (%d bytes "
			  "for a directory you name)", dir, LB_DIR_MAX);
		return LB_EINVAL;
	}
	if (name)
		snprintf(o->path, sizeof(o->path), "%s/%s", dir, name);
	else
		snprintf(o->path, sizeof(o->path), "%s", dir);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", o->path);
	o->f = fopen(whole ? o->tmp : o->path, "w");
	if (!o->f) {
		lb_errorf("cannot write %s: %s", o->path, strerror(errno));
		return LB_ESYS;
	}
	return 0;
}

int lb_outfile_close(struct lb_outfile *o)
{
	int err = 0;

	if (!o->f)
		return 0;
	if (o->whole && lb_stop_work()) { /* Ctrl-C during a report or check: not put in place */
		lb_outfile_abort(o);
		return LB_ECANCELED;
	}
	/* the buffered tail is written here: a full disk shows up now, with errno */
	if (fflush(o->f) != 0)
		err = errno;
	else if (ferror(o->f))
		err = EIO; /* an earlier write failed; stdio kept no errno */
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (!err && o->whole && rename(o->tmp, o->path) != 0)
		err = errno;
	if (err) {
		if (o->whole)
			lb_owned_unlink(o->tmp);
		lb_errorf("writing %s failed: %s", o->path, strerror(err));
		return LB_ESYS;
	}
	return 0;
}

void lb_outfile_abort(struct lb_outfile *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	o->f = NULL;
	if (o->whole)
		lb_owned_unlink(o->tmp);
}
