# A function whose CFI names DWARF register 140503270 (DW_CFA_val_offset,
# written with .cfi_escape since gas checks register numbers): libdw sizes
# its register array by the highest number it sees, so evaluating this FDE
# asks for 1.1 GB. The 520-byte tests/fuzz/regress/cfi/libdw-huge-regnum.elf
# is this file as a whole program:
#   gcc -nostdlib -static -Wl,--build-id=none -Wl,-n -s -Wl,--defsym=_start=odd_cfi
	.section .note.GNU-stack,"",@progbits
	.text
	.globl odd_cfi
	.type odd_cfi,@function
odd_cfi:
	.cfi_startproc
	nop
	.cfi_escape 0x14, 0xe6, 0xd1, 0xff, 0x42, 0x00
	nop
	ret
	.cfi_endproc
	.size odd_cfi,.-odd_cfi
