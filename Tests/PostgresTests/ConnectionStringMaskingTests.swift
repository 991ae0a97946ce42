import Testing

@testable import Postgres

/// libpq quotes what it could not parse, the whole URI or the token it choked on, and that
/// message is logged: every password the string carries is masked out of it, however it was
/// given (`user:password@`, `?password=`, a `key=value` string's `password`).
@Suite struct ConnectionStringMaskingTests {
  static let secret = "s3cretPW"

  /// Malformed URLs with the password as a query parameter (the form used when it holds `@` or
  /// `/`), in the userinfo, and in a `key=value` string libpq refuses.
  static let malformed = [
    "postgresql://u@[db.internal/x?password=\(secret)",
    "postgresql://u@db.internal/x?password=\(secret)%zz",
    "postgresql://u@db.internal/x?sslmode=require&password=\(secret)&bad",
    "postgres://u@[db.internal/x?pass%77ord=\(secret)",
    "postgresql://u:\(secret)@[bad/x",
    "host=db password='\(secret) unterminated",
  ]

  @Test(arguments: malformed)
  func libpqsMessageForAMalformedStringHoldsNoPassword(_ url: String) throws {
    let problem = try #require(PostgresConnectionString(url).problem)
    #expect(!problem.isEmpty && !problem.contains(Self.secret), "\(problem)")
  }

  @Test(arguments: malformed)
  func aPoolsErrorForAMalformedStringHoldsNoPassword(_ url: String) {
    do {
      _ = try PostgresConnectionParameters(url: url, connectTimeoutSeconds: 2)
      Issue.record("accepted \(url)")
    } catch {
      let said = "\(error) \((error as? PostgresError)?.message ?? "")"
      #expect(!said.contains(Self.secret), "\(said)")
    }
  }

  @Test func aPercentEncodedPasswordIsMaskedAsWrittenAndDecoded() {
    let url = PostgresConnectionString("postgresql://u@h/x?password=p%40ss%2Fword")
    #expect(url.masking("a \"p%40ss%2Fword\" b \"p@ss/word\"") == "a \"***\" b \"***\"")
  }

  @Test func aWellFormedStringHasNoProblem() {
    #expect(
      PostgresConnectionString("postgresql://u@h:5432/x?password=\(Self.secret)").problem == nil)
    #expect(PostgresConnectionString("host=h dbname=x password='a b'").problem == nil)
  }
}
