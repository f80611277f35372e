/*
 * output.c - how hotset talks to people and to scripts: readable sizes,
 * residency bars, a progress line on terminals, and streaming JSON.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hotset.h"
#include "output.h"

/* ---- messages --------------------------------------------------------------- */

static void line_flush(struct line *l)
{
	size_t off = 0;
	int saved = errno;

	while (off < l->len) {
		ssize_t n = write(STDERR_FILENO, l->buf + off, l->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	l->len = 0;
	errno = saved;
}

void line_add(struct line *l, const char *s, size_t n)
{
	while (n) {
		size_t k = sizeof(l->buf) - l->len < n ? sizeof(l->buf) - l->len : n;

		memcpy(l->buf + l->len, s, k);
		l->len += k;
		s += k;
		n -= k;
		if (l->len == sizeof(l->buf))
			line_flush(l);
	}
}

static size_t utf8_len(const unsigned char *s, size_t n);

/* "\\xHH" for byte b, in the four bytes at out. */
static void hex_escape(char *out, unsigned char b)
{
	static const char digits[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = digits[b >> 4];
	out[3] = digits[b & 0xf];
}

/*
 * The character at s (n > 0 bytes left) as a terminal should see it, in
 * out: a control character as \xHH per byte, and with backslash, '\' as
 * "\\". Control characters are C0 and DEL, and C1 (U+0080-U+009F) both
 * in UTF-8 (0xc2 0x80-0x9f) and as raw bytes outside a UTF-8 sequence: a
 * terminal in a Latin-1 locale, and some in UTF-8, obey them (0x9b and
 * U+009B are CSI, the start of an escape sequence). Other bytes pass.
 * Returns the bytes of s it stands for; *out_len is the length of out.
 */
static size_t escape_char(const unsigned char *s, size_t n, bool backslash, char out[8],
			  size_t *out_len)
{
	size_t k = s[0] < 0x80 ? 1 : utf8_len(s, n);

	if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
		hex_escape(out, s[0]);
		hex_escape(out + 4, s[1]);
		*out_len = 8;
		return 2;
	}
	if (k > 1) {
		memcpy(out, s, k);
		*out_len = k;
		return k;
	}
	if (backslash && s[0] == '\\') {
		memcpy(out, "\\\\", 2);
		*out_len = 2;
	} else if (s[0] < 0x20 || s[0] == 0x7f || (s[0] >= 0x80 && s[0] < 0xa0)) {
		hex_escape(out, s[0]);
		*out_len = 4;
	} else {
		out[0] = (char)s[0];
		*out_len = 1;
	}
	return 1;
}

static void line_add_escaped(struct line *l, const char *text, size_t len, bool backslash)
{
	const unsigned char *s = (const unsigned char *)text;
	char out[8];
	size_t k;

	for (size_t i = 0; i < len;) {
		i += escape_char(s + i, len - i, backslash, out, &k);
		line_add(l, out, k);
	}
}

void line_add_path(struct line *l, const char *path, size_t len)
{
	line_add_escaped(l, path, len, true);
}

void line_add_text(struct line *l, const char *text, size_t len)
{
	line_add_escaped(l, text, len, false);
}

static void print_escaped(FILE *f, const char *text, size_t len, bool backslash)
{
	const unsigned char *s = (const unsigned char *)text;
	char out[8];
	size_t k;

	for (size_t i = 0; i < len;) {
		i += escape_char(s + i, len - i, backslash, out, &k);
		fwrite(out, 1, k, f);
	}
}

void print_path(FILE *f, const char *path, size_t len)
{
	print_escaped(f, path, len, true);
}

void print_text(FILE *f, const char *text, size_t len)
{
	print_escaped(f, text, len, false);
}

void print_html(FILE *f, const char *text, size_t len, bool backslash)
{
	const unsigned char *s = (const unsigned char *)text;
	char out[8];
	size_t k;

	for (size_t i = 0; i < len;) {
		i += escape_char(s + i, len - i, backslash, out, &k);
		for (size_t j = 0; j < k; j++) {
			switch (out[j]) {
			case '&': fputs("&amp;", f); break;
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '"': fputs("&quot;", f); break;
			case '\'': fputs("&#39;", f); break;
			default: putc(out[j], f);
			}
		}
	}
}

/* Bytes a shell word needs no quotes for (Python's shlex.quote: none). */
static bool shell_safe(unsigned char c, bool first_word)
{
	/* "A=b" as the first word would be an assignment, not a command */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("@%+:,./-_", c) || (c == '=' && !first_word);
}

/*
 * Append word to out, quoted: runs of ordinary bytes in '...', a quote as
 * \' between them (so "it's" is 'it'\''s'), and the characters a
 * terminal must not see raw (those print_path() escapes) as $'\xHH...'.
 * Returns the end of what was written.
 */
static char *shell_quote(char *out, const char *word, bool first_word)
{
	const unsigned char *s = (const unsigned char *)word;
	size_t len = strlen(word), k, n;
	char esc[8], open = 0;	/* the quote open: '\'', '$' or none */
	bool plain = len > 0;

	for (size_t i = 0; i < len; i++)
		plain = plain && shell_safe(s[i], first_word);
	if (plain)
		return memcpy(out, word, len), out + len;
	if (!len)
		return memcpy(out, "''", 2), out + 2;
	for (size_t i = 0; i < len; i += n) {
		n = escape_char(s + i, len - i, false, esc, &k);
		bool control = k != n;
		char want = s[i] == '\'' ? 0 : control ? '$' : '\'';

		if (open && open != want)
			*out++ = '\'', open = 0;
		if (want && !open) {
			if (want == '$')
				*out++ = '$';
			*out++ = '\'', open = want;
		}
		if (!want)
			memcpy(out, "\\'", 2), out += 2;
		else
			memcpy(out, esc, k), out += k;
	}
	if (open)
		*out++ = '\'';
	return out;
}

char *shell_join(char *const *argv)
{
	size_t cap = 1;
	char *s, *p;

	/* a byte takes at most 7: a control character among others is '$'\x01'' */
	for (char *const *a = argv; *a; a++)
		cap += 7 * strlen(*a) + 3;
	if (!(s = p = malloc(cap)))
		return NULL;
	for (char *const *a = argv; *a; a++) {
		if (a != argv)
			*p++ = ' ';
		p = shell_quote(p, *a, a == argv);
	}
	*p = '\0';
	return s;
}

void line_write(struct line *l)
{
	line_add(l, "\n", 1);
	line_flush(l);
}

const char *human_size(uint64_t bytes, char buf[16])
{
	return hs_size_str(bytes, buf);
}

uint64_t memory_bytes(uint64_t pages, uint64_t page_size)
{
	return page_size && pages > UINT64_MAX / page_size ? UINT64_MAX : pages * page_size;
}

/* The one convention: a size, then what it is a size of. */
static const char *labelled_size(uint64_t bytes, const char *of, char buf[SIZE_STR_MAX])
{
	char h[16];

	snprintf(buf, SIZE_STR_MAX, "%s of %s", human_size(bytes, h), of);
	return buf;
}

const char *memory_size(uint64_t pages, uint64_t page_size, char buf[SIZE_STR_MAX])
{
	return labelled_size(memory_bytes(pages, page_size), "memory", buf);
}

const char *file_data_size(uint64_t bytes, char buf[SIZE_STR_MAX])
{
	return labelled_size(bytes, "file data", buf);
}

const char *short_size(uint64_t bytes, char buf[24])
{
	static const char letters[] = "BKMGTPE";
	int exp = 0;
	uint64_t dec, frac;	/* dec: below 1025 (bytes: below 1024) */

	while (exp < 60 && bytes >> exp >= 1024)
		exp += 10;
	dec = exp ? bytes >> exp : bytes;
	frac = exp ? bytes & (((uint64_t)1 << exp) - 1) : 0;
	if (frac) {
		/* thousandths, then rounded half up to tenths, as util-linux does */
		if (frac >= UINT64_MAX / 1000)
			frac = frac / 1024 * 1000 / ((uint64_t)1 << (exp - 10));
		else
			frac = frac * 1000 / ((uint64_t)1 << exp);
		frac = (frac + 50) / 100;
		if (frac == 10) {	/* 1023.96K is "1024K", as there */
			dec++;
			frac = 0;
		}
	}
	if (frac)
		snprintf(buf, 24, "%u.%u%c", (unsigned)dec, (unsigned)frac, letters[exp / 10]);
	else
		snprintf(buf, 24, "%u%c", (unsigned)dec, letters[exp / 10]);
	return buf;
}

const char *percent(uint64_t part, uint64_t whole, char buf[8])
{
	if (!whole)
		snprintf(buf, 8, "-");
	else
		snprintf(buf, 8, "%.1f%%", 100.0 * (double)part / (double)whole);
	return buf;
}

void print_bar(FILE *f, const double *cells, int width)
{
	fputc('[', f);
	for (int i = 0; i < width; i++) {
		double c = cells[i];

		fputc(c < 0 ? '?' : c >= 1.0 ? 'O' : c > 0 ? 'o' : ' ', f);
	}
	fputc(']', f);
}

/* ---- tables ------------------------------------------------------------------ */

/* A cell's bytes as raw mode writes them (fputs_nonblank() in util-linux). */
static void raw_cell(FILE *f, const char *cell, size_t len)
{
	char out[4];

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)cell[i];

		if (b <= ' ' || b == '\\' || b >= 0x7f) {
			hex_escape(out, b);
			fwrite(out, 1, 4, f);
		} else {
			fputc(b, f);
		}
	}
}

