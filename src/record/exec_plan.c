/* exec_plan.c — what an execve() would run, so that the emulator can run it
 * instead: `pgokit record --emulate` for the command it is given, and the
 * plugin for every exec of the recorded processes (qemu-x86_64 would run the
 * new program natively, outside the emulator, and its samples would be lost).
 *
 * The kernel's rules, as far as they decide where the program goes:
 *  - the file must exist, be a regular file, be executable by the effective
 *    user and not sit on a noexec mount (else the exec fails: the caller
 *    lets it fail the same way, with nothing stopped);
 *  - "#!interp [arg]" in its first 256 bytes runs interp with the argv
 *    [interp, arg (when present), path, argv[1], ...]; interp may itself be a
 *    script, up to 4 levels (fs/binfmt_script.c, BINPRM_MAX_RECURSION);
 *  - a 64-bit little-endian x86-64 ELF executable or shared object is what
 *    qemu-x86_64 runs; any other ELF (32-bit, another machine) the kernel may
 *    run but the emulator cannot;
 *  - anything else fails with ENOEXEC, unless binfmt_misc knows the format:
 *    the caller lets the kernel decide (a shell then runs the file itself).
 *  - a set-user-ID or set-group-ID program that would change the process's
 *    identity must run natively: under the emulator it would keep the
 *    caller's and fail (or behave otherwise).
 */
#include "record/record.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define MAX_LEVELS 4      /* interpreters in a chain, as the kernel allows */
#define LINE_MAX_BYTES 256 /* the kernel reads this much of a script (BINPRM_BUF_SIZE) */

/* Can the effective user exec `path`? 0, or the errno the kernel gives. */
static int exec_access(const char *path, struct stat *st)
{
    if (stat(path, st) != 0)
        return errno;
    if (!S_ISREG(st->st_mode))
        return EACCES;
    if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0)
        return errno;
    struct statvfs vfs;
    if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
        return EACCES;
    return 0;
}

/* The interpreter and its optional argument from a "#!" line (the bytes
 * after "#!", up to the end of the line or of the buffer); 0, or ENOEXEC. */
static int parse_shebang(char *line, char **interp, char **opt)
{
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return ENOEXEC;
    *interp = p;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    *opt = NULL;
    if (!*p)
        return 0;
    *p++ = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    char *end = p + strlen(p);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = 0;
    if (*p)
        *opt = p;
    return 0;
}

static int push_word(pk_vec *v, const char *s)
{
    char **slot = pk_vec_push(v);
    return slot && (*slot = strdup(s)) ? 0 : -1;
}

/* Does the 64-bit little-endian ELF file have a PT_INTERP (a dynamic
 * program, whose loader and libraries a cross emulator must find under a
 * sysroot)? Unreadable headers count as static. */
static bool has_interp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t eh[64], ph[56];
    bool found = false;
    if (fd < 0)
        return false;
    if (pread(fd, eh, sizeof eh, 0) == (ssize_t)sizeof eh && pk_ld16(eh + 54) >= sizeof ph) {
        uint64_t phoff = pk_ld64(eh + 32);
        uint16_t phentsize = pk_ld16(eh + 54), phnum = pk_ld16(eh + 56);
        for (uint16_t i = 0; i < phnum && !found; i++)
            found = pread(fd, ph, sizeof ph, (off_t)(phoff + (uint64_t)i * phentsize)) == (ssize_t)sizeof ph &&
                    pk_ld32(ph) == PT_INTERP;
    }
    close(fd);
    return found;
}

void pk_record_exec_plan_free(pk_exec_plan *p)
{
    for (size_t i = 0; p->argv && i < p->argc; i++)
        free(p->argv[i]);
    free(p->argv);
    free(p->elf);
    p->argv = NULL;
    p->elf = NULL;
    p->argc = 0;
}

