/*
 * doctor.c - gather what doctor looks at, then diagnose (doctor.h).
 *
 * The facts come from four places, each read by the module that knows
 * it: the machine's memory, the memory cgroups and the reclaimers
 * (kernel/memory), the run (record/record-run), the profile's header,
 * largest directories and curve (profile, profile/tops, model/curve), and
 * what of the profile is resident now (cache/targets, cache/residency).
 * This file only decides the order, keeps the storage the facts point
 * to, and turns a source that cannot be read into an "unseen" entry with
 * the privilege it needs, so that the findings leave it out rather than
 * rest on a zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/targets.h"
#include "model/doctor.h"
#include "profile/profile.h"

/* "needs root" for a permission error, else the error itself: an unseen entry's reason. */
static const char *why(int err)
{
	return err == -EACCES || err == -EPERM ? "permission denied: it needs root" : strerror(-err);
}

/*
 * DAMON's schemes, their stats refreshed first: the kernel updates them
 * only when asked, and only root may ask (a refresh that fails leaves the
 * last figures, which are still the schemes').
 */
static int read_damon(struct hs_damon_scheme *v)
{
	hs_damon_update_stats();
	return hs_damon_schemes(v, HS_DOCTOR_DAMON);
}

/* The machine's memory, the reclaimers (DAMON) and a balloon driver: read once, before the run. */
static void read_machine(struct hs_doctor *d)
{
	struct hs_diag_facts *in = &d->in;
	int rc;

	if ((rc = hs_meminfo_read(&in->mi)))
		hs_diag_unseen(&d->dx, "/proc/meminfo", "%s", why(rc));
	in->mi_ok = !rc;
	rc = read_damon(d->damon0);
	/* no DAMON at all is a fact, not a source unseen */
	if (rc < 0 && rc != -ENOENT)
		hs_diag_unseen(&d->dx, "DAMON schemes (/sys/kernel/mm/damon/admin)", "%s", why(rc));
	in->ndamon = rc > 0 ? rc : 0;
	in->damon0 = d->damon0;
	in->balloon = hs_balloon_probe(d->balloon_where, sizeof(d->balloon_where));
	in->balloon_where = d->balloon_where;
	if (in->balloon < 0)
		hs_diag_unseen(&d->dx, "a balloon driver (/proc/modules, /sys/bus/virtio/drivers)", "%s",
			       why(in->balloon));
}

/*
 * The memory cgroup to diagnose: the caller's (--cgroup), else the one
 * the profile recorded the job in, else (a run, or a profile that does
 * not say) our own, which a run's job inherits. Only the caller's can
 * fail: a name that is no memory cgroup is an input error, not a source
 * unseen. Returns 0, or -errno with d->err filled.
 */
static int pick_cgroup(struct hs_doctor *d)
{
	struct hs_diag_facts *in = &d->in;

	if (d->o.service) {
		/* the service's: it did the reading, under its own limit */
		in->cg_source = HS_CG_SERVICE;
		in->memcg_rc = hs_service_memcg(d->o.service, &d->memcg0);
	} else if (d->o.cgroup) {
		in->cg_source = HS_CG_OPTION;
		if ((in->memcg_rc = hs_memcg_named(0, d->o.cgroup, &d->memcg0))) {
			d->failed = HS_DOCTOR_CGROUP;
			return hs_error_set(&d->err, -in->memcg_rc, "%s", in->memcg_rc == -ENOENT ?
					    "no such memory cgroup (a path such as /a/b, or its "
					    "directory under the memory controller's mount)" :
					    strerror(-in->memcg_rc));
		}
	} else if (!d->o.argv && in->rec_cgroup) {
		in->cg_source = HS_CG_PROFILE;
		in->memcg_rc = hs_memcg_named(in->rec_version, in->rec_cgroup, &d->memcg0);
	} else {
		in->cg_source = d->o.argv ? HS_CG_RUN : HS_CG_OWN;
		in->memcg_rc = hs_memcg_of(0, &d->memcg0);
	}
	in->memcg0 = &d->memcg0;
	if (in->memcg_rc && in->memcg_rc != -ENOENT)
		hs_diag_unseen(&d->dx, "the memory cgroup", "%s", why(in->memcg_rc));
	else if (in->memcg_rc && in->cg_source != HS_CG_PROFILE)
		hs_diag_unseen(&d->dx, "the memory cgroup (/proc/self/cgroup)", "no memory controller "
			       "is mounted (cgroup v1 memory or cgroup2)");
	else if (!in->memcg_rc && !d->memcg0.limit_known)
		hs_diag_unseen(&d->dx, d->memcg0.version == 1 ? "memory.limit_in_bytes" : "memory.max",
			       "of %s: it cannot be read", d->memcg0.dir);
	return 0;
}

