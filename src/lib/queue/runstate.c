/*
 * runstate.c - the state directory of `hotset run` (runstate.h): the
 * records of runs, the queue file, the lock.
 *
 * Both files are text, a "key value" a line, so that a person can read
 * (and a test can write) them; both are read back by a parser that trusts
 * nothing (a file of the state directory may be truncated, or another
 * version's: fuzz-jobfile parses, prints and parses both again), and
 * written whole, atomically, 0600: a job's history tells what it read and
 * cost, which is its owner's business. Times are written as integers of nanoseconds and
 * seconds as fixed-point decimals, never through the locale's printf.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "queue/runstate.h"

/* ---- parsing: "key value" lines ------------------------------------------- */

/* Decimal digits alone, n of them, to 2^64-1: no sign, blank or overflow (strtoull's). */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		/* v * 10 + d would pass 2^64-1 */
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* parse_u64() with an optional '-': times before the epoch read back as written. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
	uint64_t v;
	bool neg = n && s[0] == '-';

	if (parse_u64(s + neg, n - neg, &v) || v > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* Seconds as written by print_seconds(): digits, optionally "." and digits; no locale. */
static int parse_seconds(const char *s, size_t n, double *out)
{
	size_t dot = 0;
	uint64_t whole, frac = 0;
	double scale = 1;

	while (dot < n && s[dot] != '.')
		dot++;
	if (parse_u64(s, dot, &whole))
		return -1;
	if (dot < n) {
		if (dot + 1 == n || n - dot - 1 > 9 || parse_u64(s + dot + 1, n - dot - 1, &frac))
			return -1;
		for (size_t i = dot + 1; i < n; i++)
			scale *= 10;
	}
	*out = (double)whole + (double)frac / scale;
	return 0;
}

/*
 * Seconds to the microsecond, as digits that parse_seconds() reads in any
 * locale ("%f" would write a comma in some). A value no run can have (a
 * NaN, negative, over 30,000 years) is written as 0 rather than as text
 * that would not read back.
 */
static void print_seconds(FILE *f, const char *key, double s)
{
	uint64_t us;

	if (!(s >= 0) || s > 1e12)
		s = 0;
	us = (uint64_t)llround(s * 1e6);
	fprintf(f, "%s %" PRIu64 ".%06" PRIu64 "\n", key, us / 1000000, us % 1000000);
}

/*
 * Call fn for each "key value" line; blank lines and "#" comments skipped.
 * err->line follows the line being read, so that fn's errors, and this
 * function's, name it; it is 0 again once the whole text is read.
 */
typedef int (*kv_fn)(void *ctx, const char *key, size_t klen, const char *val, size_t vlen,
		     struct hs_error *err);

/*
 * Call fn for each "key value" line of len bytes of text; blank lines and
 * "#" comments skipped; the last line may lack its newline. Returns 0
 * (err->line 0), or the first error, fn's or its own (a NUL byte, a line
 * without a value), with err->line the 1-based line it is on.
 */
static int each_kv(const char *text, size_t len, kv_fn fn, void *ctx, struct hs_error *err)
{
	unsigned line = 0;
	size_t pos = 0;
	int rc;

	assert(err);	/* not optional here: the line of an error is the point */
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos, k = 0, v;

		err->line = ++line;
		pos += n + (nl != NULL);
		/* a NUL would cut the value short of what the line says */
		if (memchr(s, '\0', n))
			return hs_error_set(err, EINVAL, "a NUL byte");
		if (n == 0 || s[0] == '#')
			continue;
		while (k < n && s[k] != ' ')
			k++;
		if (k == 0 || k + 1 >= n)
			return hs_error_set(err, EINVAL, "not a 'key value' line");
		v = k + 1;
		if ((rc = fn(ctx, s, k, s + v, n - v, err)))
			return rc;
	}
	err->line = 0;
	return 0;
}

/* Whether the key of klen bytes is name, whole (not a prefix of it). */
static bool key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && !memcmp(key, name, klen);
}