int pk_record_exec_plan(const char *path, char *const *argv, pk_exec_plan *p, pk_err *err)
{
    memset(p, 0, sizeof *p);
    /* The words that replace argv[0], innermost script last: for a chain
     * script -> interp1 -> interp2 the kernel builds
     * [interp2, opt2, interp1, opt1, script, argv[1], ...]. */
    pk_vec head;
    pk_vec_init(&head, sizeof(char *));
    char cur[4096];
    snprintf(cur, sizeof cur, "%s", path);
    bool script = false;
    int rc = 0;
    for (int level = 0;; level++) {
        struct stat st;
        int e = exec_access(cur, &st);
        if (e) {
            p->how = PK_EXEC_FAILS;
            p->err = e;
            goto out;
        }
        uint8_t buf[LINE_MAX_BYTES + 1];
        int fd = open(cur, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? pread(fd, buf, LINE_MAX_BYTES, 0) : -1;
        e = errno;
        if (fd >= 0)
            close(fd);
        if (n < 0) {
            p->how = PK_EXEC_FAILS;
            p->err = e;
            goto out;
        }
        if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
            if (level == MAX_LEVELS) {
                p->how = PK_EXEC_FAILS;
                p->err = ELOOP;
                goto out;
            }
            buf[n] = 0;
            char *line = (char *)buf + 2, *interp, *opt;
            line[strcspn(line, "\n")] = 0;
            if (parse_shebang(line, &interp, &opt) != 0) {
                p->how = PK_EXEC_FAILS;
                p->err = ENOEXEC;
                goto out;
            }
            /* the kernel drops argv[0] and puts [interp, opt?, file] in
             * front; past the first level the dropped argv[0] is the
             * interpreter word pushed last, which names this same file.
             * Built backwards, reversed at the end. */
            if ((level == 0 && push_word(&head, cur)) || (opt && push_word(&head, opt)) ||
                push_word(&head, interp)) {
                rc = pk_err_set(err, "out of memory");
                goto out;
            }
            script = true;
            snprintf(cur, sizeof cur, "%s", interp);
            continue;
        }
        if (n >= 20 && !memcmp(buf, "\177ELF", 4)) {
            uint16_t type = pk_ld16(buf + 16), machine = pk_ld16(buf + 18);
            bool known = machine == EM_X86_64 || machine == EM_AARCH64;
            if (buf[4] != 2 || buf[5] != 1 || !known || (type != 2 && type != 3)) {
                p->how = PK_EXEC_NATIVE;
                if (buf[4] == 1)
                    snprintf(p->why, sizeof p->why, "a 32-bit program");
                else if (!known)
                    snprintf(p->why, sizeof p->why, "an ELF program for machine %u, not x86-64 or aarch64",
                             machine);
                else
                    snprintf(p->why, sizeof p->why, "an ELF file of type %u", type);
                goto out;
            }
            if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
                ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
                p->how = PK_EXEC_NATIVE;
                snprintf(p->why, sizeof p->why, "set-%s-ID program: the emulator cannot change identity",
                         (st.st_mode & S_ISUID) && st.st_uid != geteuid() ? "user" : "group");
                goto out;
            }
            p->how = PK_EXEC_EMULATE;
            p->machine = machine;
            p->dynamic = has_interp(cur);
            break;
        }
        /* not ELF, not a script: ENOEXEC unless binfmt_misc takes it */
        p->how = PK_EXEC_FAILS;
        p->err = ENOEXEC;
        goto out;
    }
    size_t nargv = 0;
    while (argv && argv[nargv])
        nargv++;
    p->elf = strdup(cur);
    p->argv = calloc(head.len + nargv + 1, sizeof *p->argv);
    if (!p->elf || !p->argv) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < head.len; i++) {
        p->argv[p->argc++] = PK_VEC_AT(&head, char *, head.len - 1 - i);
        PK_VEC_AT(&head, char *, head.len - 1 - i) = NULL;
    }
    /* a script's argv[0] is replaced by the chain; a program keeps it */
    for (size_t i = script ? 1 : 0; i < nargv; i++)
        if (!(p->argv[p->argc++] = strdup(argv[i]))) {
            rc = pk_err_set(err, "out of memory");
            goto out;
        }
out:
    for (size_t i = 0; i < head.len; i++)
        free(PK_VEC_AT(&head, char *, i));
    pk_vec_free(&head);
    if (rc != 0 || p->how != PK_EXEC_EMULATE)
        pk_record_exec_plan_free(p);
    return rc;
}
