import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct AppConfigDatabaseTests {
  let base = [
    "DATABASE_URL": "postgresql://u@127.0.0.1:6432/db", "APPLE_BUNDLE_ID": "com.example.app",
    "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890",
  ]

  func config(_ extra: [String: String]) throws -> AppConfig {
    try AppConfig.fromEnvironment(base.merging(extra) { $1 })
  }

  func variable(_ extra: [String: String]) -> String? {
    do {
      _ = try config(extra)
      return nil
    } catch let error as ConfigError {
      return error.variable
    } catch {
      return nil
    }
  }

  @Test func withoutExtraURLsEverySessionGoesToDatabaseURL() throws {
    let config = try config([:])
    #expect(config.databasePoolMode == .session)
    #expect(config.databaseDirectURL == nil && config.databaseReadURL == nil)
    #expect(config.sessionDatabaseURL == base["DATABASE_URL"])
  }

  @Test func transactionPoolingTurnsPreparedStatementsOffUnlessAskedFor() throws {
    let direct = "postgresql://u@127.0.0.1:5432/db"
    let pooled = try config(["DB_POOL_MODE": "transaction", "DATABASE_DIRECT_URL": direct])
    #expect(pooled.statementCacheSize == 0)
    #expect(pooled.sessionDatabaseURL == direct)
    // PgBouncer 1.21+ with max_prepared_statements keeps protocol-level statements.
    let explicit = try config([
      "DB_POOL_MODE": "transaction", "DATABASE_DIRECT_URL": direct,
      "DB_STATEMENT_CACHE_SIZE": "50",
    ])
    #expect(explicit.statementCacheSize == 50)
  }

  @Test func transactionPoolingNeedsADirectURLForListenAndTheMigrationLock() {
    #expect(variable(["DB_POOL_MODE": "transaction"]) == "DATABASE_DIRECT_URL")
  }

  @Test func refusesWhatIsNotAURLOrAMode() {
    #expect(variable(["DB_POOL_MODE": "statement"]) == "DB_POOL_MODE")
    #expect(variable(["DATABASE_READ_URL": "host=replica"]) == "DATABASE_READ_URL")
    #expect(variable(["DATABASE_DIRECT_URL": "mysql://x"]) == "DATABASE_DIRECT_URL")
    #expect(variable(["DB_READ_POOL_SIZE": "0"]) == "DB_READ_POOL_SIZE")
  }
}

/// A URL libpq cannot parse is a configuration error naming its variable (exit 2, which the
/// packaged unit does not restart), and the refusal, which is printed and may be logged, holds
/// none of its passwords.
@Suite struct AppConfigMalformedURLTests {
  static let secret = "s3cretPW"
  let base = AppConfigDatabaseTests().base

  @Test(arguments: ["DATABASE_URL", "DATABASE_DIRECT_URL", "DATABASE_READ_URL"])
  func aMalformedURLIsRefusedNamingItsVariableWithoutItsPassword(_ variable: String) {
    for url in [
      "postgresql://u@[db.internal/x?password=\(Self.secret)",
      "postgresql://u@db.internal/x?password=\(Self.secret)%zz",
      "postgresql://u:\(Self.secret)@[db.internal/x",
    ] {
      do {
        _ = try AppConfig.fromEnvironment(base.merging([variable: url]) { $1 })
        Issue.record("\(variable)=\(url) was accepted")
      } catch let error as ConfigError {
        #expect(error.variable == variable)
        #expect(!error.description.contains(Self.secret), "\(error)")
      } catch {
        Issue.record("\(variable)=\(url): not a configuration error: \(error)")
      }
    }
  }
}

/// A password pasted with an `@` or `/` that is not percent-encoded: libpq parses the URL but
/// takes part of the password for the host or the port, and its connection failure, which
/// quotes them, would be logged on every attempt. Refused at start-up instead (exit 2), naming
/// the variable, saying what to do, and holding no part of the password.
@Suite struct AppConfigUnencodedPasswordTests {
  let base = AppConfigDatabaseTests().base

