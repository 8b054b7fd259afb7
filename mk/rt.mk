# rt.mk — libpgokit_rt: the runtime linked into instrumented programs.
# Built with its own flags (never the tool's sanitizers, never -pg on itself):
# position-independent, internals hidden, no stack protector on the hook path.
# rt_hit.c runs before the instrumented function's prologue: integer registers
# only, so the __fentry__ trampoline need not save vector registers.
# Everything is -Os: the runtime is linked into every instrumented program, its
# code is run only at a function's first entries (the hook becomes a NOP), so
# its size counts and its speed hardly does (-O2 made rt_hit.o 50% larger).
# The frame pointer is kept on the hook path only (profilers unwind through it).
RT_SRC    := rt/pgokit_rt.c rt/rt_hit.c
RT_OBJ    := $(patsubst rt/%.c,$(BUILD)/rt/%.o,$(RT_SRC)) $(BUILD)/rt/rt_fentry.o
RT_CFLAGS := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -fno-stack-protector \
             -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
             -D_GNU_SOURCE -Wall -Wextra -Wshadow \
             -Wstrict-prototypes -Wmissing-prototypes

$(BUILD)/rt/rt_hit.o: rt/rt_hit.c rt/rt_internal.h mk/rt.mk
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -Os -mgeneral-regs-only -fno-builtin -c $< -o $@
$(BUILD)/rt/pgokit_rt.o: rt/pgokit_rt.c rt/rt_internal.h rt/pgokit_rt.h mk/rt.mk
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -Os -fomit-frame-pointer -c $< -o $@
$(BUILD)/rt/rt_fentry.o: rt/rt_fentry.S mk/rt.mk
	@mkdir -p $(dir $@)
	$(CC) -fPIC -c $< -o $@
$(BUILD)/libpgokit_rt.a: $(RT_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libpgokit_rt.so: $(RT_OBJ)
	$(CC) -shared -Wl,-soname,libpgokit_rt.so -Wl,-z,noexecstack -o $@ $^ -lpthread

EXTRA_TARGETS += $(BUILD)/libpgokit_rt.a $(BUILD)/libpgokit_rt.so

# Stand-alone show/merge for temporal profiles (tests use it when `pgokit`
# itself cannot be linked or does not dispatch temporal profiles yet).
RT_TOOL_OBJ := $(BUILD)/obj/src/cli/temporal_cli.o $(BUILD)/obj/src/cli/cli_output.o $(BUILD)/obj/src/cli/cli_debug.o \
               $(BUILD)/obj/tests/programs/rt_temporal_driver.o
$(BUILD)/rt-temporal-tool: $(RT_TOOL_OBJ) $(BUILD)/libpgokit.a
	$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)
$(BUILD)/san/rt-temporal-tool: $(patsubst $(BUILD)/%,$(BUILD)/san/%,$(RT_TOOL_OBJ)) $(BUILD)/san/libpgokit.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)
EXTRA_TARGETS += $(BUILD)/rt-temporal-tool
EXTRA_SAN_TARGETS += $(BUILD)/san/rt-temporal-tool
# temporal_cli.c includes cli.h, which includes the generated command list.
$(BUILD)/obj/src/cli/temporal_cli.o $(BUILD)/obj/src/cli/cli_debug.o: $(BUILD)/gen/commands.h
$(BUILD)/san/obj/src/cli/temporal_cli.o $(BUILD)/san/obj/src/cli/cli_debug.o: $(BUILD)/san/gen/commands.h
