-- wrk: POST /v1/trade-reports, each prepared report once (REPORTS_FILE, one JSON body a line,
-- made by prepare.py). bench/measure.sh runs wrk with two threads: thread 0 sends the even
-- lines, thread 1 the odd ones. A thread that runs out stops and says so: a report sent twice
-- would take the fast path of a repeat and flatter the rate.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local threads = 0
local all = {}
function setup(thread)
  thread:set("index", threads)
  threads = threads + 1
  all[#all + 1] = thread
end
-- Every answer but the settled 200 counts (wrk's own count leaves 202 out, as a 2xx).
not_ok = 0
response = function(status, headers, body)
  if status ~= 200 then not_ok = not_ok + 1 end
end
done = function(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(all) do total = total + thread:get("not_ok") end
  io.write(string.format("Not-200 responses: %d\n", total))
end
local bodies = {}
local next = 1
function init(args)
  local n = 0
  for line in io.lines(os.getenv("REPORTS_FILE")) do
    if n % 2 == index then bodies[#bodies + 1] = line end
    n = n + 1
  end
end
request = function()
  local body = bodies[next]
  if body == nil then
    io.stderr:write("post-report.lua: out of prepared reports; prepare more (REPORTS)\n")
    wrk.thread:stop()
    body = bodies[#bodies]
  end
  next = next + 1
  return wrk.format(nil, "/v1/trade-reports", nil, body)
end
