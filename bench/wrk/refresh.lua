-- refresh_token grants, each with a refresh token no other request uses (they are single
-- use: a spent one sent again would revoke its family). BENCH_TOKENS_FILE holds one
-- pre-issued token per line; thread i of n (counting from 0) takes lines i, i+n, i+2n, ...
-- in order, and the report says how many each thread sent (sent_t<i>), so the driver
-- knows exactly which tokens are spent. A thread that runs out sends "exhausted", which
-- the server refuses (400): running dry shows up as errors and tokens_short, never as reuse.
package.path = debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "?.lua;" .. package.path
local report = require("report")

local threads = {}
local counter = 0

function setup(thread)
  thread:set("index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  tokens = {}
  sent = 0
  short = 0
  local stride = tonumber(os.getenv("BENCH_THREADS"))
  local line_number = 0
  for line in io.lines(os.getenv("BENCH_TOKENS_FILE")) do
    if line_number % stride == index then
      tokens[#tokens + 1] = line
    end
    line_number = line_number + 1
  end
  prefix = "grant_type=refresh_token&client_id=" .. os.getenv("BENCH_CLIENT_ID") .. "&refresh_token="
  headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
end

function request()
  sent = sent + 1
  local token = tokens[sent]
  if token == nil then
    short = short + 1
    token = "exhausted"
  end
  return wrk.format("POST", nil, headers, prefix .. token)
end

function done(summary, latency, requests)
  local extra = { tokens_sent = 0, tokens_short = 0 }
  for i, thread in ipairs(threads) do
    extra["sent_t" .. (i - 1)] = thread:get("sent")
    extra.tokens_sent = extra.tokens_sent + thread:get("sent")
    extra.tokens_short = extra.tokens_short + thread:get("short")
  end
  report.done(summary, latency, extra)
end
