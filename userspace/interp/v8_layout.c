// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * V8's layout from its postmortem metadata (v8_int.h). V8's build writes,
 * for tools such as debuggers' V8 plugins, one global int per fact it
 * publishes: v8dbg_class_CLASS__FIELD__TYPE (a field's offset in its
 * object), v8dbg_type_CLASS__TYPE (an instance type), v8dbg_off_fp_SLOT (a
 * frame slot) and constants (tags, masks, indices). node exports them all
 * in .dynsym, stripped or not; their values are the ints' initial data in
 * the file (in .bss where 0), so no process is read here. The TYPE part of
 * a field's name is how that version spells its C++ type ("Object",
 * "Tagged_Object_"): a field is found by class and field alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8_int.h"
#include "util/log.h"

struct sym {
	char *name;
	int64_t value;
};

struct syms {
	struct sym *s;
	size_t nr, cap;
	uint64_t blob_lo, blob_hi; /* Builtins_* symbols' hull, ELF addresses */
};

/* The int a symbol's definition holds in the file: 0 where .bss (or unreadable). */
static int64_t sym_int(Elf *elf, const GElf_Sym *s)
{
	Elf_Scn *scn = elf_getscn(elf, s->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;
	int32_t v;
	uint64_t off;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || s->st_size != 4)
		return 0;
	d = elf_getdata(scn, NULL);
	off = s->st_value - sh.sh_addr;
	if (!d || s->st_value < sh.sh_addr || off + 4 > d->d_size)
		return 0;
	memcpy(&v, (const char *)d->d_buf + off, 4);
	return v;
}

static void collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct syms *t)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name)
			continue;
		if (!strncmp(name, "Builtins_", 9) && GELF_ST_TYPE(s.st_info) == STT_FUNC) {
			if (!t->blob_lo || s.st_value < t->blob_lo)
				t->blob_lo = s.st_value;
			if (s.st_value + s.st_size > t->blob_hi)
				t->blob_hi = s.st_value + s.st_size;
			continue;
		}
		if (strncmp(name, "v8dbg_", 6) && strncmp(name, "_ZN2v88internal7Version", 23))
			continue;
		if (t->nr == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 1024;
			struct sym *ns = realloc(t->s, cap * sizeof(*ns));

			if (!ns)
				return;
			t->s = ns;
			t->cap = cap;
		}
		t->s[t->nr].name = strdup(name);
		if (!t->s[t->nr].name)
			return;
		t->s[t->nr++].value = sym_int(elf, &s);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

/* The first symbol whose name begins with prefix (exact: is it), or NULL. */
static const struct sym *find(const struct syms *t, const char *prefix, bool exact)
{
	size_t lo = 0, hi = t->nr, len = strlen(prefix);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(t->s[mid].name, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nr && !strncmp(t->s[lo].name, prefix, len) && (!exact || !t->s[lo].name[len]))
		return &t->s[lo];
	return NULL;
}

/* A constant (v8dbg_NAME) into *v: whether published. */
static bool konst(const struct syms *t, const char *name, int64_t *v)
{
	char buf[128];
	const struct sym *s;

	snprintf(buf, sizeof(buf), "v8dbg_%s", name);
	s = find(t, buf, true);
	if (s)
		*v = s->value;
	return s != NULL;
}

/* A field's offset, by class and any of the field's names ("a|b"): V8_NONE when none. */
static uint16_t field(const struct syms *t, const char *cls, const char *fields)
{
	char buf[160], f[64];
	const char *p = fields;

	while (*p) {
		size_t n = strcspn(p, "|");
		const struct sym *s;

		snprintf(f, sizeof(f), "%.*s", (int)n, p);
		snprintf(buf, sizeof(buf), "v8dbg_class_%s__%s__", cls, f);
		s = find(t, buf, false);
		if (s && s->value >= 0 && s->value < V8_NONE)
			return (uint16_t)s->value;
		p += n + (p[n] == '|');
	}
	return V8_NONE;
}

