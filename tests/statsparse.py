"""The counters sfbpf-top prints ("sfbpf: stat NAME VALUE" lines on stderr),
read one way for every check script that judges them (realworld_check.py,
unwind_check.py, lifecycle_check.py). Other lines are ignored."""
import re

STAT_RE = re.compile(r"^sfbpf: stat (\S+) (-?[0-9]+)\s*$")


def stat_series(lines):
    """Every value of each counter, in the order printed: {NAME: [VALUE, ...]},
    names in the order they first appear."""
    series = {}
    for line in lines:
        m = STAT_RE.match(line)
        if m:
            series.setdefault(m.group(1), []).append(int(m.group(2)))
    return series


def parse_stats(text):
    """The last value of each counter: {NAME: VALUE}."""
    return {k: v[-1] for k, v in stat_series(text.splitlines()).items()}
