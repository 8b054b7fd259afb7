# pgokit build. `make` builds the tool, `make test` builds everything (plain and
# ASan+UBSan) and runs the test suite, `make demo` runs the end-to-end example.
# Library sources are discovered: every src/<stage>/*.c except src/cli/ goes into
# libpgokit.a; every src/cli/cmd_<name>.c becomes the subcommand `pgokit <name>`.
# Extra components (the QEMU plugin, the runtime) add rules in mk/*.mk.

CC       ?= gcc
ifeq ($(origin CC),default)
CC       := gcc
endif
BUILD    ?= build
OPT      ?= -O2
CPPFLAGS += -D_GNU_SOURCE -Isrc
CFLAGS   += -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Wno-unused-parameter \
            -Wshadow -Wstrict-prototypes -Wmissing-prototypes
LDLIBS   += -lZydis -lzstd -lz -lpthread -lm
# __cxa_demangle (common/demangle.c): the C++ runtime's demangler
LDLIBS   += -lstdc++
# the profile store's engines (src/store/): SQLite embedded, PostgreSQL client
STORE_PKGS := sqlite3 libpq
CPPFLAGS += $(shell pkg-config --cflags $(STORE_PKGS) 2>/dev/null)
LDLIBS   += $(or $(shell pkg-config --libs $(STORE_PKGS) 2>/dev/null),-lsqlite3 -lpq)

# `make` alone builds the tool (the flavour rules below come first in the file).
.DEFAULT_GOAL := all

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  := $(filter-out src/cli/%,$(wildcard src/*/*.c))
CLI_SRC  := $(wildcard src/cli/*.c)
CMD_SRC  := $(wildcard src/cli/cmd_*.c)
CMDS     := $(patsubst src/cli/cmd_%.c,%,$(CMD_SRC))
TEST_SRC := $(wildcard tests/unit/test_*.c)
TESTS    := $(patsubst tests/unit/%.c,%,$(TEST_SRC))
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard tests/unit/*.c))

# Two flavours share the rules: $(BUILD) (plain) and $(BUILD)/san (sanitizers).
define flavour
$(1)/obj/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) -I$(1)/gen $$(CFLAGS) $(2) -MMD -MP -c $$< -o $$@
$(1)/libpgokit.a: $$(patsubst %.c,$(1)/obj/%.o,$$(LIB_SRC))
	@rm -f $$@
	ar rcs $$@ $$^
$$(patsubst %.c,$(1)/obj/%.o,$$(CLI_SRC)): $(1)/gen/commands.h
$(1)/gen/commands.h: $$(CMD_SRC) Makefile
	@mkdir -p $$(dir $$@)
	@{ for c in $$(CMDS); do echo "PK_COMMAND($$$$c)"; done; } > $$@.tmp && mv $$@.tmp $$@
$(1)/pgokit: $$(patsubst %.c,$(1)/obj/%.o,$$(CLI_SRC)) $(1)/libpgokit.a
	$$(CC) $(2) -o $$@ $$^ $$(LDFLAGS) $$(LDLIBS)
$(1)/tests/%: $(1)/obj/tests/unit/%.o $$(patsubst %.c,$(1)/obj/%.o,$$(TEST_SUPPORT)) $(1)/libpgokit.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -o $$@ $$^ $$(LDFLAGS) $$(LDLIBS)
-include $$(shell find $(1)/obj -name '*.d' 2>/dev/null)
endef

$(eval $(call flavour,$(BUILD),))
$(eval $(call flavour,$(BUILD)/san,$(SAN_FLAGS)))

# Components with their own rules append to EXTRA_TARGETS / EXTRA_SAN_TARGETS.
-include $(wildcard mk/*.mk)

.PHONY: all san tests setup test check demo bench clean
all: $(BUILD)/pgokit $(EXTRA_TARGETS)
san: $(BUILD)/san/pgokit $(addprefix $(BUILD)/san/tests/,$(TESTS))
tests: all $(addprefix $(BUILD)/tests/,$(TESTS)) san $(EXTRA_SAN_TARGETS)

# Installs missing Debian packages (idempotent), then remembers it did.
setup: $(BUILD)/.setup-done
$(BUILD)/.setup-done: scripts/setup.sh
	bash scripts/setup.sh
	@mkdir -p $(BUILD) && touch $@

test check: setup
	$(MAKE) tests
	bash tests/run.sh

demo: setup
	$(MAKE) all
	bash scripts/demo.sh

clean:
	rm -rf $(BUILD)

.SECONDARY:
