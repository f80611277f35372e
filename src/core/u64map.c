/*
 * u64map.c - a hash map from 64-bit keys to pointers, for the ptrace
 * backend's tables (tasks by tid, files by device and inode...).
 *
 * Linear probing keeps a lookup to a few adjacent cache lines; deleting by
 * shifting the following entries back (instead of leaving tombstones) keeps
 * the table as good as new after any number of deletions.
 */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t s = slot_of(key, m->cap); m->vals[s]; s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key)
			return m->vals[s];
	return NULL;
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t s;

		if (!m->vals[i])
			continue;
		for (s = slot_of(m->keys[i], cap); vals[s]; s = (s + 1) & (cap - 1))
			;
		keys[s] = m->keys[i];
		vals[s] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, void *val)
{
	size_t s;
	int rc;

	if ((m->count + 1) * 4 > m->cap * 3 && (rc = grow(m)))
		return rc;
	for (s = slot_of(key, m->cap); m->vals[s]; s = (s + 1) & (m->cap - 1)) {
		if (m->keys[s] == key) {
			m->vals[s] = val;
			return 0;
		}
	}
	m->keys[s] = key;
	m->vals[s] = val;
	m->count++;
	return 0;
}

void *u64map_del(struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, s, next;
	void *val;

	if (!m->cap)
		return NULL;
	for (s = slot_of(key, m->cap); m->vals[s] && m->keys[s] != key; s = (s + 1) & mask)
		;
	if (!m->vals[s])
		return NULL;
	val = m->vals[s];
	m->vals[s] = NULL;
	m->count--;
	/* move back each following entry that the hole would hide */
	for (next = (s + 1) & mask; m->vals[next]; next = (next + 1) & mask) {
		size_t home = slot_of(m->keys[next], m->cap);

		if (((next - home) & mask) >= ((next - s) & mask)) {
			m->keys[s] = m->keys[next];
			m->vals[s] = m->vals[next];
			m->vals[next] = NULL;
			s = next;
		}
	}
	return val;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->count = 0;
}

int u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, void **val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->vals[*pos]) {
			if (key)
				*key = m->keys[*pos];
			*val = m->vals[*pos];
			(*pos)++;
			return 1;
		}
	}
	return 0;
}
