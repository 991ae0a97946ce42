import Testing

@testable import StorekeeperCore

/// A receiver's `Retry-After` in each form RFC 9110 lets it take, and what is not one.
@Suite struct WebhookRetryAfterTests {
  /// 1994-11-06T08:49:37Z, RFC 9110's example date.
  static let exampleSeconds: Int64 = 784_111_777

  @Test func delaySecondsAreAWaitFromNow() {
    #expect(WebhookRetryAfter.delayMs("120", nowMs: 5) == 120_000)
    #expect(WebhookRetryAfter.delayMs("0", nowMs: 5) == 0)
    #expect(WebhookRetryAfter.delayMs(" 7\t", nowMs: 5) == 7_000)
    // Absurdly long waits are kept long (the queue caps them), never wrapped around.
    let huge = WebhookRetryAfter.delayMs(String(repeating: "9", count: 40), nowMs: 0)
    #expect(huge.map { $0 > 3_600_000 } == true)
  }

  @Test func eachHTTPDateFormIsTheSameInstant() {
    let now = (Self.exampleSeconds - 30) * 1000
    for form in [
      "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
      "Sun Nov  6 08:49:37 1994",
    ] {
      #expect(WebhookRetryAfter.delayMs(form, nowMs: now) == 30_000, "\(form)")
    }
    // Python's `email.utils.formatdate(usegmt=True)`, what a receiver in Python sends.
    #expect(
      WebhookRetryAfter.httpDate("Wed, 02 Dec 2026 01:40:05 GMT", nowMs: 0) == 1_796_175_605)
    #expect(WebhookRetryAfter.httpDate("Tue, 29 Feb 2028 00:00:00 GMT", nowMs: 0) == 1_835_395_200)
    // A date already past is no wait at all.
    #expect(WebhookRetryAfter.delayMs("Sun, 06 Nov 1994 08:49:37 GMT", nowMs: now + 60_000) == 0)
  }

  @Test func whatIsNotARetryAfterIsNone() {
    for bad in [
      "", "  ", "-5", "1.5", "soon", "Sun, 06 Nov 1994 08:49:37 UTC",
      "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
      "Sun, 29 Feb 1995 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
      "Sun, 06 Foo 1994 08:49:37 GMT", "Funday, 06-Nov-94 08:49:37 GMT",
      "Sun Nov  6 08:49 1994", String(repeating: "1 ", count: 40),
    ] {
      #expect(WebhookRetryAfter.delayMs(bad, nowMs: 0) == nil, "\(bad)")
    }
  }
}
