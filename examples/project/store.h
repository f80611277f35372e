/* store.h - a word-count table. */
#ifndef STORE_H
#define STORE_H
#include <stddef.h>

struct store;
struct store *store_new(void);
void store_add(struct store *s, const char *word, size_t len);
void store_print_top(const struct store *s, int n);
void store_free(struct store *s);
int net_describe(const char *host, char *out, size_t len);
#endif
