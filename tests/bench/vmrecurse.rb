# SPDX-License-Identifier: GPL-2.0-or-later
# A Ruby stack of a known depth for tests/bench/kcost -s ruby: rec calls
# itself DEPTH - 1 times, the last call spinning for SECS seconds of wall
# time: DEPTH method frames above <main>, one iseq (named once).
#   ruby vmrecurse.rb SECS DEPTH
def rec(d, stop)
  return rec(d - 1, stop) + 1 if d > 0

  t = 0
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
    k = 0
    while k < 1000
      t += k
      k += 1
    end
  end
  t
end

secs = Float(ARGV[0])
depth = Integer(ARGV[1])
exit(rec(depth - 1, Process.clock_gettime(Process::CLOCK_MONOTONIC) + secs) >= 0 ? 0 : 1)