/* Room for n more bytes in *buf (of *cap); false if there is no memory. */
static bool room(char **buf, size_t *cap, size_t len, size_t n)
{
	size_t c = *cap ? *cap : 4096;
	char *p;

	while (c - len < n)
		c *= 2;
	if (c == *cap)
		return true;
	if (!(p = realloc(*buf, c)))
		return false;
	*buf = p;
	*cap = c;
	return true;
}

/* One cell of width w (escaped text s, n bytes) in column i, with its padding. */
static void put_cell(struct table *t, size_t i, const char *s, size_t n, size_t w)
{
	size_t pad = t->width[i] > w ? t->width[i] - w : 0;
	bool last = i + 1 == t->ncols;

	if (t->cols[i]->right)
		fprintf(t->f, "%*s", (int)pad, "");
	fwrite(s, 1, n, t->f);
	if (!t->cols[i]->right && !last)
		fprintf(t->f, "%*s", (int)pad, "");
	fputc(last ? '\n' : ' ', t->f);
}

/* Size the columns over the header and the rows held, write them, stream on. */
static void table_flush(struct table *t)
{
	size_t off = 0, w, n;

	if (t->streaming)
		return;
	t->streaming = true;
	for (size_t i = 0; i < t->ncols; i++) {
		size_t name = strlen(t->cols[i]->name), hint = t->cols[i]->hint;

		if (t->width[i] < name)
			t->width[i] = name;
		else if (t->width[i] < hint && name < hint)
			t->width[i] = hint;
	}
	for (size_t i = 0; i < t->ncols && !t->noheadings; i++)
		put_cell(t, i, t->cols[i]->name, strlen(t->cols[i]->name),
			 strlen(t->cols[i]->name));
	for (size_t r = 0; r < t->nheld; r++) {
		for (size_t i = 0; i < t->ncols; i++) {
			memcpy(&w, t->held + off, sizeof(w));
			memcpy(&n, t->held + off + sizeof(w), sizeof(n));
			off += 2 * sizeof(size_t);
			put_cell(t, i, t->held + off, n, w);
			off += n;
		}
	}
	free(t->held);
	t->held = NULL;
	t->held_len = t->held_cap = t->nheld = 0;
}

