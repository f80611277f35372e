/*
 * u64map.h - the library's one hash map: from a key of one or two 64-bit
 * words to a non-NULL pointer.
 *
 * Keys of two words are for identities such as (device, inode) or (mount
 * id, inode), kept whole so that two files never share a key; keys of one
 * word (a tid, a device) are the same map with a first word of 0. Values
 * are pointers the map does not own; small integers fit too, cast through
 * uintptr_t (index + 1, since NULL marks an empty slot).
 *
 * Open addressing with linear probing and backward-shift deletion, so that
 * lookups of absent keys stay short however many keys came and went (the
 * ptrace backend adds and removes a key per process, thread and file).
 */
#ifndef HOTSET_U64MAP_H
#define HOTSET_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t hi, lo;	/* the key */
	void *val;		/* NULL marks an empty slot */
};

struct u64map {
	struct u64map_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t count;
};

/* The value for key (hi, lo), or NULL. */
void *u64map_get2(const struct u64map *m, uint64_t hi, uint64_t lo);

/* Set key (hi, lo) to val (not NULL), replacing any value. Returns 0 or -ENOMEM. */
int u64map_put2(struct u64map *m, uint64_t hi, uint64_t lo, void *val);

/*
 * Set key (hi, lo) to val unless it has a value: returns 1 if it was added,
 * 0 if it was there (its value, untouched, in *had if had is not NULL), or
 * -ENOMEM. One probe for "look up, add if new".
 */
int u64map_add2(struct u64map *m, uint64_t hi, uint64_t lo, void *val, void **had);

/* Remove key (hi, lo); returns the value it had, or NULL. */
void *u64map_del2(struct u64map *m, uint64_t hi, uint64_t lo);

/* The same for a key of one word. */
static inline void *u64map_get(const struct u64map *m, uint64_t key)
{
	return u64map_get2(m, 0, key);
}

static inline int u64map_put(struct u64map *m, uint64_t key, void *val)
{
	return u64map_put2(m, 0, key, val);
}

static inline void *u64map_del(struct u64map *m, uint64_t key)
{
	return u64map_del2(m, 0, key);
}

/* Free the table (not the values); the map is empty and usable after. */
void u64map_free(struct u64map *m);

/*
 * Iterate: for (size_t i = 0; u64map_next(m, &i, &key, &val); ) ... key
 * (if not NULL) gets the key's second word. The map must not change
 * during the walk.
 */
int u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, void **val);

#endif
