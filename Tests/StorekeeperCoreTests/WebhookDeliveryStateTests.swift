import Postgres
import Testing

@testable import StorekeeperCore

/// The spellings `webhook_deliveries` checks (migration 0014), and how a state reaches SQL.
@Suite struct WebhookDeliveryStateTests {
  @Test func theSpellingsAreTheColumnsChecks() {
    #expect(WebhookDeliveryState.allCases.map(\.rawValue) == ["pending", "delivered", "failed"])
    #expect(WebhookDeliveryKind.allCases.map(\.rawValue) == ["event", "replay", "test"])
    #expect(WebhookDeliveryState.names == "pending, delivered or failed")
  }

  @Test func aPredicateNamesTheStateInItsTextAndAWriteBindsIt() {
    let predicate: PostgresQuery = "WHERE state = \(literal: .pending) AND id = \(Int64(7))"
    #expect(predicate.sql == "WHERE state = 'pending' AND id = $1")
    #expect(predicate.binds == ["7"])
    let write: PostgresQuery = "SET state = \(WebhookDeliveryState.failed)"
    #expect(write.sql == "SET state = $1")
    #expect(write.binds == ["failed"])
  }
}
