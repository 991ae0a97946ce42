import Testing

@testable import Postgres

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

  @Test func aConninfoStringsConnectTimeoutWinsToo() throws {
    let parameters = try PostgresConnectionParameters(
      url: "host=127.0.0.1 dbname=db connect_timeout=7", connectTimeoutSeconds: 2)
    #expect(value("connect_timeout", parameters) == "7")
  }
}
