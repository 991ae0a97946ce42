-- wrk: POST one event body of the size Storekeeper delivers (the baseline's request), with the
-- headers a delivery carries.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Storekeeper-Event-Id"] = "5b0a4d0e-7f53-4a8e-9a55-0b9f2b1c3d4e"
wrk.headers["Storekeeper-Signature"] = "t=1700000000,v1=" .. string.rep("ab", 32)
wrk.body = os.getenv("EVENT_BODY")
