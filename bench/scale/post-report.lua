-- wrk: POST /v1/trade-reports, each request the next (trade_no, signed transaction) pair of the
-- file PROOFS names, starting at this thread's share of it; a pair comes round again only when
-- the file is used up (a repeat report, answered from what is stored).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local pairs_ = {}
for line in io.lines(os.getenv("PROOFS")) do
  local trade_no, jws = line:match("^(%S+)\t(%S+)$")
  if trade_no then pairs_[#pairs_ + 1] = { trade_no, jws } end
end
local index = 0
init = function(args)
  index = 0
end
request = function()
  index = index % #pairs_ + 1
  local p = pairs_[index]
  local body = string.format('{"trade_no":"%s","trade_status":"TRADE_SUCCESS","signed_transaction":"%s"}', p[1], p[2])
  return wrk.format(nil, "/v1/trade-reports", nil, body)
end
