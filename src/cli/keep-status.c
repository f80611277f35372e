/*
 * keep-status.c - `hotset keep --status`: a keeper's state (or the view a
 * root keeper wrote for this user), in words or as JSON, and whether its
 * keeper runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keep/state.h"
#include "cmd.h"
#include "keep-status.h"
#include "messages.h"
#include "output.h"

/* A date as --status shows it: UTC, ISO 8601; 0 is "never". */
static const char *when(int64_t ns, char buf[32])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm))
		return "never";
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static void status_json(const char *state, const struct hs_keep_state *st, pid_t holder)
{
	struct json j;

	json_begin_report(&j, stdout, "keep", false);
	json_string(&j, "state", state);
	json_bool(&j, "running", holder > 0);
	if (holder > 0)
		json_i64(&j, "pid", holder);
	else
		json_null(&j, "pid");
	json_begin_array(&j, "profiles");
	for (size_t i = 0; i < st->nprofiles; i++)
		json_string(&j, NULL, st->profiles[i]);
	json_end_array(&j);
	json_string(&j, "mode", st->mode[0] ? st->mode : "watch");
	json_u64(&j, "files", st->files);
	json_u64(&j, "pages", st->pages);
	json_u64(&j, "bytes", st->bytes);
	json_u64(&j, "memory_bytes", st->bytes);	/* bytes, named for what they are */
	json_u64(&j, "budget_bytes", st->budget_bytes);
	json_u64(&j, "unknown_files", st->unknown_files);
	json_u64(&j, "dropped_files", st->dropped_files);
	json_u64(&j, "replaced_files", st->replaced_files);
	/* a keeper gone has nothing locked: the kernel unlocks at exit, even at SIGKILL */
	json_u64(&j, "locked_files", holder > 0 ? st->locked_files : 0);
	json_u64(&j, "locked_bytes", holder > 0 ? st->locked_bytes : 0);
	if (holder > 0 && st->protect_cgroup[0]) {
		json_u64(&j, "protected_bytes", st->protected_bytes);
		json_string(&j, "protect_cgroup", st->protect_cgroup);
	} else {
		json_null(&j, "protected_bytes");
		json_null(&j, "protect_cgroup");
	}
	json_u64(&j, "refault_pages", st->refault_pages);
	json_u64(&j, "rewarmed_pages", st->rewarmed_pages);
	json_u64(&j, "rewarms", st->rewarms);
	json_u64(&j, "backoffs", st->backoffs);
	json_bool(&j, "backed_off", holder > 0 && st->backed_off);
	json_string(&j, "backoff_reason", holder > 0 && st->backed_off ? st->backoff_reason : NULL);
	json_string(&j, "pressure", st->pressure[0] ? st->pressure : "none");
	json_string(&j, "io_pressure_file", st->io_pressure[0] ? st->io_pressure : NULL);
	json_string(&j, "evictions", st->evictions[0] ? st->evictions : "checks");
	json_double(&j, "interval_seconds", (double)st->interval_ns / 1e9);
	json_double(&j, "round_seconds", (double)st->round_ns / 1e9);
	json_i64(&j, "since_ns", st->since_ns);
	json_i64(&j, "started_ns", st->started_ns);
	json_i64(&j, "updated_ns", st->updated_ns);
	if (st->last_rewarm_ns)
		json_i64(&j, "last_rewarm_ns", st->last_rewarm_ns);
	else
		json_null(&j, "last_rewarm_ns");
	if (st->last_backoff_ns)
		json_i64(&j, "last_backoff_ns", st->last_backoff_ns);
	else
		json_null(&j, "last_backoff_ns");
	json_u64(&j, "page_size", hs_page_size());
	if (st->view)
		json_u64(&j, "view_uid", st->view_uid);
	else
		json_null(&j, "view_uid");
	json_end_object(&j);
	json_finish(&j);
}

