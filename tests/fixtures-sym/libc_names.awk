# Reference names for libc's function addresses, from `readelf -W -s` of its
# debug file (-v shown=raw: names as .symtab has them) or `readelf -W
# --dyn-syms` of libc itself (-v shown=unversioned: readelf's "@VER"/"@@VER"
# suffixes stripped, as .dynsym names have none). Used by tests/symbolize.test
# and tests/symbolize_debug.test.
#
#   -v out=best     "VADDR<TAB>NAME" for every address with several names:
#                   the one perf's choose_best_symbol() keeps (sized, then
#                   non-weak, global, fewer leading underscores, longer name,
#                   first listed), except that a non-default symbol version
#                   (one "@") never wins over another name.
#   -v out=aliases  "VADDR NAME COMPAT" for every function; COMPAT 1 for a
#                   non-default version.
function better(i, j) {
	if (compat[i] != compat[j]) return !compat[i]
	if (sized[i] != sized[j]) return sized[i]
	if ((bind[i] == "WEAK") != (bind[j] == "WEAK")) return bind[j] == "WEAK"
	if ((bind[i] == "GLOBAL") != (bind[j] == "GLOBAL")) return bind[i] == "GLOBAL"
	if (us[i] != us[j]) return us[i] < us[j]
	if (length(nm[i]) != length(nm[j])) return length(nm[i]) > length(nm[j])
	return i < j
}
($4 == "FUNC" || $4 == "IFUNC") && $7 != "UND" && NF == 8 {
	n++
	nm[n] = $8
	bind[n] = $5
	sized[n] = $3 != "0"
	compat[n] = $8 ~ /@/ && $8 !~ /@@/
	if (shown != "raw")
		sub(/@.*/, "", nm[n])
	match(nm[n], /^_*/)
	us[n] = RLENGTH
	if (out == "aliases")
		print $2, nm[n], compat[n]
	count[$2]++
	if (!($2 in best) || better(n, best[$2]))
		best[$2] = n
}
END {
	if (out == "best")
		for (a in best)
			if (count[a] > 1)
				printf "%s\t%s\n", a, nm[best[a]]
}
