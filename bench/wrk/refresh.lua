-- refresh_token grants, each with a refresh token no other request uses (a spent one sent
-- again would revoke its family), sent as a client sends them: every grant's answer holds
-- its family's next refresh token, and a later request sends that one. BENCH_TOKENS_FILE
-- holds the tokens to start from, issued by the driver through Frontdesk's own grant code
-- (bench/mint_refresh_tokens.py), two per connection; thread i of n (counting from 0) takes
-- lines i, i+n, i+2n, ... The second of each pair is a spare: a refused grant gives no
-- token, and costs a spare rather than leaving a connection without one. Should the spares
-- run out, a request sends "exhausted", which the server refuses (400): it shows as errors
-- and tokens_short, never as a reuse.
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
  -- Unsent tokens, oldest first: queue[first] .. queue[last].
  queue, first, last = {}, 1, 0
  sent = 0
  short = 0
  local stride = tonumber(os.getenv("BENCH_THREADS"))
  local line_number = 0
  for line in io.lines(os.getenv("BENCH_TOKENS_FILE")) do
    if line_number % stride == index then
      last = last + 1
      queue[last] = line
    end
    line_number = line_number + 1
  end
  prefix = "grant_type=refresh_token&client_id=" .. os.getenv("BENCH_CLIENT_ID") .. "&refresh_token="
  headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
end

function request()
  local token = queue[first]
  if token == nil then
    short = short + 1
    token = "exhausted"
  else
    queue[first] = nil
    first = first + 1
    sent = sent + 1
  end
  return wrk.format("POST", nil, headers, prefix .. token)
end

-- wrk calls this before it asks for the connection's next request, so the token a grant
-- returns is in the queue by then.
function response(status, _headers, body)
  if status == 200 then
    local token = body:match('"refresh_token"%s*:%s*"([^"]+)"')
    if token ~= nil then
      last = last + 1
      queue[last] = token
    end
  end
end

function done(summary, latency, requests)
  local extra = { tokens_sent = 0, tokens_short = 0 }
  for _, thread in ipairs(threads) do
    extra.tokens_sent = extra.tokens_sent + thread:get("sent")
    extra.tokens_short = extra.tokens_short + thread:get("short")
  end
  report.done(summary, latency, extra)
end
