# hotset - find the files a slow job waits for, and keep them in memory.
#
#   make                 build build/hotset
#   make check           build, then run the whole test suite (tests/run)
#   make SANITIZE=1      build with ASan+UBSan into build-asan/
#   make WERROR=1        warnings are errors (with either build)
#   make lint            cppcheck and clang-tidy over the tree; fails on a finding
#   make install PREFIX=/usr/local DESTDIR=   (BINDIR, MANDIR, UNITDIR,
#                        BASHCOMPDIR, ZSHCOMPDIR, LIBEXECDIR: where each part goes)
#
# Optional parts are found with pkg-config and switched off when absent:
# the eBPF record backend (libbpf, clang, bpftool) and io_uring (liburing).

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
DOCDIR   ?= $(PREFIX)/share/doc/hotset
LIBEXECDIR ?= $(PREFIX)/libexec/hotset
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKG_CONFIG ?= pkg-config

CFLAGS   ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-unused-parameter -Wvla
# CI builds with WERROR=1. It applies to what it compiles: objects already
# built without it are not compiled again (make clean first to check all).
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
CPPFLAGS += -Isrc/lib -Isrc -D_GNU_SOURCE
LDLIBS   += -lpthread -lm

ifeq ($(SANITIZE),1)
BUILD    ?= build-asan
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
else
BUILD    ?= build
endif

# ---- optional features ---------------------------------------------------
HAVE_URING ?= $(shell $(PKG_CONFIG) --exists liburing 2>/dev/null && echo 1 || echo 0)
ifeq ($(HAVE_URING),1)
CPPFLAGS += -DHAVE_URING=1 $(shell $(PKG_CONFIG) --cflags liburing)
LDLIBS   += $(shell $(PKG_CONFIG) --libs liburing)
endif

HAVE_BPF ?= $(shell $(PKG_CONFIG) --exists libbpf 2>/dev/null && command -v $(CLANG) >/dev/null && \
              command -v $(BPFTOOL) >/dev/null && test -r /sys/kernel/btf/vmlinux && echo 1 || echo 0)
ifeq ($(HAVE_BPF),1)
CPPFLAGS += -DHAVE_BPF=1 -I$(BUILD)/bpf $(shell $(PKG_CONFIG) --cflags libbpf)
LDLIBS   += $(shell $(PKG_CONFIG) --libs libbpf) -lelf -lz
endif

ALL_CFLAGS = -std=c11 $(WARNINGS) $(CFLAGS)

