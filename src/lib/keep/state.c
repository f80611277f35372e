/*
 * state.c - a keeper's state file, the owners' views of it, the lock of
 * one keeper per state, and where a state is when none is named (see
 * state.h). Written through base/atomic.h (a temporary file, fsync,
 * rename; the lock and pid file never through another user's link); read
 * with a line number for what is wrong.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "keep/state.h"

/* ---- writing ---------------------------------------------------------------- */

/* A profile path on one line: backslash and newline escaped. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* The reverse of put_escaped(), in place; any other backslash stays as it is. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && (s[1] == '\\' || s[1] == 'n'))
			*o++ = *++s == 'n' ? '\n' : '\\';
		else
			*o++ = *s;
	}
	*o = '\0';
}

/* The first line, with the format's version: a format that changes meaning is refused, not misread. */
#define STATE_MAGIC "hotset-keep-state 1"

/*
 * The state, to path: mode, and made uid's and gid's unless they are -1
 * (a view, for the user it shows). The text is made in memory first, so
 * that the file is written in one go and a failure to make it (out of
 * memory) leaves the state that was there whole.
 */
static int state_write(const char *path, const struct hs_keep_state *st, mode_t mode, uid_t uid,
		       gid_t gid)
{
	struct hs_atomic_file *af = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc, fd = -1;

	if (!f)
		return -ENOMEM;
	fprintf(f, STATE_MAGIC "\n");
	fprintf(f, "pid %d\nrunning %d\n", (int)st->pid, st->running);
	/* updated: this writing's time, by which --status tells how old a dead keeper's state is */
	fprintf(f, "since %lld\nstarted %lld\nupdated %lld\n", (long long)st->since_ns,
		(long long)st->started_ns, (long long)hs_realtime_ns());
	fprintf(f, "refault_pages %llu\nrewarmed_pages %llu\nrewarms %llu\nbackoffs %llu\n",
		(unsigned long long)st->refault_pages, (unsigned long long)st->rewarmed_pages,
		(unsigned long long)st->rewarms, (unsigned long long)st->backoffs);
	fprintf(f, "last_rewarm %lld\nlast_backoff %lld\n", (long long)st->last_rewarm_ns,
		(long long)st->last_backoff_ns);
	fprintf(f, "backed_off %d\nbackoff_reason %s\npressure %s\nevictions %s\n", st->backed_off,
		st->backoff_reason, st->pressure, st->evictions);
	fprintf(f, "budget %llu\nfiles %llu\npages %llu\nbytes %llu\nunknown_files %llu\n"
		"dropped_files %llu\nreplaced_files %llu\ninterval %llu\nround %llu\n",
		(unsigned long long)st->budget_bytes, (unsigned long long)st->files,
		(unsigned long long)st->pages, (unsigned long long)st->bytes,
		(unsigned long long)st->unknown_files, (unsigned long long)st->dropped_files,
		(unsigned long long)st->replaced_files, (unsigned long long)st->interval_ns,
		(unsigned long long)st->round_ns);
	if (st->view)
		fprintf(f, "view_uid %u\n", (unsigned)st->view_uid);
	fprintf(f, "mode %s\nlocked_files %llu\nlocked_bytes %llu\nprotected_bytes %llu\n",
		st->mode[0] ? st->mode : "watch", (unsigned long long)st->locked_files,
		(unsigned long long)st->locked_bytes, (unsigned long long)st->protected_bytes);
	/* paths escaped: a newline in one would end its line, and the field, early */
	if (st->io_pressure[0]) {
		fputs("io_pressure ", f);
		put_escaped(f, st->io_pressure);
		fputc('\n', f);
	}
	if (st->protect_cgroup[0]) {
		fputs("protect_cgroup ", f);
		put_escaped(f, st->protect_cgroup);
		fputc('\n', f);
	}
	for (size_t i = 0; i < st->nprofiles; i++) {
		fputs("profile ", f);
		put_escaped(f, st->profiles[i]);
		fputc('\n', f);
	}
	/* the last line: a state without it was cut short, and is refused whole */
	fputs("end\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	rc = hs_atomic_open(path, mode, &af, &fd, NULL);
	/* before a byte is written: the figures are of files others may not query */
	if (!rc && (fchmod(fd, mode) < 0 ||
		    ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0)))
		rc = -errno;
	/* write(2) may take part of it; EINTR (a signal in a daemon) is no failure */
	for (const char *p = buf; !rc && len;) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			p += n, len -= (size_t)n;
	}
	if (af)
		rc = hs_atomic_commit(af, rc);
	free(buf);
	return rc;
}

