/*
 * unit.h - a tiny unit-test harness with TAP output.
 *
 * Each test runs in its own forked process, so that a crash or a leaked
 * state fails that test alone. A test fails if any CHECK fails; it is
 * skipped if it calls SKIP(reason). Usage:
 *
 *   TEST(parses_empty) { CHECK(parse("") == 0); }
 *   int main(void) { return RUN_TESTS(parses_empty, ...); }
 */
#ifndef HOTSET_UNIT_H
#define HOTSET_UNIT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNIT_SKIP_STATUS 77
#define UNIT_TIMEOUT 120	/* seconds: a test that hangs (on a FIFO, say) fails */

static int unit_failed;

#define TEST(name) static void name(void)

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			unit_failed = 1;                                               \
		}                                                                      \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                             \
	do {                                                                           \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
		if (a_ != b_) {                                                        \
			printf("#   %s:%d: %s == %llu, expected %s == %llu\n", __FILE__,  \
			       __LINE__, #a, a_, #b, b_);                              \
			unit_failed = 1;                                               \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                                \
	do {                                                                           \
		const char *a_ = (a), *b_ = (b);                                       \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                    \
			printf("#   %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__,   \
			       __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");  \
			unit_failed = 1;                                               \
		}                                                                      \
	} while (0)

#define SKIP(reason)                                                                   \
	do {                                                                           \
		printf("#   skip: %s\n", reason);                                          \
		fflush(stdout);                                                        \
		_exit(UNIT_SKIP_STATUS);                                               \
	} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

static int unit_run(const struct unit_test *tests, size_t n)
{
	int failures = 0;

	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(UNIT_TIMEOUT);
			tests[i].fn();
			fflush(stdout);
			_exit(unit_failed ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("fork");
			return 1;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == UNIT_SKIP_STATUS) {
			printf("ok %zu - %s # SKIP\n", i + 1, tests[i].name);
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %zu - %s\n", i + 1, tests[i].name);
		} else {
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
				printf("#   timed out after %d s\n", UNIT_TIMEOUT);
			else if (WIFSIGNALED(status))
				printf("#   killed by signal %d\n", WTERMSIG(status));
			printf("not ok %zu - %s\n", i + 1, tests[i].name);
			failures++;
		}
	}
	return failures ? 1 : 0;
}

#define UNIT_ENTRY(fn) { #fn, fn },
#define RUN_TESTS(...)                                                                 \
	({                                                                             \
		static const struct unit_test unit_tests_[] = { UNIT_FOREACH(__VA_ARGS__) }; \
		unit_run(unit_tests_, sizeof(unit_tests_) / sizeof(unit_tests_[0]));  \
	})

/* UNIT_FOREACH(a, b, c) -> UNIT_ENTRY(a) UNIT_ENTRY(b) UNIT_ENTRY(c), up to 64 */
#define UNIT_FE_1(x) UNIT_ENTRY(x)
#define UNIT_FE_2(x, ...) UNIT_ENTRY(x) UNIT_FE_1(__VA_ARGS__)
#define UNIT_FE_3(x, ...) UNIT_ENTRY(x) UNIT_FE_2(__VA_ARGS__)
#define UNIT_FE_4(x, ...) UNIT_ENTRY(x) UNIT_FE_3(__VA_ARGS__)
#define UNIT_FE_5(x, ...) UNIT_ENTRY(x) UNIT_FE_4(__VA_ARGS__)
#define UNIT_FE_6(x, ...) UNIT_ENTRY(x) UNIT_FE_5(__VA_ARGS__)
#define UNIT_FE_7(x, ...) UNIT_ENTRY(x) UNIT_FE_6(__VA_ARGS__)
#define UNIT_FE_8(x, ...) UNIT_ENTRY(x) UNIT_FE_7(__VA_ARGS__)
#define UNIT_FE_9(x, ...) UNIT_ENTRY(x) UNIT_FE_8(__VA_ARGS__)
#define UNIT_FE_10(x, ...) UNIT_ENTRY(x) UNIT_FE_9(__VA_ARGS__)
#define UNIT_FE_11(x, ...) UNIT_ENTRY(x) UNIT_FE_10(__VA_ARGS__)
#define UNIT_FE_12(x, ...) UNIT_ENTRY(x) UNIT_FE_11(__VA_ARGS__)
#define UNIT_FE_13(x, ...) UNIT_ENTRY(x) UNIT_FE_12(__VA_ARGS__)
#define UNIT_FE_14(x, ...) UNIT_ENTRY(x) UNIT_FE_13(__VA_ARGS__)
#define UNIT_FE_15(x, ...) UNIT_ENTRY(x) UNIT_FE_14(__VA_ARGS__)
#define UNIT_FE_16(x, ...) UNIT_ENTRY(x) UNIT_FE_15(__VA_ARGS__)
#define UNIT_FE_17(x, ...) UNIT_ENTRY(x) UNIT_FE_16(__VA_ARGS__)
#define UNIT_FE_18(x, ...) UNIT_ENTRY(x) UNIT_FE_17(__VA_ARGS__)
#define UNIT_FE_19(x, ...) UNIT_ENTRY(x) UNIT_FE_18(__VA_ARGS__)
#define UNIT_FE_20(x, ...) UNIT_ENTRY(x) UNIT_FE_19(__VA_ARGS__)
#define UNIT_FE_21(x, ...) UNIT_ENTRY(x) UNIT_FE_20(__VA_ARGS__)
#define UNIT_FE_22(x, ...) UNIT_ENTRY(x) UNIT_FE_21(__VA_ARGS__)
#define UNIT_FE_23(x, ...) UNIT_ENTRY(x) UNIT_FE_22(__VA_ARGS__)
#define UNIT_FE_24(x, ...) UNIT_ENTRY(x) UNIT_FE_23(__VA_ARGS__)
#define UNIT_FE_25(x, ...) UNIT_ENTRY(x) UNIT_FE_24(__VA_ARGS__)
#define UNIT_FE_26(x, ...) UNIT_ENTRY(x) UNIT_FE_25(__VA_ARGS__)
#define UNIT_FE_27(x, ...) UNIT_ENTRY(x) UNIT_FE_26(__VA_ARGS__)
#define UNIT_FE_28(x, ...) UNIT_ENTRY(x) UNIT_FE_27(__VA_ARGS__)
#define UNIT_FE_29(x, ...) UNIT_ENTRY(x) UNIT_FE_28(__VA_ARGS__)
#define UNIT_FE_30(x, ...) UNIT_ENTRY(x) UNIT_FE_29(__VA_ARGS__)
#define UNIT_FE_31(x, ...) UNIT_ENTRY(x) UNIT_FE_30(__VA_ARGS__)
#define UNIT_FE_32(x, ...) UNIT_ENTRY(x) UNIT_FE_31(__VA_ARGS__)
#define UNIT_NARG(...) UNIT_NARG_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, \
	20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define UNIT_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
	_17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, N, ...) N
#define UNIT_CAT(a, b) UNIT_CAT_(a, b)
#define UNIT_CAT_(a, b) a##b
#define UNIT_FOREACH(...) UNIT_CAT(UNIT_FE_, UNIT_NARG(__VA_ARGS__))(__VA_ARGS__)

#endif
