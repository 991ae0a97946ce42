-- wrk: POST /v1/orders for a consumable, each for a user of its own (a prefix per thread and
-- per run), so no user nears MAX_OPEN_ORDERS_PER_USER however long or often the bench runs.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("prefix", string.format("bench:%d-%d-%d", os.time(), math.floor(os.clock() * 1e6), threads))
end
local counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"user_id":"%s-%d","product_id":"com.example.bench.gold","quantity":1}', prefix, counter)
  return wrk.format(nil, "/v1/orders", nil, body)
end