static void status_human(const char *state, const struct hs_keep_state *st, pid_t holder)
{
	const uint64_t ps = hs_page_size();
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], t1[32], t2[32];

	printf("%10s: ", "State");
	print_path(stdout, state, strlen(state));
	if (holder > 0)
		printf("\n%10s: running, pid %d, since %s\n", "Keeper", (int)holder,
		       when(st->started_ns, t1));
	else
		printf("\n%10s: not running (last state written %s)\n", "Keeper",
		       when(st->updated_ns, t1));
	if (st->view)
		printf("%10s: of uid %u's profiles alone, as their owner may see it (the keeper's "
		       "own state is root's)\n", "View", (unsigned)st->view_uid);
	for (size_t i = 0; i < st->nprofiles; i++) {
		printf("%10s: ", i ? "" : "Profiles");
		print_path(stdout, st->profiles[i], strlen(st->profiles[i]));
		putchar('\n');
	}
	printf("%10s: %llu file%s, %llu page%s (%s), budget %s", "Kept",
	       (unsigned long long)st->files, plural(st->files), (unsigned long long)st->pages,
	       plural(st->pages), memory_size(st->pages, ps, a), human_size(st->budget_bytes, b));
	if (st->unknown_files)
		printf("; %llu not watched (residency unknown)", (unsigned long long)st->unknown_files);
	if (st->dropped_files)
		printf("; %llu deleted, dropped", (unsigned long long)st->dropped_files);
	if (st->replaced_files)
		printf("; %llu replaced, not opened", (unsigned long long)st->replaced_files);
	if (!strcmp(st->mode, "lock"))
		printf("\n%10s: %llu file%s, %s", "Locked", holder > 0 ? (unsigned long long)st->locked_files : 0,
		       plural(holder > 0 ? st->locked_files : 0),
		       memory_size(holder > 0 ? st->locked_bytes / ps : 0, ps, a));
	if (holder > 0 && st->protect_cgroup[0]) {
		printf("\n%10s: memory.low %s on ", "Protected", human_size(st->protected_bytes, a));
		print_path(stdout, st->protect_cgroup, strlen(st->protect_cgroup));
	}
	printf("\n%10s: every file within %.1f s (interval %.1f s)%s\n", "Checks",
	       (double)st->round_ns / 1e9, (double)st->interval_ns / 1e9,
	       !strcmp(st->evictions, "events") ? "; evicted ones at once, as the kernel tells (eBPF)"
						: "");
	printf("%10s: %llu page%s (%s) lost and found missing; %llu page%s read back in %llu "
	       "re-warm%s, the last %s\n", "Refaults", (unsigned long long)st->refault_pages,
	       plural(st->refault_pages), memory_size(st->refault_pages, ps, a),
	       (unsigned long long)st->rewarmed_pages, plural(st->rewarmed_pages),
	       (unsigned long long)st->rewarms, plural(st->rewarms), when(st->last_rewarm_ns, t1));
	printf("%10s: %s; backed off %llu time%s, the last %s%s%s%s\n", "Pressure",
	       !strcmp(st->pressure, "trigger") ? "PSI triggers" :
	       !strcmp(st->pressure, "averages") ? "PSI averages" : "not watched",
	       (unsigned long long)st->backoffs, plural(st->backoffs), when(st->last_backoff_ns, t2),
	       holder > 0 && st->backed_off ? "; backed off now: " : "",
	       holder > 0 && st->backed_off ? st->backoff_reason : "",
	       holder > 0 && st->backed_off && !strcmp(st->backoff_reason, "io") ?
	       " (reading at a trickle)" : "");
	if (st->io_pressure[0])
		printf("%10s: %s\n", "I/O from", st->io_pressure);
	printf("%10s: since %s\n", "Counting", when(st->since_ns, t1));
}

/* alt: another state to read if state has none (root's default, for a user). */
int keep_status(const char *state, const char *alt, bool json)
{
	struct hs_keep_state st;
	struct hs_error err = { 0 };
	pid_t holder;
	int rc;

	rc = hs_keep_state_read_any(state, &st, &err);
	if (rc == -ENOENT && alt) {
		struct hs_error again = { 0 };

		if ((rc = hs_keep_state_read_any(alt, &st, &again)) == 0 || rc != -ENOENT) {
			state = alt;
			err = again;
		}
	}
	if (rc) {
		if (rc == -ENOENT)
			error("%s: no such state: no keeper ran on it (give the --state or the "
			      "PROFILEs it was started with)", state);
		else
			error("%s: %s", state, err.msg);
		return EXIT_USAGE;
	}
	holder = hs_keep_lock_holder(state);
	if (json)
		status_json(state, &st, holder);
	else
		status_human(state, &st, holder);
	hs_keep_state_release(&st);
	return finish_stdout(EXIT_OK);
}