int hs_keep_state_write(const char *path, const struct hs_keep_state *st)
{
	return state_write(path, st, 0600, (uid_t)-1, (gid_t)-1);
}

int hs_keep_state_write_view(const char *path, const struct hs_keep_state *st, uid_t uid,
			     gid_t gid)
{
	return state_write(path, st, 0400, uid, gid);
}

/* Beside the state: a user who knows the state's name finds the view of it. */
char *hs_keep_view_path(const char *path, uid_t uid)
{
	char *p;

	return asprintf(&p, "%s.uid-%u", path, (unsigned)uid) < 0 ? NULL : p;
}

void hs_keep_state_release(struct hs_keep_state *st)
{
	for (size_t i = 0; i < st->nprofiles; i++)
		free(st->profiles[i]);
	free(st->profiles);
	st->profiles = NULL;
	st->nprofiles = 0;
}

/* ---- reading ---------------------------------------------------------------- */

/*
 * The value of "key value" into the field that key names; false if no
 * field does. *bad: a value that is not the field's kind (a number with
 * something after it, a negative count, one out of range).
 */
static bool state_field(struct hs_keep_state *st, const char *key, char *val, bool *bad)
{
	static const struct {
		const char *key;
		size_t off;
		int kind;	/* 0 u64, 1 i64, 2 bool */
	} fields[] = {
#define U(k, f) { k, offsetof(struct hs_keep_state, f), 0 }
#define I(k, f) { k, offsetof(struct hs_keep_state, f), 1 }
		U("refault_pages", refault_pages), U("rewarmed_pages", rewarmed_pages),
		U("rewarms", rewarms), U("backoffs", backoffs), I("last_rewarm", last_rewarm_ns),
		I("last_backoff", last_backoff_ns), I("since", since_ns), I("started", started_ns),
		I("updated", updated_ns), U("budget", budget_bytes), U("files", files),
		U("pages", pages), U("bytes", bytes), U("unknown_files", unknown_files),
		U("dropped_files", dropped_files), U("replaced_files", replaced_files),
		U("interval", interval_ns), U("round", round_ns),
		U("locked_files", locked_files), U("locked_bytes", locked_bytes),
		U("protected_bytes", protected_bytes),
		{ "running", offsetof(struct hs_keep_state, running), 2 },
		{ "backed_off", offsetof(struct hs_keep_state, backed_off), 2 },
#undef U
#undef I
	};
	char *end;

	/* pid and view_uid apart: their types are not in the table's three */
	if (!strcmp(key, "pid")) {
		st->pid = (pid_t)strtol(val, &end, 10);
		*bad = end == val || *end;
		return true;
	}
	if (!strcmp(key, "view_uid")) {
		errno = 0;
		st->view_uid = (uid_t)strtoul(val, &end, 10);
		st->view = true;
		*bad = end == val || *end || errno || *val == '-';
		return true;
	}
	{
		static const struct {
			const char *key;
			size_t off, size;
		} strs[] = {
#define T(k, f) { k, offsetof(struct hs_keep_state, f), sizeof(((struct hs_keep_state *)0)->f) }
			T("backoff_reason", backoff_reason), T("pressure", pressure), T("mode", mode),
			T("protect_cgroup", protect_cgroup), T("evictions", evictions),
			T("io_pressure", io_pressure),
#undef T
		};

		/* a string too long for its field is cut, not refused: it is shown, never acted on */
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
			if (strcmp(key, strs[i].key))
				continue;
			unescape(val);
			snprintf((char *)st + strs[i].off, strs[i].size, "%s", val);
			return true;
		}
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *p = (char *)st + fields[i].off;

		if (strcmp(key, fields[i].key))
			continue;
		errno = 0;
		if (fields[i].kind == 0)
			*(uint64_t *)p = strtoull(val, &end, 10);
		else if (fields[i].kind == 1)
			*(int64_t *)p = strtoll(val, &end, 10);
		else
			*(bool *)p = strtol(val, &end, 10) != 0;
		/* strtoull takes "-1" as a huge number: a sign is refused where none belongs */
		*bad = end == val || *end || errno || (fields[i].kind == 0 && *val == '-');
		return true;
	}
	return false;
}

/* A state is a regular file: a FIFO or a device would block, or never end. */
static int state_type(const struct stat *sb, struct hs_error *err)
{
	if (S_ISREG(sb->st_mode))
		return 0;
	return hs_error_set(err, S_ISDIR(sb->st_mode) ? EISDIR : EINVAL,
			    "not a regular file: a state file is a file of its own");
}

