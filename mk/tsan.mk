# tsan.mk — a ThreadSanitizer build of the tool: profgen walks samples on
# two threads and prepares probes, DWARF and the pre-inliner's trie on
# others; tests/e2e/cs_threads.sh runs it with both threads walking.
$(eval $(call flavour,$(BUILD)/tsan,-fsanitize=thread -O1))
EXTRA_SAN_TARGETS += $(BUILD)/tsan/pgokit
