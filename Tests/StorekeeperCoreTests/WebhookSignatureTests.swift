import Foundation
import Testing

@testable import StorekeeperCore

/// The pieces of a delivery that need no database: secrets, signatures, the URL and event-type
/// rules.
@Suite struct WebhookSignatureTests {
  @Test func theHeaderSignsTimestampDotBodyOncePerSecret() {
    let body = Array(#"{"id":"e"}"#.utf8)
    let header = WebhookSecret.signatureHeader(
      secrets: ["whsec_new", "whsec_old"], timestamp: 1_800_000_000, body: body)
    // Python's `hmac.new(secret, b"1800000000." + body, hashlib.sha256).hexdigest()`.
    let expected = [
      "v1=5ce32af1a069a6a3038570ba965fa7c0227e418d14aa04e4d0c82b8193370e5d",
      "v1=9431967eb9c14108ee3822e379d462948ea158b0d658a754667d71c94941076b",
    ]
    #expect(header == "t=1800000000," + expected.joined(separator: ","))
    #expect(
      WebhookSecret.signatureHeader(secrets: ["whsec_new"], timestamp: 1_800_000_000, body: body)
        == "t=1800000000," + expected[0])
  }

  @Test func theStandardWebhooksHeaderSignsIdDotTimestampDotBodyWithTheBase64Key() throws {
    let new = "whsec_" + String(repeating: "0123456789abcdef", count: 4)
    let old = "whsec_" + String(repeating: "fedcba9876543210", count: 4)
    let id = "0b7c6f0e-9d1e-4a53-8f0a-3f1c2b4d5e6f"
    let body = Array(#"{"id":"e"}"#.utf8)
    // PyPI standardwebhooks 1.1.0: `Webhook(secret).sign(id, datetime(1800000000), body)`.
    let expected = [
      "v1,yBT0jlxxmuCh4q0bD8fYWNyqeZSHK8XIOwRyGcEwQU0=",
      "v1,UfQ+8XLOjcB+JCsY+XD367coCC3yJiuJMdgyxxAYlA4=",
    ]
    #expect(
      WebhookSecret.standardSignatureHeader(
        secrets: [new, old], id: id, timestamp: 1_800_000_000, body: body)
        == expected.joined(separator: " "))
    // The hex tail read as base64: 48 bytes, the key the library derived too.
    #expect(try #require(WebhookSecret.standardKey(new)).count == 48)
    #expect(WebhookSecret.standardKey(WebhookSecret.generate())?.count == 48)
    // A stored secret that is not `whsec_` and base64 signs nothing rather than garbage.
    #expect(
      WebhookSecret.standardSignatureHeader(
        secrets: ["whsec_not base64!", new], id: id, timestamp: 1_800_000_000, body: body)
        == expected[0])
  }

  @Test func secretsAreLongRandomAndDistinct() {
    let secrets = (0..<100).map { _ in WebhookSecret.generate() }
    #expect(Set(secrets).count == 100)
    #expect(
      secrets.allSatisfy {
        $0.hasPrefix("whsec_") && $0.utf8.count == 70
          && $0.dropFirst(6).allSatisfy { "0123456789abcdef".contains($0) }
      })
  }

  @Test func urlsAreHTTPSWithAHostAndNoCredentialsOrFragment() {
    for good in [
      "https://example.com/hooks", "https://example.com", "https://a.b-c.example:8443/x/y?z=1&w=2",
      "https://192.0.2.1/h", "https://example.com:65535/h", "https://example.com:1/h",
    ] {
      #expect(WebhookURLRule.problem(good, allowInsecure: false) == nil, "\(good)")
    }
    #expect(WebhookURLRule.problem("http://example.com/h", allowInsecure: true) == nil)
    let refusals = [
      ("http://example.com/h", "ALLOW_INSECURE_URLS"),
      ("https://user:pw@example.com/h", "credentials"),
      ("https://example.com/h#x", "fragment"),
      ("https://example.com/%41", "percent"),
      ("https://-bad.example/", "host"), ("https:///h", "host"), ("ftp://example.com", "https"),
      ("https://example.com:123456/", "port"), ("https://example.com:99999/", "port"),
      ("https://example.com:0/", "port"), ("https://example.com:65536/h", "port"),
      ("https://example.com:0443/h", "port with a leading zero"),
      ("https://example.com/" + String(repeating: "a", count: 2048), "2048"),
    ]
    for (bad, why) in refusals {
      #expect(WebhookURLRule.problem(bad, allowInsecure: false) != nil, "\(bad): \(why)")
    }
  }

  @Test func eventTypesAreDottedLowercaseNames() {
    for good in ["order.paid", "balance.changed", "a.b.c", "purchase.refund_reversed"] {
      #expect(WebhookEndpoint.isEventType(good), "\(good)")
    }
    for bad in ["order", "Order.paid", ".paid", "order.", "order..paid", "order.1paid", "*", ""] {
      #expect(!WebhookEndpoint.isEventType(bad), "\(bad)")
    }
    #expect(WebhookEndpoint.storedTypes(["*"]) == nil)
    #expect(WebhookEndpoint.storedTypes(["a.b", "c.d"]) == "{a.b,c.d}")
  }
}
