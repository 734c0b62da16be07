# lockbench - see README.md. `make` builds build/lockbench; `make test` installs
# what is missing, builds and runs every test; `make check` runs them under
# ASan+UBSan; `make demo` runs the showcase.

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
PKGS     := hiredis inih
TESTPKGS := criterion

# Warnings are errors in the project's own flags: its default CFLAGS, and the
# sanitizer and fuzz builds (make check, make fuzz), which say WERROR=-Werror.
# CFLAGS a user gives (make CFLAGS=-O0, CFLAGS="-O3 -march=native", or in the
# environment) may draw diagnostics another optimizer's analysis finds: there
# they stay warnings, and the build goes on.
WARN_ON  := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral
WERROR   ?= $(if $(filter command line environment,$(origin CFLAGS)),,-Werror)
WARN     := $(WARN_ON) $(WERROR)
CFLAGS   ?= -O2 -g
# harness/ is a folder per job (docs/architecture.md, Layers): each is on the
# include path, so an #include names a header alone ("run.h"). A source at
# harness/'s top is built too (test_structure asks for its folder).
HARNESS_DIRS := harness $(sort $(patsubst %/,%,$(dir $(wildcard harness/*/*.c harness/*/*.h))))
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -MMD -MP \
             $(HARNESS_DIRS:%=-I%) -Istrategies -Itests -I$(BUILD)/gen \
             $(shell pkg-config --cflags $(PKGS))
LDLIBS   = $(shell pkg-config --libs $(PKGS)) -lm -lpthread
TESTLIBS = $(shell pkg-config --libs $(TESTPKGS))

LIB_SRC  := $(sort $(wildcard strategies/*.c) $(filter-out harness/cli/main.c harness/core/fakeclock.c,$(wildcard harness/*.c harness/*/*.c)))
SHIM     := $(BUILD)/libfakeclock.so
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_FIX := $(BUILD)/obj/tests/fixture.o
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN      := $(BUILD)/lockbench
MAN      := $(BUILD)/lockbench.1
NULLAD   := $(BUILD)/null-adapter

.SECONDARY:
.PHONY: stampede all deps test check valgrind demo demo-run matrix chaos reference reference-docs bench \
        install clean run-tests fuzz fuzz-build tour tour-reference deb test-deps
all: $(BIN) $(SHIM) $(MAN) $(NULLAD)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# report.html's script lives in harness/report/report.js and is compiled in as a string.
$(BUILD)/gen/report_js.h: harness/report/report.js harness/embed.sh
	@mkdir -p $(dir $@)
	sh harness/embed.sh page_js $< > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/harness/report/report_html.o: $(BUILD)/gen/report_js.h

$(BUILD)/liblockbench.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/obj/harness/cli/main.o $(BUILD)/liblockbench.a
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The clock shim for redis-server; no sanitizer: it runs inside Redis.
$(SHIM): harness/core/fakeclock.c harness/core/clockfile.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN_ON) -Werror -Wno-missing-prototypes -O2 -fPIC -shared $(LDFLAGS) -o $@ $<

# The null adapter in C (strategies/adapters/null-c.adapter: built = null-adapter):
# the adapter protocol's own cost. No sanitizer, as the shim: an adapter may run
# with the clock shim in LD_PRELOAD, which ASan refuses to come after.
$(NULLAD): strategies/adapters/null.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN_ON) -Werror -O2 $(LDFLAGS) -o $@ $<

# The man page, from the same text as `lockbench help` and each `--help`.
$(MAN): $(BIN) harness/mkman.sh
	sh harness/mkman.sh $(BIN) > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_FIX) $(BUILD)/liblockbench.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(TESTLIBS) $(LDLIBS)

$(BUILD)/obj/tests/%.o: ALL_CFLAGS += $(shell pkg-config --cflags $(TESTPKGS))

# make deps DEPS="redis python": only those groups of harness/deps.sh (and its
# build tools); without DEPS, everything (make test's).
deps:
	@bash harness/deps.sh $(DEPS)

# What the tests need besides: the Debian packaging tools (test_install builds
# the package) and the Prometheus client's parser (test_gate reads --openmetrics).
test-deps:
	@bash harness/deps.sh test

# Tests find the binary under test through LOCKBENCH_BIN.
run-tests: $(BIN) $(SHIM) $(NULLAD) $(TEST_BIN)
	@LOCKBENCH_BIN=$(abspath $(BIN)) LOCKBENCH_SCENARIOS=$(abspath scenarios) \
	  LOCKBENCH_ADAPTERS=$(abspath strategies/adapters) \
	  LOCKBENCH_CLOCK_SHIM=$(abspath $(SHIM)) bash tests/run.sh $(TEST_BIN)

