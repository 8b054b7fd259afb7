# install.mk — the version, man pages, bash completion, pkg-config file, and
# `make install` / `make uninstall`.
#
# Version: VERSION holds the release number (the one place to change it);
# a build from a git checkout appends `git describe` (commit, -dirty), e.g.
# "0.1.0 (git 9959e7f-dirty)". <flavour>/gen/version.h is rewritten only when
# that string changes, so an unchanged tree rebuilds nothing.
#
# Man pages and completion are generated at build time from ONE source, the
# `--help` text of each subcommand (scripts/mkman.sh, scripts/mkcompletion.sh
# run the freshly built binary), so they cannot drift from the tool.
#
# Layout under $(DESTDIR)$(PREFIX) (PREFIX default /usr/local):
#   bin/pgokit
#   lib/pgokit/pgokit-lbr.so        the QEMU plugin; pgokit looks for it in
#                                   ../lib/pgokit/ relative to its own binary
#   lib/libpgokit_rt.so, .a         the instrumentation runtime
#   lib/pkgconfig/pgokit-rt.pc
#   include/pgokit_rt.h
#   share/man/man1/pgokit.1, pgokit-<command>.1
#   share/bash-completion/completions/pgokit
# bin/ and lib/pgokit/ are fixed relative to each other (the plugin lookup
# depends on it); LIBDIR, INCLUDEDIR, MANDIR and COMPLETIONDIR can be moved.
PREFIX        ?= /usr/local
DESTDIR       ?=
BINDIR        := $(PREFIX)/bin
PKGLIBDIR     := $(PREFIX)/lib/pgokit
LIBDIR        ?= $(PREFIX)/lib
INCLUDEDIR    ?= $(PREFIX)/include
MANDIR        ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL       ?= install

PK_RELEASE := $(strip $(shell cat VERSION 2>/dev/null))
PK_GIT     := $(strip $(shell git describe --always --dirty --abbrev=7 2>/dev/null))
PK_VERSION := $(if $(PK_RELEASE),$(PK_RELEASE),unknown)$(if $(PK_GIT), (git $(PK_GIT)))

.PHONY: FORCE install uninstall man completion
FORCE:

define version_flavour
$(1)/gen/version.h: FORCE
	@mkdir -p $$(dir $$@)
	@printf '#define PK_VERSION "%s"\n' '$(PK_VERSION)' > $$@.tmp
	@if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv $$@.tmp $$@; fi
$(1)/obj/src/cli/main.o: $(1)/gen/version.h
endef
$(eval $(call version_flavour,$(BUILD)))
$(eval $(call version_flavour,$(BUILD)/san))
$(eval $(call version_flavour,$(BUILD)/tsan))

# One page per subcommand plus pgokit.1; the stamp stands for all of them.
MAN_STAMP := $(BUILD)/man/.stamp
$(MAN_STAMP): $(BUILD)/pgokit scripts/mkman.sh
	bash scripts/mkman.sh $(BUILD)/pgokit $(BUILD)/man
	@touch $@
$(BUILD)/completion/pgokit: $(BUILD)/pgokit scripts/mkcompletion.sh
	@mkdir -p $(dir $@)
	bash scripts/mkcompletion.sh $(BUILD)/pgokit > $@.tmp && mv $@.tmp $@
man: $(MAN_STAMP)
completion: $(BUILD)/completion/pgokit
EXTRA_TARGETS += $(MAN_STAMP) $(BUILD)/completion/pgokit

# pkg-config file: written at install time (it holds PREFIX). The flags to
# instrument code with are a variable (`pkg-config --variable=instrument_cflags
# pgokit-rt`), not Cflags: the program must be linked without -pg.
PC_LINES = 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' \
  '\# compile the code to instrument with these; never link with -pg' \
  'instrument_cflags=-pg -mfentry' '' 'Name: pgokit-rt' \
  'Description: pgokit lightweight instrumentation runtime (first-execution order, coverage, entry counts)' \
  'Version: $(PK_RELEASE)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lpgokit_rt' 'Libs.private: -lpthread'

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	  $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLETIONDIR)
	$(INSTALL) -m 755 $(BUILD)/pgokit $(DESTDIR)$(BINDIR)/pgokit
	$(INSTALL) -m 755 $(BUILD)/pgokit-lbr.so $(DESTDIR)$(PKGLIBDIR)/pgokit-lbr.so
	$(INSTALL) -m 755 $(BUILD)/libpgokit_rt.so $(DESTDIR)$(LIBDIR)/libpgokit_rt.so
	$(INSTALL) -m 644 $(BUILD)/libpgokit_rt.a $(DESTDIR)$(LIBDIR)/libpgokit_rt.a
	printf '%s\n' $(PC_LINES) > $(DESTDIR)$(LIBDIR)/pkgconfig/pgokit-rt.pc
	$(INSTALL) -m 644 rt/pgokit_rt.h $(DESTDIR)$(INCLUDEDIR)/pgokit_rt.h
	$(INSTALL) -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(BUILD)/completion/pgokit $(DESTDIR)$(COMPLETIONDIR)/pgokit
	@# a real install as root into a directory the loader searches (Debian:
	@# /usr/local/lib): refresh its cache so libpgokit_rt.so is found
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
	  grep -qsx '$(LIBDIR)' /etc/ld.so.conf /etc/ld.so.conf.d/*.conf; then ldconfig 2>/dev/null || true; fi

# Removes exactly what install put there (the man pages by the names the
# current build generates), and lib/pgokit/ itself; shared directories stay.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pgokit $(DESTDIR)$(PKGLIBDIR)/pgokit-lbr.so \
	  $(DESTDIR)$(LIBDIR)/libpgokit_rt.so $(DESTDIR)$(LIBDIR)/libpgokit_rt.a \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/pgokit-rt.pc $(DESTDIR)$(INCLUDEDIR)/pgokit_rt.h \
	  $(DESTDIR)$(MANDIR)/man1/pgokit.1 $(addprefix $(DESTDIR)$(MANDIR)/man1/pgokit-,$(addsuffix .1,$(subst _,-,$(CMDS)))) \
	  $(DESTDIR)$(COMPLETIONDIR)/pgokit
	-rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null
