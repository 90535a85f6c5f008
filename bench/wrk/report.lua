-- Shared by the bench scripts: wrk's `done` hook prints one JSON line the driver parses.
local report = {}

function report.done(summary, latency, extra)
  local e = summary.errors
  local fields = {
    string.format('"requests":%d', summary.requests),
    string.format('"duration_us":%d', summary.duration),
    string.format('"bytes":%d', summary.bytes),
    string.format('"errors_connect":%d', e.connect),
    string.format('"errors_read":%d', e.read),
    string.format('"errors_write":%d', e.write),
    string.format('"errors_status":%d', e.status),
    string.format('"errors_timeout":%d', e.timeout),
    string.format('"latency_mean_us":%.1f', latency.mean),
    string.format('"latency_max_us":%d', latency.max),
  }
  for _, p in ipairs({ 50, 90, 99, 99.9 }) do
    fields[#fields + 1] = string.format('"p%s_us":%d', tostring(p), latency:percentile(p))
  end
  for name, value in pairs(extra or {}) do
    fields[#fields + 1] = string.format('"%s":%d', name, value)
  end
  io.write("BENCH_JSON {" .. table.concat(fields, ",") .. "}\n")
end

return report
