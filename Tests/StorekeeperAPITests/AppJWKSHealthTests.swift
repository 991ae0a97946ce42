import AppAuth
import Foundation
import StorekeeperLogging
import Synchronization
import Testing

@testable import StorekeeperAPI

/// `/readyz` and `/metrics` on the app sign-in service's key set (`APP_JWT_JWKS_URL`): a wrong
/// URL was found only by users' 401s. Reported like Google's and Apple's configuration problems,
/// never turning the instance unready.
@Suite struct AppJWKSHealthTests {
  /// Serves the document set, or fails with the error set.
  final class Issuer: JWKSFetching {
    let answer = Mutex<Result<[UInt8], JWKSFetchError>>(.failure(JWKSFetchError("HTTP status 404")))
    func fetch() async throws -> [UInt8] { try answer.withLock { $0 }.get() }
  }

  static let keySet = Array(
    #"{"keys":[{"kty":"EC","crv":"P-256","x":"OkwKIMWr5WLLCU9O5igdFm5aIELWldGXoD__F3mMLBs","y":"kwfhvng4P7IP6TG1CYHfUrf6t9W09G7e5uYTPFTI-hM","kid":"ec-1","use":"sig"}]}"#
      .utf8)

  func health(_ issuer: Issuer) -> AppJWKSHealth {
    AppJWKSHealth(
      source: JWKSKeySource(
        fetcher: issuer, minRefetchInterval: .zero, logger: Logger(label: "t", level: .critical)))
  }

  @Test func aKeySetNeverFetchedIsAProblemNamingTheSettingAndTheError() async throws {
    let issuer = Issuer()
    let jwks = health(issuer)
    let before = try #require(await jwks.problems().first)
    #expect(before.code == "app_jwt_jwks" && before.setting == "APP_JWT_JWKS_URL")
    #expect(before.detail.contains("no key set has been fetched") && before.count == 0)
    await jwks.source.prefetch()
    let after = try #require(await jwks.problems().first)
    #expect(after.detail.contains("HTTP status 404") && after.detail.contains("401"))
    #expect(after.count == 1)
    let lines = await jwks.lines()
    #expect(lines.contains(#"storekeeper_app_jwt_jwks_errors{setting="APP_JWT_JWKS_URL"} 1"#))
    #expect(lines.contains(#"storekeeper_app_jwt_jwks_errors_total{setting="APP_JWT_JWKS_URL"} 1"#))
    #expect(lines.contains("storekeeper_app_jwt_jwks_keys 0"))
  }

  @Test func aFetchedKeySetClearsItAndALaterFailureIsListedWithTheKeysHeld() async throws {
    let issuer = Issuer()
    let jwks = health(issuer)
    await jwks.source.prefetch()
    issuer.answer.withLock { $0 = .success(Self.keySet) }
    await jwks.source.prefetch()
    #expect(await jwks.problems().isEmpty)
    var lines = await jwks.lines()
    #expect(lines.contains(#"storekeeper_app_jwt_jwks_errors{setting="APP_JWT_JWKS_URL"} 0"#))
    #expect(lines.contains("storekeeper_app_jwt_jwks_keys 1"))
    issuer.answer.withLock { $0 = .failure(JWKSFetchError("timed out")) }
    await jwks.source.prefetch()
    let stale = try #require(await jwks.problems().first)
    #expect(stale.detail.contains("timed out") && stale.detail.contains("1 key(s)"))
    lines = await jwks.lines()
    #expect(lines.contains(#"storekeeper_app_jwt_jwks_errors_total{setting="APP_JWT_JWKS_URL"} 2"#))
  }

  @Test func aKeySetWithNoUsableKeyIsAProblem() async throws {
    let issuer = Issuer()
    issuer.answer.withLock { $0 = .success(Array(#"{"keys":[]}"#.utf8)) }
    let jwks = health(issuer)
    await jwks.source.prefetch()
    let problem = try #require(await jwks.problems().first)
    #expect(problem.detail.contains("holds no key this server can use"))
  }
}
