# The QEMU TCG plugin behind `pgokit record --emulate`: $(BUILD)/pgokit-lbr.so.
# Plugin objects are hidden by default (only qemu_plugin_install and
# qemu_plugin_version are exported) and libpgokit.a's symbols are kept local,
# so nothing clashes with QEMU's own symbols. No sanitizer flavour: the
# plugin runs inside qemu-x86_64, which is not built with ASan.
PLUGIN_SRC := $(wildcard plugin/*.c)
PLUGIN_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(PLUGIN_SRC))

$(BUILD)/obj/plugin/%.o: plugin/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iplugin $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

$(BUILD)/pgokit-lbr.so: $(PLUGIN_OBJ) $(BUILD)/libpgokit.a
	$(CC) -shared -o $@ $(PLUGIN_OBJ) $(BUILD)/libpgokit.a -Wl,--exclude-libs,ALL $(LDFLAGS) $(LDLIBS)

EXTRA_TARGETS += $(BUILD)/pgokit-lbr.so
