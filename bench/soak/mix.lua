-- wrk script for bench/soak/soak.py: rotates requests over the three generated
-- files (half 612 B, a third 16 KiB, a sixth 1 MiB), counts every non-2xx
-- response (wrk's own status counter only counts >= 400), and prints one
-- machine-readable summary line from the done hook.
local paths = {"/612b.html", "/16k.bin", "/612b.html", "/1m.bin", "/612b.html", "/16k.bin"}
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  i = 0
  non2xx = 0
end

function request()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  end
end

function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do
    n = n + t:get("non2xx")
  end
  local e = summary.errors
  io.write(string.format(
    'SOAK_JSON {"requests": %d, "duration_s": %.3f, "bytes": %d, "non2xx": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"p99_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration / 1e6, summary.bytes, n,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(99), latency.max))
end
