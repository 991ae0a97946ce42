-- wrk: POST /v1/orders for a consumable, one user per connection-thread.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"user_id":"bench:%d","product_id":"com.example.bench.gold","quantity":1}', counter % 1000)
  return wrk.format(nil, "/v1/orders", nil, body)
end
