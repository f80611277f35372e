/*
 * unit.h - a tiny unit-test harness with TAP output.
 *
 * Each test runs in its own forked process, so that a crash or a leaked
 * state fails that test alone. A test fails if any CHECK fails, if it
 * crashes or hangs, or (in an ASan build) if it leaks memory; it is
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

/* ASan's leak checker, LeakSanitizer, built in (gcc says so one way, clang another) */
#if defined(__SANITIZE_ADDRESS__)
#define UNIT_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_LSAN 1
#endif
#endif
#ifdef UNIT_LSAN
#include <sanitizer/lsan_interface.h>
#endif

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

/*
 * Whether the test just run left memory that nothing points to any more.
 * A test leaves its process with _exit(), which skips the exit-time leak
 * check of LeakSanitizer, so under ASan the check is run here, in the
 * test's process, before it leaves; its report goes to stderr. Without
 * ASan (or with ASAN_OPTIONS=detect_leaks=0) nothing is checked. (Under a
 * debugger or strace the check cannot stop the process to scan it, and
 * LeakSanitizer says so and fails the test: set detect_leaks=0 there.)
 */
static int unit_leaked(void)
{
#ifdef UNIT_LSAN
	return __lsan_do_recoverable_leak_check();
#else
	return 0;
#endif
}

static void unit_child(const struct unit_test *t)
{
	alarm(UNIT_TIMEOUT);
	t->fn();
	fflush(stdout);
	if (!unit_failed && unit_leaked()) {
		printf("#   memory leaked (LeakSanitizer's report is above)\n");
		unit_failed = 1;
	}
	fflush(stdout);
	_exit(unit_failed ? 1 : 0);
}

static int unit_run(const struct unit_test *tests, size_t n)
{
	int failures = 0;

	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0)
			unit_child(&tests[i]);
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

/*
 * Run the tests fns[0..n) named by names, the text of RUN_TESTS's
 * arguments ("a, b, c": the preprocessor has made every run of white space
 * one space), split at its commas.
 */
static int unit_main(const char *names, void (*const *fns)(void), size_t n)
{
	struct unit_test *tests = calloc(n, sizeof(*tests));
	char *list = strdup(names), *save = NULL, *name = NULL;
	size_t k = 0;
	int rc = 1;

	if (!tests || !list) {
		perror("unit_main");
		goto out;
	}
	for (name = strtok_r(list, ", ", &save); name && k < n; name = strtok_r(NULL, ", ", &save)) {
		tests[k].name = name;
		tests[k].fn = fns[k];
		k++;
	}
	if (k != n || name)	/* a name that is not one identifier: a bug here */
		printf("1..0 # RUN_TESTS: %zu functions but the names \"%s\"\n", n, names);
	else
		rc = unit_run(tests, n);
out:
	free(tests);
	free(list);
	return rc;
}

/* RUN_TESTS(a, b, c): run the test functions a, b and c, as many as given. */
#define RUN_TESTS(...)                                                                 \
	({                                                                             \
		static void (*const unit_fns_[])(void) = { __VA_ARGS__ };             \
		unit_main(#__VA_ARGS__, unit_fns_, sizeof(unit_fns_) / sizeof(unit_fns_[0])); \
	})

#endif
