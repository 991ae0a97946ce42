import Foundation
import GooglePlay
import OutboundHTTP
import Synchronization
import Testing

/// Answers the token endpoint itself, slowly, counting the exchanges.
final class CountingTokenEndpoint: GooglePlayTransport {
  let calls = Mutex(0)
  let status: Int
  let expiresIn: Int

  init(status: Int = 200, expiresIn: Int = 3600) {
    self.status = status
    self.expiresIn = expiresIn
  }

  func send(
    method: String, url: URL, headers: [String: String], body: [UInt8]?, timeout: Duration
  ) async throws -> OutboundHTTPAnswer {
    let n = calls.withLock { count -> Int in
      count += 1
      return count
    }
    try await Task.sleep(for: .milliseconds(100))
    let form = String(decoding: body ?? [], as: UTF8.self)
    guard method == "POST", headers["Content-Type"] == "application/x-www-form-urlencoded",
      form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=")
    else {
      return OutboundHTTPAnswer(status: 400, body: Array(#"{"error":"invalid_request"}"#.utf8))
    }
    guard status == 200 else {
      return OutboundHTTPAnswer(
        status: status,
        body: Array(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.utf8)
      )
    }
    return OutboundHTTPAnswer(
      status: 200,
      body: Array(
        #"{"access_token":"token-\#(n)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#.utf8))
  }
}

@Suite struct AccessTokenSourceTests {
  static func key() async throws -> ServiceAccountKey {
    try await FakePlay.with { $0.key }
  }

  @Test func concurrentCallersShareOneExchange() async throws {
    let endpoint = CountingTokenEndpoint()
    let source = AccessTokenSource(key: try await Self.key(), transport: endpoint)
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<20 { group.addTask { try await source.token() } }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(Set(tokens) == ["token-1"])
    #expect(endpoint.calls.withLock { $0 } == 1)
    #expect(try await source.token() == "token-1")
    #expect(endpoint.calls.withLock { $0 } == 1)
  }

  @Test func refreshesShortlyBeforeExpiry() async throws {
    let now = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    let endpoint = CountingTokenEndpoint(expiresIn: 3600)
    let source = AccessTokenSource(
      key: try await Self.key(), transport: endpoint, refreshMargin: .seconds(300),
      now: { now.withLock { $0 } })
    #expect(try await source.token() == "token-1")
    now.withLock { $0 += 3000 }
    #expect(try await source.token() == "token-1")
    now.withLock { $0 += 301 }
    #expect(try await source.token() == "token-2")
    await source.invalidate("token-2")
    #expect(try await source.token() == "token-3")
  }

  @Test func aRefusedAssertionIsAConfigurationProblem() async throws {
    let source = AccessTokenSource(
      key: try await Self.key(), transport: CountingTokenEndpoint(status: 400))
    await #expect(
      throws: GooglePlayFailure.credentialsRefused(
        status: 400, "invalid_grant: Invalid JWT Signature.")
    ) {
      try await source.token()
    }
  }

  @Test func theFakesTokenEndpointTakesTheAssertion() async throws {
    try await FakePlay.with { play in
      let token = try await play.tokens.token()
      #expect(token.hasPrefix("ya29."))
      #expect(await play.tokens.exchangeCount == 1)
    }
  }
}