/* "-": a figure the run could not know (no PSI, no /proc/PID/io...), never a 0 */
static bool dash(const char *v, size_t n)
{
	return n == 1 && v[0] == '-';
}

/* ---- records of runs -------------------------------------------------------- */

/*
 * One line of a run's record. A key this version does not know is
 * skipped: a record written by a later hotset, with more figures, still
 * gives the scheduler those it knows. A value that does not parse is an
 * error with its line, as a record half written by hand would be.
 */
static int record_kv(void *ctx, const char *key, size_t klen, const char *v, size_t n,
		     struct hs_error *err)
{
	struct hs_run_record *r = ctx;
	uint64_t u;
	int64_t i;
	int bad = 0;

/* a figure that may be unknown: "-" clears its flag, a number sets it */
#define U64(name, field, flag) \
	else if (key_is(key, klen, name)) { \
		if (dash(v, n)) \
			(flag) = false; \
		else if (!(bad = parse_u64(v, n, &r->field))) \
			(flag) = true; \
	}
	if (key_is(key, klen, "runs")) {
		if (!(bad = parse_u64(v, n, &u) || u > UINT32_MAX))
			r->runs = (unsigned)u;
	} else if (key_is(key, klen, "exit_status")) {
		/* an exit code, or 128 + a signal's number, as a shell says it */
		if (!(bad = parse_u64(v, n, &u) || u > 255 + 128))
			r->exit_status = (int)u;
	} else if (key_is(key, klen, "signal")) {
		if (!(bad = parse_u64(v, n, &u) || u > 127))
			r->signal = (int)u;
	} else if (key_is(key, klen, "start_ns")) {
		if (!(bad = parse_i64(v, n, &i)))
			r->start_ns = i;
	} else if (key_is(key, klen, "end_ns")) {
		if (!(bad = parse_i64(v, n, &i)))
			r->end_ns = i;
	} else if (key_is(key, klen, "wall_seconds")) {
		bad = parse_seconds(v, n, &r->wall_s);
	} else if (key_is(key, klen, "user_seconds")) {
		bad = parse_seconds(v, n, &r->user_s);
	} else if (key_is(key, klen, "sys_seconds")) {
		bad = parse_seconds(v, n, &r->sys_s);
	} else if (key_is(key, klen, "io_wait_seconds")) {
		if (dash(v, n))
			r->io_wait_known = false;
		else if (!(bad = parse_seconds(v, n, &r->io_wait_s)))
			r->io_wait_known = true;
	}
	U64("read_bytes_disk", read_bytes_disk, r->io_known)
	U64("write_bytes_disk", write_bytes_disk, r->io_known)
	U64("working_set_bytes", working_set_bytes, r->profile_known)
	U64("rerun_cache_bytes", rerun_cache_bytes, r->rerun_known)
	else if (key_is(key, klen, "max_rss_bytes")) {
		bad = parse_u64(v, n, &r->max_rss_bytes);
	}
#undef U64
	/* the value quoted, cut at 40 bytes: a line of garbage must not fill the message */
	if (bad)
		return hs_error_set(err, EINVAL, "%.*s: '%.*s' is not a valid value", (int)klen,
				    key, (int)(n > 40 ? 40 : n), v);
	return 0;
}

int hs_run_record_parse(const char *text, size_t len, struct hs_run_record *r,
			struct hs_error *err)
{
	/* a key the file does not hold stays 0, or unknown */
	memset(r, 0, sizeof(*r));
	return each_kv(text, len, record_kv, r, err);
}

/* "key V", or "key -" when V is not known (see dash()). */
static void print_u64_or_dash(FILE *f, const char *key, bool known, uint64_t v)
{
	if (known)
		fprintf(f, "%s %" PRIu64 "\n", key, v);
	else
		fprintf(f, "%s -\n", key);
}