int hs_keep_state_read(const char *path, struct hs_keep_state *st, struct hs_error *err)
{
	/* O_NONBLOCK: a FIFO planted at path opens at once, and is refused by its type */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat sb;
	FILE *f = NULL;
	int rc;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return hs_error_set(err, errno, "%s", strerror(errno));
	if (fstat(fd, &sb) < 0)
		rc = hs_error_set(err, errno, "%s", strerror(errno));
	else if (!(rc = state_type(&sb, err)) && !(f = fdopen(fd, "r")))
		rc = hs_error_set(err, errno, "%s", strerror(errno));
	if (!f) {
		close(fd);
		return rc;
	}
	rc = hs_keep_state_parse(f, st, err);
	fclose(f);
	return rc;
}

int hs_keep_state_parse(FILE *f, struct hs_keep_state *st, struct hs_error *err)
{
	char *line = NULL;
	size_t cap = 0, pcap = 0;
	ssize_t n;
	unsigned lineno = 0;
	bool ended = false;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	while (!rc && !ended && (n = getline(&line, &cap, f)) >= 0) {
		char *val;
		bool bad = false;

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (lineno == 1) {
			if (strcmp(line, STATE_MAGIC))
				rc = hs_error_set(err, EINVAL, "not a keep state file (no \"%s\" line)",
						  STATE_MAGIC);
			continue;
		}
		if (!strcmp(line, "end")) {
			ended = true;
			continue;
		}
		val = strchr(line, ' ');
		val = val ? (*val = '\0', val + 1) : line + n;
		if (!strcmp(line, "profile")) {
			char *p = strdup(val);

			if (!p || hs_grow(&st->profiles, &pcap, st->nprofiles + 1, sizeof(char *))) {
				free(p);
				rc = -ENOMEM;
				break;
			}
			unescape(p);
			st->profiles[st->nprofiles++] = p;
		} else if (state_field(st, line, val, &bad) && bad) {
			rc = hs_error_set(err, EINVAL, "line %u: a bad value for %s", lineno, line);
		}
		/* keys this version does not know are skipped: a newer keeper wrote them */
	}
	/* a state without its last line was cut short: its figures are not to be trusted */
	if (!rc && !ended)
		rc = hs_error_set(err, EINVAL, "%s", lineno ? "cut short (no \"end\" line)" : "empty");
	free(line);
	if (rc)
		hs_keep_state_release(st);
	return rc;
}

/* ---- where a state is --------------------------------------------------------- */

int hs_keep_state_dir(bool create, char **dir, struct hs_error *err)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	*dir = NULL;
	if (geteuid() == 0)
		*dir = strdup(HS_KEEP_ROOT_DIR);
	else if (run && run[0] == '/') {
		if (asprintf(dir, "%s/hotset", run) < 0)
			*dir = NULL;
	} else {
		hs_error_set(err, ENOENT, "no default state file: XDG_RUNTIME_DIR is not set; "
			     "give --state FILE");
		return -ENOENT;	/* plainly not 0: the callers use *dir on 0 */
	}
	if (!*dir) {
		hs_error_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	/* the user's alone: its states tell what files are kept */
	if (create && mkdir(*dir, 0700) < 0 && errno != EEXIST) {
		int rc = hs_error_set(err, errno, "cannot create %s: %s; give --state FILE", *dir,
				      strerror(errno));

		free(*dir);
		*dir = NULL;
		return rc;
	}
	return 0;
}

/*
 * NAME is the first profile's file name, HASH (FNV-1a) of the absolute
 * paths of all of them, so that each set has its own, found again from
 * the same PROFILEs.
 */
char *hs_keep_state_name(const char *dir, char *const *profiles, size_t n)
{
	uint32_t h = 2166136261u;
	char *path, name[48];
	const char *base;
	size_t len = 0;

	assert(n >= 1 && profiles[0][0] == '/');	/* absolute: NAME is after its last '/' */
	base = strrchr(profiles[0], '/') + 1;
	for (size_t i = 0; i < n; i++)
		for (const char *p = profiles[i]; ; p++) {
			h = (h ^ (unsigned char)*p) * 16777619u;
			if (!*p)
				break;
		}
	/* up to the first dot, in letters, digits, '-' and '_': a name any shell quotes plainly */
	for (; len < sizeof(name) - 1 && base[len] && base[len] != '.'; len++)
		name[len] = (base[len] >= 'a' && base[len] <= 'z') || (base[len] >= 'A' && base[len] <= 'Z') ||
			    (base[len] >= '0' && base[len] <= '9') || base[len] == '-' || base[len] == '_' ?
			    base[len] : '_';
	name[len] = '\0';
	if (asprintf(&path, "%s/keep-%s-%08x.state", dir, name, (unsigned)h) < 0)
		path = NULL;
	return path;
}