# deps first, then a parallel build: packages must be there before compiling.
test: test-deps
	@$(MAKE) --no-print-directory -j2 $(BIN) $(SHIM) $(NULLAD) $(TEST_BIN)
	@$(MAKE) --no-print-directory run-tests

SAN := BUILD=build/san CFLAGS="-O1 -g -fno-omit-frame-pointer" WERROR=-Werror \
       SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
check: test-deps
	@$(MAKE) --no-print-directory -j2 $(SAN) build/san/lockbench build/san/libfakeclock.so \
	  build/san/null-adapter \
	  $(TEST_BIN:$(BUILD)/%=build/san/%)
	@$(MAKE) --no-print-directory $(SAN) run-tests

VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect
valgrind: deps $(BIN)
	$(VALGRIND) $(BIN) list > /dev/null
	rm -rf build/valgrind-run # --out takes a new or empty directory (docs/running.md)
	$(VALGRIND) $(BIN) run --strategy redlock --clients 2 --duration 1 --no-status \
	  --out build/valgrind-run > /dev/null
	$(VALGRIND) $(BIN) check build/valgrind-run > /dev/null

# The showcase, in under 3 minutes: the classic recipes against the classic
# pitfalls, the holder-pause timeline of set-nx-px beside token-lua's, a
# contention sweep, and a split brain behind real Sentinels. Ends by printing
# the report's path.
DEMO := results/demo
demo: deps
	@$(MAKE) --no-print-directory -j2 $(BIN) $(SHIM)
	@$(MAKE) --no-print-directory demo-run

demo-run:
	@rm -rf $(DEMO)
	$(BIN) matrix --out $(DEMO)/1-matrix --strategies setnx,setnx-expire,set-nx-px,get-del,token-lua,redlock \
	  --scenarios holder-crash,holder-pause,check-then-delete,server-restart
	$(BIN) run --scenario holder-pause --strategy set-nx-px --clients 3 --no-status \
	  --out $(DEMO)/2-holder-pause-set-nx-px
	$(BIN) run --scenario holder-pause --strategy token-lua --clients 3 --no-status \
	  --out $(DEMO)/3-holder-pause-token-lua
	$(BIN) sweep --strategies set-nx-px,token-lua,redlock --vary clients=1,2,4,8,16 \
	  --duration 1.5 --wait fixed:2 --think 5 --out $(DEMO)/4-sweep-clients
	$(BIN) run --scenario sentinel-split-brain --strategy set-nx-px --no-status \
	  --out $(DEMO)/5-sentinel-split-brain-set-nx-px
	$(BIN) run --scenario etcd-waiter-lease-expiry --strategy etcd-lock@3.4.23 --no-status \
	  --out $(DEMO)/6-etcd-waiter-lease-expiry
	$(BIN) report $(DEMO)
	@$(BIN) check $(DEMO) > $(DEMO)/check.txt || { cat $(DEMO)/check.txt; exit 1; }
	@tail -1 $(DEMO)/check.txt

# Ratios against redis-benchmark, the serial limit and redis-py, plus a scaling sweep.
bench: deps
	@$(MAKE) --no-print-directory -j2 $(BIN) $(SHIM) $(NULLAD)
	$(BIN) bench

# Every strategy against every scenario, checked: 5 repetitions of every cell, 10 of
# the cells lesson pages show (`lockbench list --lessons`), 3 cells side by side
# (MATRIX_JOBS; docs/running.md says why that keeps timing honest). Wall time on
# the 2-core development machine: see README.md. Then every run it wrote is
# re-checked against its own files (`lockbench check`, the list in check.txt).
MATRIX_JOBS ?= 3
matrix: deps $(BIN) $(SHIM)
	@out=results/matrix/$$(date -u +%Y%m%dT%H%M%SZ); \
	$(BIN) matrix --check --repeat 5 --lesson-repeat 10 --jobs $(MATRIX_JOBS) --out $$out; \
	st=$$?; $(BIN) check $$out > $$out/check.txt || { grep -v '^ok ' $$out/check.txt; exit 1; }; \
	tail -1 $$out/check.txt; exit $$st

# The probabilistic chaos scenario, every strategy over ten seeds, checked
# against its "at worst" expectations (about 12 minutes).
chaos: deps $(BIN) $(SHIM)
	@out=results/chaos/$$(date -u +%Y%m%dT%H%M%SZ); \
	$(BIN) chaos --seeds 10 --check --out $$out; \
	st=$$?; $(BIN) check $$out > $$out/check.txt || { grep -v '^ok ' $$out/check.txt; exit 1; }; \
	tail -1 $$out/check.txt; exit $$st

