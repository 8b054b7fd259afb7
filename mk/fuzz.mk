# fuzz.mk — libFuzzer harnesses, one per reader (tests/fuzz/fuzz_<name>.c,
# see tests/fuzz/README.md): $(BUILD)/fuzz/fuzz_<name>, built by clang-19
# with -fsanitize=fuzzer,address,undefined against a flavour of the library
# compiled with the same sanitizers and libFuzzer's coverage
# (-fsanitize=fuzzer-no-link). `make tests` builds them (tests/e2e/fuzz_smoke.sh
# runs each a few seconds and replays the committed corpus);
# `make fuzz FUZZ_SECONDS=N` fuzzes each for N seconds (FUZZERS="a b" for some).
FUZZ_CC    ?= clang-19
FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer -O1
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SUPPORT := tests/fuzz/fuzz_util.c tests/fuzz/perf_model.c tests/fuzz/perf_mutator.c
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(filter-out $(FUZZ_SUPPORT),$(FUZZ_SRC)))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))
FUZZ_SECONDS ?= 60
FUZZERS      ?= $(FUZZ_NAMES)

# The library flavour (rules from the Makefile's `flavour`), compiled by clang.
$(eval $(call flavour,$(FUZZ_DIR),$(FUZZ_FLAGS)))
$(FUZZ_DIR)/%: CC := $(FUZZ_CC)

# pprof's generated protobuf code, for this flavour (as mk/pprof.mk does for the others).
$(FUZZ_DIR)/gen/pprof/profile.pb-c.c $(FUZZ_DIR)/gen/pprof/profile.pb-c.h &: src/pprof/profile.proto mk/fuzz.mk
	@mkdir -p $(FUZZ_DIR)/gen/pprof
	protoc-c --proto_path=src/pprof --c_out=$(FUZZ_DIR)/gen/pprof src/pprof/profile.proto
$(FUZZ_DIR)/obj/gen/pprof/profile.pb-c.o: $(FUZZ_DIR)/gen/pprof/profile.pb-c.c $(FUZZ_DIR)/gen/pprof/profile.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -I$(FUZZ_DIR)/gen $(CFLAGS) $(FUZZ_FLAGS) -c $< -o $@
$(FUZZ_DIR)/libpgokit.a: $(FUZZ_DIR)/obj/gen/pprof/profile.pb-c.o
$(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard src/pprof/*.c)): $(FUZZ_DIR)/gen/pprof/profile.pb-c.h

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SUPPORT)) \
                    $(FUZZ_DIR)/libpgokit.a
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDFLAGS) $(LDLIBS)

EXTRA_SAN_TARGETS += $(FUZZ_BINS)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS) $(BUILD)/pgokit $(BUILD)/pgokit-lbr.so $(BUILD)/libpgokit_rt.a
fuzz: fuzz-build
	bash tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZERS)
