/*
 * u64map.h - a hash map from 64-bit keys to non-NULL pointers.
 *
 * Open addressing with linear probing and backward-shift deletion, so that
 * lookups of absent keys stay short however many keys came and went (the
 * ptrace backend adds and removes a key per process, thread and file). The
 * map does not own the pointers.
 */
#ifndef HOTSET_U64MAP_H
#define HOTSET_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	void **vals;		/* NULL marks an empty slot */
	size_t cap;		/* a power of two, or 0 */
	size_t count;
};

/* The value for key, or NULL. */
void *u64map_get(const struct u64map *m, uint64_t key);

/* Set key to val (not NULL), replacing any value. Returns 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, void *val);

/* Remove key; returns the value it had, or NULL. */
void *u64map_del(struct u64map *m, uint64_t key);

/* Free the table (not the values); the map is empty and usable after. */
void u64map_free(struct u64map *m);

/*
 * Iterate: for (size_t i = 0; u64map_next(m, &i, &key, &val); ) ... The map
 * must not change during the walk.
 */
int u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, void **val);

#endif