# ---- sources -------------------------------------------------------------
CORE_SRC := $(wildcard src/lib/*/*.c src/lib/*/*/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
BPF_SRC  := $(wildcard src/lib/*/*.bpf.c src/lib/*/*/*.bpf.c)
CORE_SRC := $(filter-out $(BPF_SRC),$(CORE_SRC))
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/helpers/%)
BPF_NAME := $(notdir $(BPF_SRC:%.bpf.c=%))
BPF_SKEL := $(BPF_NAME:%=$(BUILD)/bpf/%.skel.h) $(BPF_NAME:%=$(BUILD)/bpf/%.btf.h)
ifneq ($(HAVE_BPF),1)
BPF_SKEL :=
endif

LIB := $(BUILD)/libhotset.a
BIN := $(BUILD)/hotset

.PHONY: all check test demo install uninstall clean fuzz lint
all: $(BIN)

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(LIB): $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c $(BPF_SKEL) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# ---- eBPF: vmlinux.h from the running kernel's BTF, then a skeleton -------
# bpftool links the object, which drops its DWARF (the skeleton embeds the
# object: 116 KB instead of 790 KB). %.btf.h holds the part of the kernel's BTF
# that the programs relocate against, with the build id of that kernel:
# on it, the backend need not parse the kernel's 5 MB BTF at each start.
BPF_ARCH   := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -I$(BUILD)/bpf

# generated headers are kept (make would delete them as intermediates)
.SECONDARY: $(BPF_SKEL) $(BPF_NAME:%=$(BUILD)/bpf/%.bpf.o)

$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# the programs: record's (src/lib/record/bpf) and keep's (src/lib/keep)
define BPF_OBJ_RULE
$(BUILD)/bpf/%.bpf.o: $(1)/%.bpf.c $(1)/*.h $(BUILD)/bpf/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -I$(1) -Isrc/lib $(shell $(PKG_CONFIG) --cflags libbpf) -c $$< -o $$@.full
	$(BPFTOOL) gen object $$@ $$@.full
	rm -f $$@.full
endef
$(eval $(call BPF_OBJ_RULE,src/lib/record/bpf))
$(eval $(call BPF_OBJ_RULE,src/lib/keep))

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# The GNU build id note of /sys/kernel/notes, as "b1,b2,...", or "0".
BUILD_ID_AWK := { for (i = 1; i <= NF; i++) b[n++] = $$i } \
	function le32(p) { return b[p] + b[p+1] * 256 + b[p+2] * 65536 + b[p+3] * 16777216 } \
	END { o = 0; while (o + 12 <= n) { ns = le32(o); ds = le32(o + 4); nm = o + 12; \
		d = nm + int((ns + 3) / 4) * 4; \
		if (le32(o + 8) == 3 && ns == 4 && b[nm] == 71 && b[nm+1] == 78 && b[nm+2] == 85) { \
			for (i = 0; i < ds; i++) printf "%s,", b[d + i]; exit } \
		o = d + int((ds + 3) / 4) * 4 } \
	printf "0" }

$(BUILD)/bpf/%.btf.h: $(BUILD)/bpf/%.bpf.o
	{ echo "/* generated by the Makefile from $< and /sys/kernel/btf/vmlinux */"; \
	  if $(BPFTOOL) gen min_core_btf /sys/kernel/btf/vmlinux $@.btf $< >/dev/null 2>&1; then \
		echo "static const unsigned char hs_bpf_min_btf[] = {"; \
		od -An -v -tx1 $@.btf | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo "};"; \
		echo "static const unsigned char hs_bpf_build_id[] = {"; \
		od -An -v -tu1 /sys/kernel/notes 2>/dev/null | awk '$(BUILD_ID_AWK)'; \
		echo "};"; \
	  else \
		echo "static const unsigned char hs_bpf_min_btf[1], hs_bpf_build_id[1];"; \
	  fi; } > $@.tmp && mv $@.tmp $@
	rm -f $@.btf

# ---- tests -----------------------------------------------------------------
$(BUILD)/tests/test-%: tests/unit/test-%.c $(LIB) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit -Itests $(ALL_CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

tests: $(BIN) $(UNIT_BIN) $(HELPER_BIN)

check test:
	scripts/dev test

# ---- fuzzing -----------------------------------------------------------------
# One libFuzzer target per parser of untrusted text, tests/fuzz/fuzz-NAME.c,
# built by clang with the library sources it needs (FUZZ_SRC_NAME). Each is
# seeded with tests/fuzz/corpus/NAME, which the unit tests replay; what it
# finds goes to BUILD/fuzz/corpus/NAME, a crash to BUILD/fuzz/crash-*.
#   make fuzz            every target, each for an equal share of FUZZ_SECONDS
#   make fuzz-NAME       one target, for all of FUZZ_SECONDS
# A new target: its name in FUZZ_TARGETS, its sources in FUZZ_SRC_NAME.
FUZZ_TARGETS := profile fdinfo mountinfo psi size names keepstate meminfo jobfile stat netsock
# the profile's reader alone (its writer is not fuzzed: it writes what it is given)
PROFILE_READ_SRC := src/lib/profile/profile.c src/lib/profile/profile-read.c src/lib/profile/profile-header.c
FUZZ_SRC_profile := $(PROFILE_READ_SRC) src/lib/base/util.c
FUZZ_SRC_fdinfo := src/lib/kernel/procfs.c src/lib/base/util.c
FUZZ_SRC_mountinfo := src/lib/kernel/procfs.c src/lib/base/util.c
FUZZ_SRC_psi := src/lib/kernel/psi.c src/lib/kernel/procfs.c src/lib/base/util.c
FUZZ_SRC_stat := src/lib/kernel/procfs.c src/lib/base/util.c
FUZZ_SRC_size := src/cli/options.c src/cli/messages.c src/cli/output.c src/lib/base/util.c
FUZZ_SRC_names := src/lib/cache/names.c
FUZZ_SRC_keepstate := src/lib/keep/state.c src/lib/base/atomic.c src/lib/base/util.c
FUZZ_SRC_meminfo := src/lib/kernel/memory.c src/lib/kernel/procfs.c src/lib/base/util.c
FUZZ_SRC_netsock := src/lib/kernel/netsock.c
FUZZ_SRC_jobfile := src/lib/queue/jobfile.c src/lib/queue/runstate.c src/lib/base/atomic.c src/lib/base/util.c
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 4096
FUZZ_BIN := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz-%)
FUZZ_HDR := $(wildcard src/lib/*/*.h tests/*.h tests/fuzz/*.h)

# fuzz_run NAME SECONDS: run one target for that long (its seeds, if any)
fuzz_run = mkdir -p $(BUILD)/fuzz/corpus/$(1) && \
	$(BUILD)/fuzz/fuzz-$(1) -max_total_time=$(2) -max_len=$(FUZZ_MAX_LEN) \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus/$(1) \
		$$(ls -d tests/fuzz/corpus/$(1) 2>/dev/null)

.SECONDEXPANSION:
$(FUZZ_BIN): $(BUILD)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $$(FUZZ_SRC_$$*) $(FUZZ_HDR) Makefile
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) -Itests -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(FUZZ_SRC_$*) $(FUZZ_LIBS_$*)

fuzz: $(FUZZ_BIN)
	@share=$$(( $(FUZZ_SECONDS) / $(words $(FUZZ_TARGETS)) )); [ $$share -gt 0 ] || share=1; \
	failed=; \
	for t in $(FUZZ_TARGETS); do \
		echo "== fuzz-$$t for $$share s"; \
		$(call fuzz_run,$$t,$$share) || failed="$$failed fuzz-$$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing failed:$$failed" >&2; exit 1; fi

.PHONY: $(FUZZ_TARGETS:%=fuzz-%)
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: $(BUILD)/fuzz/fuzz-%
	$(call fuzz_run,$*,$(FUZZ_SECONDS))

# ---- static analysis ---------------------------------------------------------
# make lint: cppcheck, then clang-tidy (the checks of .clang-tidy), over the
# library, the binary, the unit tests, the test helpers and the fuzz
# targets, with the build's own flags; it fails on any finding. A false
# positive is suppressed where it is, with the reason ("cppcheck-suppress
# ID ; why", "NOLINT(check): why"). clang-tidy runs file by file, each a
# make target (make -j, and only what changed since its last pass is
# linted again), on LINT_DIR/compile_commands.json, which make writes from
# the rules above (editors' language servers can use it too).
# The eBPF programs (*.bpf.c) are not linted: they are built for another
# target against the kernel's vmlinux.h, and the kernel's verifier proves
# them safe as they load (the record and keep tests load them).
# .lint-known lists findings not dealt with yet ("FILE CHECK": that check,
# a cppcheck id or a clang-tidy check, is off for that file): a list that
# only shrinks.
#   make lint LINT_SRC="FILE..."   those files only
LINT_SRC ?= $(CORE_SRC) $(CLI_SRC) $(UNIT_SRC) $(HELPER_SRC) $(wildcard tests/fuzz/fuzz-*.c)
LINT_DIR ?= $(BUILD)/lint
CPPCHECK ?= cppcheck
CLANG_TIDY ?= clang-tidy
LINT_HDR := $(wildcard src/lib/*/*.h src/lib/*/*/*.h src/cli/*.h tests/*.h tests/unit/*.h)
# cppcheck: the classes of findings that are bugs (its "style" class is
# mostly taste: the scope of a variable, an unused struct member)
CPPCHECK_FLAGS := --quiet --std=c11 --enable=warning,portability,performance \
	--error-exitcode=1 --inline-suppr --cppcheck-build-dir=$(LINT_DIR)/cppcheck \
	--suppressions-list=$(LINT_DIR)/cppcheck-known \
	--template='{file}:{line}: {severity}: {message} [{id}]' \
	$(filter -I% -D%,$(CPPFLAGS)) -Itests/unit -Itests
# a file's compile command: tests/ include their own headers (unit.h...);
# bpftool's skeletons are another program's code, as system headers are
lint_cflags = $(patsubst -I$(BUILD)/bpf,-isystem $(BUILD)/bpf,$(CPPFLAGS)) \
	$(if $(filter tests/%,$(1)),-Itests/unit -Itests) $(ALL_CFLAGS)
LINT_TIDY := $(LINT_SRC:%=$(LINT_DIR)/tidy/%.ok)

# scripts/long-functions: no function of the library over 100 lines without
# a comment that says why it is long
.PHONY: lint-cppcheck lint-tidy lint-long FORCE
lint: lint-cppcheck lint-tidy lint-long
lint-long:
	scripts/long-functions $(filter src/lib/%,$(LINT_SRC))
lint-cppcheck: $(LINT_DIR)/cppcheck.ok
lint-tidy: $(LINT_TIDY)

$(LINT_DIR)/cppcheck.ok: $(LINT_SRC) $(LINT_HDR) $(BPF_SKEL) .lint-known Makefile
	@mkdir -p $(LINT_DIR)/cppcheck
	@awk '!/^#/ && NF == 2 { print $$2 ":" $$1 }' .lint-known > $(LINT_DIR)/cppcheck-known
	$(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_SRC)
	@touch $@

# rewritten only when a command changes, so that nothing is linted again for nothing
$(LINT_DIR)/compile_commands.json: FORCE
	@mkdir -p $(LINT_DIR)
	@{ echo "["; sep=" "; \
	$(foreach f,$(LINT_SRC),printf '%s{ "directory": "%s", "file": "%s",\n   "command": "%s" }\n' \
		"$$sep" "$(CURDIR)" "$(f)" "$(CC) $(call lint_cflags,$(f)) -c -o /dev/null $(f)"; sep=",";) \
	echo "]"; } > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

# the checks .lint-known turns off for a file, as clang-tidy's --checks
# takes them; rewritten only when they change, so that an edit of
# .lint-known lints again only the files whose lines changed
.PRECIOUS: $(LINT_DIR)/tidy/%.known
$(LINT_DIR)/tidy/%.known: FORCE
	@mkdir -p $(dir $@)
	@awk -v f="$*" '$$1 == f { printf "%s-%s", sep, $$2; sep = "," }' .lint-known > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

# clang-tidy's output is kept in FILE.ok.log; on a finding, shown without
# the count of warnings it hid (those of system headers). The analyzer
# follows a call into bpftool's skeletons and may report there, in code
# that is not ours and that we cannot annotate: a run whose only findings
# lie in $(BUILD)/bpf/ passes (the log keeps them).
LINT_DIAG := ^[^ ]*:[0-9]*:[0-9]*: \(warning\|error\):
LINT_SKEL_DIAG := ^\($(CURDIR)/\)\?$(BUILD)/bpf/[^ ]*:[0-9]*:[0-9]*: \(warning\|error\):
$(LINT_DIR)/tidy/%.ok: % $(LINT_DIR)/tidy/%.known $(LINT_DIR)/compile_commands.json .clang-tidy \
		$(LINT_HDR) $(BPF_SKEL)
	@echo "clang-tidy $<"
	@known=$$(cat $(LINT_DIR)/tidy/$<.known); rc=0; \
	$(CLANG_TIDY) --quiet -p $(LINT_DIR) $${known:+--checks="$$known"} $< > $@.log 2>&1 || rc=$$?; \
	if [ $$rc -ne 0 ] && grep -q "$(LINT_SKEL_DIAG)" $@.log && \
	   ! grep "$(LINT_DIAG)" $@.log | grep -qv "$(LINT_SKEL_DIAG)"; then rc=0; fi; \
	if [ $$rc -eq 0 ]; then touch $@; \
	else grep -v "^[0-9]* warnings\? \(and [0-9]* errors\? \)\?generated\.$$" $@.log; exit 1; fi

# what unit tests include whole (library and cli .c files, fuzz targets)
# is theirs to lint too
$(patsubst %,$(LINT_DIR)/tidy/%.ok,$(filter tests/unit/%,$(LINT_SRC))): $(CORE_SRC) $(CLI_SRC) \
	$(wildcard tests/fuzz/*.c)

demo:
	scripts/dev demo

# ---- install -----------------------------------------------------------------
# The systemd units name the installed binary: @BINDIR@ in systemd/*.in is
# replaced as they are installed.
UNITS := $(patsubst systemd/%.in,%,$(wildcard systemd/*.in))
# the interfaces scripts rely on: every report's JSON keys, every option's letter
DOCS := docs/json.md docs/options.md
# programs other software runs: Slurm's prolog, task prolog and epilog (docs/slurm.md)
LIBEXEC := contrib/slurm/hotset-slurm

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/hotset
	for f in $(LIBEXEC); do \
		t=$(DESTDIR)$(LIBEXECDIR)/$$(basename $$f) && \
		sed -e 's|@BINDIR@|$(BINDIR)|g' $$f > $$t.tmp && chmod 755 $$t.tmp && \
		mv -f $$t.tmp $$t || exit 1; \
	done
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completion/hotset.bash $(DESTDIR)$(BASHCOMPDIR)/hotset
	install -m 644 completion/_hotset $(DESTDIR)$(ZSHCOMPDIR)/_hotset
	for u in $(UNITS); do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' systemd/$$u.in > $(DESTDIR)$(UNITDIR)/$$u.tmp && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u.tmp && \
		mv -f $(DESTDIR)$(UNITDIR)/$$u.tmp $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hotset
	cd docs/man && for m in *.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	rm -f $(DESTDIR)$(BASHCOMPDIR)/hotset $(DESTDIR)$(ZSHCOMPDIR)/_hotset
	for d in $(notdir $(DOCS)); do rm -f $(DESTDIR)$(DOCDIR)/$$d; done
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done
	for f in $(notdir $(LIBEXEC)); do rm -f $(DESTDIR)$(LIBEXECDIR)/$$f; done
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

clean:
	rm -rf build build-asan

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_BIN:=.d)
