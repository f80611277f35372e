/*
 * u64map.c - the library's hash map (see u64map.h): the tree walk's sets
 * of files and directories, a recording's files by (device, inode), the
 * eBPF backend's inodes, the ptrace backend's tasks, files and mounts.
 *
 * A slot holds the key whole next to its value, so a probe reads one slot
 * and nothing else. Linear probing keeps a lookup to a few adjacent cache
 * lines; deleting by shifting the following entries back (instead of
 * leaving tombstones) keeps the table as good as new after any number of
 * deletions. The table is at most three quarters full.
 *
 * A large table comes mapped and populated in one call: on some virtual
 * machines a page fault costs 50 us, which the first touch of each page
 * of a table that grows with the job (a million files recorded) would pay.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "base/u64map.h"

#define POPULATE_BYTES (256u << 10)	/* tables this large are mapped populated */
#define MIN_CAP 64

static size_t slot_of(uint64_t hi, uint64_t lo, size_t cap)
{
	uint64_t h = lo ^ hi * 0x9e3779b97f4a7c15ull;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h & (cap - 1);
}

/* cap zeroed slots, or NULL. */
static struct u64map_slot *slots_new(size_t cap)
{
	size_t bytes = cap * sizeof(struct u64map_slot);
	void *p;

	if (cap > SIZE_MAX / sizeof(struct u64map_slot))
		return NULL;
	if (bytes < POPULATE_BYTES)
		return calloc(cap, sizeof(struct u64map_slot));
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void slots_free(struct u64map_slot *slots, size_t cap)
{
	size_t bytes = cap * sizeof(struct u64map_slot);

	if (!slots)
		return;
	if (bytes < POPULATE_BYTES)
		free(slots);
	else
		munmap(slots, bytes);
}

/* The slot of key (hi, lo), or of the empty slot where it would go. cap > 0. */
static size_t find(const struct u64map *m, uint64_t hi, uint64_t lo, bool *found)
{
	const size_t mask = m->cap - 1;
	size_t s;

	/* a power of two, for the mask; never full, so that an empty slot ends the probe */
	assert(m->cap && !(m->cap & mask) && m->count < m->cap);
	for (s = slot_of(hi, lo, m->cap); m->slots[s].val; s = (s + 1) & mask) {
		if (m->slots[s].lo == lo && m->slots[s].hi == hi) {
			*found = true;
			return s;
		}
	}
	*found = false;
	return s;
}

void *u64map_get2(const struct u64map *m, uint64_t hi, uint64_t lo)
{
	bool found;
	size_t s;

	if (!m->cap)
		return NULL;
	s = find(m, hi, lo, &found);
	return found ? m->slots[s].val : NULL;
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : MIN_CAP;
	struct u64map_slot *v;

	if (cap < m->cap || !(v = slots_new(cap)))
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		const struct u64map_slot *o = &m->slots[i];
		size_t s;

		if (!o->val)
			continue;
		for (s = slot_of(o->hi, o->lo, cap); v[s].val; s = (s + 1) & (cap - 1))
			;
		v[s] = *o;
	}
	slots_free(m->slots, m->cap);
	m->slots = v;
	m->cap = cap;
	return 0;
}

/*
 * Add key (hi, lo) with val; if it is there already, give its value in
 * *had (if not NULL) and, if replace, set it to val. 1 added, 0 there,
 * -ENOMEM.
 */
static int insert(struct u64map *m, uint64_t hi, uint64_t lo, void *val, bool replace,
		  void **had)
{
	bool found = false;
	size_t s = 0;
	int rc;

	assert(val);	/* NULL marks an empty slot: the key would be lost, the count wrong */
	if (m->cap)
		s = find(m, hi, lo, &found);
	if (found) {
		if (had)
			*had = m->slots[s].val;
		if (replace)
			m->slots[s].val = val;
		return 0;
	}
	if ((m->count + 1) * 4 > m->cap * 3) {
		if ((rc = grow(m)))
			return rc;
		s = find(m, hi, lo, &found);
	}
	m->slots[s] = (struct u64map_slot){ hi, lo, val };
	m->count++;
	return 1;
}

int u64map_add2(struct u64map *m, uint64_t hi, uint64_t lo, void *val, void **had)
{
	return insert(m, hi, lo, val, false, had);
}

int u64map_put2(struct u64map *m, uint64_t hi, uint64_t lo, void *val)
{
	int rc = insert(m, hi, lo, val, true, NULL);

	return rc < 0 ? rc : 0;
}

void *u64map_del2(struct u64map *m, uint64_t hi, uint64_t lo)
{
	size_t mask = m->cap - 1, s, next;
	bool found;
	void *val;

	if (!m->cap)
		return NULL;
	s = find(m, hi, lo, &found);
	if (!found)
		return NULL;
	val = m->slots[s].val;
	m->slots[s].val = NULL;
	assert(m->count > 0);
	m->count--;
	/* move back each following entry that the hole would hide */
	for (next = (s + 1) & mask; m->slots[next].val; next = (next + 1) & mask) {
		size_t home = slot_of(m->slots[next].hi, m->slots[next].lo, m->cap);

		if (((next - home) & mask) >= ((next - s) & mask)) {
			m->slots[s] = m->slots[next];
			m->slots[next].val = NULL;
			s = next;
		}
	}
	return val;
}

void u64map_free(struct u64map *m)
{
	slots_free(m->slots, m->cap);
	m->slots = NULL;
	m->cap = m->count = 0;
}

int u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, void **val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->slots[*pos].val) {
			if (key)
				*key = m->slots[*pos].lo;
			*val = m->slots[*pos].val;
			(*pos)++;
			return 1;
		}
	}
	return 0;
}
