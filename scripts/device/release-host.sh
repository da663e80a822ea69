#!/bin/bash
# The release sfbpf-top on a non-Debian host (issue 48), one pass; see
# scripts/device/prepare.sh. Results under $OUT (the device tool brings them back).
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${SFBPF_DEVICE_DIR:-$R/build-release/device}
O=${OUT:-/tmp/devout}
mkdir -p "$O"
exec > >(tee "$O/log.txt") 2>&1
T=$D/sfbpf-top
PIDS=()
trap 'kill -9 "${PIDS[@]}" 2>/dev/null' EXIT
share() { awk -v pat="$2" '{ n = $NF; all += n; if ($0 ~ pat) hit += n } END { printf "%d/%d\n", hit, all }' "$1"; }
echo "== host"; . /etc/os-release; echo "$PRETTY_NAME"; uname -r; nproc; ldd --version | head -1
ls -la /sys/kernel/btf/vmlinux; free -g | head -2; mount | grep -E "tracefs|debugfs|bpf|cgroup2"; cat /proc/1/comm
echo "== ldd"; ldd "$T"; ldd "$D/sfbpf-dump"; ls -la "$T"
"$T" --version
echo "== dump"; "$D/sfbpf-dump" --json /bin/true | grep -o '"errno":"[A-Z]*"' | head -2
echo "== oncpu"
"$D/spin" spin 600 & sp=$!; PIDS+=($sp); sleep 0.3
timeout 40 "$T" -p $sp -F 199 --stats --folded "$O/on.folded" 5 >"$O/on.out" 2>"$O/on.err"; echo "rc=$?"
echo "main;outer;inner;spin: $(share "$O/on.folded" ';main;outer;inner;spin( |;)')"; sort -k2 -nr -t' ' "$O/on.folded" | head -3
grep -E "heap_in_use|samples|drop" "$O/on.err" | head
echo "== offcpu"
"$D/spin" sleep 600 & sl=$!; PIDS+=($sl); sleep 0.3
timeout 40 "$T" --off-cpu -p $sl --folded "$O/off.folded" 3 >"$O/off.out" 2>"$O/off.err"; echo "rc=$?"
echo "main;napper;nanosleep: $(share "$O/off.folded" ';main;napper;[^ ]*nanosleep')"; head -3 "$O/off.folded"; tail -2 "$O/off.err"
echo "== nobtf"
unshare -m sh -c "mount -t tmpfs x /sys/kernel/btf && timeout 30 $T -b 1"; echo "rc=$?"
echo "== read-only table cache"
unshare -m sh -c "mkdir -p /tmp/roc && mount -t tmpfs -o ro x /tmp/roc && timeout 30 $T --table-cache /tmp/roc -p $sp --folded $O/ro.folded 2 >/dev/null"; echo "rc=$?"
echo "ro cache samples main;..;spin: $(share "$O/ro.folded" ';main;outer;inner;spin( |;)')"
echo "== push (libcurl: $(ldconfig -p | grep -c 'libcurl.so.4 '))"
python3 "$R/tests/pyroscope_receiver.py" serve --dir "$O/recv" --port-file "$O/port" --max-seconds 60 2>"$O/recv.log" & PIDS+=($!)
for _ in $(seq 100); do [ -s "$O/port" ] && break; sleep 0.1; done
timeout 8 "$T" --continuous --interval 1 -p $sp --out-dir "$O/cont" --push "http://127.0.0.1:$(cat "$O/port")" >"$O/push.out" 2>"$O/push.err"; echo "rc=$? (124 expected)"
for f in "$O"/recv/profiles/*.pb.gz; do [ -f "$f" ] && python3 "$R/tests/pyroscope_receiver.py" inspect "$f" | head -c 300; echo; done | head -8
tail -3 "$O/push.err"
kill -9 $sp $sl
echo "== pytorch"
PY=
for p in python3 /usr/bin/python3 /opt/conda/bin/python /usr/local/bin/python3 $(ls /opt/*/bin/python3 /root/*/bin/python3 2>/dev/null); do
	"$p" -c 'import torch' 2>/dev/null && PY=$p && break
done
echo "python with torch: ${PY:-none}"
if [ -n "$PY" ]; then
	cat >/tmp/train.py <<'PYEOF'
import time, torch
m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512))
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x = torch.randn(256, 512)
def train_step():
    opt.zero_grad()
    loss = m(x).pow(2).mean()
    loss.backward()
    opt.step()
def train_loop(secs):
    end = time.time() + secs
    while time.time() < end:
        train_step()
train_loop(60)
PYEOF
	"$PY" -V; "$PY" -c 'import torch; print(torch.__version__)'
	"$PY" /tmp/train.py & tp=$!; PIDS+=($tp); sleep 6
	timeout 40 "$T" -p $tp -F 499 --stats --folded "$O/py.folded" 5 >"$O/py.out" 2>"$O/py.err"; echo "rc=$?"
	echo "train_loop;train_step: $(share "$O/py.folded" 'train_loop.*train_step')"
	echo "with libtorch frames: $(share "$O/py.folded" 'train_step.*(libtorch|at::|c10::)')"
	sort -k2 -nr -t' ' "$O/py.folded" | head -3 | cut -c1-600
	grep -E "python|stop" "$O/py.err" | head -12
	kill -9 $tp
fi
echo "== 16 CPUs: busy loops and an exec storm, system-wide at 999 Hz"
n=$(nproc)
for i in $(seq $((n / 2))); do "$D/spin" spin 60 & PIDS+=($!); done
for i in $(seq $((n / 2))); do sh -c 'while :; do /bin/true; done' & PIDS+=($!); done
timeout 60 "$T" -b -F 999 --stats --folded "$O/all.folded" 10 >"$O/all.out" 2>"$O/all.err" & tt=$!
sleep 9; grep -E 'VmHWM|VmRSS' /proc/$tt/status /proc/$(pgrep -P $tt | head -1)/status 2>/dev/null; wait $tt; echo "rc=$?"
grep -E "^stat|samples|drop|lost|stop|young|vma|entry" "$O/all.err" | tail -40
echo "spin main;..;spin: $(share "$O/all.folded" ';main;outer;inner;spin( |;)') of all $(awk '{s+=$NF} END {print s}' "$O/all.folded")"
echo "true stacks: $(awk '/^true/ {s+=$NF} END {print s+0}' "$O/all.folded"), with main: $(awk '/^true.*;main/ {s+=$NF} END {print s+0}' "$O/all.folded")"
echo done
