-- The same POST on every request (bar the bearer token, below): the body and headers
-- come from the files named by BENCH_BODY_FILE and BENCH_HEADERS_FILE ("Name: value" per
-- line), written by bench/run.py.
-- Without a tokens file there is no request() function, so wrk sends its pre-built
-- request (its fast path).
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

-- Signed-in scenarios: one prebuilt request per customer's token, sent in turn, so that
-- concurrent calls carry different tokens as many customers' assistants would.
-- Built in init(), once wrk has set the target's path.
local tokens_file = os.getenv("BENCH_BEARER_TOKENS_FILE")
if tokens_file then
  local requests = {}
  local next_one = 0
  function init(args)
    for token in read(tokens_file):gmatch("[^\n]+") do
      wrk.headers["Authorization"] = "Bearer " .. token
      requests[#requests + 1] = wrk.format()
    end
  end
  function request()
    next_one = next_one % #requests + 1
    return requests[next_one]
  end
end

function done(summary, latency, requests)
  report.done(summary, latency)
end
