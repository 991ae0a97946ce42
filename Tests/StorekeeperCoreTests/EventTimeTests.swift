import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// A user's events run forward in time: an append whose clock reading is earlier than the
/// previous append's (taken before it waited for the user's lock, or on an instance whose clock
/// is behind) computes the state for the later time, and grants nothing that had expired.
@Suite(.database, .serialized) struct EventTimeTests {
  @Test func anAppendStampedBeforeTheLastOneDoesNotGrantAgainWhatExpired() async throws {
    try await DomainHarness.with { h in
      try await h.addProduct(
        "vip.month", type: .autoRenewable, grants: #"{"entitlement": "vip"}"#)
      let order = try await h.newOrder(product: "vip.month")
      let start = h.clock.clock.now()
      var purchase = h.transaction(for: order)
      purchase.type = "Auto-Renewable Subscription"
      purchase.expiresDate = h.clock.clock.milliseconds + 3_600_000
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product("vip.month"), transactions: [purchase],
        record: nil, cause: .report)
      // Two hours on, past the expiry: the append records it.
      h.clock.advance(by: 7_200)
      #expect(try await h.orders.outbox.append([], for: "alice", on: h.database) == 1)
      // An append whose clock still reads before the expiry comes after it.
      let behind = EventOutbox(clock: ManualClock(start.addingTimeInterval(1_800)).clock)
      #expect(
        try await behind.append(
          [EventDraft(.adminAdjustment, ["admin": .string("ops")])], for: "alice",
          on: h.database) == 1)
      let events = try await h.writtenEvents("alice")
      #expect(
        events.map(\.type) == [
          "order.paid", "entitlement.granted", "entitlement.expired", "admin.adjustment",
        ])
      #expect(events.last?.state.contains("vip") == false)
    }
  }
}
