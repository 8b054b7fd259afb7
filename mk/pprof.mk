# pprof.mk — the pprof schema (src/pprof/profile.proto) compiled by protoc-c
# into <flavour>/gen/pprof/profile.pb-c.{c,h}, built with the flavour's
# flags and archived into that flavour's libpgokit.a. Every flavour the
# Makefile and mk/tsan.mk define gets its own copy (their sanitizer flags
# are repeated here). Objects that include the generated header wait for it:
# a clean parallel build has no .d files yet to say so.
PPROF_PROTO := src/pprof/profile.proto
PPROF_USERS := $(wildcard src/pprof/*.c) tests/unit/test_pprof.c
LDLIBS += -lprotobuf-c

define pprof_flavour
$(1)/gen/pprof/profile.pb-c.c $(1)/gen/pprof/profile.pb-c.h &: $(PPROF_PROTO) mk/pprof.mk
	@mkdir -p $(1)/gen/pprof
	protoc-c --proto_path=$$(dir $(PPROF_PROTO)) --c_out=$(1)/gen/pprof $(PPROF_PROTO)
$(1)/obj/gen/pprof/profile.pb-c.o: $(1)/gen/pprof/profile.pb-c.c $(1)/gen/pprof/profile.pb-c.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) -I$(1)/gen $$(CFLAGS) $(2) -c $$< -o $$@
$(1)/libpgokit.a: $(1)/obj/gen/pprof/profile.pb-c.o
$$(patsubst %.c,$(1)/obj/%.o,$(PPROF_USERS)): $(1)/gen/pprof/profile.pb-c.h
endef

$(eval $(call pprof_flavour,$(BUILD),))
$(eval $(call pprof_flavour,$(BUILD)/san,$(SAN_FLAGS)))
$(eval $(call pprof_flavour,$(BUILD)/tsan,-fsanitize=thread -O1))
