import AppAuth
import Foundation
import StorekeeperLogging
import Testing

@Suite struct JWKSKeySourceTests {
  let vectors = Vectors.loaded

  func verifier(_ source: JWKSKeySource) -> JWTVerifier {
    let now = vectors.now
    return JWTVerifier(
      settings: .init(issuer: vectors.issuer, audience: vectors.audience), keys: source,
      now: { now })
  }

  func source(
    _ fetcher: FakeJWKSFetcher, interval: Duration = .seconds(60), maxAge: Duration = .seconds(3600)
  ) -> JWKSKeySource {
    JWKSKeySource(
      fetcher: fetcher, minRefetchInterval: interval, maxAge: maxAge,
      logger: JWTVerifierTests.logger)
  }

  @Test func keepsOnlyKeysItCanUse() async {
    let keys = JWKSet.keys(from: Vectors.jwksBytes) ?? []
    #expect(keys.map(\.id) == ["rsa-1", "ec-1"])
    #expect(keys.map(\.algorithm) == [.rs256, .es256])
    #expect(JWKSet.keys(from: Array("not json".utf8)) == nil)
  }

  @Test func anUnreachableKeySetVerifiesNothing() async {
    let fetcher = FakeJWKSFetcher(nil)
    let verifier = verifier(source(fetcher))
    await #expect(throws: JWTError.keysUnavailable) {
      try await verifier.verify(vectors.valid["rs256"] ?? "")
    }
  }

  @Test func fetchesOnceAndCaches() async throws {
    let fetcher = FakeJWKSFetcher(Vectors.jwksBytes)
    let verifier = verifier(source(fetcher))
    for _ in 0..<5 { _ = try await verifier.verify(vectors.valid["rs256"] ?? "") }
    #expect(fetcher.fetches == 1)
  }

  @Test func callersArrivingDuringTheFirstFetchAllVerifyWithItsKeys() async throws {
    // A server starting under traffic: every request waits for the one fetch, and none is
    // refused because it resumed before the fetched keys were stored.
    let fetcher = FakeJWKSFetcher(Vectors.jwksBytes, delay: .milliseconds(50))
    let verifier = verifier(source(fetcher))
    let token = vectors.valid["rs256"] ?? ""
    let subjects = await withTaskGroup(of: String?.self) { group in
      for _ in 0..<20 { group.addTask { try? await verifier.verify(token).sub } }
      return await group.reduce(into: [String?]()) { $0.append($1) }
    }
    #expect(subjects == Array(repeating: "user-42", count: 20))
    #expect(fetcher.fetches == 1)
  }

  @Test func anUnknownKidRefetchesAtMostOncePerInterval() async throws {
    let fetcher = FakeJWKSFetcher(Vectors.jwksBytes)
    let verifier = verifier(source(fetcher))
    _ = try await verifier.verify(vectors.valid["rs256"] ?? "")
    for _ in 0..<5 {
      await #expect(throws: JWTError.unknownKey("rsa-2")) {
        try await verifier.verify(vectors.invalid["unknown_kid"] ?? "")
      }
    }
    // The first fetch was just now: made-up ids cause no fetch within the interval.
    #expect(fetcher.fetches == 1)
  }

  @Test func aRotatedInKeyVerifiesAfterTheRefetch() async throws {
    let fetcher = FakeJWKSFetcher(Array(#"{"keys":[]}"#.utf8))
    let verifier = verifier(source(fetcher, interval: .zero))
    await #expect(throws: JWTError.unknownKey("rsa-1")) {
      try await verifier.verify(vectors.valid["rs256"] ?? "")
    }
    fetcher.serve(Vectors.jwksBytes)
    #expect(try await verifier.verify(vectors.valid["rs256"] ?? "").sub == "user-42")
    #expect(fetcher.fetches == 2)
  }

  @Test func aFailedRefetchKeepsTheKeysHeld() async throws {
    let fetcher = FakeJWKSFetcher(Vectors.jwksBytes)
    let verifier = verifier(source(fetcher, interval: .zero))
    _ = try await verifier.verify(vectors.valid["es256"] ?? "")
    fetcher.serve(nil)
    await #expect(throws: JWTError.unknownKey("rsa-2")) {
      try await verifier.verify(vectors.invalid["unknown_kid"] ?? "")
    }
    #expect(try await verifier.verify(vectors.valid["es256"] ?? "").sub == "user-42")
  }

  @Test func anOldKeySetServesItsKeysWhileTheRefetchRuns() async throws {
    // Once the document is old, a token whose key is held verifies with it while the refetch
    // runs (waiting for the refetch, it would find the key removed); the removal takes effect
    // once that refetch has stored the new document.
    let fetcher = FakeJWKSFetcher(Vectors.jwksBytes, delay: .milliseconds(200))
    let verifier = verifier(source(fetcher, interval: .zero, maxAge: .zero))
    _ = try await verifier.verify(vectors.valid["rs256"] ?? "")
    fetcher.serve(Array(#"{"keys":[]}"#.utf8))
    #expect(try await verifier.verify(vectors.valid["rs256"] ?? "").sub == "user-42")
    var removed = false
    for _ in 0..<100 where !removed {
      try await Task.sleep(for: .milliseconds(50))
      removed = (try? await verifier.verify(vectors.valid["rs256"] ?? "")) == nil
    }
    #expect(removed)
  }

  @Test func aPrefetchSaysWhetherAKeySetIsHeldAndWhyNot() async throws {
    let fetcher = FakeJWKSFetcher(nil)
    let keys = source(fetcher)
    var health = await keys.health
    #expect(health.fetchedAtMs == nil && health.failure == nil && health.keys == 0)
    await keys.prefetch()
    health = await keys.health
    #expect(health.fetchedAtMs == nil && health.keys == 0 && health.failuresTotal == 1)
    #expect(health.failure?.detail == "connection refused" && health.failure?.count == 1)
    // A page that is not a key set (a typo's 404 page, HTML) fails the same way.
    fetcher.serve(Array("<html>not found</html>".utf8))
    await keys.prefetch()
    health = await keys.health
    #expect(health.failure?.detail == "not a key set" && health.failure?.count == 2)
    #expect(health.failuresTotal == 2 && fetcher.fetches == 2)
    // The first that succeeds clears it; a failure after it keeps the keys and says so.
    fetcher.serve(Vectors.jwksBytes)
    await keys.prefetch()
    health = await keys.health
    #expect(health.failure == nil && health.keys == 2 && health.fetchedAtMs != nil)
    fetcher.serve(nil)
    await keys.prefetch()
    health = await keys.health
    #expect(health.keys == 2 && health.failure?.count == 1 && health.failuresTotal == 3)
  }

  @Test func aPrefetchCountsAsTheIntervalsAttempt() async throws {
    let fetcher = FakeJWKSFetcher(nil)
    let keys = source(fetcher)
    await keys.prefetch()
    fetcher.serve(Vectors.jwksBytes)
    // Within the interval a token causes no second fetch: the issuer is not hammered.
    await #expect(throws: JWTError.keysUnavailable) {
      try await verifier(keys).verify(vectors.valid["rs256"] ?? "")
    }
    #expect(fetcher.fetches == 1)
  }
}