/* An instance type, by its v8dbg_type_CLASS__NAME: V8_NONE when none. */
static uint16_t type(const struct syms *t, const char *name)
{
	char buf[160];
	const struct sym *s;

	snprintf(buf, sizeof(buf), "v8dbg_type_%s", name);
	s = find(t, buf, true);
	return s && s->value >= 0 && s->value < V8_NONE ? (uint16_t)s->value : V8_NONE;
}

static uint16_t konst16(const struct syms *t, const char *name)
{
	int64_t v;

	return konst(t, name, &v) && v >= 0 && v < V8_NONE ? (uint16_t)v : V8_NONE;
}

static int resolve(const struct syms *t, struct v8_layout *l)
{
	int64_t v[8] = { 0 };
	static const char *const version[4] = { "major_E", "minor_E", "build_E", "patch_E" };

	if (!konst(t, "SmiTag", &v[0]))
		return -ENOENT;
	/*
	 * The walk reads full 64-bit tagged pointers and 32-bit Smis in the
	 * upper half (every official node build); pointer compression is not
	 * read yet.
	 */
	if (!konst(t, "TaggedSize", &v[1]) || v[1] != 8 || !konst(t, "SmiShiftSize", &v[2]) ||
	    v[2] != 31 || v[0] != 0 || !konst(t, "HeapObjectTag", &v[3]) || v[3] != 1 ||
	    !konst(t, "HeapObjectTagMask", &v[4]) || v[4] != 3)
		return -ENOTSUP;
	if (!konst(t, "off_fp_context_or_frame_type", &v[0]) && !konst(t, "off_fp_context", &v[0]))
		return -EPROTO;
	if (!konst(t, "off_fp_function", &v[1]) || !konst(t, "off_fp_bytecode_array", &v[2]) ||
	    !konst(t, "off_fp_bytecode_offset", &v[3]))
		return -EPROTO;
	l->fp_context = (int16_t)v[0];
	l->fp_function = (int16_t)v[1];
	l->fp_bytecode_array = (int16_t)v[2];
	l->fp_bytecode_offset = (int16_t)v[3];

	l->map = field(t, "HeapObject", "map");
	l->map_type = field(t, "Map", "instance_type");
	l->type_map = type(t, "Map__MAP_TYPE");
	l->type_sfi = type(t, "SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE");
	l->type_script = type(t, "Script__SCRIPT_TYPE");
	l->type_scope_info = type(t, "ScopeInfo__SCOPE_INFO_TYPE");
	l->type_bytecode_array = type(t, "BytecodeArray__BYTECODE_ARRAY_TYPE");
	l->type_byte_array = type(t, "ByteArray__BYTE_ARRAY_TYPE");
	l->type_fixed_array = type(t, "FixedArray__FIXED_ARRAY_TYPE");
	l->type_code = type(t, "Code__CODE_TYPE");
	l->type_istream = type(t, "InstructionStream__INSTRUCTION_STREAM_TYPE");
	l->type_oddball = type(t, "Oddball__ODDBALL_TYPE");
	l->first_nonstring = konst16(t, "FirstNonstringType");
	l->type_trusted_fixed_array = type(t, "TrustedFixedArray__TRUSTED_FIXED_ARRAY_TYPE");
	l->type_protected_fixed_array = type(t, "ProtectedFixedArray__PROTECTED_FIXED_ARRAY_TYPE");
	l->type_trusted_byte_array = type(t, "TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE");
	l->type_sfi_wrapper =
		type(t, "SharedFunctionInfoWrapper__SHARED_FUNCTION_INFO_WRAPPER_TYPE");
	l->wrapper_shared = field(t, "SharedFunctionInfoWrapper", "shared_info");
	l->type_bytecode_wrapper = type(t, "BytecodeWrapper__BYTECODE_WRAPPER_TYPE");
	l->type_interpreter_data = type(t, "InterpreterData__INTERPRETER_DATA_TYPE");

	l->str_repr_mask = konst16(t, "StringRepresentationMask");
	l->str_enc_mask = konst16(t, "StringEncodingMask");
	l->str_one_byte = konst16(t, "OneByteStringTag");
	l->str_seq = konst16(t, "SeqStringTag");
	l->str_cons = konst16(t, "ConsStringTag");
	l->str_ext = konst16(t, "ExternalStringTag");
	l->str_sliced = konst16(t, "SlicedStringTag");
	l->str_thin = konst16(t, "ThinStringTag");
	l->str_length = field(t, "String", "length");
	l->seq_chars = field(t, "SeqOneByteString", "chars");
	l->seq2_chars = field(t, "SeqTwoByteString", "chars");
	l->cons_first = field(t, "ConsString", "first");
	l->cons_second = field(t, "ConsString", "second");
	l->sliced_parent = field(t, "SlicedString", "parent");
	l->sliced_offset = field(t, "SlicedString", "offset");
	l->thin_actual = field(t, "ThinString", "actual");
	l->ext_resource = field(t, "ExternalString", "resource");

	l->jsf_shared = field(t, "JSFunction", "shared");
	l->sfi_name = field(t, "SharedFunctionInfo", "name_or_scope_info");
	l->sfi_script = field(t, "SharedFunctionInfo", "script_or_debug_info|script|raw_script");
	l->sfi_function_data =
		field(t, "SharedFunctionInfo", "function_data|trusted_function_data");
	l->script_name = field(t, "Script", "name");
	l->script_source = field(t, "Script", "source");
	l->script_line_ends = field(t, "Script", "line_ends");
	l->si_ncontextlocals = konst16(t, "scopeinfo_idx_ncontextlocals");
	l->si_first_vars = konst16(t, "scopeinfo_idx_first_vars");

	l->fa_length = field(t, "FixedArrayBase", "length");
	l->fa_data = field(t, "FixedArray", "data");
	l->ba_header = field(t, "BytecodeArray", "data");
	l->ba_length = field(t, "BytecodeArray", "length");
	if (l->ba_length == V8_NONE)
		l->ba_length = l->fa_length;
	/* 10.x: a Code object holds its instructions; 11+: an InstructionStream does. */
	l->istream_header = field(t, "InstructionStream", "instruction_start");
	l->code_start = V8_NONE;
	if (l->type_istream == V8_NONE) {
		/* 10.x: Code::instruction_start is its header's size, the instructions inline. */
		l->istream_header = field(t, "Code", "instruction_start");
		l->code_inline = l->istream_header != V8_NONE;
	} else {
		l->code_start = field(t, "Code", "instruction_start");
	}
	l->code_deopt = field(t, "Code", "deoptimization_data");
	l->code_spt = field(t, "Code", "source_position_table");
	l->code_bytecode = field(t, "Code", "bytecode_or_interpreter_data");
	l->deopt_sfi = konst(t, "DeoptimizationDataSharedFunctionInfoIndex", &v[5]) ||
				       konst(t, "DeoptimizationDataWrappedSharedFunctionInfoIndex",
					     &v[5]) ?
			       v[5] :
			       -1;
	l->deopt_literals = konst(t, "DeoptimizationDataLiteralArrayIndex", &v[5]) ? v[5] : -1;
	l->deopt_inlining = konst(t, "DeoptimizationDataInliningPositionsIndex", &v[5]) ? v[5] : -1;

	l->reg_bytecode_array = konst(t, "InterpreterBytecodeArrayRegister", &v[5]) ? v[5] : -1;
	l->reg_bytecode_offset = konst(t, "InterpreterBytecodeOffsetRegister", &v[5]) ? v[5] : -1;
	for (int i = 0; i < 4; i++) {
		char buf[64];
		const struct sym *s;

		snprintf(buf, sizeof(buf), "_ZN2v88internal7Version6%s", version[i]);
		s = find(t, buf, true);
		l->version[i] = s ? (int32_t)s->value : -1;
	}

	/* What every JavaScript frame's naming needs: without one, V8 is not read. */
	if (l->map == V8_NONE || l->map_type == V8_NONE || l->type_sfi == V8_NONE ||
	    l->type_bytecode_array == V8_NONE || l->jsf_shared == V8_NONE ||
	    l->sfi_name == V8_NONE || l->sfi_script == V8_NONE || l->script_name == V8_NONE ||
	    l->type_script == V8_NONE || l->first_nonstring == V8_NONE ||
	    l->str_length == V8_NONE || l->seq_chars == V8_NONE || l->ba_header == V8_NONE ||
	    l->str_repr_mask == V8_NONE || l->str_enc_mask == V8_NONE)
		return -EPROTO;
	/* Slots the walk reads in one frame: within 64 bytes under fp, each aligned. */
	if (l->fp_context >= 0 || l->fp_function >= 0 || l->fp_bytecode_array >= 0 ||
	    l->fp_bytecode_offset >= 0 || l->fp_bytecode_offset < -64 ||
	    ((l->fp_context | l->fp_function | l->fp_bytecode_array | l->fp_bytecode_offset) & 7))
		return -EPROTO;
	return 0;
}

