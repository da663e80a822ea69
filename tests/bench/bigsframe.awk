# Generates an x86-64 assembly file with N functions (awk -v n=N), each with
# the push/sub/pop prologue and epilogue of a compiled function and the CFI
# that describes them, so that "as --gsframe" emits about 7 SFrame rows per
# function. The loader benchmark links it into a program to get an .sframe
# section of any size without compiling that much C. Frame sizes and the
# registers saved vary with the function number, so the rows use a realistic
# spread of distinct recovery rules rather than one.
BEGIN {
	if (n <= 0)
		n = 1000
	print "\t.text"
	for (i = 0; i < n; i++) {
		frame = 8 + (i % 61) * 16
		saves = 1 + i % 3
		printf "\t.globl\tbig_%d\n\t.type\tbig_%d, @function\nbig_%d:\n\t.cfi_startproc\n", i, i, i
		cfa = 8
		split("rbp rbx r12", regs, " ")
		for (r = 1; r <= saves; r++) {
			cfa += 8
			printf "\tpushq\t%%%s\n\t.cfi_def_cfa_offset %d\n\t.cfi_offset %%%s, -%d\n", regs[r], cfa, regs[r], cfa
		}
		printf "\tsubq\t$%d, %%rsp\n\t.cfi_def_cfa_offset %d\n", frame, cfa + frame
		printf "\tleal\t%d(%%rdi), %%eax\n", i
		printf "\taddq\t$%d, %%rsp\n\t.cfi_def_cfa_offset %d\n", frame, cfa
		for (r = saves; r >= 1; r--) {
			cfa -= 8
			printf "\tpopq\t%%%s\n\t.cfi_def_cfa_offset %d\n", regs[r], cfa
		}
		printf "\tret\n\t.cfi_endproc\n\t.size\tbig_%d, .-big_%d\n", i, i
	}
	print "\t.section\t.note.GNU-stack,\"\",@progbits"
}