void table_start(struct table *t, FILE *f, const struct table_column *const *cols, size_t ncols,
		 bool raw, bool noheadings)
{
	memset(t, 0, sizeof(*t));
	t->f = f;
	t->ncols = ncols < TABLE_MAX_COLUMNS ? ncols : TABLE_MAX_COLUMNS;
	memcpy(t->cols, cols, t->ncols * sizeof(*cols));
	t->raw = raw;
	t->noheadings = noheadings;
	for (size_t i = 0; raw && !noheadings && i < t->ncols; i++) {
		raw_cell(f, t->cols[i]->name, strlen(t->cols[i]->name));
		fputc(i + 1 < t->ncols ? ' ' : '\n', f);
	}
}

static void raw_row(struct table *t, const char *const *cells, const size_t *lens)
{
	for (size_t i = 0; i < t->ncols; i++) {
		raw_cell(t->f, cells[i], lens[i]);
		fputc(i + 1 < t->ncols ? ' ' : '\n', t->f);
	}
}

void table_row(struct table *t, const char *const *cells, const size_t *lens)
{
	size_t need = 0;

	if (t->raw) {
		raw_row(t, cells, lens);
		return;
	}
	/* escaped, a byte takes at most 4 (a UTF-8 sequence of k bytes stays k) */
	for (size_t i = 0; i < t->ncols; i++)
		need += 2 * sizeof(size_t) + 4 * lens[i];
	if (!t->streaming && (t->nheld == TABLE_HELD_ROWS ||
			      !room(&t->held, &t->held_cap, t->held_len, need)))
		table_flush(t);
	if (t->streaming && !room(&t->held, &t->held_cap, 0, need)) {
		raw_row(t, cells, lens);	/* no memory for one row: unaligned, not lost */
		return;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		const unsigned char *s = (const unsigned char *)cells[i];
		size_t start = t->streaming ? 0 : t->held_len, at = start + 2 * sizeof(size_t);
		size_t w = 0, k, used;

		for (size_t j = 0; j < lens[i]; j += used) {
			used = escape_char(s + j, lens[i] - j, true, t->held + at, &k);
			w += used > 1 && k == used ? 1 : k;	/* a UTF-8 character takes one cell */
			at += k;
		}
		if (t->streaming) {
			put_cell(t, i, t->held + 2 * sizeof(size_t), at - 2 * sizeof(size_t), w);
			continue;
		}
		if (w > t->width[i])
			t->width[i] = w;
		k = at - start - 2 * sizeof(size_t);
		memcpy(t->held + start, &w, sizeof(w));
		memcpy(t->held + start + sizeof(w), &k, sizeof(k));
		t->held_len = at;
	}
	if (!t->streaming)
		t->nheld++;
}

