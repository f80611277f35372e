/*
 * jobfile.c - the job file of `hotset run` (jobfile.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotset/jobfile.h"

uint64_t hs_fnv1a(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * UINT64_C(1099511628211);
	return h;
}

static int name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

int hs_job_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > HS_JOB_NAME_MAX)
		return 0;
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!name_char((unsigned char)s[i]))
			return 0;
	return 1;
}

int hs_jobfile_add(struct hs_jobfile *jf, const char *name, const char *command, unsigned line)
{
	struct hs_jobdef *d;
	size_t nlen = strlen(name);

	if (nlen > HS_JOB_NAME_MAX)
		return -ENAMETOOLONG;
	if (hs_grow(&jf->jobs, &jf->cap, jf->n + 1, sizeof(*jf->jobs)))
		return -ENOMEM;
	d = &jf->jobs[jf->n];
	memcpy(d->name, name, nlen + 1);
	if (!(d->command = strdup(command)))
		return -ENOMEM;
	d->line = line;
	jf->n++;
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line, without its newline; 1 if it holds a job (name and command set). */
static int parse_line(const char *s, size_t len, unsigned line, struct hs_jobfile *jf,
		      struct hs_error *err)
{
	size_t i = 0, name_end;
	char name[HS_JOB_NAME_MAX + 1], *command;
	int rc;

	if (len && s[len - 1] == '\r')		/* a file written on Windows */
		len--;
	while (i < len && blank(s[i]))
		i++;
	if (i == len || s[i] == '#')
		return 0;
	name_end = i;
	while (name_end < len && !blank(s[name_end]))
		name_end++;
	if (!hs_job_name_ok(s + i, name_end - i)) {
		if (name_end - i > HS_JOB_NAME_MAX)
			return hs_error_set(err, EINVAL, "the job's name is longer than %d "
					    "characters", HS_JOB_NAME_MAX);
		return hs_error_set(err, EINVAL, "'%.*s' is not a job name: use letters, "
				    "digits, '.', '_' and '-' (then a blank and the command)",
				    (int)(name_end - i > 64 ? 64 : name_end - i), s + i);
	}
	memcpy(name, s + i, name_end - i);
	name[name_end - i] = '\0';
	i = name_end;
	while (i < len && blank(s[i]))
		i++;
	while (len > i && blank(s[len - 1]))
		len--;
	if (i == len)
		return hs_error_set(err, EINVAL, "job '%s' has no command: give it after the name "
				    "on the same line", name);
	for (size_t k = 0; k < jf->n; k++)
		if (!strcmp(jf->jobs[k].name, name))
			return hs_error_set(err, EINVAL, "job '%s' is already named on line %u: "
					    "names must be unique", name, jf->jobs[k].line);
	if (!(command = strndup(s + i, len - i)))
		return -ENOMEM;
	rc = hs_jobfile_add(jf, name, command, line);
	free(command);
	return rc < 0 ? rc : 1;
}

int hs_jobfile_parse(const char *text, size_t len, struct hs_jobfile *jf, struct hs_error *err)
{
	unsigned line = 0;
	size_t pos = 0;
	int rc = 0;

	memset(jf, 0, sizeof(*jf));
	jf->hash = hs_fnv1a(text, len);
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		line++;
		err->line = line;
		if (memchr(s, '\0', n)) {
			rc = hs_error_set(err, EINVAL, "a NUL byte: this is not a job file (a "
					  "binary file?)");
			break;
		}
		if (n > HS_JOB_LINE_MAX) {
			rc = hs_error_set(err, EINVAL, "a line longer than %d bytes",
					  HS_JOB_LINE_MAX);
			break;
		}
		if ((rc = parse_line(s, n, line, jf, err)) < 0)
			break;
		rc = 0;
		pos += n + (nl != NULL);
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			err->line = 0;
		hs_jobfile_free(jf);
		return rc;
	}
	err->line = 0;
	return 0;
}

void hs_jobfile_free(struct hs_jobfile *jf)
{
	for (size_t i = 0; i < jf->n; i++)
		free(jf->jobs[i].command);
	free(jf->jobs);
	jf->jobs = NULL;
	jf->n = jf->cap = 0;
}