/*
 * Every figure is written, known or not, in the order a person reads
 * them; hs_run_record_parse() reads them in any order. Errors of f are
 * the caller's to check (ferror()).
 */
void hs_run_record_print(FILE *f, const struct hs_run_record *r)
{
	fprintf(f, "# hotset run: one run of a job\n");
	fprintf(f, "runs %u\n", r->runs);
	fprintf(f, "exit_status %d\nsignal %d\n", r->exit_status, r->signal);
	fprintf(f, "start_ns %" PRId64 "\nend_ns %" PRId64 "\n", r->start_ns, r->end_ns);
	print_seconds(f, "wall_seconds", r->wall_s);
	print_seconds(f, "user_seconds", r->user_s);
	print_seconds(f, "sys_seconds", r->sys_s);
	if (r->io_wait_known)
		print_seconds(f, "io_wait_seconds", r->io_wait_s);
	else
		fprintf(f, "io_wait_seconds -\n");
	print_u64_or_dash(f, "read_bytes_disk", r->io_known, r->read_bytes_disk);
	print_u64_or_dash(f, "write_bytes_disk", r->io_known, r->write_bytes_disk);
	fprintf(f, "max_rss_bytes %" PRIu64 "\n", r->max_rss_bytes);
	print_u64_or_dash(f, "working_set_bytes", r->profile_known, r->working_set_bytes);
	print_u64_or_dash(f, "rerun_cache_bytes", r->rerun_known, r->rerun_cache_bytes);
}

/*
 * The whole of a small file, NUL-terminated. 64 MiB at most: a queue of
 * 100,000 jobs writes a few MiB; anything larger is not hotset's, and is
 * refused (-EFBIG) before it takes the memory.
 */
static int slurp(const char *path, char **out, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	*out = NULL, *len = 0;
	if (fd < 0)
		return -errno;
	for (;;) {
		if (n + 4097 > cap && hs_grow(&buf, &cap, n + 4097, 1)) {
			rc = -ENOMEM;
			break;
		}
		if ((got = read(fd, buf + n, cap - n - 1)) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > (64u << 20)) {
			rc = -EFBIG;
			break;
		}
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	/* an empty file: an empty text, not a NULL one */
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[n] = '\0';
	*out = buf, *len = n;
	return 0;
}

int hs_run_record_load(const char *path, struct hs_run_record *r, struct hs_error *err)
{
	char *text;
	size_t len;
	int rc;

	if ((rc = slurp(path, &text, &len)))
		return rc;
	rc = hs_run_record_parse(text, len, r, err);
	free(text);
	return rc;
}

int hs_runstate_write(const char *path, void (*print)(FILE *, const void *), const void *ctx,
		      struct hs_error *err)
{
	struct hs_atomic_file *af;
	FILE *f;
	int fd, rc;

	if ((rc = hs_atomic_open(path, 0600, &af, &fd, err)))
		return rc;
	/* a stream of a copy: fclose() must not close the descriptor the commit syncs */
	if (!(f = fdopen(dup(fd), "w"))) {
		rc = -errno;
		hs_atomic_abort(af);
		return rc;
	}
	print(f, ctx);
	/* a write that failed (ENOSPC) keeps the file as it was: the commit aborts */
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) && !rc)
		rc = -errno;
	return hs_atomic_commit(af, rc);
}

/* hs_run_record_print() as hs_runstate_write() calls it. */
static void print_record(FILE *f, const void *r)
{
	hs_run_record_print(f, r);
}

int hs_run_record_save(const char *path, const struct hs_run_record *r)
{
	return hs_runstate_write(path, print_record, r, NULL);
}

/* ---- the queue file ------------------------------------------------------------ */

/* enum hs_queue_state's names in the file, in its order */
static const char *const state_names[] = { "pending", "running", "done" };
_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == HS_Q_DONE + 1,
	       "a word for each state");