/*
 * The builtins of an object without their symbols (a stripped libnode):
 * V8 embeds them as one blob of machine code that has no call frame
 * information, so it is the one gap between .eh_frame_hdr's FDEs far larger
 * than any other (1.4 to 2.1 MiB in node 18 to 24, the next under 0.5). A
 * range that begins at the FDE before it takes in code with rows, which
 * the walk steps by its rows before it asks a runtime. Only the usual
 * encodings (a udata4 count, datarel sdata4 pairs) are read.
 */
static void blob_from_ehframe(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	uint64_t best = 0, second = 0, at = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const uint8_t *p;
		const char *name;
		uint32_t n;
		int32_t prev = 0, loc;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") || !(d = elf_getdata(scn, NULL)) ||
		    d->d_size < 12)
			continue;
		p = d->d_buf;
		if (p[0] != 1 || p[2] != 0x03 || p[3] != 0x3b)
			return;
		memcpy(&n, p + 8, 4);
		if (n < 2 || 12 + (uint64_t)n * 8 > d->d_size)
			return;
		for (uint32_t i = 0; i < n; i++) {
			memcpy(&loc, p + 12 + (size_t)i * 8, 4);
			if (i && loc - prev > 0 && (uint64_t)(loc - prev) > best) {
				second = best;
				best = (uint64_t)(loc - prev);
				at = sh.sh_addr + (uint64_t)(int64_t)prev;
			} else if (i && loc - prev > 0 && (uint64_t)(loc - prev) > second) {
				second = (uint64_t)(loc - prev);
			}
			prev = loc;
		}
	}
	if (best >= (1u << 20) && best >= 2 * second) {
		*lo = at;
		*hi = at + best;
	}
}

int v8_layout__read(Elf *elf, struct v8_layout *l, uint64_t *lo, uint64_t *hi)
{
	struct syms t = { 0 };
	Elf_Scn *scn = NULL;
	int err;

	memset(l, 0, sizeof(*l));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			collect(elf, scn, &sh, &t);
	}
	if (t.nr)
		qsort(t.s, t.nr, sizeof(*t.s), by_name);
	/* Duplicates (.dynsym and .symtab alike) sort together: any serves. */
	err = resolve(&t, l);
	*lo = t.blob_lo;
	*hi = t.blob_hi;
	if (!err && !*lo)
		blob_from_ehframe(elf, lo, hi);
	for (size_t i = 0; i < t.nr; i++)
		free(t.s[i].name);
	free(t.s);
	return err;
}
