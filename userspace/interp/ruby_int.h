/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What ruby.c (attaching to the VM) and ruby_names.c (naming its frames)
 * share: the attached VM, and the checked reads of its objects.
 */
#ifndef SFBPF_INTERP_RUBY_INT_H
#define SFBPF_INTERP_RUBY_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "interp/ruby.h"
#include "procs/procmem.h"

struct ruby {
	int pid;
	const struct ruby_layout *l;
	uint64_t vm_ptr; /* ruby_current_vm_ptr in the process */
	struct code_part eval[RUBY_EVAL_PARTS];
	size_t nr_eval;
	char version[32];
	bool unsupported;
	int fd; /* the object's, while attaching: its loop found once the VM runs */
	uint64_t bias;
	uint64_t text; /* where the object's executable mapping starts (YJIT's code is near) */
	struct code_part vm_exec; /* rb_vm_exec(), process addresses; lo == hi: not exported */
	struct ruby_yjit_cache
		*yjit_cache; /* YJIT's pcs that push a frame (ruby_yjit.c); or NULL */
	/* To 3.1: core classes (the addresses of rb_cString, rb_cArray, rb_mKernel) */
	uint64_t core[3];
	/* and what they taught: the IDs of "__classpath__" and "__attached__" (0: none) */
	uint64_t id_classpath, id_attached;
	/*
	 * The global symbol table (symbol.c's ruby_global_symbols): the
	 * addresses of its last_id and ids (an Array of Arrays of ID_ENTRY_UNIT
	 * (1 << id_unit_shift) [String, Symbol] pairs), found in rb_id2str's
	 * code (ruby_ids.c); 0: C methods are not named.
	 */
	uint64_t last_id, ids;
	uint32_t id_unit_shift;
	uint64_t id2str, id2str_size; /* rb_id2str() in the object, while attaching */
	uint32_t leader_tid; /* the TID standing for a forked process's leader (abi.h); 0: none */
};

/*
 * Whether YJIT's code at pc (code: n bytes of it) is inside its push of a
 * control frame, ec->cfp moved and the frame's iseq or ep not yet written
 * (ruby_yjit.c): 1, 0, or -ENOMEM. The offsets: ec->cfp's, a frame's iseq's
 * and ep's.
 */
struct ruby_yjit_offs {
	uint32_t ec_cfp, cfp_iseq, cfp_ep;
};
int ruby_yjit_pushing(const uint8_t *code, size_t n, uint64_t pc, const struct ruby_yjit_offs *o);
/* The cache of ruby__jit_pushing(), for a version whose YJIT is known (else NULL). */
struct ruby_yjit_cache *ruby_yjit_cache_new(const char *version);

static inline int rd(const struct ruby *r, uint64_t addr, uint64_t *v)
{
	return procmem__u64(r->pid, addr, v);
}

static inline int rd32(const struct ruby *r, uint64_t addr, uint32_t *v)
{
	return procmem__read(r->pid, addr, v, sizeof(*v));
}

/* The object at addr is of Ruby type t (its flags' T_MASK bits). */
static inline int is_type(const struct ruby *r, uint64_t addr, uint32_t t, uint64_t *flags)
{
	int err = rd(r, addr, flags);

	if (err)
		return err;
	return (*flags & 0x1f) == t ? 0 : -ESTALE;
}

/* Whether addr holds an imemo of type t (imemo_iseq, imemo_ment): 0, or -ESTALE. */
static inline int is_imemo(const struct ruby *r, uint64_t addr, uint32_t t)
{
	uint64_t flags;
	int err = is_type(r, addr, r->l->iseq.t_imemo, &flags);

	if (err)
		return err;
	return ((flags >> r->l->iseq.imemo_shift) & 0xf) == t ? 0 : -ESTALE;
}

/* The iseq at addr: 0 and its body, -ESTALE if no iseq is there. */
static inline int iseq_body(const struct ruby *r, uint64_t iseq, uint64_t *body)
{
	const struct ruby_layout *l = r->l;
	int err = is_imemo(r, iseq, l->iseq.imemo_iseq);

	if (err)
		return err;
	err = rd(r, iseq + l->iseq.body, body);
	return err ? err : *body ? 0 : -ESTALE;
}

/* The String at v into buf (size bytes, NUL added): 0, -ESTALE (no String), or an error. */
int ruby_read_str(const struct ruby *r, uint64_t v, char *buf, size_t size);
/* The value of class klass's instance variable id (to 3.1): 0, -ENOENT (none), or an error. */
int ruby_class_ivar(const struct ruby *r, uint64_t klass, uint64_t id, uint64_t *val);
/*
 * The global symbol table of the object open at fd whose rb_id2str() is at
 * fn (size bytes), into r (process addresses: + r->bias), believed only if
 * the operators' own IDs read back as their names. 0, or -ENOENT.
 */
int ruby_ids_find(struct ruby *r, int fd, uint64_t fn, uint64_t size);
/* The name of ID id into buf: 0, -ENOENT (no such ID, or no table), or a read error. */
int ruby_id_name(const struct ruby *r, uint64_t id, char *buf, size_t size);

#endif /* SFBPF_INTERP_RUBY_INT_H */
