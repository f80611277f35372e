# hotset - find the files a slow job waits for, and keep them in memory.
#
#   make                 build build/hotset
#   make check           build, then run the whole test suite (tests/run)
#   make SANITIZE=1      build with ASan+UBSan into build-asan/
#   make install PREFIX=/usr/local DESTDIR=
#
# Optional parts are found with pkg-config and switched off when absent:
# the eBPF record backend (libbpf, clang, bpftool) and io_uring (liburing).

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKG_CONFIG ?= pkg-config

CFLAGS   ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-unused-parameter -Wvla
CPPFLAGS += -Iinclude -Isrc -D_GNU_SOURCE
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
CORE_SRC := $(wildcard src/core/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
BPF_SRC  := $(wildcard src/core/*.bpf.c)
CORE_SRC := $(filter-out $(BPF_SRC),$(CORE_SRC))
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/helpers/%)
BPF_SKEL := $(BPF_SRC:src/core/%.bpf.c=$(BUILD)/bpf/%.skel.h)

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
$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: src/core/%.bpf.c src/core/*.h $(BUILD)/bpf/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -Isrc/core \
		$(shell $(PKG_CONFIG) --cflags libbpf) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

ifneq ($(HAVE_BPF),1)
BPF_SKEL :=
endif

# ---- tests -----------------------------------------------------------------
$(BUILD)/tests/test-%: tests/unit/test-%.c tests/unit/unit.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

tests: $(BIN) $(UNIT_BIN) $(HELPER_BIN)

check test:
	scripts/dev test

# The fuzz target needs clang's libFuzzer; FUZZ_SECONDS bounds the run.
FUZZ_SECONDS ?= 60
$(BUILD)/fuzz/fuzz-profile: tests/fuzz/fuzz-profile.c src/core/profile.c src/core/util.c
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $^
fuzz: $(BUILD)/fuzz/fuzz-profile
	@mkdir -p $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz-profile -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		$(BUILD)/fuzz/corpus tests/fuzz/corpus

demo:
	scripts/dev demo

# ---- install -----------------------------------------------------------------
install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/hotset
	install -m 644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hotset
	cd docs/man && for m in *.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done

clean:
	rm -rf build build-asan

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