# The stampede (scenarios/stampede.ini): 2048 clients at once, every strategy and library,
# 3 repetitions, checked. A separate target, not part of `make matrix`: each cell needs the
# machine to itself (alone = yes: one cell at a time); one repetition of its cells took
# about 13 min on the 2-core development machine, so about 40 min for the three.
stampede: deps $(BIN) $(SHIM)
	@out=results/stampede/$$(date -u +%Y%m%dT%H%M%SZ); \
	$(BIN) matrix --check --repeat 3 --scenarios stampede --out $$out; \
	st=$$?; $(BIN) check $$out > $$out/check.txt || { grep -v '^ok ' $$out/check.txt; exit 1; }; \
	tail -1 $$out/check.txt; exit $$st

# Reference charts for docs/: one full matrix at a fixed seed, in build/reference
# (`make reference`, which changes no tracked file). `make reference-docs` then
# copies the timelines the lessons show to docs/img/<scenario>--<strategy>.png (and
# writes their figures into each pitfall page's "The reference run", harness/refdocs.sh), and
# the matrix (figures included) to docs/img/matrix.png and docs/reference-matrix.md,
# for a commit of its own.
REF := build/reference
reference: deps
	@$(MAKE) --no-print-directory -j2 $(BIN) $(SHIM)
	rm -rf $(REF)
	$(BIN) matrix --seed 7 --jobs $(MATRIX_JOBS) --out $(REF)
	@cells=$$($(BIN) list --lessons) || exit 1; for c in $$cells; do \
	  test -f $(REF)/$$c/1/timeline.png || { echo "missing reference cell $$c"; exit 1; }; done
	@echo "reference charts in $(REF); make reference-docs copies them into docs/"

reference-docs:
	@test -f $(REF)/matrix.png || { echo "run make reference first"; exit 1; }
	mkdir -p docs/img
	cp $(REF)/matrix.png docs/img/matrix.png
	sed -e 's|`lockbench matrix --seed 7 --jobs $(MATRIX_JOBS) --out $(REF)`|`make reference` (lockbench matrix --seed 7)|' \
	  $(REF)/matrix.md > docs/reference-matrix.md
	@cells=$$($(BIN) list --lessons) || exit 1; for c in $$cells; do \
	  cp $(REF)/$$c/1/timeline.png docs/img/$${c%%/*}--$${c##*/}.png || exit 1; done
	sh harness/refdocs.sh $(REF) $(BIN)

# The tour: one report.html deck of the classic lessons in teaching order
# (docs/index.md, "A lesson plan"), drawn from the reference runs shipped in
# docs/tour without running anything (offline, in seconds). `make
# tour-reference` runs every lesson afresh at seed 7 and replaces docs/tour
# (harness/tourref.sh; docs/tour/SOURCE.md names the commit), for a commit of
# its own.
tour: $(BIN)
	$(BIN) tour

tour-reference: deps
	@$(MAKE) --no-print-directory -j2 $(BIN) $(SHIM)
	sh harness/tourref.sh $(BIN) docs/tour

# Fuzzing (AFL++, Debian's afl++): each harness in tests/fuzz runs for
# FUZZ_EXECS executions (a million; 0: FUZZ_SECONDS alone), at most FUZZ_SECONDS,
# FUZZ_JOBS side by side, from its committed seed corpus, built with ASan+UBSan
# and afl-clang-fast into build/fuzz; the report gives executions, crashes and
# hangs per harness, and the target fails on any crash or hang, or a harness
# short of its count (save a crash's input under tests/fuzz/regressions/<harness>/:
# make test replays every one).
FUZZ_TARGETS := scenario scenario_file args history import import_out summary events adapter \
                manifest esc
FUZZ_EXECS ?= 1000000
FUZZ_SECONDS ?= 3600
FUZZ_JOBS ?= 2
FUZZ := BUILD=build/fuzz CC=afl-clang-fast CFLAGS="-O1 -g -fno-omit-frame-pointer" WERROR=-Werror \
        SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
$(FUZZ_TARGETS:%=build/fuzz/fuzz_%): build/fuzz/fuzz_%: tests/fuzz/harness.c tests/fuzz/targets.h \
		$(BUILD)/liblockbench.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/fuzz -DFUZZ_TARGET=fuzz_$* -o $@ $< $(BUILD)/liblockbench.a $(LDLIBS)

fuzz-build:
	@$(MAKE) --no-print-directory -j2 $(FUZZ) $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)