/*
 * Every cgroup's memory and the reclaim counters, before the run (or now)
 * and after it. The two are compared figure by figure (who grew, what was
 * refaulted), so an "after" that cannot be paired with its "before" is
 * left out rather than compared with nothing.
 */
static void snapshot_machine(struct hs_doctor *d, bool after)
{
	struct hs_diag_facts *in = &d->in;
	int rc;

	if (after) {
		in->ncg1 = in->memcg_rc ? in->memcg_rc : hs_memcg_list(&d->memcg0, &d->cg1);
		in->cg1 = d->cg1;
		rc = hs_vmstat_read(&in->vm1);
		in->vm_ok = in->vm_ok && !rc;
		/* the limits and use as the run left them */
		if (!in->memcg_rc && !(d->o.service ? hs_service_memcg(d->o.service, &d->memcg1) :
				       hs_memcg_of(0, &d->memcg1)))
			in->memcg1 = &d->memcg1;
		if (in->ndamon && read_damon(d->damon1) == in->ndamon)
			in->damon1 = d->damon1;
		return;
	}
	in->ncg0 = in->memcg_rc ? in->memcg_rc : hs_memcg_list(&d->memcg0, &d->cg0);
	in->cg0 = d->cg0;
	rc = hs_vmstat_read(&in->vm0);
	in->vm_ok = !rc;
	if (rc)
		hs_diag_unseen(&d->dx, "/proc/vmstat", "%s", why(rc));
}

/* A file of the profile that cannot be examined (gone, replaced, unreadable): counted. */
static void residency_warn(void *ctx, const char *path, int errnum, const char *what)
{
	struct hs_doctor *d = ctx;

	(void)path, (void)errnum, (void)what;
	d->skipped++;
}

/* One file's residency into the total; a file the kernel will not tell of (EPERM) counts unknown. */
static int residency_one(void *ctx, const struct hs_target *t)
{
	struct hs_doctor *d = ctx;
	struct hs_target_residency r;
	int rc = hs_residency_target(t, &r);

	if (rc && rc != -EPERM)
		d->skipped++;
	else
		hs_residency_total_add(&d->res, t, &r);
	return 0;
}

/*
 * What of the profile is resident now, counted as status -p counts it:
 * the profile read whole first (one malformed at its end is refused
 * before any of it is counted), then each entry's file opened carefully
 * (targets.h) and its recorded ranges looked up.
 */
static int read_residency(struct hs_doctor *d)
{
	struct hs_profile_reader *rd;
	struct hs_profile_item it;
	int rc;

	if (d->o.mapping)
		d->o.mapping(d->o.ctx, d->o.profile);
	if ((rc = hs_profile_open(d->o.profile, &rd, &d->err)))
		return rc;
	while ((rc = hs_profile_next(rd, &it, &d->err)) > 0)
		;
	if (rc == 0) {
		hs_profile_rewind(rd);
		rc = hs_targets_profile(rd, residency_one, residency_warn, d, &d->err);
		if (rc == -ENOMEM && !d->err.msg[0])
			hs_error_set(&d->err, ENOMEM, "out of memory");
	}
	hs_profile_close(rd);
	return rc < 0 ? rc : 0;
}

