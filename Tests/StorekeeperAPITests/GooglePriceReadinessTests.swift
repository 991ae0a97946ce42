import Foundation
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// `/readyz`'s `google_order_prices_failing`: listed from the first failed `orders.get` until
/// Google prices the order, naming the setting only when Google refused the account.
@Suite struct GooglePriceReadinessTests {
  @Test func nothingFailingIsNoProblem() {
    #expect(GooglePlayHealth.pricing(.init(due: 3, failing: 0)) == nil)
  }

  @Test func anOutageIsListedWithTheOldestOrderAndItsError() throws {
    let problem = try #require(
      GooglePlayHealth.pricing(
        .init(
          due: 4, failing: 2, oldestFailingMs: 1_767_225_600_000,
          lastError: "google_status 503")))
    #expect(problem.code == "google_order_prices_failing")
    #expect(problem.count == 2)
    #expect(problem.since == "2026-01-01T00:00:00Z")
    #expect(problem.setting == nil)
    #expect(problem.detail.contains("google_status 503"))
  }

  @Test func aRefusedAccountNamesTheSettingAndThePermission() throws {
    let problem = try #require(
      GooglePlayHealth.pricing(
        .init(
          due: 1, failing: 1, oldestFailingMs: 0,
          lastError: "google_credentials_refused: 403 The current user has insufficient permissions"
        )))
    #expect(problem.setting == "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE")
    #expect(problem.detail.contains("View financial data"))
  }
}
