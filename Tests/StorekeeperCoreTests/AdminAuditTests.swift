import Foundation
import Postgres
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

/// The audit trail through the domain, on a real database: a change and its row commit
/// together, and a refused change leaves no row.
@Suite(.database) struct AdminAuditTests {
  static let ops = AdminActor(name: "ops", requestId: "req-1", clientAddress: "192.0.2.7")

  static func draft(_ price: String) -> ProductDraft {
    ProductDraft(
      productId: "com.example.audit", type: .consumable, title: "Audit", description: "",
      price: price, currency: "USD", sortOrder: 0, active: true,
      grants: Grants(balance: ["gold": 1]), content: .object([:]))
  }

  @Test func productWritesAndRemovalsAreRecordedInTheirTransaction() async throws {
    try await DomainHarness.with { h in
      let audit = AuditLog(database: h.database)
      _ = try await h.catalog.write(productId: "com.example.audit", ifMatch: nil, by: Self.ops) {
        _ in Self.draft("1.00")
      }
      // A stale If-Match rolls the write back, and with it its audit row.
      await #expect(throws: (any Error).self) {
        _ = try await h.catalog.write(
          productId: "com.example.audit", ifMatch: "\"p99\"", by: Self.ops
        ) { _ in Self.draft("2.00") }
      }
      _ = try await h.catalog.write(productId: "com.example.audit", ifMatch: nil, by: Self.ops) {
        _ in Self.draft("3.00")
      }
      try await h.catalog.remove(productId: "com.example.audit", ifMatch: nil, by: Self.ops)
      let page = try await audit.list(AuditLog.Filter(targetId: "com.example.audit"))
      #expect(page.entries.map(\.action) == [.productDeleted, .productUpdated, .productCreated])
      #expect(
        page.entries.allSatisfy { $0.requestId == "req-1" && $0.clientAddress == "192.0.2.7" })
      #expect(page.entries[2].before == nil)
      #expect(page.entries[1].before?.field("price") == .string("1.00"))
      #expect(page.entries[1].after?.field("price") == .string("3.00"))
      #expect(page.entries[0].after == nil)
      let first = try await audit.list(AuditLog.Filter(limit: 2))
      #expect(first.entries.count == 2 && first.next == String(first.entries[1].id))
      let rest = try await audit.list(AuditLog.Filter(limit: 2, before: Int64(first.next ?? "")))
      #expect(rest.entries.map(\.action) == [.productCreated] && rest.next == nil)
    }
  }

  @Test func aTransferIsRecordedOnlyWhenItHappens() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let order = try await h.newOrder(user: "dave")
      let purchase = h.transaction(for: order)
      _ = try await h.settlement.settle(
        order.tradeNo, product: try await h.product(), transactions: [purchase], record: nil,
        cause: .report)
      let transfers = TransferService(settlement: h.settlement, catalog: h.catalog)
      let moved = try await transfers.transfer(
        purchase.transactionId, to: "erin", by: "ops", reason: "merge", audit: Self.ops)
      await #expect(throws: TransferRefusal.alreadyOwned) {
        _ = try await transfers.transfer(
          purchase.transactionId, to: "erin", by: "ops", reason: nil, audit: Self.ops)
      }
      let entries = try await AuditLog(database: h.database).list(
        AuditLog.Filter(action: .purchaseTransferred))
      #expect(entries.entries.count == 1)
      let entry = try #require(entries.entries.first)
      #expect(entry.targetType == .transaction && entry.targetId == purchase.transactionId)
      #expect(
        entry.before
          == .object(["user_id": .string("dave"), "trade_no": .string(order.tradeNo)]))
      #expect(
        entry.after
          == .object([
            "user_id": .string("erin"), "trade_no": .string(moved.order.tradeNo),
            "reason": .string("merge"),
          ]))
    }
  }
}

extension JSONValue {
  fileprivate func field(_ name: String) -> JSONValue? {
    if case .object(let fields) = self { fields[name] } else { nil }
  }
}
