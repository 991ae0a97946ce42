import HTTP
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

/// `ADMIN_TOKENS`: plain and hashed tokens, scopes, and entries that must stop start-up.
@Suite struct AdminTokenTests {
  static let digest = String(repeating: "ab", count: 32)

  func refusal(_ text: String) -> String? {
    do {
      _ = try AdminToken.parseList(text)
      return nil
    } catch let error as ConfigError {
      return error.variable == "ADMIN_TOKENS" ? error.problem : "wrong variable \(error.variable)"
    } catch {
      return "\(error)"
    }
  }

  @Test func readsPlainAndHashedTokensWithScopes() throws {
    let tokens = try AdminToken.parseList(
      "ops:0123456789abcdef, viewer:0123456789abcdef0:read,ci:sha256:\(Self.digest),"
        + "audit:sha256:\(Self.digest.uppercased()):read,deploy:fedcba9876543210:write")
    #expect(tokens.map(\.name) == ["ops", "viewer", "ci", "audit", "deploy"])
    #expect(tokens.map(\.scope) == [.write, .read, .write, .read, .write])
    #expect(tokens[0].credential == .plain(Array("0123456789abcdef".utf8)))
    #expect(tokens[1].credential == .plain(Array("0123456789abcdef0".utf8)))
    let bytes = [UInt8](repeating: 0xab, count: 32)
    #expect(tokens[2].credential == .sha256(bytes))
    #expect(tokens[3].credential == .sha256(bytes))
    #expect(try AdminToken.parseList("").isEmpty)
  }

  @Test func refusesEntriesThatCannotBeRead() {
    #expect(refusal("ops:short")?.contains("shorter than 16") == true)
    #expect(refusal("ops:short:read")?.contains("shorter than 16") == true)
    #expect(refusal(":0123456789abcdef") != nil)
    #expect(refusal("ops") != nil)
    #expect(refusal("ops:sha256:abcd")?.contains("64 hexadecimal") == true)
    let digest = String(repeating: "ab", count: 32)
    #expect(refusal("sha256:\(digest)")?.contains("no name") == true, "a digest without a name")
    #expect(refusal("sha256:\(digest):read")?.contains("no name") == true)
    #expect(refusal("ops:sha256:\(String(repeating: "zz", count: 32))") != nil)
    #expect(refusal("ops:0123456789abcdef:admin") != nil, "unknown scope")
    #expect(refusal("ops:0123:456789abcdef") != nil, "a ':' inside a token")
    #expect(refusal("ops:0123456789abcdef,ops:fedcba9876543210")?.contains("twice") == true)
  }

  @Test func theErrorNeverRepeatsTheToken() {
    let secret = "0123:456789abcdef-secret"
    #expect(refusal("ops:\(secret)").map { !$0.contains("secret") } == true)
  }

  @Test func writeImpliesRead() {
    #expect(AdminScope.write.allows(.write) && AdminScope.write.allows(.read))
    #expect(AdminScope.read.allows(.read))
    #expect(!AdminScope.read.allows(.write))
  }

  @Test func theMethodDecidesTheScopeNeeded() {
    #expect(AdminScope.needed(for: .get) == .read)
    #expect(AdminScope.needed(for: .head) == .read)
    for method in [HTTPMethod.put, .patch, .delete, .post] {
      #expect(AdminScope.needed(for: method) == .write)
    }
  }

  @Test func readsTheAdminListenerAndTheFailureLimit() throws {
    let base = [
      "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
      "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
    ]
    let defaults = try AppConfig.fromEnvironment(base)
    #expect(defaults.adminPort == nil && defaults.adminHost == nil)
    #expect(defaults.adminAuthFailureLimit == 10 && defaults.adminAuthFailureWindowMs == 60_000)
    var env = base
    env["ADMIN_PORT"] = "9091"
    env["ADMIN_HOST"] = "127.0.0.2"
    env["ADMIN_AUTH_FAILURE_LIMIT"] = "3"
    env["ADMIN_AUTH_FAILURE_WINDOW"] = "5s"
    let config = try AppConfig.fromEnvironment(env)
    #expect(config.adminPort == 9091 && config.adminHost == "127.0.0.2")
    #expect(config.adminAuthFailureLimit == 3 && config.adminAuthFailureWindowMs == 5000)
    #expect(throws: ConfigError.self) {
      try AppConfig.fromEnvironment(base.merging(["ADMIN_HOST": "0.0.0.0"]) { $1 })
    }
    #expect(throws: ConfigError.self) {
      try AppConfig.fromEnvironment(base.merging(["ADMIN_AUTH_FAILURE_LIMIT": "0"]) { $1 })
    }
  }
}
