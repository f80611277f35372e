/*
 * fuzz-jobfile.c - libFuzzer target for the parsers of `hotset run`: the
 * job file (jobfile.h) and the state directory's records and queue
 * (runstate.h).
 *
 * The first byte picks the parser. A job file that parses has valid,
 * unique names, each found by hs_jobfile_find() where it is, and non-empty
 * commands without a newline; a record or a queue that parses, printed and
 * parsed again, gives the same values.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/jobfile.h"
#include "queue/runstate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *printed(void (*print)(FILE *, const void *), const void *v, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert(f);
	print(f, v);
	fclose(f);
	return buf;
}

static void print_record(FILE *f, const void *r)
{
	hs_run_record_print(f, r);
}

static void print_queue(FILE *f, const void *q)
{
	hs_queue_print(f, q);
}

static void job_file(const char *buf, size_t size)
{
	struct hs_jobfile jf;
	struct hs_error err = { 0 };

	if (hs_jobfile_parse(buf, size, &jf, &err) == 0) {
		for (size_t i = 0; i < jf.n; i++) {
			assert(hs_job_name_ok(jf.jobs[i].name, strlen(jf.jobs[i].name)));
			assert(jf.jobs[i].command[0] && !strchr(jf.jobs[i].command, '\n'));
			for (size_t k = 0; k < i; k++)
				assert(strcmp(jf.jobs[i].name, jf.jobs[k].name));
			assert(hs_jobfile_find(&jf, jf.jobs[i].name) == (ssize_t)i);
		}
	} else {
		assert(err.line > 0 && err.msg[0]);
	}
	hs_jobfile_free(&jf);
}

static void record(const char *buf, size_t size)
{
	struct hs_run_record a, b;
	struct hs_error err = { 0 };
	char *text;
	size_t len;

	if (hs_run_record_parse(buf, size, &a, &err))
		return;
	text = printed(print_record, &a, &len);
	assert(hs_run_record_parse(text, len, &b, &err) == 0);
	assert(a.runs == b.runs && a.exit_status == b.exit_status && a.signal == b.signal);
	assert(a.start_ns == b.start_ns && a.end_ns == b.end_ns);
	assert(a.io_known == b.io_known && a.profile_known == b.profile_known);
	assert(a.rerun_known == b.rerun_known && a.max_rss_bytes == b.max_rss_bytes);
	assert(!a.io_known || (a.read_bytes_disk == b.read_bytes_disk &&
			       a.write_bytes_disk == b.write_bytes_disk));
	free(text);
}

static void queue(const char *buf, size_t size)
{
	struct hs_queue a, b;
	struct hs_error err = { 0 };
	char *text;
	size_t len;

	if (hs_queue_parse(buf, size, &a, &err))
		return;
	/* a path with a newline does not survive: the queue never writes one */
	if (!strchr(a.jobfile, '\n')) {
		text = printed(print_queue, &a, &len);
		assert(hs_queue_parse(text, len, &b, &err) == 0);
		assert(a.n == b.n && a.hash == b.hash && a.slurm == b.slurm &&
		       !strcmp(a.jobfile, b.jobfile));
		for (size_t i = 0; i < a.n; i++)
			assert(!memcmp(&a.jobs[i], &b.jobs[i], sizeof(a.jobs[i])));
		hs_queue_free(&b);
		free(text);
	}
	hs_queue_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;

	if (size == 0)
		return 0;
	/* a copy, so that reading past its end is caught by ASan */
	buf = malloc(size);
	memcpy(buf, data + 1, size - 1);
	switch (data[0] % 3) {
	case 0: job_file(buf, size - 1); break;
	case 1: record(buf, size - 1); break;
	case 2: queue(buf, size - 1); break;
	}
	free(buf);
	return 0;
}
