/* store.c - a hash table of words and their counts. */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "store.h"

struct word_entry {
	char *word;
	unsigned long count;
	struct word_entry *next;
};

struct store {
	struct word_entry **buckets;
	size_t nbuckets, nentries;
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

struct store *store_new(void)
{
	struct store *s = calloc(1, sizeof(*s));

	s->nbuckets = 4096;
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	return s;
}

void store_add(struct store *s, const char *word, size_t len)
{
	struct word_entry **b = &s->buckets[hash(word, len) % s->nbuckets], *e;

	for (e = *b; e; e = e->next)
		if (strlen(e->word) == len && !memcmp(e->word, word, len)) {
			e->count++;
			return;
		}
	e = calloc(1, sizeof(*e));
	e->word = strndup(word, len);
	e->count = 1;
	e->next = *b;
	*b = e;
	s->nentries++;
}

static int by_count(const void *a, const void *b)
{
	const struct word_entry *x = *(struct word_entry *const *)a, *y = *(struct word_entry *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->word, y->word);
}

void store_print_top(const struct store *s, int n)
{
	struct word_entry **all = malloc((s->nentries + 1) * sizeof(*all));
	size_t k = 0;

	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct word_entry *e = s->buckets[i]; e; e = e->next)
			all[k++] = e;
	qsort(all, k, sizeof(*all), by_count);
	for (size_t i = 0; i < k && (int)i < n; i++)
		printf("%8lu %s\n", all[i]->count, all[i]->word);
	free(all);
}

void store_free(struct store *s)
{
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct word_entry *e = s->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e->word);
			free(e);
		}
	free(s->buckets);
	free(s);
}
