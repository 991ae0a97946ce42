-- wrk: POST /v1/orders for a consumable; a million users, so none nears MAX_OPEN_ORDERS_PER_USER.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"user_id":"bench:%d","product_id":"com.example.bench.gold","quantity":1}', counter % 1000000)
  return wrk.format(nil, "/v1/orders", nil, body)
end
