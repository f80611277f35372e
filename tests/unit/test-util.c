/*
 * test-util.c - the small helpers every module shares: the growth rule of
 * arrays, the monotonic and the wall clocks, and the hash map.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "base/u64map.h"
#include "base/hotset.h"
#include "unit.h"

TEST(arrays_grow_by_doubling_to_what_is_needed)
{
	uint32_t *v = NULL;
	size_t cap = 0, reallocs = 0, last_cap = 0;

	CHECK(hs_grow(&v, &cap, 0, sizeof(*v)) == 0 && v == NULL && cap == 0);
	CHECK(hs_grow(&v, &cap, 1, sizeof(*v)) == 0 && v && cap == 1);
	last_cap = cap;
	for (size_t n = 1; n <= 1000; n++) {
		CHECK(hs_grow(&v, &cap, n, sizeof(*v)) == 0);
		CHECK(cap >= n && cap < 2 * n);	/* a power of two from 1 */
		v[n - 1] = (uint32_t)n;
		reallocs += cap != last_cap;
		last_cap = cap;
	}
	CHECK_EQ_U64(cap, 1024);
	CHECK_EQ_U64(reallocs, 10);	/* 2, 4, ... 1024: amortised O(1) */
	for (size_t n = 1; n <= 1000; n++)
		CHECK(v[n - 1] == n);
	/* more than double at once: straight to the power of two that holds it */
	CHECK(hs_grow(&v, &cap, 5000, sizeof(*v)) == 0 && cap == 8192);
	free(v);
}

TEST(a_size_that_would_overflow_is_refused_and_nothing_changes)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	CHECK(hs_grow(&v, &cap, 3, sizeof(*v)) == 0 && cap == 4);
	uint64_t *was = v;

	CHECK(hs_grow(&v, &cap, SIZE_MAX / 4, sizeof(*v)) == -ENOMEM);
	CHECK(v == was && cap == 4);
	CHECK(hs_grow(&v, &cap, SIZE_MAX, 1) == -ENOMEM);
	CHECK(v == was && cap == 4);
	CHECK(hs_grow(&v, &cap, (SIZE_MAX >> 1) + 2, 1) == -ENOMEM);	/* no power of two holds it */
	CHECK(v == was && cap == 4);
	free(v);
}

TEST(an_inline_array_moves_to_the_heap_once)
{
	struct {
		int *v;
		size_t n, cap;
		int some[4];
	} a = { .cap = 4 };

	a.v = a.some;
	for (int i = 0; i < 4; i++)
		a.v[a.n++] = i;
	CHECK(hs_grow_inline(&a.v, &a.cap, 4, sizeof(*a.v), a.some) == 0 && a.v == a.some);
	CHECK(hs_grow_inline(&a.v, &a.cap, 5, sizeof(*a.v), a.some) == 0);
	CHECK(a.v != a.some && a.cap == 8);
	for (int i = 0; i < 4; i++)
		CHECK(a.v[i] == i);	/* the inline elements came along */
	a.v[a.n++] = 4;
	CHECK(hs_grow_inline(&a.v, &a.cap, 100, sizeof(*a.v), a.some) == 0 && a.cap == 128);
	for (int i = 0; i < 5; i++)
		CHECK(a.v[i] == i);
	free(a.v);
}

TEST(the_clock_is_monotonic_and_in_nanoseconds)
{
	struct timespec ts;
	uint64_t a, b, ref;

	a = hs_monotonic_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ref = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	b = hs_monotonic_ns();
	CHECK(a <= ref && ref <= b);
	usleep(20000);
	CHECK(hs_monotonic_ns() - b >= 20000000u);
	CHECK(hs_monotonic_seconds() >= (double)b / 1e9 + 0.02);
}

TEST(the_wall_clock_is_the_realtime_clock_in_nanoseconds)
{
	struct timespec ts;
	int64_t a, b, ref;

	a = hs_realtime_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	ref = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	b = hs_realtime_ns();
	/* the clock may be set between two readings: then they differ by far more */
	CHECK(a <= ref + 1000000000 && ref <= b + 1000000000);
	CHECK(b / 1000000000 - (int64_t)time(NULL) <= 1 &&
	      (int64_t)time(NULL) - b / 1000000000 <= 1);
}

