import StorekeeperLogging
import Testing

@Suite struct LogRedactionTests {
  static let tradeNo = "20260101120000123AbCdEfGhIjKlMnOpQrSt"

  @Test func aTradeNumberKeepsOnlyItsTimestamp() {
    #expect(LogRedaction.tradeNumber(Self.tradeNo) == "20260101120000123…")
    #expect(LogRedaction.tradeNumber(nil as String?) == "")
  }

  @Test func unmatchedPathsKeepShortWordsAndHideLongSegments() {
    #expect(
      LogRedaction.path("/v1/orders/\(Self.tradeNo)/extra") == "/v1/orders/20260101120000123…/extra"
    )
    #expect(LogRedaction.path("/v1/x/eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig") == "/v1/x/…")
    #expect(LogRedaction.path("/wp-login.php?user=admin") == "/wp-login.php")
  }

  @Test func aTransactionIdIsWholeUnlessItIsAGooglePurchaseToken() {
    #expect(LogRedaction.transactionId("2000000123456789") == "2000000123456789")
    #expect(
      LogRedaction.transactionId("GPA.3312-1234-5678-90123..4") == "GPA.3312-1234-5678-90123..4")
    let token = "opaque-token-" + String(repeating: "a", count: 140)
    #expect(LogRedaction.transactionId(token) == "opaque-token…")
  }
}
