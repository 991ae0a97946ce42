import Foundation
import Testing

@testable import Postgres

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct ConnectionParametersTests {
  private func value(_ key: String, _ parameters: PostgresConnectionParameters) -> String? {
    parameters.pairs.last(where: { $0.0 == key })?.1
  }

  @Test func theConfiguredConnectTimeoutAppliesWhenTheURLNamesNone() throws {
    let parameters = try PostgresConnectionParameters(
      url: "postgresql://u@127.0.0.1:5432/db", connectTimeoutSeconds: 2)
    #expect(value("connect_timeout", parameters) == "2")
    #expect(value("application_name", parameters) == "storekeeper")
  }

  @Test func theURLsOwnConnectTimeoutAndApplicationNameWin() throws {
    let parameters = try PostgresConnectionParameters(
      url: "postgresql://u@127.0.0.1:5432/db?connect_timeout=20&application_name=ops",
      connectTimeoutSeconds: 2)
    #expect(value("connect_timeout", parameters) == "20")
    #expect(value("application_name", parameters) == "ops")
  }

  /// A statement in flight to a host that vanished without a reset fails within seconds
  /// instead of TCP's ~15 minutes; an idle session is probed by keepalives.
  @Test func everySessionNoticesAVanishedPeerByDefault() throws {
    let parameters = try PostgresConnectionParameters(
      url: "postgresql://u@db-a:5432,db-b:5432/db?target_session_attrs=read-write",
      connectTimeoutSeconds: 2)
    #expect(value("tcp_user_timeout", parameters) == "25000")
    #expect(value("keepalives", parameters) == "1")
    #expect(value("keepalives_idle", parameters) == "10")
    #expect(value("keepalives_interval", parameters) == "5")
    #expect(value("keepalives_count", parameters) == "3")
  }

  @Test func theURLsOwnTCPUserTimeoutAndKeepalivesWin() throws {
    for url in [
      "postgresql://u@127.0.0.1:5432/db?tcp_user_timeout=9000&keepalives_idle=30"
        + "&keepalives_interval=7&keepalives_count=4&keepalives=0",
      "host=127.0.0.1 dbname=db tcp_user_timeout=9000 keepalives_idle=30 keepalives_interval=7"
        + " keepalives_count=4 keepalives=0",
    ] {
      let parameters = try PostgresConnectionParameters(url: url, connectTimeoutSeconds: 2)
      #expect(value("tcp_user_timeout", parameters) == "9000", "\(url)")
      #expect(value("keepalives", parameters) == "0", "\(url)")
      #expect(value("keepalives_idle", parameters) == "30", "\(url)")
      #expect(value("keepalives_interval", parameters) == "7", "\(url)")
      #expect(value("keepalives_count", parameters) == "4", "\(url)")
      // Each keyword once: libpq takes the last of a repeated one.
      #expect(parameters.pairs.count(where: { $0.0 == "tcp_user_timeout" }) == 1)
    }
  }

  /// What libpq made of them: a live session's socket carries the user timeout and the
  /// keepalives (over TCP; a Unix socket has neither, and libpq sets none there).
  @Test(.database) func aLiveSessionsSocketCarriesThem() async throws {
    let url = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
    let pool = PostgresPool(
      configuration: PostgresConfiguration(url: url), logger: TestDatabase.logger)
    let options = try await pool.withConnection { connection in
      let fd = connection.socket
      func option(_ level: Int32, _ name: Int32) -> Int32 {
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, level, name, &value, &length) == 0 ? value : -1
      }
      return (
        domain: option(SOL_SOCKET, SO_DOMAIN), keepalive: option(SOL_SOCKET, SO_KEEPALIVE),
        userTimeout: option(Int32(IPPROTO_TCP), TCP_USER_TIMEOUT),
        idle: option(Int32(IPPROTO_TCP), TCP_KEEPIDLE)
      )
    }
    await pool.shutdown()
    guard options.domain != AF_UNIX else { return }
    #expect(options.userTimeout == 25_000)
    #expect(options.keepalive == 1)
    #expect(options.idle == 10)
  }

  @Test func aConninfoStringsConnectTimeoutWinsToo() throws {
    let parameters = try PostgresConnectionParameters(
      url: "host=127.0.0.1 dbname=db connect_timeout=7", connectTimeoutSeconds: 2)
    #expect(value("connect_timeout", parameters) == "7")
  }
}