/* ---- the map ------------------------------------------------------------------------ */

TEST(keys_of_two_words_are_kept_whole)
{
	struct u64map m = { 0 };
	void *had = NULL;

	/* (dev, ino) pairs that a hash of the two into one word could confuse */
	CHECK(u64map_put2(&m, 1, 2, (void *)1) == 0);
	CHECK(u64map_put2(&m, 2, 1, (void *)2) == 0);
	CHECK(u64map_put2(&m, 0, 2, (void *)3) == 0);
	CHECK(u64map_put2(&m, 3, 0, (void *)4) == 0);	/* inode 0 is a key like any other */
	CHECK(u64map_get2(&m, 1, 2) == (void *)1 && u64map_get2(&m, 2, 1) == (void *)2);
	CHECK(u64map_get2(&m, 0, 2) == (void *)3 && u64map_get(&m, 2) == (void *)3);
	CHECK(u64map_get2(&m, 3, 0) == (void *)4 && u64map_get2(&m, 0, 3) == NULL);
	CHECK_EQ_U64(m.count, 4);
	/* add: once, then it says what is there and changes nothing */
	CHECK(u64map_add2(&m, 7, 7, (void *)5, &had) == 1);
	CHECK(u64map_add2(&m, 7, 7, (void *)6, &had) == 0 && had == (void *)5);
	CHECK(u64map_add2(&m, 7, 7, (void *)6, NULL) == 0);
	CHECK(u64map_get2(&m, 7, 7) == (void *)5);
	/* put replaces */
	CHECK(u64map_put2(&m, 7, 7, (void *)6) == 0 && u64map_get2(&m, 7, 7) == (void *)6);
	CHECK_EQ_U64(m.count, 5);
	CHECK(u64map_del2(&m, 2, 1) == (void *)2 && u64map_get2(&m, 2, 1) == NULL);
	CHECK(u64map_get2(&m, 1, 2) == (void *)1);
	u64map_free(&m);
	CHECK(m.count == 0 && u64map_get2(&m, 1, 2) == NULL && u64map_del2(&m, 1, 2) == NULL);
}

/* A table of many files: mapped populated, rehashed as it grows, thinned by deletions. */
TEST(a_large_map_keeps_every_key)
{
	struct u64map m = { 0 };
	const uint64_t n = 300000, dev = 0x803;
	void *val;
	size_t pos = 0, seen = 0;

	for (uint64_t ino = 1; ino <= n; ino++)
		if (u64map_add2(&m, dev, ino, (void *)(uintptr_t)ino, NULL) != 1)
			CHECK(!"added");
	CHECK_EQ_U64(m.count, n);
	CHECK(m.count * 4 <= m.cap * 3);
	for (uint64_t ino = 1; ino <= n; ino++)
		if (u64map_get2(&m, dev, ino) != (void *)(uintptr_t)ino || u64map_get2(&m, dev + 1, ino))
			CHECK(!"found");
	for (uint64_t ino = 2; ino <= n; ino += 2)
		if (u64map_del2(&m, dev, ino) != (void *)(uintptr_t)ino)
			CHECK(!"deleted");
	for (uint64_t ino = 1; ino <= n; ino++)
		if (u64map_get2(&m, dev, ino) != (ino % 2 ? (void *)(uintptr_t)ino : NULL))
			CHECK(!"kept");
	while (u64map_next(&m, &pos, NULL, &val))
		seen++;
	CHECK_EQ_U64(seen, n / 2);
	u64map_free(&m);
}

int main(void)
{
	return RUN_TESTS(arrays_grow_by_doubling_to_what_is_needed,
			 a_size_that_would_overflow_is_refused_and_nothing_changes,
			 an_inline_array_moves_to_the_heap_once, the_clock_is_monotonic_and_in_nanoseconds,
			 the_wall_clock_is_the_realtime_clock_in_nanoseconds,
			 keys_of_two_words_are_kept_whole, a_large_map_keeps_every_key);
}