/* The profile's header: its page size, its run's cost, the memory cgroup it was recorded in. */
static void read_header(struct hs_doctor *d, const struct hs_profile_header *h)
{
	struct hs_diag_facts *in = &d->in;

	in->page_size = h->page_size;
	d->recorded.io_known = h->write_bytes_known;
	d->recorded.write_bytes_disk = h->write_bytes;
	d->recorded.max_rss_bytes = h->max_rss_known ? h->max_rss : 0;
	if (!h->memcg)
		return;
	/* copied: the reader's strings go with it */
	snprintf(d->rec_cgroup, sizeof(d->rec_cgroup), "%s", h->memcg);
	in->rec_cgroup = d->rec_cgroup;
	in->rec_version = h->memcg_version;
	in->rec_limit_known = h->memcg_limit_known;
	in->rec_limit = h->memcg_limit;
	if (h->memcg_limit_holder) {
		snprintf(d->rec_holder, sizeof(d->rec_holder), "%s", h->memcg_limit_holder);
		in->rec_limit_holder = d->rec_holder;
	}
}

/*
 * The profile: its header, its counts and largest directories, its curve
 * (none without a trace: an unseen entry, the need then rests on all its
 * pages), then what of it is resident now. Returns 0, or -errno with
 * d->err filled (its line when the profile is malformed).
 */
static int read_profile(struct hs_doctor *d)
{
	struct hs_diag_facts *in = &d->in;
	struct hs_profile_reader *rd;
	struct hs_profile_item it;
	struct hs_curve_opts co;
	int rc;

	if ((rc = hs_profile_open(d->o.profile, &rd, &d->err)))
		return rc;
	read_header(d, hs_profile_header(rd));
	while ((rc = hs_profile_next(rd, &it, &d->err)) > 0 && it.kind == HS_ITEM_FILE) {
		in->files++;
		in->pages += it.file.pages;
		in->ranges += it.file.nranges;
		if (hs_tops_add(&d->tops, &it.file)) {
			rc = -ENOMEM;
			break;
		}
	}
	if (rc >= 0)
		rc = hs_tops_finish(&d->tops, rd, &d->err);
	if (rc >= 0)
		rc = hs_tops_cover(&d->tops, HS_TOPS_COVER_SHARE, HS_TOPS_COVER_MAX, HS_TOPS_COVER_MIN,
				   rd, &d->err);
	if (rc >= 0) {
		hs_curve_model_opts(&co);	/* the model curve and run use */
		rc = hs_curve_from_profile(rd, &co, &d->c, &d->err);
		d->curve_ok = !rc;
		if (rc == -ENODATA) {
			hs_diag_unseen(&d->dx, "the profile's access trace", "%s has none: record with "
				       "--trace for the memory a re-run needs", d->o.profile);
			memset(&d->err, 0, sizeof(d->err));
			rc = 0;
		}
	}
	hs_profile_close(rd);
	if (rc < 0)
		return rc;
	if (d->curve_ok) {
		hs_curve_summarize(&d->c, &d->cs);
		in->curve_ok = true;
		in->curve_pages = d->c.pages;
		in->rerun_zero = hs_curve_rerun_cache(&d->c, &d->cs);
		in->curve_model = hs_curve_model_name(&d->c);
	}
	in->tops = &d->tops;
	in->res = &d->res;
	return read_residency(d);
}

/*
 * The run as the diagnosis sees it when a service did the job's work: the
 * client's window, the service's CPU, disk bytes and I/O wait in it. Its
 * wait from delay accounting is thread-seconds: capped at the window, as
 * the "some" of PSI is.
 */
static void service_run(struct hs_doctor *d)
{
	const struct hs_service_usage *s = &d->run.service;
	struct hs_usage *u = &d->svc_run;

	memset(u, 0, sizeof(*u));
	u->wall_s = d->run.o.argv ? d->run.u.wall_s : s->wall_s;
	u->user_s = s->user_s;
	u->sys_s = s->sys_s;
	u->io_known = s->io_known;
	u->read_bytes_disk = s->read_bytes;
	u->write_bytes_disk = s->write_bytes;
	if (s->wait != HS_SERVICE_WAIT_UNKNOWN) {
		/* PSI of its cgroup is the job-cgroup kind of figure; delay accounting stands in for it */
		u->pressure = s->wait == HS_SERVICE_WAIT_PSI ? HS_PRESSURE_JOB_CGROUP :
			      HS_PRESSURE_OWN_CGROUP;
		u->io_wait_s = s->io_wait_s < u->wall_s ? s->io_wait_s : u->wall_s;
	}
	for (int i = 0; i < s->nnotes && u->nnotes < HS_USAGE_NOTES; i++)
		snprintf(u->notes[u->nnotes++], sizeof(u->notes[0]), "%s", s->notes[i]);
	snprintf(d->service_name, sizeof(d->service_name), "%s %s",
		 hs_service_option(d->o.service->kind), d->o.service->arg);
	d->in.service = d->service_name;
	d->in.run = u;
}