/*
 * One line of the queue file, into the struct hs_queue ctx: the job
 * file's path and hash (a resumed queue must run the same file), the
 * engine, and a "job" line a job, appended to q->jobs in file order.
 * Unknown keys are skipped, as in a record. Returns 0, -EINVAL with err
 * set, or -ENOMEM; q->jobs is the caller's to free either way
 * (hs_queue_parse() frees it on failure).
 */
static int queue_kv(void *ctx, const char *key, size_t klen, const char *v, size_t n,
		    struct hs_error *err)
{
	struct hs_queue *q = ctx;

	if (key_is(key, klen, "jobfile")) {
		if (n >= sizeof(q->jobfile))
			return hs_error_set(err, EINVAL, "jobfile: the path is too long");
		memcpy(q->jobfile, v, n);
		q->jobfile[n] = '\0';
	} else if (key_is(key, klen, "engine")) {
		if (n == 5 && !memcmp(v, "local", 5))
			q->slurm = false;
		else if (n == 5 && !memcmp(v, "slurm", 5))
			q->slurm = true;
		else
			return hs_error_set(err, EINVAL, "engine: give local or slurm");
	} else if (key_is(key, klen, "hash")) {
		/* the job file's FNV-1a, 16 lower-case hex digits as hs_queue_print() writes it */
		uint64_t h = 0;

		if (n != 16)
			return hs_error_set(err, EINVAL, "hash: not 16 hexadecimal digits");
		for (size_t i = 0; i < n; i++) {
			char c = v[i];
			unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
				     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;

			if (d > 15)
				return hs_error_set(err, EINVAL, "hash: not 16 hexadecimal digits");
			h = h << 4 | d;
		}
		q->hash = h;
	} else if (key_is(key, klen, "job")) {
		/*
		 * job NAME STATE EXIT START END SUPERVISOR: six fields split at
		 * single blanks (the queue writes one), so that an empty field
		 * (two blanks) is an error, not a shifted column.
		 */
		const char *f[6];
		size_t fl[6], k = 0, i = 0;
		struct hs_queue_job *j;
		uint64_t u;

		/* six fields split at single blanks; a seventh, or fewer than six, is an error */
		while (k < 6 && i <= n) {
			size_t e = i;

			while (e < n && v[e] != ' ')
				e++;
			f[k] = v + i, fl[k] = e - i;
			k++;
			i = e + 1;
		}
		if (k != 6 || i <= n)
			return hs_error_set(err, EINVAL, "job: give NAME STATE EXIT START END PID");
		if (!hs_job_name_ok(f[0], fl[0]))
			return hs_error_set(err, EINVAL, "job: not a job name");
		/* the job is counted (q->n++) only once all its fields have been read */
		if (hs_grow(&q->jobs, &q->cap, q->n + 1, sizeof(*q->jobs)))
			return -ENOMEM;
		j = &q->jobs[q->n];
		memset(j, 0, sizeof(*j));
		memcpy(j->name, f[0], fl[0]);
		for (k = 0; k < 3 && !(fl[1] == strlen(state_names[k]) &&
				       !memcmp(f[1], state_names[k], fl[1])); k++)
			;
		if (k == 3)
			return hs_error_set(err, EINVAL, "job: the state is pending, running or done");
		j->state = (enum hs_queue_state)k;
		if (parse_u64(f[2], fl[2], &u) || u > 255 + 128)
			return hs_error_set(err, EINVAL, "job: not an exit status");
		j->exit_status = (int)u;
		if (parse_i64(f[3], fl[3], &j->start_ns) || parse_i64(f[4], fl[4], &j->end_ns))
			return hs_error_set(err, EINVAL, "job: not a time");
		/* a pid, or a Slurm job id: both fit in a pid_t */
		if (parse_u64(f[5], fl[5], &u) || u > INT32_MAX)
			return hs_error_set(err, EINVAL, "job: not a pid");
		j->supervisor = (pid_t)u;
		q->n++;
	}
	return 0;
}

