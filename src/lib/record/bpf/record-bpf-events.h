/*
 * record-bpf-events.h - what the eBPF record backend's user side does with
 * the events of the kernel side (record-bpf-ring.h): name the inodes, hold the
 * accesses that come before a name, tell outputs from inputs, and feed
 * the recording. Needs no libbpf and no privilege: record-bpf.c hands it
 * the ring buffer's events, the unit tests hand it events of their own.
 */
#ifndef HOTSET_RECORD_BPF_EVENTS_H
#define HOTSET_RECORD_BPF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "record/recording.h"
#include "record/bpf/record-bpf-ring.h"

struct bpf_events;

/* Start decoding into rec (which it does not own). Returns 0 or -ENOMEM. */
int bpf_events_new(struct hs_recording *rec, struct bpf_events **out);

/*
 * One event of size bytes, as the ring buffer gives it (libbpf's
 * ring_buffer_sample_fn: ctx is the struct bpf_events). A malformed or
 * truncated event is ignored. Always returns 0 (go on); an error feeding
 * the recording is kept for bpf_events_counts().
 */
int bpf_events_feed(void *ctx, void *data, size_t size);

/*
 * The job is over: accesses still waiting for a name are left out (and
 * counted as unnamed), outputs are told to the recording.
 */
void bpf_events_end(struct bpf_events *s);

struct bpf_events_counts {
	uint64_t unnamed;	/* files read but left out: no path was learnt */
	uint64_t too_long;	/* files read but left out: path too long to capture */
	int error;		/* the first error feeding the recording (-ENOMEM...), or 0 */
};
void bpf_events_counts(const struct bpf_events *s, struct bpf_events_counts *c);

void bpf_events_free(struct bpf_events *s);

#endif
