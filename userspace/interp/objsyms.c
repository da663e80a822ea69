// SPDX-License-Identifier: GPL-2.0-or-later
/* A runtime's object in a process, by the symbols it defines (objsyms.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "interp/objsyms.h"
#include "procs/procmaps.h"
#include "tables/elfobj.h"
#include "util/log.h"

void objsyms__find(Elf *elf, const char *const *names, size_t nr, uint64_t *vals, uint64_t *sizes,
		   bool dynsym_only)
{
	Elf_Scn *scn = NULL;
	int pass;

	for (pass = 0; pass < (dynsym_only ? 1 : 2); pass++) {
		Elf64_Word want = pass ? SHT_SYMTAB : SHT_DYNSYM;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			n = sh.sh_size / sh.sh_entsize;
			for (i = 0; data && i < n; i++) {
				GElf_Sym s;
				const char *name;
				size_t k;

				if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF)
					continue;
				name = elf_strptr(elf, sh.sh_link, s.st_name);
				for (k = 0; name && k < nr; k++)
					if (!vals[k] && !strcmp(name, names[k])) {
						vals[k] = s.st_value;
						sizes[k] = s.st_size;
					}
			}
		}
	}
}

int objsyms__bias(const struct procmaps *pm, const struct procmap *m,
		  const struct elfobj_info *info, uint64_t *bias)
{
	uint64_t vaddr;

	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *o = procmaps__get(pm, i);

		if (o->inode == m->inode && o->dev_major == m->dev_major &&
		    o->dev_minor == m->dev_minor &&
		    !elfobj__offset_to_vaddr(info, o->offset, &vaddr)) {
			*bias = o->start - vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t objsyms__interposed(int pid, const struct procmaps *pm, const struct procmap *m,
			     const char *name, uint64_t addr)
{
	const struct procmap *exe = procmaps__exe(pm);
	uint64_t val = 0, size = 0, bias;
	struct elfobj_info info;
	Elf *elf;
	int fd;

	if (!exe || (exe->inode == m->inode && exe->dev_major == m->dev_major &&
		     exe->dev_minor == m->dev_minor))
		return addr;
	fd = procmap__open(pid, exe);
	if (fd < 0)
		return addr;
	if (!elfobj__read(fd, &info) && (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		objsyms__find(elf, &name, 1, &val, &size, true);
		elf_end(elf);
	}
	close(fd);
	if (val && size && !objsyms__bias(pm, exe, &info, &bias)) {
		pr_debug("%s in pid %d: the executable's copy, at %#llx", name, pid,
			 (unsigned long long)(val + bias));
		return val + bias;
	}
	return addr;
}

int objsyms__detect(int pid, const char *who, objsyms_maybe maybe, objsyms_is is, void *ctx)
{
	struct procmaps *pm;
	uint64_t last_inode = 0;
	int err;

	err = procmaps__read(pid, &pm);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < procmaps__count(pm) && err == -ENOENT; i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (!maybe(pm, m) || m->inode == last_inode)
			continue;
		last_inode = m->inode;
		err = is(pid, pm, m, ctx);
		if (err && err != -ENOENT)
			pr_debug("%s: pid %d: %s: %s\n", who, pid, m->path, strerror(-err));
		if (err && err != -EPROTO)
			err = -ENOENT;
	}
	procmaps__free(pm);
	return err;
}
