/* elf_facts.c — build-id and PT_LOAD segments of an ELF file, for MMAP2
 * records and for turning run-time addresses into preferred-base addresses. */
#include "record/record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Only the headers and note segments are read (pread), never the whole file:
 * the plugin calls this for every mapped library. */
int pk_record_elf_facts(const char *path, pk_elf_facts *f, pk_err *err)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pk_err_errno(err, "%s", path);
    struct stat st;
    uint8_t eh[64];
    int rc = -1;
    if (fstat(fd, &st) != 0 || read_at(fd, eh, sizeof eh, 0) != 0) {
        pk_err_set(err, "%s: offset 0: too short for an ELF header", path);
        goto out;
    }
    if (memcmp(eh, "\177ELF", 4) != 0 || eh[4] != 2 || eh[5] != 1) {
        pk_err_set(err, "%s: offset 0: not a 64-bit little-endian ELF file", path);
        goto out;
    }
    f->type = pk_ld16(eh + 16);
    uint64_t phoff = pk_ld64(eh + 32);
    unsigned phentsize = pk_ld16(eh + 54), phnum = pk_ld16(eh + 56);
    if (phentsize < 56 || phnum > 256 || phoff > (uint64_t)st.st_size ||
        (uint64_t)phnum * phentsize > (uint64_t)st.st_size - phoff) {
        pk_err_set(err, "%s: offset 32: program headers out of bounds", path);
        goto out;
    }
    for (unsigned i = 0; i < phnum; i++) {
        uint8_t ph[56];
        uint64_t at = phoff + (uint64_t)i * phentsize;
        if (read_at(fd, ph, sizeof ph, at) != 0) {
            pk_err_set(err, "%s: offset %llu: truncated program header", path, (unsigned long long)at);
            goto out;
        }
        uint32_t type = pk_ld32(ph), flags = pk_ld32(ph + 4);
        uint64_t off = pk_ld64(ph + 8), vaddr = pk_ld64(ph + 16);
        uint64_t filesz = pk_ld64(ph + 32), memsz = pk_ld64(ph + 40);
        if (type == 1 && f->nloads < sizeof f->loads / sizeof f->loads[0]) {
            f->loads[f->nloads++] = (pk_elf_load){off, vaddr, filesz, memsz, flags};
        } else if (type == 4 && f->build_id_size == 0 && filesz <= 1 << 16 &&
                   off <= (uint64_t)st.st_size && filesz <= (uint64_t)st.st_size - off) {
            uint8_t notes[1 << 16];
            if (read_at(fd, notes, filesz, off) != 0)
                continue;
            for (uint64_t p = 0; p + 12 <= filesz;) {
                uint32_t namesz = pk_ld32(notes + p), descsz = pk_ld32(notes + p + 4);
                uint32_t ntype = pk_ld32(notes + p + 8);
                uint64_t name_at = p + 12, desc_at = name_at + ((namesz + 3ull) & ~3ull);
                uint64_t next = desc_at + ((descsz + 3ull) & ~3ull);
                if (next > filesz)
                    break;
                if (ntype == 3 && namesz == 4 && !memcmp(notes + name_at, "GNU", 4) &&
                    descsz > 0 && descsz <= 20) {
                    memcpy(f->build_id, notes + desc_at, descsz);
                    f->build_id_size = (uint8_t)descsz;
                    break;
                }
                p = next;
            }
        }
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

bool pk_record_elf_offset_to_vaddr(const pk_elf_facts *f, uint64_t offset, uint64_t *vaddr)
{
    for (unsigned i = 0; i < f->nloads; i++) {
        const pk_elf_load *l = &f->loads[i];
        if (offset >= l->offset && offset - l->offset < l->filesz) {
            *vaddr = offset - l->offset + l->vaddr;
            return true;
        }
    }
    return false;
}