/* A queue refused is refused whole: nothing of it is kept, so that nothing of it runs. */
int hs_queue_parse(const char *text, size_t len, struct hs_queue *q, struct hs_error *err)
{
	int rc;

	memset(q, 0, sizeof(*q));
	/* refused whole: a queue half read would resume jobs as pending that were done */
	if ((rc = each_kv(text, len, queue_kv, q, err)))
		hs_queue_free(q);
	return rc;
}

void hs_queue_print(FILE *f, const struct hs_queue *q)
{
	fprintf(f, "# hotset run: the queue (job NAME STATE EXIT START_NS END_NS PID-OR-SLURM-JOB)\n");
	if (q->jobfile[0])	/* an empty value would not read back */
		fprintf(f, "jobfile %s\n", q->jobfile);
	fprintf(f, "hash %016" PRIx64 "\n", q->hash);
	fprintf(f, "engine %s\n", q->slurm ? "slurm" : "local");
	for (size_t i = 0; i < q->n; i++) {
		const struct hs_queue_job *j = &q->jobs[i];

		assert((unsigned)j->state <= HS_Q_DONE);	/* set by the caller, not read */
		fprintf(f, "job %s %s %d %" PRId64 " %" PRId64 " %d\n", j->name,
			state_names[j->state], j->exit_status, j->start_ns, j->end_ns,
			(int)j->supervisor);
	}
}

int hs_queue_load(const char *path, struct hs_queue *q, struct hs_error *err)
{
	char *text;
	size_t len;
	int rc;

	if ((rc = slurp(path, &text, &len)))
		return rc;
	rc = hs_queue_parse(text, len, q, err);
	free(text);
	return rc;
}

/* hs_queue_print() as hs_runstate_write() calls it. */
static void print_queue(FILE *f, const void *q)
{
	hs_queue_print(f, q);
}

int hs_queue_save(const char *path, const struct hs_queue *q)
{
	return hs_runstate_write(path, print_queue, q, NULL);
}

/* Leaves q empty (no jobs), to be parsed into again or freed again. */
void hs_queue_free(struct hs_queue *q)
{
	free(q->jobs);
	q->jobs = NULL;
	q->n = q->cap = 0;
}

/* ---- the directory ------------------------------------------------------------ */

/* root's queue is the machine's (as a system service's state); a user's, XDG's. */
int hs_runstate_default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;
	int n;

	if (geteuid() == 0)
		n = snprintf(buf, size, "/var/lib/hotset/run");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/hotset/run", xdg);
	else {
		/* a relative HOME would put the state wherever run was started */
		if ((!home || home[0] != '/') && (pw = getpwuid(geteuid())))
			home = pw->pw_dir;
		if (!home || home[0] != '/')
			return -ENOENT;
		n = snprintf(buf, size, "%s/.local/state/hotset/run", home);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * flock(2), not a pid file alone: the lock goes with the last descriptor,
 * so that a killed queue's supervisors, which inherited it, keep the
 * directory until they end. The pid written is the queue's: a second
 * queue names it, and tells a killed one (its pid gone, its jobs still
 * stopping) from one that runs.
 */
int hs_runstate_lock(const char *dir, pid_t *holder)
{
	char path[4096], pid[32];
	ssize_t n;
	int fd, len;

	*holder = 0;
	if (snprintf(path, sizeof(path), "%s/lock", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* written in place, so opened as a regular file of the user's alone (atomic.h) */
	if ((fd = hs_open_regular(path, O_RDWR | O_CREAT, 0600, NULL)) < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		if (e == EWOULDBLOCK && (n = pread(fd, pid, sizeof(pid) - 1, 0)) > 0) {
			pid[n] = '\0';
			*holder = (pid_t)atoi(pid);
		}
		close(fd);
		return -e;
	}
	/* ours now: the pid of the queue that holds it, replacing the last holder's */
	len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	errno = 0;
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len) {
		int e = errno ? errno : EIO;	/* a short write says no errno: never "fd 0" */

		close(fd);
		return -e;
	}
	return fd;
}