void table_end(struct table *t)
{
	if (!t->raw)
		table_flush(t);
	free(t->held);
	t->held = NULL;
}

/* ---- progress --------------------------------------------------------------- */

void progress_start(struct progress *p, const char *label, uint64_t total, bool quiet)
{
	p->on = !quiet && isatty(STDERR_FILENO);
	p->label = label;
	p->total = total;
	p->start = p->last = hs_monotonic_seconds();
}

void progress_update(struct progress *p, uint64_t done, const char *unit)
{
	double t = hs_monotonic_seconds(), rate;
	char a[32], b[32], r[32];
	int width = 30, fill;

	if (!p->on || t - p->last < 0.1)
		return;
	p->last = t;
	rate = t > p->start ? (double)done / (t - p->start) : 0;
	if (!strcmp(unit, "bytes")) {
		human_size(done, a);
		human_size(p->total, b);
		human_size((uint64_t)rate, r);
		strcat(r, "/s");
	} else {
		snprintf(a, sizeof(a), "%llu %s", (unsigned long long)done, unit);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)p->total);
		snprintf(r, sizeof(r), "%.0f/s", rate);
	}
	if (p->total) {
		fill = (int)((double)width * (double)(done > p->total ? p->total : done) /
			     (double)p->total);
		fprintf(stderr, "\r%s [%.*s%*s] %s / %s  %s \033[K", p->label, fill,
			"##############################", width - fill, "", a, b, r);
	} else {
		fprintf(stderr, "\r%s %s  %s \033[K", p->label, a, r);
	}
}

void progress_end(struct progress *p)
{
	if (p->on)
		fputs("\r\033[K", stderr);
}

/* ---- JSON ------------------------------------------------------------------- */

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

void json_begin_report(struct json *j, FILE *f, const char *report, bool with_items)
{
	json_init(j, f);
	json_begin_object(j, NULL);
	json_string(j, "report", report);
	json_u64(j, "format", JSON_FORMAT);
	if (with_items)
		json_begin_array(j, "items");
}

static void indent(struct json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void write_string(FILE *f, const char *s, size_t len);

/* Separator, indentation and key before a value. */
static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		indent(j);
	}
	j->first[j->depth] = false;
	if (key) {
		write_string(j->f, key, strlen(key));
		fputs(": ", j->f);
	}
}

static void open_scope(struct json *j, const char *key, char ch)
{
	member(j, key);
	fputc(ch, j->f);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_scope(struct json *j, char ch)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		indent(j);
	fputc(ch, j->f);
}

void json_begin_object(struct json *j, const char *key) { open_scope(j, key, '{'); }
void json_end_object(struct json *j) { close_scope(j, '}'); }
void json_begin_array(struct json *j, const char *key) { open_scope(j, key, '['); }
void json_end_array(struct json *j) { close_scope(j, ']'); }

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void write_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned char ch = s[i];
		size_t n;

		if (ch == '"' || ch == '\\') {
			fputc('\\', f);
			fputc(ch, f);
			i++;
		} else if (ch == '\n') {
			fputs("\\n", f);
			i++;
		} else if (ch == '\t') {
			fputs("\\t", f);
			i++;
		} else if (ch < 0x20 || ch == 0x7f) {
			fprintf(f, "\\u%04x", ch);
			i++;
		} else if ((n = utf8_len(s + i, len - i)) > 0) {
			fwrite(s + i, 1, n, f);
			i += n;
		} else {
			fprintf(f, "\\udc%02x", ch);	/* surrogateescape */
			i++;
		}
	}
	fputc('"', f);
}

void json_bytes(struct json *j, const char *key, const char *s, size_t len)
{
	member(j, key);
	write_string(j->f, s, len);
}

void json_string(struct json *j, const char *key, const char *s)
{
	if (!s) {
		json_null(j, key);
		return;
	}
	json_bytes(j, key, s, strlen(s));
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_u64_or_null(struct json *j, const char *key, bool known, uint64_t v)
{
	if (known)
		json_u64(j, key, v);
	else
		json_null(j, key);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_number(struct json *j, const char *key, const char *digits)
{
	member(j, key);
	fputs(digits, j->f);
}

void json_double(struct json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
}
