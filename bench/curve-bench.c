/*
 * bench/curve-bench.c - the figures of bench/curve.sh, from libhotset:
 *
 *   curve-bench synth ACCESSES PAGES [RATE|sSIZE] [POINTS_FILE]
 *       the curve of a synthetic trace made here, ACCESSES accesses to
 *       exactly PAGES distinct pages: nine accesses in ten Zipf-skewed
 *       (a power law over ranks, s = 1, ranks spread over the ids), the
 *       tenth the next page of a scan through all of them. Exact, or
 *       SHARDS at RATE (0.01) or of fixed size (s10000). Only the curve's
 *       work is timed: the trace is made in chunks, off the clock.
 *       POINTS_FILE gets the miss ratios at 101 sizes, 0 to the working
 *       set: "PAGES COLD RERUN" a line.
 *   curve-bench profile FILE ACCESSES PAGES
 *       write such a trace as a profile (PAGES/1000 pages per file)
 *   curve-bench read FILE
 *       read a profile's trace as dense page ids, and nothing else
 *
 * Each prints "key value" lines: accesses, pages, seconds, per_second,
 * maxrss_kib (getrusage: the peak resident set of this process).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "model/curve.h"
#include "model/trace.h"
#include "profile/profile.h"

#define CHUNK (1u << 20)

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(2685821657736338717);
}

/* Access i of the synthetic trace over pages pages. */
static uint64_t synth(uint64_t i, uint64_t pages, double log_pages)
{
	double u;
	uint64_t rank;

	if (i % 10 == 0)
		return (i / 10) % pages;
	u = (double)(next_rand() >> 11) / 9007199254740992.0;
	rank = (uint64_t)exp(u * log_pages) - 1;
	if (rank >= pages)
		rank = pages - 1;
	return rank * 7919 % pages;	/* 7919 is prime: a permutation unless it divides pages */
}

static void report(uint64_t accesses, uint64_t pages, double seconds)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("accesses %llu\npages %llu\nseconds %.3f\nper_second %.0f\nmaxrss_kib %ld\n",
	       (unsigned long long)accesses, (unsigned long long)pages, seconds,
	       seconds > 0 ? (double)accesses / seconds : 0, ru.ru_maxrss);
}

static int die(const char *what, int rc)
{
	fprintf(stderr, "curve-bench: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

static int run_synth(int argc, char **argv)
{
	uint64_t n = strtoull(argv[2], NULL, 10), pages = strtoull(argv[3], NULL, 10);
	struct hs_curve_opts o = { 0 };
	struct hs_curve_builder *b;
	struct hs_curve c;
	uint64_t *buf = malloc(CHUNK * sizeof(*buf));
	double spent = 0, t0, lp = log((double)pages);
	int rc;

	/* as from a profile, whose file lines list the pages of its trace */
	o.known_pages = pages;
	if (argc > 4 && argv[4][0] == 's')
		o.sample_size = strtoull(argv[4] + 1, NULL, 10);
	else if (argc > 4)
		o.sample_rate = strtod(argv[4], NULL);
	if (!buf || (rc = hs_curve_new(&o, pages, &b)))
		return die("hs_curve_new", buf ? rc : ENOMEM);
	for (uint64_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? (size_t)(n - i) : CHUNK;

		for (size_t j = 0; j < k; j++)
			buf[j] = synth(i + j, pages, lp);
		t0 = hs_monotonic_seconds();
		if ((rc = hs_curve_access_many(b, buf, k)))
			return die("hs_curve_access_many", rc);
		spent += hs_monotonic_seconds() - t0;
	}
	free(buf);
	t0 = hs_monotonic_seconds();
	if ((rc = hs_curve_finish(b, &c)))
		return die("hs_curve_finish", rc);
	hs_curve_builder_free(b);
	spent += hs_monotonic_seconds() - t0;
	report(n, c.pages, spent);
	printf("sampled_pages %llu\nsample_rate %.6f\n", (unsigned long long)c.sampled_pages,
	       c.sample_rate);
	if (argc > 5) {
		FILE *f = fopen(argv[5], "w");

		if (!f)
			return die(argv[5], errno);
		for (int i = 0; i <= 100; i++) {
			uint64_t size = c.pages * (uint64_t)i / 100;

			fprintf(f, "%llu %.6f %.6f\n", (unsigned long long)size,
				hs_curve_misses(&c, size, false) / (double)n,
				hs_curve_misses(&c, size, true) / (double)n);
		}
		fclose(f);
	}
	hs_curve_release(&c);
	return 0;
}

static int run_profile(char **argv)
{
	uint64_t n = strtoull(argv[3], NULL, 10), pages = strtoull(argv[4], NULL, 10);
	uint64_t per = pages / 1000 ? pages / 1000 : 1, files = (pages + per - 1) / per;
	double lp = log((double)pages);
	struct hs_profile_header h;
	struct hs_profile_writer *w;
	int rc;

	hs_profile_header_init(&h, "record");
	if ((rc = hs_profile_writer_open(argv[2], &h, &w)))
		return die(argv[2], rc);
	for (uint64_t f = 0; f < files; f++) {
		char path[64];
		uint64_t last = (f + 1) * per < pages ? (f + 1) * per - 1 : pages - 1;
		struct hs_range r = { 0, last - f * per };
		struct hs_profile_file pf = {
			.path = path, .flags = HS_FILE_READ, .ranges = &r, .nranges = 1,
			.id = { .size = (r.last + 1) * h.page_size },
		};

		pf.path_len = (size_t)snprintf(path, sizeof(path), "/bench/f%llu", (unsigned long long)f);
		if ((rc = hs_profile_write_file(w, &pf)))
			return die("write", rc);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t p = synth(i, pages, lp);
		struct hs_range r = { p % per, p % per };
		struct hs_profile_trace t = { .file = p / per, .ranges = &r, .nranges = 1 };

		if ((rc = hs_profile_write_trace(w, &t)))
			return die("write", rc);
	}
	if ((rc = hs_profile_writer_commit(w)))
		return die("commit", rc);
	return 0;
}

static int run_read(char **argv)
{
	struct hs_profile_reader *r;
	struct hs_trace *t;
	struct hs_error err = { 0 };
	uint64_t first, n, total = 0;
	double t0 = hs_monotonic_seconds();
	int rc;

	if ((rc = hs_profile_open(argv[2], &r, &err)) || (rc = hs_trace_open(r, &t, &err))) {
		fprintf(stderr, "curve-bench: %s:%u: %s\n", argv[2], err.line, err.msg);
		return 1;
	}
	while ((rc = hs_trace_next(t, &first, &n, &err)) > 0)
		total += n;
	if (rc < 0) {
		fprintf(stderr, "curve-bench: %s:%u: %s\n", argv[2], err.line, err.msg);
		return 1;
	}
	report(total, hs_trace_pages(t), hs_monotonic_seconds() - t0);
	hs_trace_close(t);
	hs_profile_close(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "synth"))
		return run_synth(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "profile"))
		return run_profile(argv);
	if (argc == 3 && !strcmp(argv[1], "read"))
		return run_read(argv);
	fprintf(stderr, "usage: curve-bench synth ACCESSES PAGES [RATE|sSIZE] [POINTS_FILE]\n"
			"       curve-bench profile FILE ACCESSES PAGES\n"
			"       curve-bench read FILE\n");
	return 2;
}
