/*
 * test-util.c - the small helpers every module shares: the growth rule of
 * arrays and the monotonic clock.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "hotset/hotset.h"
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

int main(void)
{
	return RUN_TESTS(arrays_grow_by_doubling_to_what_is_needed,
			 a_size_that_would_overflow_is_refused_and_nothing_changes,
			 an_inline_array_moves_to_the_heap_once, the_clock_is_monotonic_and_in_nanoseconds);
}