/* Just before the job starts: watch the other ends of its sockets (a client waits on a server). */
static void peers_begin(void *ctx, const char *cgroup_procs)
{
	struct hs_doctor *d = ctx;

	/* no probe, no finding: it is no source the diagnosis rests on */
	if (hs_peer_begin(cgroup_procs, &d->peer_probe))
		d->peer_probe = NULL;
}

/*
 * Record the job as record does, the machine read before and after it.
 * Returns 0 when it ran and its profile was written, else -errno with
 * d->failed set (d->run says why).
 */
static int run_job(struct hs_doctor *d)
{
	struct hs_record_run *r = &d->run;
	int rc;

	r->o.argv = d->o.argv;
	r->o.service = d->o.service;
	r->o.backend = d->o.backend;
	r->o.warn = d->o.warn;
	r->o.ctx = d->o.ctx;
	r->out = d->o.profile;
	r->command = d->o.command;
	r->trace = true;		/* the curve needs the trace */
	r->timeline = &d->tl;
	/* a service's run is measured already: its client's sockets lead to it */
	if (!d->o.service) {
		r->starting = peers_begin;
		r->ctx = d;
	}
	snapshot_machine(d, false);
	rc = hs_record_command(r);
	if (d->peer_probe) {
		hs_peer_end(d->peer_probe, rc ? NULL : &d->peers);
		d->peer_probe = NULL;
		if (!rc) {
			d->in.peers = &d->peers;
			d->in.argv = d->o.argv;
		}
	}
	if (rc) {
		hs_record_run_release(r);
		d->failed = HS_DOCTOR_NOT_RUN;
		return -ECHILD;
	}
	snapshot_machine(d, true);
	d->in.ran = true;
	d->in.run = &r->u;
	if (d->o.service && r->service_known)
		service_run(d);
	hs_record_run_release(r);
	if (r->save_rc)
		d->failed = HS_DOCTOR_NOT_SAVED;
	return r->save_rc;
}

int hs_doctor_diagnose(struct hs_doctor *d)
{
	int rc;

	d->in.have_keep = d->o.have_keep;
	if (d->o.argv) {
		if ((rc = pick_cgroup(d)))
			return rc;
		read_machine(d);
		if ((rc = run_job(d)))
			return rc;
		rc = read_profile(d);
	} else {
		/* the profile first: it names the cgroup the job was charged in */
		rc = read_profile(d);
		if (!rc && !(rc = pick_cgroup(d))) {
			read_machine(d);
			snapshot_machine(d, false);
		}
	}
	if (rc) {
		if (d->failed == HS_DOCTOR_OK)
			d->failed = HS_DOCTOR_PROFILE;
		return rc;
	}
	d->in.profile = d->o.profile;
	d->in.recorded = &d->recorded;
	hs_diagnose(&d->in, &d->dx);
	return 0;
}

void hs_doctor_release(struct hs_doctor *d)
{
	hs_memcg_list_free(d->cg0, d->in.ncg0 > 0 ? (size_t)d->in.ncg0 : 0);
	hs_memcg_list_free(d->cg1, d->in.ncg1 > 0 ? (size_t)d->in.ncg1 : 0);
	d->cg0 = d->cg1 = NULL;
	d->in.ncg0 = d->in.ncg1 = 0;
	hs_tops_release(&d->tops);
	if (d->curve_ok)
		hs_curve_release(&d->c);
	d->curve_ok = false;
	hs_usage_timeline_release(&d->tl);
}
