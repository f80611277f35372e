/*
 * fuzz-profile.c - libFuzzer target for the profile parser.
 *
 * Feeds arbitrary bytes to hs_profile_open_buffer() and walks every item,
 * checking the invariants the parser promises to consumers: ranges in
 * order within limits, file ranges disjoint, trace indexes in bounds.
 * Crashes it finds are kept in tests/fuzz/corpus and replayed in CI.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_profile_reader *r;
	struct hs_profile_item it;
	struct hs_error err;
	uint64_t files = 0;
	/* a copy, so that reading past the end is caught by ASan */
	char *buf = malloc(size ? size : 1);
	int rc;

	memcpy(buf, data, size);
	if (hs_profile_open_buffer(buf, size, &r, &err) == 0) {
		for (int pass = 0; pass < 2; pass++) {
			files = 0;
			while ((rc = hs_profile_next(r, &it, &err)) > 0) {
				if (it.kind == HS_ITEM_FILE) {
					assert(it.file.index == files);
					assert(strlen(it.file.path) == it.file.path_len);
					assert(it.file.pages == hs_ranges_pages(it.file.ranges, it.file.nranges));
					for (size_t i = 0; i < it.file.nranges; i++)
						assert(it.file.ranges[i].first <= it.file.ranges[i].last &&
						       it.file.ranges[i].last < HS_PROFILE_MAX_PAGE);
					files++;
				} else if (it.kind == HS_ITEM_TRACE) {
					assert(it.trace.file < files);
					assert(it.trace.nranges > 0);
				}
			}
			assert(rc <= 0);
			if (rc == 0)
				assert(files == hs_profile_totals(r)->files);
			hs_profile_rewind(r);
		}
		hs_profile_close(r);
	}
	free(buf);
	return 0;
}
