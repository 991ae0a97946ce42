import Foundation
import StorekeeperTestSupport
import Testing

@testable import StorekeeperCore

@Suite(.database) struct OrderCreationTests {
  @Test func anOrderForAProductDeletedUnderItIsProductNotFound() async throws {
    try await DomainHarness.with { h in
      try await h.addConsumable()
      let outcome = try await h.database.withTransaction { tx in
        // What DELETE /admin/v1/products does: lock the row, then remove it.
        try await tx.execute("SELECT 1 FROM products WHERE product_id = 'gold.100' FOR UPDATE")
        let creation = Task {
          try await h.orders.create(
            userId: "ivy", productId: "gold.100", quantity: 1, ttlSeconds: 60, on: h.database)
        }
        // Long enough for the insert to reach the foreign-key check and wait on the lock.
        try await Task.sleep(for: .milliseconds(300))
        try await tx.execute("DELETE FROM products WHERE product_id = 'gold.100'")
        return creation
      }.value
      guard case .productNotFound = outcome else {
        Issue.record("expected productNotFound, got \(outcome)")
        return
      }
    }
  }
}
