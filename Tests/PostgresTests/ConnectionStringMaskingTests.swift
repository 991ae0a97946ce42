import StorekeeperLogging
import Testing

@testable import Postgres

/// libpq quotes what it could not parse, the whole URI or the token it choked on, and that
/// message is logged: every password the string carries is masked out of it, however it was
/// given (`user:password@`, `?password=`, a `key=value` string's `password`), and the client key's
/// passphrase (`sslpassword`) alike.
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
    // The client key's passphrase is as secret as the password.
    "postgresql://u@db.internal/x?sslpassword=\(secret)%zz",
    "host=db sslpassword='\(secret) unterminated",
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

  /// Passwords pasted with an `@` or `/` not percent-encoded: libpq parses each URL, but
  /// takes part of the password for the host or the port.
  static let unencoded = [
    "postgresql://u:Xy7@secretTail99@127.0.0.1:1/db",
    "postgresql://u:Ab/secretTail99@127.0.0.1:1/db",
    "postgres://u:ab@cd/secretTail99@127.0.0.1/db?sslmode=disable",
    "postgresql://u:p?x@secretTail99@127.0.0.1/db",
  ]

  @Test(arguments: unencoded)
  func aPasswordWithAnUnencodedAtOrSlashIsAProblemThatNamesNoPartOfIt(_ url: String) throws {
    let string = PostgresConnectionString(url)
    #expect(string.problem == nil, "libpq parses it")
    let problem = try #require(string.userinfoProblem, "\(url)")
    #expect(problem.contains("percent-encode"), "\(problem)")
    #expect(!problem.contains("secretTail99") && !problem.contains("Xy7"), "\(problem)")
  }

  @Test func theAuditsURLsAreMaskedInWhatLibpqSaysOfTheirHostAndPort() {
    let atTwice = PostgresConnectionString("postgresql://u:p@ss@h/db")
    #expect(
      atTwice.masking(#"could not translate host name "ss@h" to address"#)
        == #"could not translate host name "***@h" to address"#)
    let slash = PostgresConnectionString("postgresql://u:Ab/secretTail99@127.0.0.1:1/db")
    #expect(
      slash.masking(#"invalid integer value "Ab" for connection option "port""#)
        == #"invalid integer value "***" for connection option "port""#)
    // The whole password, as the operator meant it, and percent-decoded.
    let encoded = PostgresConnectionString("postgresql://u:p%25w@secretTail99@h/db")
    #expect(encoded.masking("p%25w@secretTail99 p%w@secretTail99") == "*** ***")
  }

  @Test(arguments: unencoded)
  func aFailedConnectionSaysNoPartOfSuchAPassword(_ url: String) throws {
    let parameters = try PostgresConnectionParameters(url: url, connectTimeoutSeconds: 1)
    do {
      _ = try PostgresConnection.connectBlocking(parameters, logger: Logger(label: "test"))
      Issue.record("connected with \(url)")
    } catch let error as PostgresError {
      #expect(!error.message.contains("secretTail99"), "\(error.message)")
      #expect(!error.message.contains("Xy7") && !error.message.contains("\"Ab\""))
    }
  }

  @Test func wellFormedURLsHaveNoUserinfoProblem() {
    for url in [
      "postgresql://u:p%40ss%2Fw%3Ard@h:5432/db",
      "postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write",
      "postgresql://u:pw@[::1]:5432/db",
      "postgresql://h/db?application_name=a@b&sslrootcert=/etc/x@y",
      "postgresql://u:p?ss@h/db",
      "postgresql:///db?host=/var/run/postgresql",
      "host=db password=a@b/c",
    ] {
      #expect(PostgresConnectionString(url).userinfoProblem == nil, "\(url)")
    }
  }

  @Test func aWellFormedStringHasNoProblem() {
    #expect(
      PostgresConnectionString("postgresql://u@h:5432/x?password=\(Self.secret)").problem == nil)
    #expect(PostgresConnectionString("host=h dbname=x password='a b'").problem == nil)
  }
}