int hs_keep_state_default(char *const *profiles, size_t n, bool create, char **out,
			  struct hs_error *err)
{
	char *dir;
	int rc;

	*out = NULL;
	if ((rc = hs_keep_state_dir(create, &dir, err)))
		return rc;
	*out = hs_keep_state_name(dir, profiles, n);
	free(dir);
	return *out ? 0 : hs_error_set(err, ENOMEM, "out of memory");
}

int hs_keep_state_only(char **out, struct hs_error *err)
{
	char *dir, *found = NULL;
	struct dirent *de;
	unsigned n = 0;
	DIR *d;
	int rc;

	*out = NULL;
	if ((rc = hs_keep_state_dir(false, &dir, err)))
		return rc;
	if (!(d = opendir(dir))) {
		rc = hs_error_set(err, errno, "no keeper has run here: %s: %s", dir, strerror(errno));
		free(dir);
		return rc;
	}
	/* keep-NAME-HASH.state, as hs_keep_state_name() makes them; views and locks are not */
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "keep-", 5) || len < 11 || strcmp(de->d_name + len - 6, ".state"))
			continue;
		if (n++ == 0 && asprintf(&found, "%s/%s", dir, de->d_name) < 0)
			found = NULL;
	}
	closedir(d);
	if (n > 1)
		rc = hs_error_set(err, EEXIST, "%u keeper states in %s: give --state FILE or the "
				  "PROFILEs", n, dir);
	else if (!n)
		rc = hs_error_set(err, ENOENT, "no keeper state in %s: give --state FILE or the "
				  "PROFILEs", dir);
	else if (!found)
		rc = hs_error_set(err, ENOMEM, "out of memory");
	if (rc) {
		free(found);
		found = NULL;
	}
	free(dir);
	*out = found;
	return rc;
}

int hs_keep_state_read_any(const char *path, struct hs_keep_state *st, struct hs_error *err)
{
	struct hs_error verr = { 0 };
	char *view;
	int rc = hs_keep_state_read(path, st, err);

	if ((rc != -EACCES && rc != -EPERM) || !(view = hs_keep_view_path(path, geteuid())))
		return rc;
	if (hs_keep_state_read(view, st, &verr) == 0) {
		free(view);
		return 0;
	}
	free(view);
	return hs_error_set(err, EACCES, "%s: a keeper's state is its user's alone; a keeper run "
			    "as root writes each other owner of a profile a view (STATE.uid-UID), and "
			    "there is none for uid %u: it keeps no profile of this user's", strerror(-rc),
			    (unsigned)geteuid());
}

/* ---- the lock --------------------------------------------------------------- */

/*
 * One keeper per state: flock(2) on STATE.lock, which the kernel releases
 * when its holder ends however it ends, so that a lock file left behind
 * never stops the next keeper. The pid written in it is for messages
 * ("another keep (pid N) is running"), and for --status: whoever can take
 * a shared lock knows that no keeper holds the exclusive one.
 */
static char *lock_path(const char *path)
{
	char *p;

	return asprintf(&p, "%s.lock", path) < 0 ? NULL : p;
}

/* The pid in a lock file, 0 if none (a keeper between its flock and its write). */
static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

int hs_keep_lock_own(int fd)
{
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	errno = 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;	/* a short write says no errno */
	return 0;
}

int hs_keep_lock(const char *path, pid_t *holder)
{
	char *lp = lock_path(path);
	int fd, rc;

	*holder = 0;
	if (!lp)
		return -ENOMEM;
	/* a regular file, never through another user's link (atomic.h) */
	fd = hs_open_regular(lp, O_RDWR | O_CREAT, 0644, NULL);
	free(lp);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;

		if (err == -EWOULDBLOCK)
			*holder = read_pid(fd);
		close(fd);
		return err;
	}
	if ((rc = hs_keep_lock_own(fd))) {
		close(fd);
		return rc;
	}
	return fd;
}

pid_t hs_keep_lock_holder(const char *path)
{
	char *lp = lock_path(path);
	pid_t pid = 0;
	int fd;

	if (!lp)
		return -ENOMEM;
	fd = hs_open_regular(lp, O_RDONLY, 0, NULL);	/* never a FIFO, which would block */
	free(lp);
	if (fd < 0)
		return fd;
	/* held: by the pid it says, or (not written yet) by someone, 1 */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		pid = errno == EWOULDBLOCK ? (read_pid(fd) > 0 ? read_pid(fd) : 1) : -errno;
	close(fd);
	return pid;
}
