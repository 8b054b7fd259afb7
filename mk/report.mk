# report.mk — the report page's stylesheet and script (src/report/assets/)
# become C string constants in <flavour>/gen/report/assets.h, included by
# src/report/report_page.c: the page is one self-contained file, and the
# assets stay editable as plain CSS and JavaScript.
REPORT_ASSETS := src/report/assets/report.css src/report/assets/report.js

define report_flavour
$(1)/gen/report/assets.h: $(REPORT_ASSETS) scripts/embed_text.sh mk/report.mk
	@mkdir -p $$(dir $$@)
	bash scripts/embed_text.sh $(REPORT_ASSETS) > $$@.tmp && mv $$@.tmp $$@
$(1)/obj/src/report/report_page.o: $(1)/gen/report/assets.h
endef

$(eval $(call report_flavour,$(BUILD)))
$(eval $(call report_flavour,$(BUILD)/san))
$(eval $(call report_flavour,$(BUILD)/tsan))
# the libFuzzer flavour of the library (mk/fuzz.mk)
$(eval $(call report_flavour,$(BUILD)/fuzz))
