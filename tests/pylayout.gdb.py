# gdb -batch -nx LIBPYTHON -ex 'source tests/pylayout.gdb.py': the offsets
# interp/python_layout.c names, computed by gdb from the interpreter's DWARF
# (the first of each field's spellings this version has; -1 if none), for
# tests/pyframes_check.py layout.
import gdb

FIELDS = [
    ("runtime_interp_head", ["struct pyruntimestate:interpreters.head"]),
    ("interp_next", ["struct _is:next"]),
    ("interp_threads_head", ["struct _is:threads.head", "struct _is:tstate_head"]),
    ("tstate_next", ["struct _ts:next"]),
    ("tstate_interp", ["struct _ts:interp"]),
    ("tstate_frame", ["struct _ts:current_frame", "struct _ts:frame", "struct _ts:cframe"]),
    ("cframe_frame", ["struct _PyCFrame:current_frame"]),
    ("tstate_thread_id", ["struct _ts:thread_id"]),
    ("tstate_native_id", ["struct _ts:native_thread_id"]),
    ("frame_previous", ["struct _PyInterpreterFrame:previous", "struct _frame:f_back"]),
    ("frame_code", ["struct _PyInterpreterFrame:f_executable", "struct _PyInterpreterFrame:f_code",
                    "struct _frame:f_code"]),
    ("frame_instr", ["struct _PyInterpreterFrame:instr_ptr", "struct _PyInterpreterFrame:prev_instr",
                     "struct _frame:f_lasti"]),
    ("frame_owner", ["struct _PyInterpreterFrame:owner"]),
    ("frame_is_entry", ["struct _PyInterpreterFrame:is_entry"]),
    ("code_filename", ["PyCodeObject:co_filename"]),
    ("code_name", ["PyCodeObject:co_name"]),
    ("code_qualname", ["PyCodeObject:co_qualname"]),
    ("code_firstlineno", ["PyCodeObject:co_firstlineno"]),
    ("code_linetable", ["PyCodeObject:co_linetable", "PyCodeObject:co_lnotab"]),
    ("code_adaptive", ["PyCodeObject:co_code_adaptive"]),
    ("ob_type", ["PyObject:ob_type"]),
    ("bytes_size", ["PyBytesObject:ob_base.ob_size"]),
    ("bytes_data", ["PyBytesObject:ob_sval"]),
    ("str_state", ["PyASCIIObject:state"]),
    ("str_length", ["PyASCIIObject:length"]),
    ("str_ascii_size", ["sizeof:PyASCIIObject"]),
    ("str_compact_size", ["sizeof:PyCompactUnicodeObject"]),
]


def value(spelling):
    typ, field = spelling.split(":")
    if typ == "sizeof":
        return int(gdb.parse_and_eval("sizeof(%s)" % field))
    return int(gdb.parse_and_eval("(unsigned long)&((%s *)0)->%s" % (typ, field)))


for name, spellings in FIELDS:
    v = -1
    for s in spellings:
        try:
            v = value(s)
            break
        except gdb.error:
            pass
    print("%s=%d" % (name, v))