fuzz:
	@bash harness/deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@bash tests/fuzz/run.sh --execs $(FUZZ_EXECS) --jobs $(FUZZ_JOBS) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Everything the binary needs, where it looks for it (relative to its own
# location, so DESTDIR and PREFIX may be anything): PREFIX/bin/lockbench,
# PREFIX/lib/lockbench/{libfakeclock.so,null-adapter}, PREFIX/share/lockbench/{scenarios,
# adapters,tour} (tour: the tour's reference runs), the man page, and the
# docs in PREFIX/share/doc/lockbench.
SHARE := $(DESTDIR)$(PREFIX)/share
install: $(BIN) $(SHIM) $(MAN) $(NULLAD)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/lockbench
	install -D -m 644 $(SHIM) $(DESTDIR)$(PREFIX)/lib/lockbench/libfakeclock.so
	install -D -m 755 $(NULLAD) $(DESTDIR)$(PREFIX)/lib/lockbench/null-adapter
	install -d $(SHARE)/lockbench/scenarios $(SHARE)/lockbench/adapters $(SHARE)/man/man1 \
	  $(SHARE)/doc/lockbench
	install -m 644 scenarios/*.ini $(SHARE)/lockbench/scenarios/
	install -m 644 strategies/adapters/*.adapter $(SHARE)/lockbench/adapters/
	install -m 755 strategies/adapters/*.py strategies/adapters/*.php $(SHARE)/lockbench/adapters/
	cp -R strategies/adapters/node strategies/adapters/install $(SHARE)/lockbench/adapters/
	if [ -d strategies/adapters/go/bin ]; then install -d $(SHARE)/lockbench/adapters/go/bin && \
	  install -m 755 strategies/adapters/go/bin/* $(SHARE)/lockbench/adapters/go/bin/; fi
	@# the Java adapter: its launcher, and the jars deps.sh built and checked (build/)
	if [ -f strategies/adapters/java/build/lockbench-java.jar ]; then \
	  install -d $(SHARE)/lockbench/adapters/java/build/lib && \
	  install -m 755 strategies/adapters/java/lockbench-java $(SHARE)/lockbench/adapters/java/ && \
	  install -m 644 strategies/adapters/java/build/lockbench-java.jar \
	    $(SHARE)/lockbench/adapters/java/build/ && \
	  install -m 644 strategies/adapters/java/build/lib/*.jar \
	    $(SHARE)/lockbench/adapters/java/build/lib/; fi
	@# the virtualenv is this tree's (its paths are absolute): its pins go, and it is made
	@# again there from the files deps.sh fetched (no network), unless NO_VENV=1 (a
	@# package, whose DESTDIR paths would be wrong where it is installed)
	mkdir -p $(SHARE)/lockbench/adapters/python
	cp strategies/adapters/python/requirements.txt $(SHARE)/lockbench/adapters/python/
	if [ -z "$(NO_VENV)" ] && [ -d strategies/adapters/python/venv/wheels ]; then \
	  /usr/bin/python3 -m venv $(SHARE)/lockbench/adapters/python/venv && \
	  $(SHARE)/lockbench/adapters/python/venv/bin/python3 -m pip install --quiet \
	    --disable-pip-version-check --no-index --require-hashes \
	    --find-links strategies/adapters/python/venv/wheels \
	    -r strategies/adapters/python/requirements.txt; fi
	@# executable when it says how to run itself (#!), else read by its interpreter
	for f in $(SHARE)/lockbench/adapters/*.py $(SHARE)/lockbench/adapters/*.php \
	  $(SHARE)/lockbench/adapters/node/*.js; do \
	  if [ "$$(head -c 2 "$$f")" = '#!' ]; then chmod 755 "$$f"; else chmod 644 "$$f"; fi; done
	install -m 644 $(MAN) $(SHARE)/man/man1/lockbench.1
	install -m 644 README.md $(SHARE)/doc/lockbench/
	cp -R docs/. $(SHARE)/doc/lockbench/docs
	rm -rf $(SHARE)/lockbench/tour
	cp -R docs/tour $(SHARE)/lockbench/tour
	install -m 644 docs/glossary.md $(SHARE)/lockbench/glossary.md

# A Debian package, build/lockbench_VERSION_ARCH.deb (docs/running.md, "A Debian
# package"): debhelper and dpkg-buildpackage in a build tree outside the source
# (harness/mkdeb.sh; the packaging is harness/debian), then lintian.
deb:
	@bash harness/deps.sh deb
	@bash harness/mkdeb.sh $(BUILD)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
