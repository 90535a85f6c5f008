-- The same POST on every request: the body and headers come from the files named by
-- BENCH_BODY_FILE and BENCH_HEADERS_FILE ("Name: value" per line), written by bench/run.py.
-- No request() function, so wrk sends its pre-built request (its fast path).
package.path = debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "?.lua;" .. package.path
local report = require("report")

local function read(path)
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

wrk.method = "POST"
wrk.body = read(os.getenv("BENCH_BODY_FILE"))
for line in read(os.getenv("BENCH_HEADERS_FILE")):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  wrk.headers[name] = value
end

function done(summary, latency, requests)
  report.done(summary, latency)
end