  @Test(arguments: ["DATABASE_URL", "DATABASE_DIRECT_URL", "DATABASE_READ_URL"])
  func aPasswordWithAnUnencodedAtOrSlashIsRefused(_ variable: String) {
    for url in [
      "postgresql://u:p@ss@h/db", "postgresql://u:p/ss@h/db",
      "postgresql://storekeeper:Xy7@secretTail99@127.0.0.1:26530/audit",
      "postgresql://storekeeper:Ab/secretTail99@127.0.0.1:26530/audit",
    ] {
      do {
        _ = try AppConfig.fromEnvironment(base.merging([variable: url]) { $1 })
        Issue.record("\(variable)=\(url) was accepted")
      } catch let error as ConfigError {
        #expect(error.variable == variable)
        #expect(error.description.contains("percent-encode"), "\(error)")
        for secret in ["ss@h", "p/ss", "secretTail99", "Xy7", "Ab/"] {
          #expect(!error.description.contains(secret), "\(error)")
        }
      } catch {
        Issue.record("\(variable)=\(url): not a configuration error: \(error)")
      }
    }
  }

  @Test func aPercentEncodedOneIsTaken() throws {
    let url = "postgresql://u:p%40ss%2Fw@h:5432/db"
    #expect(
      try AppConfig.fromEnvironment(base.merging(["DATABASE_URL": url]) { $1 }).databaseURL == url)
  }

  @Test func aOneShotCommandRefusesItToo() {
    #expect(throws: ConfigError.self) {
      try ConfigReader(env: ["DATABASE_URL": "postgresql://u:p@ss@h/db"])
        .connectionString("DATABASE_URL")
    }
  }
}

/// `DB_POOL_MODE=transaction` needs `DATABASE_DIRECT_URL` for a session of its own: the
/// pooler's URL copied into it started ready, and no catalog change ever reached the instance.
@Suite struct AppConfigDirectURLTests {
  let pooler = "postgresql://u@pgbouncer.internal:6432/db"

  func variable(_ env: [String: String]) -> String? {
    AppConfigDatabaseTests().variable(
      ["DATABASE_URL": pooler, "DB_POOL_MODE": "transaction"].merging(env) { $1 })
  }

  @Test func theDirectURLMayNotNameThePoolersHostPortAndDatabase() {
    for direct in [
      pooler,
      "postgres://other:pw@PgBouncer.Internal:6432/db?sslmode=require",
      "postgresql://u@db-primary:5432,pgbouncer.internal:6432/db",
    ] {
      #expect(variable(["DATABASE_DIRECT_URL": direct]) == "DATABASE_DIRECT_URL", "\(direct)")
    }
    // A missing port is 5432 (or PGPORT), a missing database the user's name, as for libpq.
    #expect(
      AppConfigDatabaseTests().variable([
        "DATABASE_URL": "postgresql://app@pooler/app", "DB_POOL_MODE": "transaction",
        "DATABASE_DIRECT_URL": "postgresql://app@pooler:5432",
      ]) == "DATABASE_DIRECT_URL")
  }

  @Test func anotherServerPortOrDatabaseIsTaken() {
    for direct in [
      "postgresql://u@db-primary:5432/db", "postgresql://u@pgbouncer.internal:5432/db",
      // Another entry of the pooler, which may be a session-mode pool.
      "postgresql://u@pgbouncer.internal:6432/db_session",
    ] {
      #expect(variable(["DATABASE_DIRECT_URL": direct]) == nil, "\(direct)")
    }
  }

  @Test func inSessionModeTheSameURLIsFine() {
    #expect(
      AppConfigDatabaseTests().variable([
        "DATABASE_URL": pooler, "DATABASE_DIRECT_URL": pooler,
      ]) == nil)
  }
}
